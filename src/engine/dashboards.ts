// Saved objects for OpenSearch Dashboards and Kibana (mappings/saved-objects.ndjson: an index pattern /
// data view, saved searches of duplicates and partial copies, aggregation-based visualizations and a
// dashboard), made concrete for one index, put in the format of the product that answers
// (saved-object-formats.ts) and imported through its saved objects API.
import { readFileSync } from 'node:fs';
import { UserError } from '../errors.js';
import { inFormat, type SavedObjectFormat } from './saved-object-formats.js';
import { redactUrl } from './url.js';

const TEMPLATE = new URL('../../mappings/saved-objects.ndjson', import.meta.url);

export interface SavedObject {
  id: string;
  type: string;
  attributes: Record<string, unknown>;
  references: Array<{ name: string; type: string; id: string }>;
}

/** The saved objects for one index: placeholders {{index}}, {{prefix}} and {{id}} filled in. */
export function savedObjectsFor(index: string, prefix: string, template = readFileSync(TEMPLATE, 'utf8')): SavedObject[] {
  const id = index.toLowerCase().replace(/[^a-z0-9_-]+/g, '-');
  const fill = (value: unknown): unknown => {
    if (typeof value === 'string') {
      // Some attributes are JSON inside a string (visState, searchSourceJSON, panelsJSON): fill them as JSON.
      if (/^[[{]/.test(value)) {
        try {
          return JSON.stringify(fill(JSON.parse(value)));
        } catch {
          // not JSON after all
        }
      }
      return value.replaceAll('{{index}}', index).replaceAll('{{prefix}}', prefix).replaceAll('{{id}}', id);
    }
    if (Array.isArray(value)) return value.map(fill);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v)]));
    return value;
  };
  return template
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => fill(JSON.parse(line)) as SavedObject);
}

export interface ImportOptions {
  url: string;
  username?: string;
  password?: string;
  apiKey?: string;
  bearerToken?: string;
  /** Kibana space or OpenSearch Dashboards tenant-less path prefix, e.g. /s/marketing. */
  space?: string;
  /** The format to import in; by default the one of the product that answers. */
  format?: SavedObjectFormat;
}

export interface ImportResult {
  product: 'OpenSearch Dashboards' | 'Kibana' | 'unknown';
  imported: number;
  dashboardUrl: string;
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

/** Which of the two answers at the URL (from the headers each puts on every answer). */
async function detectFormat(base: string, headers: Record<string, string>, where: string): Promise<SavedObjectFormat> {
  const product = productOf(await call(`${base}/api/status`, { headers }, where));
  if (product === 'unknown') throw new UserError(`${where} answers, but neither as OpenSearch Dashboards nor as Kibana; check --url, or give --format opensearch-dashboards or kibana`);
  return product === 'Kibana' ? 'kibana' : 'opensearch-dashboards';
}

export async function importSavedObjects(objects: SavedObject[], options: ImportOptions): Promise<ImportResult> {
  const base = options.url.replace(/\/+$/, '') + (options.space ?? '');
  const headers = authHeaders(options);
  const where = redactUrl(options.url);
  const format = options.format ?? (await detectFormat(base, headers, where));
  const form = new FormData();
  form.append('file', new Blob([inFormat(objects, format).map((o) => JSON.stringify(o)).join('\n') + '\n'], { type: 'application/ndjson' }), 'near-dup.ndjson');
  const response = await call(`${base}/api/saved_objects/_import?overwrite=true`, { method: 'POST', headers, body: form }, where);
  const product = productOf(response);
  const body = (await response.json().catch(() => ({}))) as { success?: boolean; successCount?: number; errors?: Array<{ id: string; error?: { type?: string } }>; message?: string };
  if (response.status === 401 || response.status === 403) {
    throw new UserError(`${where} refused the import (${response.status}); give --username/--password (or an API key) of a user allowed to manage saved objects`);
  }
  if (!response.ok || body.success === false) {
    const details = body.errors?.map((e) => `${e.id}: ${e.error?.type ?? 'error'}`).join(', ') ?? body.message ?? `HTTP ${response.status}`;
    throw new UserError(`${product} at ${where} did not import the saved objects (${details})`);
  }
  const dashboard = objects.find((o) => o.type === 'dashboard');
  return {
    product,
    imported: body.successCount ?? objects.length,
    dashboardUrl: `${base}/app/dashboards#/view/${dashboard?.id ?? ''}`,
  };
}
