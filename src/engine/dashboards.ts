// Saved objects for OpenSearch Dashboards and Kibana (mappings/saved-objects.ndjson, one file that both
// import: an index pattern / data view, a saved search of duplicates, four aggregation-based
// visualizations and a dashboard), made concrete for one index and imported through the saved objects
// API of whichever of the two answers.
import { readFileSync } from 'node:fs';
import { UserError } from '../errors.js';
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
}

export interface ImportResult {
  product: 'OpenSearch Dashboards' | 'Kibana' | 'unknown';
  imported: number;
  dashboardUrl: string;
}

export async function importSavedObjects(objects: SavedObject[], options: ImportOptions): Promise<ImportResult> {
  const base = options.url.replace(/\/+$/, '') + (options.space ?? '');
  const headers: Record<string, string> = { 'osd-xsrf': 'true', 'kbn-xsrf': 'true' };
  if (options.username !== undefined) headers.authorization = `Basic ${Buffer.from(`${options.username}:${options.password ?? ''}`).toString('base64')}`;
  else if (options.apiKey) headers.authorization = `ApiKey ${options.apiKey}`;
  else if (options.bearerToken) headers.authorization = `Bearer ${options.bearerToken}`;
  const form = new FormData();
  form.append('file', new Blob([objects.map((o) => JSON.stringify(o)).join('\n') + '\n'], { type: 'application/ndjson' }), 'near-dup.ndjson');
  const where = redactUrl(options.url);
  let response: Response;
  try {
    response = await fetch(`${base}/api/saved_objects/_import?overwrite=true`, { method: 'POST', headers, body: form });
  } catch (err) {
    throw new UserError(`cannot reach OpenSearch Dashboards or Kibana at ${where}: ${(err as Error).message}; check --dashboards-url and that it is running (docker compose up -d)`);
  }
  const product = response.headers.has('osd-name') ? 'OpenSearch Dashboards' : response.headers.has('kbn-name') ? 'Kibana' : 'unknown';
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
