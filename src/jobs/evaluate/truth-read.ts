// What evaluate --truth-field reads from the index, in one scan: each document's source (the truth field),
// the cluster dedup put it in (`<prefix>.cluster_id`), and its text made into a shingle set at once (the
// text itself is not kept). A document without text is left out and counted; one without a source is its
// own source, counted and named.
import { DocumentTextError, extractText, valueAt } from '../../annotation.js';
import type { EngineClient } from '../../engine/client.js';
import { readAhead, scanIndex } from '../../engine/scan.js';
import { UserError } from '../../errors.js';
import { storedPath } from '../../stored/layout.js';
import { shingleSets } from './shingle-sets.js';

/**
 * What `evaluate --truth-field` reads: the index, its text fields, the prefix and the field naming each document's
 * source.
 */
export interface TruthSource {
  index: string;
  fields: string[];
  prefix: string;
  maxChars: number;
  truthField: string;
  onProgress?: (progress: { done: number; total: number; elapsedSeconds: number }) => void;
}

/** Each document read: its shingle set, its source and its cluster, and those left out with why. */
export interface TruthDocs {
  ids: string[];
  sets: Uint32Array[];
  /** Each document's source; undefined: it has none (its own source). */
  labels: Array<string | undefined>;
  clusters: Array<string | undefined>;
  withoutText: { count: number; examples: Array<{ id: string; reason: string }> };
  withoutSource: { count: number; examples: string[] };
}

const EXAMPLES = 5;
const PAGE = 1000;

/** The one line that says dedup has not run (or found nothing): no document holds a cluster_id. */
export async function requireClusters(client: EngineClient, index: string, prefix: string): Promise<number> {
  const field = storedPath(prefix, 'cluster_id');
  const clustered = await client.count(index, { exists: { field } });
  if (clustered === 0) throw new UserError(`no document of "${index}" holds ${field}, so there are no clusters to evaluate: run near-dup dedup --index ${index} first`);
  return clustered;
}

/** A source value: a string or number, or a list of one; anything else is no source. */
function sourceLabel(value: unknown): string | undefined {
  const one = Array.isArray(value) && value.length === 1 ? value[0] : value;
  return typeof one === 'string' || typeof one === 'number' ? String(one) : undefined;
}

/** Every document's source, cluster and shingle set, in one scan (the text itself is not kept). */
export async function readTruthDocs(client: EngineClient, source: TruthSource): Promise<TruthDocs> {
  const started = performance.now();
  const clusterField = storedPath(source.prefix, 'cluster_id');
  const total = await client.count(source.index);
  const docs: TruthDocs = { ids: [], sets: [], labels: [], clusters: [], withoutText: { count: 0, examples: [] }, withoutSource: { count: 0, examples: [] } };
  const pages = scanIndex(client, { index: source.index, sourceIncludes: [...source.fields, source.truthField, clusterField], pageSize: PAGE, pointInTime: client.pointInTime });
  const shingleSet = shingleSets();
  let seen = 0;
  for await (const page of readAhead(pages)) {
    for (const hit of page) {
      seen++;
      let text: string;
      try {
        text = extractText(hit._source, source.fields, source.maxChars).text;
      } catch (err) {
        if (!(err instanceof DocumentTextError)) throw err;
        if (docs.withoutText.count++ < EXAMPLES) docs.withoutText.examples.push({ id: hit._id, reason: err.message });
        continue;
      }
      const label = sourceLabel(valueAt(hit._source, source.truthField));
      if (label === undefined && docs.withoutSource.count++ < EXAMPLES) docs.withoutSource.examples.push(hit._id);
      const cluster = valueAt(hit._source, clusterField);
      docs.ids.push(hit._id);
      docs.sets.push(shingleSet(text));
      docs.labels.push(label);
      docs.clusters.push(typeof cluster === 'string' ? cluster : undefined);
    }
    source.onProgress?.({ done: seen, total, elapsedSeconds: (performance.now() - started) / 1000 });
  }
  return docs;
}
