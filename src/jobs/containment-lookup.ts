// "Which documents hold this one, and which does it hold": containment lookups by the sampled tokens.
//
// Searches sent together (_msearch), each over one clause per sampled query token (the engine's score
// counts the shared sampled tokens):
//  - forward, documents holding at least t of the query: minimum_should_match = ceil(t x sampled), so a
//    document the engine leaves out could not pass the check below;
//  - reverse, documents at least t inside the query, one search per range of their sample size (16 to
//    31, 32 to 63, ...): the count divided by the document's own sample size (function_score,
//    field_value_factor reciprocal), kept by min_score.
// Each candidate is then checked here from the count, the stored sample size and distinct-token count,
// and the stored MinHash (Jaccard) and SimHash, as the Jaccard lookups are.
import { type StoredField, StoredLayout, storedPath } from '../stored/layout.js';
import { checkStored, keyList, paramsShape, type RawStored, type StoredSignature, StoredProblem, storedIn, storedInDocValues } from '../stored/read.js';
import type { EngineClient, SearchResponse } from '../engine/client.js';
import { EngineResponseError } from '../engine/errors.js';
import { UserError } from '../errors.js';
import { sampleEvery } from '../signature.js';
import { type ContainmentEstimate, estimateShare, MAX_QUERY_TERMS, MIN_TRUSTED_SAMPLE } from '../sketch/containment.js';
import { minhashValues } from '../sketch/lean-minhash.js';
import { minhashJaccard } from '../sketch/minhash.js';
import { simhashDistance } from '../sketch/simhash-doc.js';
import { minhashDocValues, withoutDocValues } from './doc-values.js';

/** A reverse hit must have at least this many sampled tokens: fewer say next to nothing. */
export const MIN_REVERSE_SAMPLE = 16;

/** The query side: its signature, sample and distinct-token count. */
export type ContainmentQuery = Pick<StoredSignature, 'params' | 'values' | 'simhash' | 'sample' | 'distinct'>;

/** A document that holds the query, or that the query holds, with the estimate checked here. */
export interface ContainmentHit {
  id: string;
  index: string;
  /** Share of the query's tokens inside the hit, with its 95% interval. */
  containment: number;
  containment_interval: [number, number];
  /** Share of the hit's tokens inside the query, with its 95% interval. */
  reverse_containment: number;
  reverse_containment_interval: [number, number];
  jaccard: number;
  hamming: number;
}

/**
 * Which hits: documents that hold the query (inside, the default: where was this passage quoted?), that
 * the query holds (holds: which documents does this long text quote?), or either (both). The reverse
 * direction costs the engine more: a small document needs few shared tokens, so many documents are counted.
 */
export type ContainmentDirection = 'inside' | 'holds' | 'both';
/** Every direction, in the order the command line offers them. */
export const CONTAINMENT_DIRECTIONS: readonly ContainmentDirection[] = ['inside', 'holds', 'both'];
/** Where was this passage quoted: the question asked most, and the cheaper one for the engine. */
export const DEFAULT_DIRECTION: ContainmentDirection = 'inside';

/** Where to look and what to keep: the index, the prefix, the bar, the direction. */
export interface ContainmentLookup {
  index: string;
  prefix: string;
  minSimilarity: number;
  direction?: ContainmentDirection;
  candidateLimit: number;
  excludeId?: string;
}

/** The hits kept, and how much the engine was asked, for the lookup's report. */
export interface ContainmentResult {
  hits: ContainmentHit[];
  candidates: number;
  /** Sampled query tokens the engine was asked about. */
  sampled: number;
  warnings: string[];
  /** Candidates whose stored signature is damaged: left out, each with the reason. */
  damaged: Array<{ id: string; index: string; reason: string }>;
}

/** What one candidate brings back: the shared count (from the score) and its stored fields. */
interface Candidate {
  id: string;
  index: string;
  shared: number;
  /** The stored fields the check needs, as read (unchecked). */
  raw: RawStored | StoredProblem;
}

const READ: StoredField[] = ['minhash', 'simhash', 'sample_size', 'params'];

/** A stored sample as terms: an array of them, or one string of them separated by spaces; nothing else. */
export function sampleTerms(stored: unknown): string[] {
  return keyList(stored) ?? [];
}

const interval = (e: ContainmentEstimate): [number, number] => [e.low, e.high];

/**
 * The documents that hold the query or that it holds, by its sampled tokens; refused with what to run when the index's
 * signatures have no containment sample.
 */
export async function findContaining(client: EngineClient, query: ContainmentQuery, lookup: ContainmentLookup): Promise<ContainmentResult> {
  const every = sampleEvery(query.params);
  if (every === 0) {
    throw new UserError(
      `the signatures of "${lookup.index}" have no containment sample (params "${query.params}"); run near-dup annotate --index ${lookup.index} --field FIELD again (it samples 1 token in 4 unless --containment-sample says otherwise)`,
    );
  }
  if (query.sample.length === 0) {
    throw new UserError(
      `the query has no sampled token (${query.distinct} distinct tokens, 1 in ${every} sampled): containment needs a longer text, or an index annotated with a smaller --containment-sample`,
    );
  }
  const terms = query.sample.slice(0, MAX_QUERY_TERMS);
  // A query cut short asks about the tokens of lowest rank only (the sample is in rank order): a document's
  // sample is compared on that share of the rank range, estimated by the share of the query's terms kept
  // (ranks are uniform; a compact term does not give its rank back).
  const share = terms.length / query.sample.length;
  const warnings: string[] = [];
  if (terms.length < MIN_TRUSTED_SAMPLE) {
    const e = estimateShare(terms.length, terms.length);
    warnings.push(
      `the query has only ${terms.length} sampled tokens: a containment of 1 may be as low as ${e.low.toFixed(2)} (95% interval); longer texts or a smaller --containment-sample give firmer estimates`,
    );
  }
  const direction = lookup.direction ?? DEFAULT_DIRECTION;
  const candidates = await searchBoth(client, lookup, direction, terms, share, query.params);
  const numPerm = paramsShape(query.params)?.numPerm ?? query.values.length;
  const hits: ContainmentHit[] = [];
  const damaged: ContainmentResult['damaged'] = [];
  for (const c of candidates.values()) {
    const problem = c.raw instanceof StoredProblem ? c.raw : checkStored(c.raw, ['minhash', 'simhash', 'sample_size'], query.params);
    if (problem) {
      if (!problem.otherParams) damaged.push({ id: c.id, index: c.index, reason: problem.reason });
      continue;
    }
    const raw = c.raw as RawStored; // checked above
    const sampleSize = raw.sample_size as number;
    const forward = estimateShare(c.shared, terms.length);
    const reverse = estimateShare(c.shared, Math.max(c.shared, sampleSize * share));
    const inside = direction !== 'holds' && forward.value >= lookup.minSimilarity;
    const holds = direction !== 'inside' && reverse.value >= lookup.minSimilarity;
    if (!inside && !holds) continue;
    hits.push({
      id: c.id,
      index: c.index,
      containment: forward.value,
      containment_interval: interval(forward),
      reverse_containment: reverse.value,
      reverse_containment_interval: interval(reverse),
      // The whole texts' Jaccard, the core words of `;core=` signatures aside.
      jaccard: minhashJaccard(query.values.subarray(0, numPerm), minhashValues(raw.minhash as string)),
      hamming: simhashDistance(query.simhash, raw.simhash as string),
    });
  }
  hits.sort((a, b) => Math.max(b.containment, b.reverse_containment) - Math.max(a.containment, a.reverse_containment) || b.jaccard - a.jaccard || (a.id < b.id ? -1 : 1));
  return { hits, candidates: candidates.size, sampled: terms.length, warnings, damaged };
}

/** One constant-score clause per sampled token: a document's score is the number it shares. */
function sampleClauses(prefix: string, terms: readonly string[]): object[] {
  return terms.map((term) => ({ constant_score: { filter: { term: { [storedPath(prefix, 'sample')]: term } }, boost: 1 } }));
}

/**
 * The documents that hold at least `share` of the sampled tokens `terms` (their score: how many they hold),
 * within `filter`; a document left out could not reach the share.
 */
export function holdingQuery(prefix: string, terms: readonly string[], share: number, filter: object[], mustNot: object[] = []): object {
  return { bool: { should: sampleClauses(prefix, terms), minimum_should_match: Math.max(1, Math.ceil(share * terms.length - 1e-9)), filter, must_not: mustNot } };
}

/**
 * The reverse searches, by the hit's sample size: sizes from `MIN_REVERSE_SAMPLE` to the most that can
 * reach the share, doubling. Each range asks for ceil(t x its smallest size) shared tokens, so the engine
 * counts the tokens of far fewer documents than one search over every size would.
 */
function reverseQueries(prefix: string, terms: readonly string[], t: number, share: number, filter: object[], mustNot: object[]): object[] {
  const sampleSize = storedPath(prefix, 'sample_size');
  const largest = Math.floor(terms.length / (t * share) + 1e-9);
  const queries: object[] = [];
  for (let smallest = MIN_REVERSE_SAMPLE; smallest <= largest; smallest *= 2) {
    const range = { range: { [sampleSize]: { gte: smallest, lte: Math.min(largest, 2 * smallest - 1) } } };
    queries.push({
      function_score: {
        query: {
          bool: { should: sampleClauses(prefix, terms), minimum_should_match: Math.max(1, Math.ceil(t * smallest * share - 1e-9)), filter: [...filter, range], must_not: mustNot },
        },
        // score = shared / sample size
        functions: [{ field_value_factor: { field: sampleSize, modifier: 'reciprocal', missing: 1e9 } }],
        boost_mode: 'multiply',
      },
    });
  }
  return queries;
}

/** The forward and the reverse searches in one request, their candidates merged by index and id. */
async function searchBoth(
  client: EngineClient,
  lookup: ContainmentLookup,
  direction: ContainmentDirection,
  terms: string[],
  share: number,
  params: string,
): Promise<Map<string, Candidate>> {
  const t = lookup.minSimilarity;
  const mustNot = lookup.excludeId !== undefined ? [{ ids: { values: [lookup.excludeId] } }] : [];
  const filter = [{ term: { [storedPath(lookup.prefix, 'params')]: params } }];
  // A document holding ceil(t x sampled) of the query's tokens has at least that many of its own.
  const atLeast = { range: { [storedPath(lookup.prefix, 'sample_size')]: { gte: Math.max(1, Math.ceil(t * terms.length - 1e-9)) } } };
  const searches: Search[] = [];
  if (direction !== 'holds') searches.push({ query: holdingQuery(lookup.prefix, terms, t, [...filter, atLeast], mustNot), sharedOf: (score) => score });
  if (direction !== 'inside') {
    // min_score keeps shared >= t x (sample size x share), less a rounding margin.
    for (const query of reverseQueries(lookup.prefix, terms, t, share, filter, mustNot)) searches.push({ query, minScore: t * share - 1e-6, sharedOf: (score, size) => score * size });
  }
  const merged = new Map<string, Candidate>();
  for (const c of await searchCandidates(client, lookup, searches, paramsShape(params)?.core === true)) merged.set(`${c.index}\u0000${c.id}`, c);
  return merged;
}

/** One candidate search: its query, the least score kept, and the shared count its score stands for. */
interface Search {
  query: object;
  minScore?: number;
  sharedOf: (score: number, sampleSize: number) => number;
}

/** The searches in one _msearch: ids, the shared count from the score, and the stored fields the check needs. */
async function searchCandidates(client: EngineClient, lookup: ContainmentLookup, searches: Search[], core: boolean): Promise<Candidate[]> {
  const layout = new StoredLayout(lookup.prefix);
  // A `;core=` signature's core field (checked with its MinHash) has no doc values: read from _source.
  const fromSource = core || !(await minhashDocValues(client, lookup.index, layout.path('minhash')));
  const fields = core ? layout.paths(...READ, 'core') : layout.paths(...READ);
  const bodies = searches.map((s) => ({
    size: lookup.candidateLimit,
    track_total_hits: false,
    query: s.query,
    ...(s.minScore !== undefined ? { min_score: s.minScore } : {}),
    ...(fromSource ? { _source: fields } : { _source: false, docvalue_fields: fields }),
  }));
  let responses: SearchResponse[];
  try {
    responses = await client.msearch(lookup.index, bodies);
  } catch (err) {
    if (fromSource || !(err instanceof EngineResponseError && err.statusCode === 400)) throw err;
    withoutDocValues(lookup.index);
    return searchCandidates(client, lookup, searches, core);
  }
  return responses.flatMap((response, k) =>
    response.hits.hits.map((h) => {
      const stored = fromSource ? storedIn(h._source, layout) : storedInDocValues(h.fields, layout, READ);
      const sampleSize = stored instanceof StoredProblem || typeof stored.sample_size !== 'number' ? 0 : stored.sample_size;
      return { id: h._id, index: h._index, shared: Math.round(searches[k].sharedOf(h._score ?? 0, sampleSize)), raw: stored };
    }),
  );
}
