// The saved objects (saved-objects.ts) put in the format of the OpenSearch Dashboards or Kibana that answers
// (saved-object-formats.ts), imported through its saved objects API, and read back to check that every
// reference resolves there (saved-object-references.ts) before the link is given.
import { UsageError, UserError } from '../errors.js';
import { type ConnectionOptions, type ResolvedConnection, resolveConnection } from '../engine/connection.js';
import { EngineConnectionError, errorCode } from '../engine/errors.js';
import { type RawAnswer, rawRequest } from '../engine/raw-request.js';
import { formatFor, inFormat, type SavedObjectFormat } from './saved-object-formats.js';
import { panelReader, type ReadObject, unresolvedReferences } from './saved-object-references.js';
import { nearDupFieldSpecs, type SavedObject } from './saved-objects.js';
import { redactCredentials } from '../engine/url.js';

/**
 * Where OpenSearch Dashboards or Kibana is and how to reach it: the URL, credentials and TLS options of
 * every other command (engine/connection.ts), read and checked the same way.
 */
export interface ImportOptions
  extends Pick<ConnectionOptions, 'url' | 'username' | 'password' | 'apiKey' | 'bearerToken' | 'caFile' | 'caFingerprint' | 'clientCert' | 'clientKey' | 'aws' | 'insecure' | 'requestTimeoutMs' | 'warn'> {
  /** Kibana space or OpenSearch Dashboards tenant-less path prefix, e.g. /s/marketing. */
  space?: string;
  /** The format to import in; by default the one of the product and version that answers. */
  format?: SavedObjectFormat;
}

/** What `near-dup dashboards` imported, into which product and version, and the link to the dashboard. */
export interface ImportResult {
  product: 'OpenSearch Dashboards' | 'Kibana' | 'unknown';
  version?: string;
  format: SavedObjectFormat;
  imported: number;
  dashboardUrl: string;
  /** Where the index pattern's fields came from: the product's own list, or near-dup's fields only. */
  fields: 'listed by the product' | 'near-dup fields only' | 'none (read live)';
  warnings: string[];
}

type Product = ImportResult['product'];

/** The server at --url with its credentials and TLS trust, resolved as the engine clients resolve theirs. */
interface Server {
  connection: ResolvedConnection;
  /** The URL and the space's path, without credentials. */
  base: string;
  /** Said in messages: the URL without credentials. */
  where: string;
  headers: Record<string, string>;
}

function productOf(answer: RawAnswer): Product {
  return answer.headers['osd-name'] !== undefined ? 'OpenSearch Dashboards' : answer.headers['kbn-name'] !== undefined ? 'Kibana' : 'unknown';
}

/**
 * Resolves --url, the credentials and the TLS trust with the engine clients' own code (an API key given as
 * id:key is base64-encoded there, user:password@ in the URL becomes basic auth, a CA fingerprint becomes the
 * CA trusted, a client certificate is presented), for one server. Each request's Authorization (or SigV4
 * signature) is made as it is sent.
 */
export async function dashboardsServer(options: ImportOptions): Promise<Server> {
  const connection = await resolveConnection(options);
  if (connection.nodes.length > 1) {
    throw new UsageError(`--url names ${connection.nodes.length} servers (${connection.url}); dashboards talks to one OpenSearch Dashboards or Kibana: give its one URL`);
  }
  const headers: Record<string, string> = { 'osd-xsrf': 'true', 'kbn-xsrf': 'true', accept: 'application/json' };
  return { connection, base: connection.url + (options.space ?? ''), where: connection.url, headers };
}

/** One request (engine/raw-request.ts: the connection's TLS settings and credentials, or signature, as the engine requests have them). */
async function request(server: Server, method: 'GET' | 'POST', path: string, body?: { bytes: Uint8Array; type: string }): Promise<RawAnswer> {
  const headers = { ...server.headers, ...(body ? { 'content-type': body.type } : {}) };
  return rawRequest(server.connection, method, new URL(server.base + path), { headers, body: body?.bytes }).catch((err: unknown) => {
    throw err instanceof EngineConnectionError ? unreachable(err, server) : err;
  });
}

const ok = (answer: RawAnswer) => answer.statusCode >= 200 && answer.statusCode < 300;

/** A failure to reach the server, in one line that says what to do; never the credentials. */
function unreachable(err: Error, server: Server): UserError {
  const code = errorCode(err);
  const message = redactCredentials(err.message).replace(/\s*\n\s*/g, ' ');
  const at = `OpenSearch Dashboards or Kibana at ${server.where}`;
  if (code && ['ERR_SSL_WRONG_VERSION_NUMBER', 'EPROTO', 'ERR_SSL_PACKET_LENGTH_TOO_LONG'].includes(code)) {
    return new UserError(`TLS handshake with ${at} failed (${code}): the server does not speak HTTPS on that port; try an http:// URL`);
  }
  if (/CERT|SELF_SIGNED|UNABLE_TO_|ALTNAME|HOSTNAME_MISMATCH/.test(code ?? '') || /certificate/i.test(message)) {
    return new UserError(
      `TLS error talking to ${at}: ${message}${code ? ` (${code})` : ''}; give the CA certificate its certificate is signed by with --ca-file (SEARCH_CA_FILE), ` +
        `or --insecure (SEARCH_INSECURE=true) to skip certificate checks on a network you trust`,
    );
  }
  return new UserError(`cannot reach ${at}: ${message}${code ? ` (${code})` : ''}; check --url and that it is running (docker compose up -d)`);
}

/** The server's own message, if any, without anything that looks like a credential. */
function serverMessage(body: unknown): string | undefined {
  const message = (body as { message?: unknown } | undefined)?.message;
  return typeof message === 'string' ? redactCredentials(message) : undefined;
}

function refused(answer: RawAnswer, where: string, what: string): UserError | undefined {
  if (answer.statusCode === 401 || answer.statusCode === 403) {
    return new UserError(`${where} refused ${what} (${answer.statusCode}); give --username/--password (or an API key) of a user allowed to manage saved objects`);
  }
  return undefined;
}

/** Which product answers at the URL (from the headers each puts on every answer), and its version (from its status). */
async function detectProduct(server: Server): Promise<{ product: Product; version?: string }> {
  const answer = await request(server, 'GET', '/api/status');
  const product = productOf(answer);
  const status = (answer.body ?? {}) as { version?: { number?: string } };
  if (product === 'unknown') throw new UserError(`${server.where} answers, but neither as OpenSearch Dashboards nor as Kibana; check --url, or give --format opensearch-dashboards or kibana`);
  const denied = refused(answer, server.where, 'its status');
  if (denied) throw denied;
  return { product, version: status.version?.number };
}

/** The index's fields as the product lists them for an index pattern (what its own refresh would store). */
async function listedFields(server: Server, index: string): Promise<{ fields?: Record<string, unknown>[]; why?: string }> {
  const meta = ['_source', '_id', '_type', '_index', '_score'].map((f) => `&meta_fields=${f}`).join('');
  const answer = await request(server, 'GET', `/api/index_patterns/_fields_for_wildcard?pattern=${encodeURIComponent(index)}${meta}`);
  const body = (answer.body ?? {}) as { fields?: Record<string, unknown>[] };
  if (!ok(answer) || !Array.isArray(body.fields)) return { why: `${serverMessage(answer.body) ?? `HTTP ${answer.statusCode}`}` };
  return { fields: body.fields.map((f) => ({ count: 0, scripted: false, ...f })) };
}

/** The NDJSON file the import API takes, as multipart/form-data (encoded by the platform's own FormData). */
async function importFile(objects: object[]): Promise<{ bytes: Uint8Array; type: string }> {
  const form = new FormData();
  form.append('file', new Blob([objects.map((o) => JSON.stringify(o)).join('\n') + '\n'], { type: 'application/ndjson' }), 'near-dup.ndjson');
  const encoded = new Response(form);
  return { bytes: new Uint8Array(await encoded.arrayBuffer()), type: encoded.headers.get('content-type') ?? 'multipart/form-data' };
}

/**
 * Imports the saved objects into the Dashboards or Kibana that answers, in its format, and reads them back to check
 * every reference resolves before the link is given.
 */
export async function importSavedObjects(objects: SavedObject[], options: ImportOptions & { index: string; prefix: string }): Promise<ImportResult> {
  const server = await dashboardsServer(options);
  const { where } = server;
  const warnings: string[] = [];
  const detected = await detectProduct(server);
  let format = options.format;
  if (!format) {
    if (!detected.version) throw new UserError(`${detected.product} at ${where} did not say its version; give --format opensearch-dashboards (OpenSearch Dashboards, Kibana 7.10 to 8.8) or kibana (Kibana 8.9 and later)`);
    format = formatFor(detected.product as 'Kibana' | 'OpenSearch Dashboards', detected.version);
  }
  let fields: ImportResult['fields'] = 'none (read live)';
  let fieldSpecs: Record<string, unknown>[] | undefined;
  if (format === 'opensearch-dashboards') {
    const listed = await listedFields(server, options.index);
    fieldSpecs = listed.fields ?? nearDupFieldSpecs(options.prefix);
    fields = listed.fields ? 'listed by the product' : 'near-dup fields only';
    if (!listed.fields) warnings.push(`${detected.product} did not list the fields of "${options.index}" (${listed.why}): the index pattern holds near-dup's fields only; refresh its field list once the index exists`);
  }
  const answer = await request(server, 'POST', '/api/saved_objects/_import?overwrite=true', await importFile(inFormat(objects, format, fieldSpecs)));
  const product = productOf(answer);
  const body = (answer.body ?? {}) as { success?: boolean; successCount?: number; errors?: Array<{ id: string; error?: { type?: string } }> };
  const denied = refused(answer, where, 'the import');
  if (denied) throw denied;
  if (!ok(answer) || body.success === false) {
    const details = body.errors?.map((e) => `${e.id}: ${e.error?.type ?? 'error'}`).join(', ') ?? serverMessage(answer.body) ?? `HTTP ${answer.statusCode}`;
    throw new UserError(`${product} at ${where} did not import the saved objects (${details})`);
  }
  await checkReadBack(server, objects, { product: detected.product, version: detected.version, format });
  const dashboard = objects.find((o) => o.type === 'dashboard');
  return {
    product,
    version: detected.version,
    format,
    imported: body.successCount ?? objects.length,
    dashboardUrl: `${server.base}/app/dashboards#/view/${dashboard?.id ?? ''}`,
    fields,
    warnings,
  };
}

/**
 * Reads the imported objects back and resolves every reference the way the product that holds them reads
 * it: an import can succeed with a dashboard that then fails to open.
 */
async function checkReadBack(server: Server, objects: SavedObject[], target: { product: Product; version?: string; format: SavedObjectFormat }): Promise<void> {
  const { where } = server;
  const asked = Buffer.from(JSON.stringify(objects.map((o) => ({ type: o.type, id: o.id }))));
  const answer = await request(server, 'POST', '/api/saved_objects/_bulk_get', { bytes: asked, type: 'application/json' });
  const body = (answer.body ?? {}) as { saved_objects?: ReadObject[] };
  if (!ok(answer) || !Array.isArray(body.saved_objects)) {
    throw new UserError(`${target.product} at ${where} imported the saved objects but did not give them back to be checked (${serverMessage(answer.body) ?? `HTTP ${answer.statusCode}`}); open the dashboard and check its panels`);
  }
  const problems = unresolvedReferences(body.saved_objects, panelReader(target.product, target.version));
  if (problems.length) {
    const other = target.format === 'kibana' ? 'opensearch-dashboards' : 'kibana';
    throw new UserError(
      `${target.product} ${target.version ?? ''} at ${where} took the import (--format ${target.format}), but the dashboard would not open there: ${problems.slice(0, 4).join('; ')}${problems.length > 4 ? `; and ${problems.length - 4} more` : ''}. Import again with --format ${other}`,
    );
  }
}
