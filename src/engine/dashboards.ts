// Saved objects for OpenSearch Dashboards and Kibana (mappings/saved-objects.ndjson: an index pattern /
// data view, saved searches of the clusters and of the partial copies, aggregation-based visualizations, a
// markdown panel that says how to read them, and a dashboard), made concrete for one index, put in the
// format of the product and version that answers (saved-object-formats.ts), imported through its saved
// objects API, and read back to check that every reference resolves there before the link is given.
import { readFileSync } from 'node:fs';
import { UserError } from '../errors.js';
import { NEAR_DUP_FIELDS } from './mapping.js';
import { formatFor, inFormat, type SavedObjectFormat } from './saved-object-formats.js';
import { panelReader, type ReadObject, unresolvedReferences } from './saved-object-references.js';
import { redactUrl } from './url.js';

const TEMPLATE = new URL('../../mappings/saved-objects.ndjson', import.meta.url);

export interface SavedObject {
  id: string;
  type: string;
  attributes: Record<string, unknown>;
  references: Array<{ name: string; type: string; id: string }>;
}

export interface SavedObjectsSettings {
  index: string;
  prefix: string;
  /** A field of the user's documents shown beside each document's id in the saved searches (a title, or the text). */
  titleField?: string;
  /** The markdown panel's text: the threshold and parameters behind the numbers. */
  about?: string;
}

/** Column and axis names a reader understands, for the fields the saved searches show (Kibana 7.11+ and 8.x show them). */
const FIELD_LABELS: Record<string, string> = {
  duplicate_of: 'duplicate of',
  canonical_similarity: 'similarity to canonical',
  best_match: 'best match',
  cluster_size: 'documents in cluster',
  cluster_id: 'cluster',
  contained_in: 'inside',
  max_containment: 'share inside',
  distinct_tokens: 'distinct words',
};

/** The saved objects for one index: the placeholders of the template filled in. */
export function savedObjectsFor(settings: SavedObjectsSettings, template = readFileSync(TEMPLATE, 'utf8')): SavedObject[] {
  const { index, prefix } = settings;
  const labels = Object.fromEntries([['_id', { customLabel: 'document' }], ...Object.entries(FIELD_LABELS).map(([f, label]) => [`${prefix}.${f}`, { customLabel: label }])]);
  const values: Record<string, string> = {
    index,
    prefix,
    id: index.toLowerCase().replace(/[^a-z0-9_-]+/g, '-'),
    title_field: settings.titleField ?? '',
    about: settings.about ?? '',
    field_attrs: JSON.stringify(labels),
  };
  const fill = (value: unknown): unknown => {
    if (typeof value === 'string') {
      // Some attributes are JSON inside a string (visState, searchSourceJSON, panelsJSON): fill them as JSON.
      if (/^[[{]/.test(value) && !/^\{\{\w+\}\}$/.test(value)) {
        try {
          return JSON.stringify(fill(JSON.parse(value)));
        } catch {
          // not JSON after all
        }
      }
      return value.replace(/\{\{(\w+)\}\}/g, (whole, name: string) => values[name] ?? whole);
    }
    if (Array.isArray(value)) return value.map(fill);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v)]));
    return value;
  };
  return template
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => {
      const o = fill(JSON.parse(line)) as SavedObject;
      // The title column is there only when a field was named.
      if (Array.isArray(o.attributes.columns)) o.attributes.columns = o.attributes.columns.filter((c) => c !== '');
      return o;
    });
}

/** Kibana's field types of the mapping types near-dup writes (the rest: not listed). */
const KBN_TYPES: Record<string, string> = { keyword: 'string', text: 'string', integer: 'number', float: 'number', boolean: 'boolean', date: 'date' };

/**
 * The index pattern's fields when Dashboards cannot list them (no index yet): the meta fields and
 * near-dup's own, as their mapping declares them. The user's fields come when the pattern is refreshed.
 */
export function nearDupFieldSpecs(prefix: string): Record<string, unknown>[] {
  const meta = [
    { name: '_id', type: 'string', esTypes: ['_id'], searchable: true, aggregatable: true, readFromDocValues: false },
    { name: '_index', type: 'string', esTypes: ['_index'], searchable: true, aggregatable: true, readFromDocValues: false },
    { name: '_score', type: 'number', searchable: false, aggregatable: false, readFromDocValues: false },
    { name: '_source', type: '_source', esTypes: ['_source'], searchable: false, aggregatable: false, readFromDocValues: false },
  ];
  const own = Object.entries(NEAR_DUP_FIELDS).flatMap(([name, mapping]) => {
    const type = KBN_TYPES[mapping.type ?? ''];
    if (!type) return [];
    const searchable = mapping.index !== false;
    const aggregatable = mapping.type !== 'text' && mapping.doc_values !== false;
    return [{ name: `${prefix}.${name}`, type, esTypes: [mapping.type], searchable, aggregatable, readFromDocValues: aggregatable }];
  });
  return [...meta, ...own].map((f) => ({ count: 0, scripted: false, ...f }));
}

export interface ImportOptions {
  url: string;
  username?: string;
  password?: string;
  apiKey?: string;
  bearerToken?: string;
  /** Kibana space or OpenSearch Dashboards tenant-less path prefix, e.g. /s/marketing. */
  space?: string;
  /** The format to import in; by default the one of the product and version that answers. */
  format?: SavedObjectFormat;
}

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

function productOf(response: Response): Product {
  return response.headers.has('osd-name') ? 'OpenSearch Dashboards' : response.headers.has('kbn-name') ? 'Kibana' : 'unknown';
}

function authHeaders(options: ImportOptions): Record<string, string> {
  const headers: Record<string, string> = { 'osd-xsrf': 'true', 'kbn-xsrf': 'true' };
  if (options.username !== undefined) headers.authorization = `Basic ${Buffer.from(`${options.username}:${options.password ?? ''}`).toString('base64')}`;
  else if (options.apiKey) headers.authorization = `ApiKey ${options.apiKey}`;
  else if (options.bearerToken) headers.authorization = `Bearer ${options.bearerToken}`;
  return headers;
}

async function call(url: string, init: RequestInit, where: string): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (err) {
    throw new UserError(`cannot reach OpenSearch Dashboards or Kibana at ${where}: ${(err as Error).message}; check --url and that it is running (docker compose up -d)`);
  }
}

function refused(response: Response, where: string, what: string): UserError | undefined {
  if (response.status === 401 || response.status === 403) {
    return new UserError(`${where} refused ${what} (${response.status}); give --username/--password (or an API key) of a user allowed to manage saved objects`);
  }
  return undefined;
}

/** Which product answers at the URL (from the headers each puts on every answer), and its version (from its status). */
async function detectProduct(base: string, headers: Record<string, string>, where: string): Promise<{ product: Product; version?: string }> {
  const response = await call(`${base}/api/status`, { headers }, where);
  const product = productOf(response);
  const status = (await response.json().catch(() => ({}))) as { version?: { number?: string } };
  if (product === 'unknown') throw new UserError(`${where} answers, but neither as OpenSearch Dashboards nor as Kibana; check --url, or give --format opensearch-dashboards or kibana`);
  const denied = refused(response, where, 'its status');
  if (denied) throw denied;
  return { product, version: status.version?.number };
}

/** The index's fields as the product lists them for an index pattern (what its own refresh would store). */
async function listedFields(base: string, headers: Record<string, string>, index: string, where: string): Promise<{ fields?: Record<string, unknown>[]; why?: string }> {
  const meta = ['_source', '_id', '_type', '_index', '_score'].map((f) => `&meta_fields=${f}`).join('');
  const response = await call(`${base}/api/index_patterns/_fields_for_wildcard?pattern=${encodeURIComponent(index)}${meta}`, { headers }, where);
  const body = (await response.json().catch(() => ({}))) as { fields?: Record<string, unknown>[]; message?: string };
  if (!response.ok || !Array.isArray(body.fields)) return { why: `${body.message ?? `HTTP ${response.status}`}` };
  return { fields: body.fields.map((f) => ({ count: 0, scripted: false, ...f })) };
}

export async function importSavedObjects(objects: SavedObject[], options: ImportOptions & { index: string; prefix: string }): Promise<ImportResult> {
  const base = options.url.replace(/\/+$/, '') + (options.space ?? '');
  const headers = authHeaders(options);
  const where = redactUrl(options.url);
  const warnings: string[] = [];
  const detected = await detectProduct(base, headers, where);
  let format = options.format;
  if (!format) {
    if (!detected.version) throw new UserError(`${detected.product} at ${where} did not say its version; give --format opensearch-dashboards (OpenSearch Dashboards, Kibana 7.10 to 8.8) or kibana (Kibana 8.9 and later)`);
    format = formatFor(detected.product as 'Kibana' | 'OpenSearch Dashboards', detected.version);
  }
  let fields: ImportResult['fields'] = 'none (read live)';
  let fieldSpecs: Record<string, unknown>[] | undefined;
  if (format === 'opensearch-dashboards') {
    const listed = await listedFields(base, headers, options.index, where);
    fieldSpecs = listed.fields ?? nearDupFieldSpecs(options.prefix);
    fields = listed.fields ? 'listed by the product' : 'near-dup fields only';
    if (!listed.fields) warnings.push(`${detected.product} did not list the fields of "${options.index}" (${listed.why}): the index pattern holds near-dup's fields only; refresh its field list once the index exists`);
  }
  const formatted = inFormat(objects, format, fieldSpecs);
  const form = new FormData();
  form.append('file', new Blob([formatted.map((o) => JSON.stringify(o)).join('\n') + '\n'], { type: 'application/ndjson' }), 'near-dup.ndjson');
  const response = await call(`${base}/api/saved_objects/_import?overwrite=true`, { method: 'POST', headers, body: form }, where);
  const product = productOf(response);
  const body = (await response.json().catch(() => ({}))) as { success?: boolean; successCount?: number; errors?: Array<{ id: string; error?: { type?: string } }>; message?: string };
  const denied = refused(response, where, 'the import');
  if (denied) throw denied;
  if (!response.ok || body.success === false) {
    const details = body.errors?.map((e) => `${e.id}: ${e.error?.type ?? 'error'}`).join(', ') ?? body.message ?? `HTTP ${response.status}`;
    throw new UserError(`${product} at ${where} did not import the saved objects (${details})`);
  }
  await checkReadBack(base, headers, where, objects, { product: detected.product, version: detected.version, format });
  const dashboard = objects.find((o) => o.type === 'dashboard');
  return {
    product,
    version: detected.version,
    format,
    imported: body.successCount ?? objects.length,
    dashboardUrl: `${base}/app/dashboards#/view/${dashboard?.id ?? ''}`,
    fields,
    warnings,
  };
}

/**
 * Reads the imported objects back and resolves every reference the way the product that holds them reads
 * it: an import can succeed with a dashboard that then fails to open.
 */
async function checkReadBack(base: string, headers: Record<string, string>, where: string, objects: SavedObject[], target: { product: Product; version?: string; format: SavedObjectFormat }): Promise<void> {
  const response = await call(`${base}/api/saved_objects/_bulk_get`, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(objects.map((o) => ({ type: o.type, id: o.id }))) }, where);
  const body = (await response.json().catch(() => ({}))) as { saved_objects?: ReadObject[]; message?: string };
  if (!response.ok || !Array.isArray(body.saved_objects)) {
    throw new UserError(`${target.product} at ${where} imported the saved objects but did not give them back to be checked (${body.message ?? `HTTP ${response.status}`}); open the dashboard and check its panels`);
  }
  const problems = unresolvedReferences(body.saved_objects, panelReader(target.product, target.version));
  if (problems.length) {
    const other = target.format === 'kibana' ? 'opensearch-dashboards' : 'kibana';
    throw new UserError(
      `${target.product} ${target.version ?? ''} at ${where} took the import (--format ${target.format}), but the dashboard would not open there: ${problems.slice(0, 4).join('; ')}${problems.length > 4 ? `; and ${problems.length - 4} more` : ''}. Import again with --format ${other}`,
    );
  }
}
