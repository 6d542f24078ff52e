// What the explorer page reads, each a query to the engine (no copy of the data is kept): clusters largest
// first (searchable), a cluster's members a page at a time with their similarity to the canonical document,
// one document, and a document's similar hits and partial copies.
import { extractText, valueAt } from '../annotation.js';
import { type EngineClient, totalHits } from '../engine/client.js';
import { UserError } from '../errors.js';
import { findSimilar } from '../jobs/similar.js';
import { sampleEvery } from '../signature.js';
import { minhashValues } from '../sketch/lean-minhash.js';
import { minhashJaccard } from '../sketch/minhash.js';
import { hammingDistance } from '../sketch/simhash.js';

export interface ExploreSource {
  index: string;
  fields: string[];
  prefix: string;
}

export interface ClusterSummary {
  clusterId: string;
  size: number;
  canonical: { id: string; snippet: string };
  bestSimilarity: number | null;
}

export interface Member {
  id: string;
  snippet: string;
  canonical: boolean;
  /** Estimated Jaccard with the canonical document (from the stored signatures). */
  similarity: number | null;
  /** Differing SimHash bits from the canonical document. */
  hamming: number | null;
}

const SNIPPET_CHARS = 160;
/** The engines' default window for from + size. */
const MAX_WINDOW = 10_000;

function snippet(source: unknown, fields: string[]): string {
  try {
    return extractText(source, fields, SNIPPET_CHARS + 1).text.replace(/\s+/g, ' ').slice(0, SNIPPET_CHARS);
  } catch {
    return '';
  }
}

function checkPage(from: number, size: number): void {
  if (!(Number.isInteger(from) && from >= 0 && Number.isInteger(size) && size >= 1 && size <= 200)) throw new UserError(`from must be 0 or more and size 1 to 200, got from=${from} size=${size}`);
  if (from + size > MAX_WINDOW) throw new UserError(`pages end at ${MAX_WINDOW} documents (the engine's result window); search for what you want instead`);
}

/** Clusters largest first; with `q`, the clusters of the documents whose id or text matches it. */
export async function listClusters(client: EngineClient, src: ExploreSource, options: { q?: string; from: number; size: number }): Promise<{ clusters: ClusterSummary[]; total: number }> {
  checkPage(options.from, options.size);
  const f = (name: string) => `${src.prefix}.${name}`;
  const canonical: Record<string, unknown>[] = [{ term: { [f('is_canonical')]: true } }];
  if (options.q?.trim()) {
    const matching = await client.search(src.index, {
      size: 200,
      _source: [f('cluster_id')],
      query: { bool: { filter: [{ exists: { field: f('cluster_id') } }], should: [{ ids: { values: [options.q.trim()] } }, { multi_match: { query: options.q, fields: src.fields, operator: 'and' } }], minimum_should_match: 1 } },
    });
    const ids = [...new Set(matching.hits.hits.map((h) => valueAt(h._source, f('cluster_id')) as string).filter(Boolean))];
    canonical.push({ terms: { [f('cluster_id')]: ids } });
  }
  const found = await client.search(src.index, {
    from: options.from,
    size: options.size,
    track_total_hits: true,
    _source: [...src.fields, f('cluster_id'), f('cluster_size'), f('max_similarity')],
    query: { bool: { filter: canonical } },
    sort: [{ [f('cluster_size')]: 'desc' }, { [f('cluster_id')]: 'asc' }],
  });
  const total = totalHits(found.hits.total);
  const clusters = found.hits.hits.map((h) => ({
    clusterId: String(valueAt(h._source, f('cluster_id'))),
    size: Number(valueAt(h._source, f('cluster_size')) ?? 1),
    canonical: { id: h._id, snippet: snippet(h._source, src.fields) },
    bestSimilarity: (valueAt(h._source, f('max_similarity')) as number | undefined) ?? null,
  }));
  return { clusters, total };
}

/** A page of a cluster's members, the canonical first, then by similarity to it. */
export async function clusterMembers(client: EngineClient, src: ExploreSource, clusterId: string, options: { from: number; size: number }): Promise<{ members: Member[]; total: number }> {
  checkPage(options.from, options.size);
  const f = (name: string) => `${src.prefix}.${name}`;
  const signature = [f('minhash'), f('simhash'), f('is_canonical')];
  const inCluster = { term: { [f('cluster_id')]: clusterId } };
  const head = await client.search(src.index, { size: 1, _source: signature, query: { bool: { filter: [inCluster, { term: { [f('is_canonical')]: true } }] } } });
  const canonical = head.hits.hits[0];
  const page = await client.search(src.index, {
    from: options.from,
    size: options.size,
    track_total_hits: true,
    _source: [...src.fields, ...signature],
    query: { bool: { filter: [inCluster] } },
    sort: [{ [f('is_canonical')]: 'desc' }, { [f('max_similarity')]: { order: 'desc', missing: '_last' } }, { [f('content_hash')]: 'asc' }],
  });
  const base = canonical ? { values: minhashOf(canonical._source, f('minhash')), simhash: valueAt(canonical._source, f('simhash')) as string | undefined } : undefined;
  const members = page.hits.hits.map((h) => {
    const values = minhashOf(h._source, f('minhash'));
    const simhash = valueAt(h._source, f('simhash')) as string | undefined;
    return {
      id: h._id,
      snippet: snippet(h._source, src.fields),
      canonical: valueAt(h._source, f('is_canonical')) === true,
      similarity: base?.values && values ? Math.round(minhashJaccard(base.values, values) * 1000) / 1000 : null,
      hamming: base?.simhash && simhash ? hammingDistance(base.simhash, simhash) : null,
    };
  });
  const total = totalHits(page.hits.total);
  return { members, total };
}

/** One document: its text (the fields joined) and its near-dup fields. */
export async function documentText(client: EngineClient, src: ExploreSource, id: string): Promise<{ id: string; text: string; nearDup: Record<string, unknown> }> {
  const found = await client.search(src.index, { size: 1, query: { ids: { values: [id] } }, _source: [...src.fields, `${src.prefix}.*`] });
  const hit = found.hits.hits[0];
  if (!hit) throw new UserError(`no document "${id}" in "${src.index}"`);
  let text = '';
  try {
    text = extractText(hit._source, src.fields).text;
  } catch {
    // a document without text is shown empty
  }
  const { minhash: _m, sample: _s, bands: _b, simhash_blocks: _sb, ...nearDup } = (valueAt(hit._source, src.prefix) as Record<string, unknown>) ?? {};
  return { id, text, nearDup };
}

/** A document's similar hits, and (when its signature has a containment sample) the documents holding it or held by it. */
export async function similarTo(client: EngineClient, src: ExploreSource, id: string) {
  const similar = await findSimilar(client, { index: src.index, prefix: src.prefix, id, limit: 20 });
  const params = similar.query.params;
  const partial = sampleEvery(params) > 0 ? await findSimilar(client, { index: src.index, prefix: src.prefix, id, limit: 20, measure: 'containment', direction: 'both' }) : undefined;
  return { similar: similar.hits, partialCopies: partial?.hits ?? [], warnings: partial?.warnings ?? [] };
}

function minhashOf(source: unknown, field: string): Uint32Array | undefined {
  const value = valueAt(source, field);
  return typeof value === 'string' ? minhashValues(value) : undefined;
}
