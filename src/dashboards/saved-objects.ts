// The saved objects for OpenSearch Dashboards and Kibana (mappings/saved-objects.ndjson: an index pattern /
// data view, saved searches of the clusters and of the partial copies, aggregation-based visualizations, a
// markdown panel that says how to read them, and a dashboard), made concrete for one index, and the index
// pattern's field list near-dup can give before the index exists. Reads the template; no network.
import { readFileSync } from 'node:fs';
import { NEAR_DUP_FIELDS } from '../indices/mapping.js';

const TEMPLATE = new URL('../../mappings/saved-objects.ndjson', import.meta.url);

/** A saved object as the products import it: its id, type, attributes and references. */
export interface SavedObject {
  id: string;
  type: string;
  attributes: Record<string, unknown>;
  references: Array<{ name: string; type: string; id: string }>;
}

/**
 * What the saved objects are made concrete for: the index, the prefix, the title field shown, the markdown panel's
 * text.
 */
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
