// The one small interface the rest of near-dup uses to talk to a cluster. Underneath is the official
// client for the detected flavour and major (which package, and how it is configured: support.json, e.g.
// @opensearch-project/opensearch for OpenSearch; @elastic/elasticsearch 7, 8 or 9 to match Elasticsearch,
// since the 9 client refuses older servers), used only as a transport: connection pool, retries, TLS,
// auth. Every call is a plain REST request, so search, bulk and mapping bodies are the same JSON for both
// engines.
import { constants as bufferLimits } from 'node:buffer';
import { unzipSync } from 'node:zlib';
import { UsageError, UserError } from '../errors.js';
import { authorizationHeader, type ConnectionOptions, type ResolvedConnection, resolveConnection, tlsSettings } from './connection.js';
import { type EngineInfo, type Flavour, detectEngine } from './detect.js';
import { describeConnectionError, EngineConnectionError, EngineResponseError, errorCode, ScanLostError } from './errors.js';
import { backoffDelay, RetryLog, retryCause, sleep } from './retry.js';
import { actionMeta, type DocLocation } from './doc-location.js';
import { BodyTooLargeError, readBody } from './raw-request.js';
import { privilegeRefusal } from './refusal.js';
import { requireServerlessOperation } from './serverless.js';
import { atLeast, type ClientPackage, clientSupport, majorSupport, supportedRange } from './support.js';

export type { EngineInfo, Flavour } from './detect.js';
export type { ClientPackage } from './support.js';

/** The methods near-dup sends; HEAD only to ask whether something exists. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';
/** Query-string parameters; undefined ones are left out of the URL. */
export type QueryParams = Record<string, string | number | boolean | undefined>;

interface RawResponse {
  statusCode: number;
  body: any;
  headers: Record<string, unknown>;
}

/** What each official client provides, reduced to one request function (which never retries by itself). */
interface Sender {
  /** With `asText`, the answer's body is its text as the engine sent it (an error answer's, parsed when it is JSON). */
  send(method: HttpMethod, path: string, body: unknown, query: QueryParams | undefined, ndjson: string | undefined, asText?: TextAnswer): Promise<RawResponse>;
  close(): Promise<void>;
}

/** How one request is sent: retried or not, and how long it may take. */
export interface RequestOptions {
  /**
   * Send again after a timeout, a dropped connection, 429 or 502/503/504 (default true). False for a
   * request that must not be sent twice blindly: a scroll page (a second ask returns the next page).
   */
  retry?: boolean;
}

/** An answer read as text, and the most of it read: beyond this, the request fails rather than fill the memory. */
interface TextAnswer {
  maxBytes: number;
}

/** The longest text Node can hold (about 512 MB): the official clients refuse a larger answer too. */
export const MAX_TEXT_ANSWER_BYTES = bufferLimits.MAX_STRING_LENGTH;

/** First wait before a retry; doubled each time, with jitter. */
const RETRY_BASE_MS = 250;

/** One hit of a search answer, with the sequence number and primary term a guarded write needs. */
export interface SearchHit<TSource = Record<string, unknown>> {
  _index: string;
  _id: string;
  _score?: number | null;
  _source?: TSource;
  _seq_no?: number;
  _primary_term?: number;
  /** The document's custom routing, when it was indexed with one. */
  _routing?: string;
  sort?: unknown[];
  fields?: Record<string, unknown[]>;
}

/** A search answer as both engines give it (total as a number or an object, by version). */
export interface SearchResponse<TSource = Record<string, unknown>> {
  took: number;
  timed_out: boolean;
  hits: { total?: { value: number; relation: 'eq' | 'gte' } | number; max_score?: number | null; hits: SearchHit<TSource>[] };
  aggregations?: Record<string, any>;
  /** With a point in time: the (possibly new) id to send with the next page. */
  pit_id?: string;
  _scroll_id?: string;
}

/** The hit count of a search: an object ({value, relation}) on current engines, a plain number with rest_total_hits_as_int. */
export function totalHits(total: number | { value: number } | undefined): number {
  return typeof total === 'number' ? total : (total?.value ?? 0);
}

/** The answer to a get of one document. */
export interface GetResponse<TSource = Record<string, unknown>> {
  _index: string;
  _id: string;
  _version?: number;
  _seq_no?: number;
  _primary_term?: number;
  _routing?: string;
  found: boolean;
  _source?: TSource;
}

/** One item of a bulk response as the engines send it, keyed by action (index, create, update, delete). */
export interface BulkResponseItem {
  _index?: string;
  _id?: string;
  status: number;
  result?: string;
  error?: { type?: string; reason?: string; [key: string]: unknown } | string;
}

/** A bulk answer as the engine sends it: each item keyed by its action. */
export interface BulkResponseBody {
  took?: number;
  errors: boolean;
  items: Array<Record<string, BulkResponseItem>>;
}

/** A bulk item's outcome, the same shape for every action. */
export interface BulkItemResult {
  action: string;
  index?: string;
  id?: string;
  status: number;
  result?: string;
  error?: { type?: string; reason?: string };
}

/** A bulk answer with every item in one shape (`EngineClient.bulk`), so that callers need not know the action. */
export interface BulkResult {
  took?: number;
  errors: boolean;
  items: BulkItemResult[];
}

/** Mappings of each concrete index, as GET /<index>/_mapping returns them. */
export type IndexMappings = Record<string, { mappings: Record<string, any> }>;

/**
 * A connected cluster. Methods throw EngineResponseError for error answers and EngineConnectionError when
 * there is no answer; `describe(err)` turns either into a one-line UserError.
 */
export class EngineClient {
  /** What the cluster said it is. */
  readonly info: EngineInfo;
  /** Point in time flavour for scans, or false where the engine has none (then scroll); 'serverless' has no scroll at all. */
  readonly pointInTime: Flavour | 'serverless' | false;
  /** Every retry this client made, by cause, and the time spent waiting. */
  readonly retries = new RetryLog();
  /** Requests sent and the seconds spent waiting for their answers (summed: requests in flight together each count). */
  readonly waits = { requests: 0, seconds: 0 };
  readonly #sender: Sender;
  readonly #connection: ResolvedConnection;

  constructor(info: EngineInfo, sender: Sender, connection: ResolvedConnection) {
    this.info = info;
    this.#sender = sender;
    this.#connection = connection;
    this.pointInTime = info.serverless ? 'serverless' : supportsPointInTime(info) ? info.flavour : false;
  }

  /** The cluster URL, without credentials. */
  get url(): string {
    return this.#connection.url;
  }

  get flavour(): Flavour {
    return this.info.flavour;
  }

  /** A one-line UserError for a failure of this client (see describeConnectionError). */
  describe(err: unknown, index?: string): Error {
    return describeConnectionError(err, {
      url: this.url,
      index,
      authGiven: this.#connection.auth !== undefined,
      insecure: this.#connection.insecure,
    });
  }

  /**
   * The one translation of a job's failure for the user, used by every job: near-dup's own errors as they
   * are, the engine's answers and the network's failures as one line that says what to do.
   */
  explain(err: unknown, index?: string): unknown {
    if (err instanceof UserError || err instanceof UsageError) return err;
    if (err instanceof ScanLostError) return new UserError((o) => `${err.message}; run the same command again (with ${o('resume')} where the command has it)`, { cause: err });
    if (err instanceof EngineResponseError || err instanceof EngineConnectionError) return this.describe(err, index);
    return err;
  }

  /**
   * Any REST call: resolves to the parsed JSON body, throws EngineResponseError on an error status.
   * (This signature is the SearchTransport that scans use.)
   */
  async request<T = any>(method: HttpMethod, path: string, body?: unknown, query?: QueryParams, options?: RequestOptions): Promise<T> {
    const response = await this.#send(method, path, body, query, undefined, options?.retry ?? true);
    if (response.statusCode >= 400) throw this.#error(method, path, response);
    return response.body as T;
  }

  /**
   * Any REST call whose answer is wanted as the engine wrote it, as text: sources whose bytes must be kept
   * (JSON.parse rounds integers beyond 2^53 and rewrites 1.0, 1e2 and the order of keys like "10" and "2").
   * An answer longer than `maxBytes` fails the request. Sent again as `request` is; throws as it does.
   */
  async requestText(method: HttpMethod, path: string, body?: unknown, maxBytes = MAX_TEXT_ANSWER_BYTES): Promise<string> {
    const response = await this.#send(method, path, body, undefined, undefined, true, { maxBytes });
    if (response.statusCode >= 400) throw this.#error(method, path, response);
    return response.body as string;
  }

  /**
   * One request; with `retry`, sent again (up to the connection's maxRetries) after a failure that may
   * pass, waiting longer each time. Each retry is counted in `retries`.
   */
  async #send(method: HttpMethod, path: string, body?: unknown, query?: QueryParams, ndjson?: string, retry = true, asText?: TextAnswer): Promise<RawResponse> {
    const clean = query ? (Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)) as QueryParams) : undefined;
    if (this.info.serverless) requireServerlessOperation(method, path, clean);
    for (let attempt = 1; ; attempt++) {
      let failure: unknown;
      const sent = performance.now();
      try {
        const response = await this.#sender.send(method, path, body, clean, ndjson, asText).finally(() => this.#waited(sent));
        if (!retry || retryCause({ statusCode: response.statusCode }) === undefined || permanentRefusal(response)) return response;
        failure = this.#error(method, path, response);
        if (attempt > this.#connection.maxRetries) return response;
      } catch (err) {
        if (!retry || retryCause(err) === undefined || attempt > this.#connection.maxRetries) throw err;
        failure = err;
      }
      const delay = backoffDelay(attempt, RETRY_BASE_MS);
      this.retries.record(retryCause(failure)!, delay);
      await sleep(delay);
    }
  }

  #waited(since: number): void {
    this.waits.requests++;
    this.waits.seconds += (performance.now() - since) / 1000;
  }

  #error(method: string, path: string, response: RawResponse): EngineResponseError {
    const error = (response.body as { error?: { type?: string; reason?: string; root_cause?: Array<{ reason?: string }> } | string } | undefined)?.error;
    const type = typeof error === 'object' ? error?.type : undefined;
    const reason = typeof error === 'object' ? (error?.reason ?? error?.root_cause?.[0]?.reason) : typeof error === 'string' ? error : awsMessage(response.body);
    return new EngineResponseError(response.statusCode, type, reason, method, path, this.url, response.body);
  }

  /**
   * An _mget answers 200 with an error per document when the user may not read them (no
   * indices:data/read/mget[shard]): that is a refusal of the whole request, not documents that are missing.
   */
  #refusedDocs(path: string, docs: ReadonlyArray<unknown>): void {
    const refused = docs.find((d) => privilegeRefusal((d as { error?: unknown }).error) !== undefined) as { error?: { type?: string; reason?: string } } | undefined;
    if (refused) throw new EngineResponseError(403, refused.error?.type, refused.error?.reason, 'POST', path, this.url, refused);
  }

  async indexExists(index: string): Promise<boolean> {
    const response = await this.#send('HEAD', `/${encodeIndex(index)}`);
    if (response.statusCode === 404) return false;
    if (response.statusCode >= 400) throw this.#error('HEAD', `/${encodeIndex(index)}`, response);
    return true;
  }

  /** Creates an index with settings/mappings/aliases as in PUT /<index>. */
  async createIndex(index: string, body: Record<string, unknown> = {}): Promise<void> {
    await this.request('PUT', `/${encodeIndex(index)}`, body);
  }

  /** Deletes an index; a missing one is fine unless `ignoreMissing` is false. */
  async deleteIndex(index: string, options: { ignoreMissing?: boolean } = {}): Promise<void> {
    const path = `/${encodeIndex(index)}`;
    const response = await this.#send('DELETE', path);
    if (response.statusCode === 404 && options.ignoreMissing !== false) return;
    if (response.statusCode >= 400) throw this.#error('DELETE', path, response);
  }

  /** Mappings per concrete index (an alias or pattern may name several). */
  async getMapping(index: string): Promise<IndexMappings> {
    return this.request<IndexMappings>('GET', `/${encodeIndex(index)}/_mapping`);
  }

  async putMapping(index: string, body: Record<string, unknown>): Promise<void> {
    await this.request('PUT', `/${encodeIndex(index)}/_mapping`, body);
  }

  async putComponentTemplate(name: string, body: Record<string, unknown>): Promise<void> {
    await this.request('PUT', `/_component_template/${encodeURIComponent(name)}`, body);
  }

  async putIndexTemplate(name: string, body: Record<string, unknown>): Promise<void> {
    await this.request('PUT', `/_index_template/${encodeURIComponent(name)}`, body);
  }

  /**
   * Makes what was written searchable. Serverless has no refresh to ask: it refreshes each index every
   * index.refresh_interval, so this waits that long (and a second more) instead.
   */
  async refresh(index: string): Promise<void> {
    if (this.info.serverless) return sleep((await this.#refreshIntervalMs(index)) + 1000);
    await this.request('POST', `/${encodeIndex(index)}/_refresh`);
  }

  readonly #refreshIntervals = new Map<string, Promise<number>>();

  /** An index's refresh interval (the longest behind a name), read once; 10 s when it says none. */
  #refreshIntervalMs(index: string): Promise<number> {
    let known = this.#refreshIntervals.get(index);
    if (!known) {
      known = this.request<Record<string, { settings?: { index?: { refresh_interval?: string } } }>>('GET', `/${encodeIndex(index)}/_settings/index.refresh_interval`)
        .then((answer) => Math.max(0, ...Object.values(answer ?? {}).map((entry) => durationMs(entry.settings?.index?.refresh_interval))))
        .catch(() => SERVERLESS_REFRESH_MS);
      this.#refreshIntervals.set(index, known);
    }
    return known;
  }

  /**
   * A search with a raw body. Give `index` undefined for a point-in-time search (the PIT names the index).
   */
  async search<TSource = Record<string, unknown>>(
    index: string | undefined,
    body: Record<string, unknown>,
    query?: QueryParams,
  ): Promise<SearchResponse<TSource>> {
    return this.request<SearchResponse<TSource>>('POST', index === undefined ? '/_search' : `/${encodeIndex(index)}/_search`, body, query);
  }

  /**
   * Several searches of one index in one request (_msearch), answered in order; the first that failed
   * is thrown as the error the search alone would have given.
   */
  async msearch<TSource = Record<string, unknown>>(index: string, bodies: ReadonlyArray<Record<string, unknown>>): Promise<Array<SearchResponse<TSource>>> {
    const path = `/${encodeIndex(index)}/_msearch`;
    const ndjson = bodies.map((body) => `{}\n${JSON.stringify(body)}\n`).join('');
    const response = await this.#send('POST', path, undefined, undefined, ndjson);
    if (response.statusCode >= 400) throw this.#error('POST', path, response);
    const answers = (response.body as { responses: Array<SearchResponse<TSource> & { error?: unknown; status?: number }> }).responses;
    const failed = answers.find((a) => a.error !== undefined);
    if (failed) throw this.#error('POST', path, { ...response, statusCode: failed.status ?? 500, body: failed });
    return answers;
  }

  async count(index: string, query?: Record<string, unknown>): Promise<number> {
    const response = await this.request<{ count: number }>('POST', `/${encodeIndex(index)}/_count`, query ? { query } : undefined);
    return response.count;
  }

  /** A document by id, or undefined when there is none (a missing index still throws). */
  async get<TSource = Record<string, unknown>>(index: string, id: string, query?: QueryParams): Promise<GetResponse<TSource> | undefined> {
    const path = `/${encodeIndex(index)}/_doc/${encodeURIComponent(id)}`;
    const response = await this.#send('GET', path, undefined, query);
    if (response.statusCode === 404 && (response.body as { found?: boolean } | undefined)?.found === false) return undefined;
    if (response.statusCode >= 400) throw this.#error('GET', path, response);
    return response.body as GetResponse<TSource>;
  }

  /**
   * The documents at these locations that exist (source filtered to `includes`, with _seq_no and
   * _primary_term), each read from its own index with its own routing.
   */
  async mget<TSource = Record<string, unknown>>(docs: ReadonlyArray<{ id: string; location: DocLocation }>, includes: string[] | true): Promise<Array<GetResponse<TSource>>> {
    if (docs.length === 0) return [];
    const response = await this.request<{ docs: Array<GetResponse<TSource>> }>('POST', '/_mget', {
      docs: docs.map(({ id, location }) => ({ ...actionMeta(id, location), _source: includes })),
    });
    this.#refusedDocs('/_mget', response.docs);
    return response.docs.filter((d) => d.found);
  }

  /** The uuids of the concrete indices behind a name (an alias or pattern may have several), sorted. */
  async indexUuids(index: string): Promise<string[]> {
    const settings = await this.request<Record<string, { settings: { index: { uuid: string } } }>>('GET', `/${encodeIndex(index)}/_settings`, undefined, {
      filter_path: '*.settings.index.uuid',
    });
    return Object.values(settings ?? {}).map((s) => s.settings.index.uuid).sort();
  }

  /**
   * Whether each of these documents exists, in order, each looked up in its own concrete index (a data
   * stream's backing index: the engines refuse a get by the stream's name), in real time and without sources.
   */
  async documentsExist(docs: ReadonlyArray<{ index: string; id: string }>): Promise<boolean[]> {
    if (docs.length === 0) return [];
    const response = await this.request<{ docs: Array<{ found?: boolean }> }>('POST', '/_mget', { docs: docs.map((d) => ({ _index: d.index, _id: d.id })) }, { _source: 'false' });
    this.#refusedDocs('/_mget', response.docs);
    return docs.map((_, i) => response.docs[i]?.found === true);
  }

  /** Which of these ids the index holds, read in real time (no refresh needed) and without the sources. */
  async existingIds(index: string, ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set(); // the engines refuse an _mget of nothing
    const response = await this.request<{ docs: Array<{ _id: string; found?: boolean }> }>('POST', `/${encodeIndex(index)}/_mget`, { ids }, { _source: 'false' });
    this.#refusedDocs(`/${encodeIndex(index)}/_mget`, response.docs);
    return new Set(response.docs.filter((d) => d.found).map((d) => d._id));
  }

  /**
   * A bulk request from pre-serialized NDJSON (action and source lines, each ending with a newline).
   * Not retried inside the client: the bulk writer retries whole requests and rejected items itself.
   */
  async bulkNdjson(ndjson: string, query?: QueryParams): Promise<BulkResponseBody> {
    const body = ndjson.endsWith('\n') ? ndjson : `${ndjson}\n`;
    const response = await this.#send('POST', '/_bulk', undefined, query, body, false);
    if (response.statusCode >= 400) throw this.#error('POST', '/_bulk', response);
    return response.body as BulkResponseBody;
  }

  /** A bulk request from its lines (objects are serialized, strings sent as they are), with per-item results. */
  async bulk(lines: ReadonlyArray<object | string>, query?: QueryParams): Promise<BulkResult> {
    const ndjson = lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n') + '\n';
    const response = await this.bulkNdjson(ndjson, query);
    return {
      took: response.took,
      errors: response.errors,
      items: response.items.map((item) => {
        const [action, result] = Object.entries(item)[0] ?? ['unknown', { status: 0 }];
        const error = result.error === undefined ? undefined : typeof result.error === 'string' ? { reason: result.error } : { type: result.error.type, reason: result.error.reason };
        return { action, index: result._index, id: result._id, status: result.status, result: result.result, error };
      }),
    };
  }

  async close(): Promise<void> {
    await this.#sender.close();
  }
}

/**
 * A 429 that asking again soon will not change: a circuit breaker that says the request itself is too big,
 * or an index block (a disk past the flood-stage watermark answers 429 until space is freed).
 */
function permanentRefusal(response: RawResponse): boolean {
  const error = (response.body as { error?: { type?: string; durability?: string } } | undefined)?.error;
  if (response.statusCode !== 429) return false;
  return (error?.type === 'circuit_breaking_exception' && error.durability === 'PERMANENT') || error?.type === 'cluster_block_exception';
}

/** Serverless's refresh interval when an index sets none (an assumption: AWS documents no default). */
const SERVERLESS_REFRESH_MS = 10_000;

/** "1s", "500ms", "1m" in milliseconds; the default for none, -1 (off) or what does not parse. */
function durationMs(value: string | undefined): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m)$/.exec(value?.trim() ?? '');
  if (!match) return SERVERLESS_REFRESH_MS;
  return Math.min(60_000, Number(match[1]) * { ms: 1, s: 1000, m: 60_000 }[match[2] as 'ms' | 's' | 'm']);
}

/** AWS's own refusals (a signature, an IAM policy) say why in `message`, not in `error`. */
export function awsMessage(body: unknown): string | undefined {
  const message = (body as { message?: unknown; Message?: unknown } | undefined)?.message ?? (body as { Message?: unknown } | undefined)?.Message;
  return typeof message === 'string' ? message : undefined;
}

/** Index names and patterns in a path: encoded, but `*` and `,` kept readable (the engines accept both). */
function encodeIndex(index: string): string {
  return encodeURIComponent(index).replace(/%2C/gi, ',').replace(/%2A/gi, '*');
}

/** Whether the engine has a point in time for scans (support.json: `pointInTimeFrom`). */
export function supportsPointInTime(info: Pick<EngineInfo, 'flavour' | 'major' | 'minor'>): boolean {
  const from = majorSupport(info.flavour, info.major)?.pointInTimeFrom;
  return from != null && atLeast(info, from);
}

/** Which official client serves a cluster (support.json: `client`); the Elasticsearch client major must match the server's. */
export function clientPackageFor(info: Pick<EngineInfo, 'flavour' | 'major' | 'version'>): ClientPackage {
  const support = majorSupport(info.flavour, info.major);
  if (!support) throw new UserError(`${info.flavour} ${info.version} is not supported; near-dup works with ${supportedRange()}`);
  return support.client;
}

/**
 * Connects: checks the options, asks the cluster what it is, and creates the matching client. Failures
 * become one-line UserErrors (unreachable, refused credentials, TLS, not a search engine).
 */
export async function connect(options: ConnectionOptions): Promise<EngineClient> {
  const connection = await resolveConnection(options);
  let info: EngineInfo;
  try {
    info = await detectEngine(connection);
  } catch (err) {
    throw describeConnectionError(err, { url: connection.url, authGiven: connection.auth !== undefined, insecure: connection.insecure });
  }
  const sender = await createSender(info, connection);
  return new EngineClient(info, sender, connection);
}

// The official clients' error classes carry the HTTP answer in `meta`; anything else is a connection failure.
interface ClientError {
  name?: string;
  message?: string;
  meta?: { statusCode?: number; body?: unknown; headers?: Record<string, unknown> };
}

/** Each client package's module, imported once per process: connections made side by side share the import. */
const clientModules = new Map<ClientPackage, Promise<any>>();

function clientModule(pkg: ClientPackage): Promise<any> {
  let loading = clientModules.get(pkg);
  if (!loading) {
    loading = import(pkg);
    clientModules.set(pkg, loading);
    loading.catch(() => clientModules.delete(pkg)); // a failed import may be tried again
  }
  return loading;
}

async function createSender(info: EngineInfo, connection: ResolvedConnection): Promise<Sender> {
  // Amazon's managed clusters (OpenSearch, and Elasticsearch up to 7.10 there) are signed by the OpenSearch
  // client's own SigV4 signer, whichever flavour answers.
  const pkg = connection.aws ? '@opensearch-project/opensearch' : clientPackageFor(info);
  // The clients' own retries are off: they would send a scroll page twice. EngineClient retries what is safe.
  // Several nodes: the client's pool sends each request to the next living one, and leaves out a node that
  // failed until it answers again; EngineClient's retries then land on another node.
  // Answers are parsed by plain JSON.parse: the OpenSearch and Elasticsearch 7 clients otherwise refuse a
  // whole answer (a page of a scan, a mapping) in which any document holds a key "__proto__", or
  // "constructor" with "prototype" in it, fields both engines store like any other. JSON.parse makes such a
  // key an own property, which sets no prototype; near-dup reads documents by own keys only (own-keys.ts).
  const common = { nodes: connection.nodes, requestTimeout: connection.requestTimeoutMs, maxRetries: 0, disablePrototypePoisoningProtection: true };
  const client = pkg === '@opensearch-project/opensearch' ? await openSearchClient(connection, common) : await elasticsearchClient(pkg, connection, common);
  return clientSender(client, clientSupport(pkg).meta, info, connection);
}

/** TLS settings for the clients: only where a node is https (the clients refuse TLS options for http). */
function clientTls(connection: ResolvedConnection) {
  return connection.nodes.some((node) => node.startsWith('https:')) ? tlsSettings(connection) : undefined;
}

async function openSearchClient(connection: ResolvedConnection, common: Record<string, unknown>): Promise<any> {
  const { Client } = await clientModule('@opensearch-project/opensearch');
  const auth = connection.auth;
  if (connection.aws) {
    const { AwsSigv4Signer } = await import('@opensearch-project/opensearch/aws');
    const { region, service, credentials } = connection.aws;
    return new Client({ ...common, ...tlsOption('@opensearch-project/opensearch', connection), ...AwsSigv4Signer({ region, service, getCredentials: credentials }) });
  }
  // The OpenSearch client only knows basic auth (and AWS SigV4); tokens go in the header.
  return new Client({
    ...common,
    ...tlsOption('@opensearch-project/opensearch', connection),
    auth: auth?.kind === 'basic' ? { username: auth.username, password: auth.password } : undefined,
    headers: auth && auth.kind !== 'basic' ? { authorization: authorizationHeader(auth) } : undefined,
  });
}

async function elasticsearchClient(pkg: ClientPackage, connection: ResolvedConnection, common: Record<string, unknown>): Promise<any> {
  const auth = connection.auth;
  const esAuth =
    auth?.kind === 'basic' ? { username: auth.username, password: auth.password } : auth?.kind === 'apiKey' ? { apiKey: auth.apiKey } : auth?.kind === 'bearer' ? { bearer: auth.token } : undefined;
  const mod = await clientModule(pkg);
  const Client = mod.Client ?? mod.default?.Client;
  // A client that takes the cloud id and the CA fingerprint itself checks the fingerprint of each new connection.
  const own = clientSupport(pkg).cloudAndFingerprint;
  const where = own && connection.cloudId ? { nodes: undefined, cloud: { id: connection.cloudId } } : {};
  const fingerprint = own ? { caFingerprint: connection.caFingerprint } : {};
  return new Client({ ...common, ...where, ...tlsOption(pkg, connection), ...fingerprint, auth: esAuth });
}

/** The TLS settings under the option name the client package takes (`ssl` or `tls`). */
function tlsOption(pkg: ClientPackage, connection: ResolvedConnection): Record<string, ReturnType<typeof clientTls>> {
  return { [clientSupport(pkg).tlsOption]: clientTls(connection) };
}

function clientSender(client: any, meta: boolean, info: EngineInfo, connection: ResolvedConnection): Sender {
  const url = connection.url;
  return {
    async send(method, path, body, query, ndjson, asText) {
      const params: Record<string, unknown> = { method, path };
      if (query && Object.keys(query).length > 0) params.querystring = query;
      if (ndjson !== undefined) params.bulkBody = ndjson;
      else if (body !== undefined) params.body = body;
      const options: Record<string, unknown> = { maxRetries: 0 };
      if (meta) options.meta = true;
      // As a stream, the clients hand the body over unread and unparsed (whatever the status).
      if (asText) options.asStream = true;
      try {
        const result = await client.transport.request(params, options);
        if (asText) return await textResponse(result, asText, connection, `${method} ${path}`);
        return { statusCode: result.statusCode, body: result.body, headers: result.headers ?? {} };
      } catch (err) {
        // The official clients' errors, told apart by name: their classes come from whichever client package
        // serves the cluster (support.json), so no one class can be named for instanceof. From here on they
        // are near-dup's own: an error answer, or an EngineConnectionError.
        if (err instanceof UserError || err instanceof EngineConnectionError) throw err; // reading a text answer: already said
        const e = err as ClientError;
        if (e?.name === 'ResponseError' && e.meta?.statusCode !== undefined) {
          return { statusCode: e.meta.statusCode, body: e.meta.body, headers: e.meta.headers ?? {} };
        }
        if (e?.name === 'ProductNotSupportedError') {
          throw new UserError(`${url} does not identify itself as Elasticsearch ${info.version} to the official client; check --url`);
        }
        const timeout = e?.name === 'TimeoutError';
        throw new EngineConnectionError(
          e?.message ?? String(err),
          timeout ? 'ETIMEDOUT' : (errorCode(err) ?? (e?.name === 'NoLivingConnectionsError' ? 'ECONNREFUSED' : undefined)),
          url,
          { cause: err, timeout },
        );
      }
    },
    async close() {
      await client.close();
    },
  };
}

/** An answer the client gave as a stream, read whole as text; an error answer's text parsed when it is JSON (its reason read as any other's). */
async function textResponse(result: { statusCode: number; body: AsyncIterable<Buffer> & { destroy(err?: Error): void }; headers?: Record<string, unknown> }, asText: TextAnswer, connection: ResolvedConnection, request: string): Promise<RawResponse> {
  const headers = result.headers ?? {};
  const text = await readText(result.body, String(headers['content-encoding'] ?? ''), asText.maxBytes, connection, request);
  if (result.statusCode < 400) return { statusCode: result.statusCode, body: text, headers };
  try {
    return { statusCode: result.statusCode, body: JSON.parse(text), headers };
  } catch {
    return { statusCode: result.statusCode, body: text, headers };
  }
}

/**
 * A body read whole, at most `maxBytes` of it, within the connection's request timeout (the clients time out
 * waiting for an answer, not while a stream of one is read); gzip or deflate undone, as the clients do.
 */
async function readText(stream: AsyncIterable<Buffer> & { destroy(err?: Error): void }, encoding: string, maxBytes: number, connection: ResolvedConnection, request: string): Promise<string> {
  const tooLarge = () => new UserError(`the answer to ${request} from ${connection.url} is larger than ${maxBytes} bytes, more than near-dup reads as one answer; ask for fewer documents at a time`);
  const timer = setTimeout(() => stream.destroy(new EngineConnectionError(`no whole answer to ${request} within ${connection.requestTimeoutMs} ms`, 'ETIMEDOUT', connection.url, { timeout: true })), connection.requestTimeoutMs);
  let whole: Buffer;
  try {
    // Past maxBytes readBody leaves its loop, which destroys the stream: the rest is never read.
    whole = await readBody(stream, maxBytes);
  } catch (err) {
    throw err instanceof BodyTooLargeError ? tooLarge() : err;
  } finally {
    clearTimeout(timer);
  }
  if (!/gzip|deflate/i.test(encoding)) return whole.toString('utf8');
  try {
    return unzipSync(whole, { maxOutputLength: maxBytes }).toString('utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw tooLarge();
    throw new EngineConnectionError(`the answer to ${request} could not be decompressed: ${(err as Error).message}`, undefined, connection.url, { cause: err });
  }
}

export { EngineConnectionError, EngineResponseError };
