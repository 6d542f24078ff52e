// What the explorer page reads, each a query to the engine (no copy of the data is kept): clusters largest
// first (searchable), a cluster's members a page at a time with their similarity to the canonical document,
// one document, and a document's similar hits and partial copies.
import { randomUUID } from 'node:crypto';
import { extractText, valueAt } from '../annotation.js';
import { type EngineClient, totalHits } from '../engine/client.js';
import { EngineResponseError } from '../engine/errors.js';
import { UserError } from '../errors.js';
import { type MissingStep, missingStep } from './next-step.js';
import { MAX_ID_BYTES, notAPosition, ParamError } from './params.js';
import { findSimilar } from '../jobs/similar.js';
import { sampleEvery } from '../signature.js';
import { signatureComparer } from '../sketch/core-similarity.js';
import { StoredLayout, storedPath, type StoredField } from '../stored/layout.js';
import { checkStored, paramsShape, type RawStored, StoredProblem, storedIn, storedValues } from '../stored/read.js';
import { simhashDistance } from '../sketch/simhash-doc.js';

/** Which index the explorer reads, with which text fields and prefix. */
export interface ExploreSource {
  index: string;
  fields: string[];
  prefix: string;
}

/** One cluster in the list: its size and its canonical document. */
export interface ClusterSummary {
  clusterId: string;
  size: number;
  canonical: { id: string; snippet: string };
  bestSimilarity: number | null;
}

/** One member of a cluster, with its similarity to the canonical document. */
export interface Member {
  id: string;
  snippet: string;
  canonical: boolean;
  /** Estimated Jaccard with the canonical document (from the stored signatures). */
  similarity: number | null;
  /** Differing SimHash bits from the canonical document. */
  hamming: number | null;
  /** Why its stored signature cannot be compared, when it is damaged. */
  damaged?: string;
}

const SNIPPET_CHARS = 160;
/** How long a cluster's pages of members stay open between two asks for more (a scroll's keep-alive). */
const MEMBER_PAGES_KEEP_ALIVE = '2m';

/**
 * The member scrolls the explorer holds open, at most `limit` at a time: opening one more closes the
 * longest-held one, so no page (nor a script calling the API) can use up the cluster's search contexts.
 * A page's `next` is a token this explorer made, never the engine's scroll id: a client cannot read or
 * close other scrolls of the cluster (an OpenSearch scroll id can be guessed from another), nor follow
 * one cluster's scroll from another's page.
 */
export class MemberScrolls {
  /** token -> the scroll and the cluster it pages, in the order they were opened. */
  private readonly open = new Map<string, { scrollId: string; clusterId: string }>();

  constructor(
    private readonly client: EngineClient,
    readonly limit = 8,
  ) {}

  /** The scroll a token of this cluster stands for; a UserError for one this explorer did not give (or closed). */
  scrollOf(token: string, clusterId: string): string {
    const entry = this.open.get(token);
    if (!entry || entry.clusterId !== clusterId) {
      throw new ParamError('after', `after: these pages of members are closed (read to the end, left unread for ${MEMBER_PAGES_KEEP_ALIVE}, or closed for newer ones), or were never opened here: open the cluster again (leave after out)`);
    }
    return entry.scrollId;
  }

  /** A scroll open now (in place of the one `previous` stood for): the token that stands for it. */
  async opened(scrollId: string, clusterId: string, previous?: string): Promise<string> {
    if (previous !== undefined) this.open.delete(previous);
    const token = randomUUID();
    this.open.set(token, { scrollId, clusterId });
    for (const [oldest, entry] of this.open) {
      if (this.open.size <= this.limit) break;
      this.open.delete(oldest);
      await this.clear(entry.scrollId);
    }
    return token;
  }

  /** A scroll read to its end: cleared on the engine, its token forgotten. */
  async closed(scrollId: string, previous?: string): Promise<void> {
    if (previous !== undefined) this.open.delete(previous);
    await this.clear(scrollId);
  }

  private async clear(scrollId: string): Promise<void> {
    await this.client.request('DELETE', '/_search/scroll', { scroll_id: [scrollId] }).catch(() => undefined);
  }
}

function snippet(source: unknown, fields: string[]): string {
  try {
    return extractText(source, fields, SNIPPET_CHARS + 1).text.replace(/\s+/g, ' ').slice(0, SNIPPET_CHARS);
  } catch {
    return '';
  }
}

function checkSize(size: number): void {
  if (!(Number.isInteger(size) && size >= 1 && size <= 200)) throw new UserError(`size must be 1 to 200, got ${size}`);
}

/**
 * A list's position as a token for the page (the sort values of its last entry: a cluster size and a
 * cluster id), and back; a token of any other shape is refused here, never handed to the engine to fail on.
 */
const cursor = {
  of: (sort: unknown[] | undefined) => (sort ? Buffer.from(JSON.stringify(sort)).toString('base64url') : undefined),
  read(token: string): unknown[] {
    let sort: unknown;
    try {
      sort = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
    } catch {
      // refused below
    }
    if (Array.isArray(sort) && sort.length === 2 && Number.isSafeInteger(sort[0]) && typeof sort[1] === 'string' && Buffer.byteLength(sort[1]) <= MAX_ID_BYTES) return sort;
    throw notAPosition(token);
  },
};

/**
 * Clusters largest first; with `q`, the clusters of the documents whose id or text matches it. Pages follow
 * one another by `after` (the `next` of the page before: search_after on size and cluster id, which is
 * unique), so a list of any length pages through whole, past the engine's result window. An empty list of
 * an index not yet signed or deduplicated says which step is missing, and its command (next-step.ts).
 */
export async function listClusters(
  client: EngineClient,
  src: ExploreSource,
  options: { q?: string; size: number; after?: string },
): Promise<{ clusters: ClusterSummary[]; total: number; next?: string } & Partial<MissingStep>> {
  checkSize(options.size);
  const f = (name: StoredField) => storedPath(src.prefix, name);
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
    size: options.size,
    track_total_hits: true,
    _source: [...src.fields, f('cluster_id'), f('cluster_size'), f('max_similarity')],
    query: { bool: { filter: canonical } },
    // Unmapped until the index is deduplicated: then no document matches, and missingStep says why.
    sort: [{ [f('cluster_size')]: { order: 'desc', unmapped_type: 'integer' } }, { [f('cluster_id')]: { order: 'asc', unmapped_type: 'keyword' } }],
    ...(options.after ? { search_after: cursor.read(options.after) } : {}),
  });
  const hits = found.hits.hits;
  const clusters = hits.map((h) => ({
    clusterId: String(valueAt(h._source, f('cluster_id'))),
    size: Number(valueAt(h._source, f('cluster_size')) ?? 1),
    canonical: { id: h._id, snippet: snippet(h._source, src.fields) },
    bestSimilarity: (valueAt(h._source, f('max_similarity')) as number | undefined) ?? null,
  }));
  const total = totalHits(found.hits.total);
  const step = total === 0 ? await missingStep(client, src) : undefined;
  return { clusters, total, next: hits.length === options.size ? cursor.of(hits[hits.length - 1].sort) : undefined, ...step };
}

interface MembersPage {
  _scroll_id?: string;
  hits: { total?: number | { value: number }; hits: Array<{ _id: string; _source?: Record<string, unknown> }> };
}

/**
 * A page of a cluster's members, the canonical first, then by similarity to it. Members tie (exact copies
 * share every sorted value), so the pages after the first follow a scroll the first one opened (`next`),
 * which pages through a cluster of any size, past the engine's result window; it is closed once read to
 * its end, when `scrolls` has too many open, or after two minutes unread.
 */
export async function clusterMembers(
  client: EngineClient,
  src: ExploreSource,
  clusterId: string,
  options: { size: number; after?: string; scrolls: MemberScrolls },
): Promise<{ members: Member[]; total: number; next?: string }> {
  checkSize(options.size);
  const f = (name: StoredField) => storedPath(src.prefix, name);
  const layout = new StoredLayout(src.prefix);
  const signature = layout.paths('minhash', 'core', 'simhash', 'params', 'is_canonical');
  const inCluster = { term: { [f('cluster_id')]: clusterId } };
  const head = await client.search(src.index, { size: 1, _source: signature, query: { bool: { filter: [inCluster, { term: { [f('is_canonical')]: true } }] } } });
  const canonical = head.hits.hits[0];
  const page = options.after
    ? await nextMembers(client, options.scrolls.scrollOf(options.after, clusterId))
    : await client.request<MembersPage>(
        'POST',
        `/${encodeURIComponent(src.index)}/_search`,
        {
          size: options.size,
          track_total_hits: true,
          _source: [...src.fields, ...signature],
          query: { bool: { filter: [inCluster] } },
          // Nearest the canonical first (canonical_similarity; an index deduplicated before that field has only
          // max_similarity, hence unmapped_type).
          sort: [
            { [f('is_canonical')]: 'desc' },
            { [f('canonical_similarity')]: { order: 'desc', missing: '_last', unmapped_type: 'float' } },
            { [f('max_similarity')]: { order: 'desc', missing: '_last' } },
            { [f('content_hash')]: 'asc' },
          ],
        },
        { scroll: MEMBER_PAGES_KEEP_ALIVE },
      );
  const base = canonical ? comparable(canonical._source, layout) : undefined;
  const members = page.hits.hits.map((h) => {
    const own = comparable(h._source, layout);
    return {
      id: h._id,
      snippet: snippet(h._source, src.fields),
      canonical: valueAt(h._source, f('is_canonical')) === true,
      similarity: base && own.values ? similarityTo(base, own) : null,
      hamming: base?.simhash && own.simhash ? simhashDistance(base.simhash, own.simhash) : null,
      // A damaged stored signature is shown as such, with no measure, and the page goes on.
      ...(own.damaged ? { damaged: own.damaged } : {}),
    };
  });
  const more = members.length === options.size && page._scroll_id !== undefined;
  let next: string | undefined;
  if (page._scroll_id && more) next = await options.scrolls.opened(page._scroll_id, clusterId, options.after);
  else if (page._scroll_id) await options.scrolls.closed(page._scroll_id, options.after);
  return { members, total: totalHits(page.hits.total), next };
}

/** The next page of an open scroll of members; asked once (a second ask would skip a page). */
async function nextMembers(client: EngineClient, scrollId: string): Promise<MembersPage> {
  try {
    return await client.request<MembersPage>('POST', '/_search/scroll', { scroll: MEMBER_PAGES_KEEP_ALIVE, scroll_id: scrollId }, undefined, { retry: false });
  } catch (err) {
    if (err instanceof EngineResponseError && (err.statusCode === 404 || err.statusCode === 400)) {
      throw new ParamError('after', `after: these pages of members are closed (read to the end, or left unread for ${MEMBER_PAGES_KEEP_ALIVE}): open the cluster again (leave after out)`);
    }
    throw err;
  }
}

/** One document: its text (the fields joined) and its near-dup fields. */
export async function documentText(client: EngineClient, src: ExploreSource, id: string): Promise<{ id: string; text: string; nearDup: Record<string, unknown> }> {
  const found = await client.search(src.index, { size: 1, query: { ids: { values: [id] } }, _source: [...src.fields, `${src.prefix}.*`] });
  const hit = found.hits.hits[0];
  if (!hit) throw new ParamError('id', `no document ${JSON.stringify(id)} in "${src.index}": check the id`, 404);
  let text = '';
  try {
    text = extractText(hit._source, src.fields).text;
  } catch {
    // a document without text is shown empty
  }
  const stored = valueAt(hit._source, src.prefix);
  const { minhash: _m, sample: _s, bands: _b, simhash_blocks: _sb, ...nearDup } = stored && typeof stored === 'object' && !Array.isArray(stored) ? (stored as Record<string, unknown>) : {};
  return { id, text, nearDup };
}

/** A document's similar hits, and (when its signature has a containment sample) the documents holding it or held by it. */
export async function similarTo(client: EngineClient, src: ExploreSource, id: string) {
  let similar: Awaited<ReturnType<typeof findSimilar>>;
  try {
    similar = await findSimilar(client, { index: src.index, prefix: src.prefix, id, limit: 20 });
  } catch (err) {
    // The document's own signature is damaged: nothing to look up with, said on the page.
    if (err instanceof UserError && /no usable near-dup signature/.test(err.message)) return { similar: [], partialCopies: [], warnings: [err.message] };
    // Said without the job's wording, which names the cluster's address.
    if (err instanceof UserError && /^no document /.test(err.message)) throw new ParamError('id', `no document ${JSON.stringify(id)} in "${src.index}": check the id`, 404);
    throw err;
  }
  const params = similar.query.params;
  const partial = sampleEvery(params) > 0 ? await findSimilar(client, { index: src.index, prefix: src.prefix, id, limit: 20, measure: 'containment', direction: 'both' }) : undefined;
  return { similar: similar.hits, partialCopies: partial?.hits ?? [], warnings: partial?.warnings ?? [] };
}

/** A document's values (with the core words of `;core=` params), how they compare, and its SimHash when its stored signature is whole; else why not. */
function comparable(source: unknown, layout: StoredLayout): { values?: Uint32Array; numPerm?: number; core?: boolean; simhash?: string; damaged?: string } {
  const raw = storedIn(source, layout);
  const problem = raw instanceof StoredProblem ? raw : checkStored(raw, ['minhash', 'simhash']);
  if (problem) return { damaged: problem.reason };
  const stored = raw as RawStored;
  const shape = paramsShape(stored.params as string);
  return { values: storedValues(stored), numPerm: shape?.numPerm, core: shape?.core === true, simhash: stored.simhash as string };
}

/** A member's similarity to the canonical, as dedup compares them (rounded); none between signatures that cannot be compared. */
function similarityTo(base: ReturnType<typeof comparable>, own: ReturnType<typeof comparable>): number | null {
  if (!base.values || !own.values || base.core !== own.core || base.numPerm !== own.numPerm || base.values.length !== own.values.length) return null;
  return Math.round(signatureComparer(base.numPerm as number, base.core === true)(base.values, own.values) * 1000) / 1000;
}
