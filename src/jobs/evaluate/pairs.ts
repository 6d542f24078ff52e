// The pairs an evaluation is made of, read from the engine: a sample of documents (by a seeded rank of their
// ids: the same documents give the same sample on any engine or number of shards), each paired with some of
// its LSH candidates (a shared band key), of what the engine's own more_like_this finds for it (so that
// pairs LSH missed are counted), and with a few other documents of the sample (the background). Or the
// pairs of the user's labels. For each pair: exact Jaccard of the two texts' token sets (every distinct
// token, as MinHash sees them), the estimate from the stored signatures, and whether LSH makes it a candidate.
import { DocumentTextError, extractText, valueAt } from '../../annotation.js';
import { StoredLayout, storedPath } from '../../stored/layout.js';
import { checkStored, keyList, paramsShape, type RawStored, StoredProblem, storedIn, storedValues } from '../../stored/read.js';
import type { EngineClient } from '../../engine/client.js';
import { UserError } from '../../errors.js';
import { createSigner, type Signer, signerOptionsFromParams } from '../../signature.js';
import { signatureComparer } from '../../sketch/core-similarity.js';
import { MIN_TRUSTED_SAMPLE } from '../../sketch/containment.js';
import { paramsHeld } from '../params-held.js';
import { idRank, lowestRanked, sampleByIdRank } from './id-rank.js';
import type { EvaluatedPair } from './quality.js';

/** A pair the user labels a duplicate or not. */
export interface PairLabel {
  a: string;
  b: string;
  duplicate: boolean;
}

/**
 * Where an evaluation's pairs come from: the index and its fields, then how many documents to sample with how many
 * neighbours and random partners each, or the user's labels.
 */
export interface PairSource {
  index: string;
  fields: string[];
  prefix: string;
  /** Documents drawn at random (default 200). */
  sample: number;
  seed: number;
  /** Neighbours asked per document, of LSH and of more_like_this each (default 20). */
  neighbours: number;
  /** Random partners per sampled document (default 5). */
  randomPartners: number;
  maxChars: number;
  labels?: PairLabel[];
  /** Called as the work goes: sampled documents whose neighbours were asked for, then documents read. */
  onProgress?: (progress: EvaluateProgress) => void;
}

/** Where an evaluation is: its stage, and how much of it is done. */
export interface EvaluateProgress {
  stage: 'neighbours' | 'documents';
  done: number;
  total: number;
  elapsedSeconds: number;
}

interface Doc {
  id: string;
  tokens: Set<string>;
  /** The MinHash values, followed by the core words of `;core=` params. */
  minhash: Uint32Array;
  bands: Set<string>;
  /** The stored containment sample (empty when the signatures have none). */
  sample: Set<string>;
}

/** The pairs gathered, the params they were signed with, and the documents left out. */
export interface GatheredPairs {
  params: string;
  pairs: EvaluatedPair[];
  /** Sampled or labelled documents left out (no text, no signature), with why. */
  skipped: Array<{ id: string; reason: string }>;
}

const MSEARCH_BATCH = 50;
/** Neighbours asked of each query, of which `neighbours` are kept (at least this many). */
const NEIGHBOUR_POOL = 100;
const READ_BATCH = 500;

/**
 * The pairs of an evaluation, each measured (exact Jaccard, the estimate, whether LSH finds it), read from the engine
 * as the file header says.
 */
export async function gatherPairs(client: EngineClient, source: PairSource): Promise<GatheredPairs> {
  const started = performance.now();
  const report = (stage: EvaluateProgress['stage'], done: number, total: number) =>
    source.onProgress?.({ stage, done, total, elapsedSeconds: (performance.now() - started) / 1000 });
  const held = await paramsHeld(client, source.index, source.prefix);
  const params = held[0].key; // the most common parameters; pairs are made within them
  const options = signerOptionsFromParams(params);
  if (!options) throw new UserError(`"${source.index}" holds signatures made with "${params}", which this version cannot read; annotate it again`);
  // A sample of every token: the exact set (template tokens too, so the template set itself is not needed).
  const { templateDigest: _, templateMode: __, ...untemplated } = options;
  const tokenizer = createSigner({ ...untemplated, containmentSample: 1 });
  const reader = new DocReader(client, source, tokenizer, params);
  const wanted = source.labels ? labelledPairs(source.labels) : await samplePairs(client, source, params, report);
  await reader.load([...new Set(wanted.flatMap((w) => [w.a, w.b]))], report);
  const pairs: EvaluatedPair[] = [];
  // Estimated as dedup compares them (every document read is of `params`).
  const shape = paramsShape(params);
  const compare = signatureComparer(shape?.numPerm ?? 0, shape?.core === true);
  for (const w of wanted) {
    const a = reader.docs.get(w.a);
    const b = reader.docs.get(w.b);
    if (a && b) pairs.push({ ...w, ...measure(a, b, compare) });
  }
  return { params, pairs, skipped: reader.skipped };
}

type WantedPair = Pick<EvaluatedPair, 'a' | 'b' | 'source' | 'duplicate'>;

function labelledPairs(labels: PairLabel[]): WantedPair[] {
  return labels.map((l) => ({ a: l.a, b: l.b, source: 'labels', duplicate: l.duplicate }));
}

type Report = (stage: EvaluateProgress['stage'], done: number, total: number) => void;

async function samplePairs(client: EngineClient, source: PairSource, params: string, report: Report): Promise<WantedPair[]> {
  const signed = { term: { [storedPath(source.prefix, 'params')]: params } };
  const bandsPath = storedPath(source.prefix, 'bands');
  // Drawn by a seeded rank of the ids (id-rank.ts), read back in that order.
  const ids = await sampleByIdRank(client, source.index, signed, source.sample, source.seed);
  const drawn = ids.length === 0 ? [] : (await client.search(source.index, { size: ids.length, _source: [bandsPath], query: { ids: { values: ids } } })).hits.hits;
  const byId = new Map(drawn.map((hit) => [hit._id, hit]));
  const sampled = ids.flatMap((id) => byId.get(id) ?? []);
  if (sampled.length < 2) throw new UserError(`"${source.index}" has ${sampled.length} signed document(s); an evaluation needs at least 2`);
  const wanted = new Map<string, WantedPair>();
  const add = (a: string, b: string, kind: EvaluatedPair['source']) => {
    if (a === b) return;
    const [x, y] = a < b ? [a, b] : [b, a];
    const key = `${x}\u0000${y}`;
    if (!wanted.has(key)) wanted.set(key, { a: x, b: y, source: kind });
  };
  // Each document's neighbours: a pool of them asked for, the `neighbours` of lowest seeded rank kept, so
  // that the engine's order of equal scores (its shards' own) does not choose.
  const pool = Math.max(NEIGHBOUR_POOL, source.neighbours);
  const chosen = (id: string, hits: Array<{ _id: string }>) =>
    lowestRanked(hits.filter((n) => n._id !== id).map((n) => ({ id: n._id, rank: idRank(source.seed, id, n._id) })), source.neighbours).map((n) => n.id);
  for (let i = 0; i < sampled.length; i += MSEARCH_BATCH) {
    const batch = sampled.slice(i, i + MSEARCH_BATCH);
    const bodies = batch.flatMap((hit) => [
      { size: pool, _source: false, query: { bool: { filter: [signed, { terms: { [bandsPath]: (valueAt(hit._source, bandsPath) as string[]) ?? [] } }] } } },
      {
        size: pool,
        _source: false,
        query: { bool: { filter: [signed], must: [{ more_like_this: { fields: source.fields, like: [{ _index: hit._index, _id: hit._id }], min_term_freq: 1, min_doc_freq: 1, max_query_terms: 50 } }] } },
      },
    ]);
    const answers = await client.msearch(source.index, bodies);
    batch.forEach((hit, j) => {
      for (const n of chosen(hit._id, answers[2 * j].hits.hits)) add(hit._id, n, 'lsh');
      for (const n of chosen(hit._id, answers[2 * j + 1].hits.hits)) add(hit._id, n, 'mlt');
    });
    report('neighbours', Math.min(i + MSEARCH_BATCH, sampled.length), sampled.length);
  }
  // The background: each sampled document with a few others of the sample, chosen by a seeded walk.
  let state = source.seed >>> 0 || 1;
  const next = () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
  for (const hit of sampled) {
    for (let k = 0; k < source.randomPartners; k++) add(hit._id, sampled[Math.floor(next() * sampled.length)]._id, 'random');
  }
  return [...wanted.values()];
}

/** Reads documents by id, their texts made into token sets once. */
class DocReader {
  readonly docs = new Map<string, Doc>();
  readonly skipped: Array<{ id: string; reason: string }> = [];

  constructor(
    private readonly client: EngineClient,
    private readonly source: PairSource,
    private readonly tokenizer: Signer,
    /** The parameter set the pairs are made within: a stored signature must be whole and of these. */
    private readonly params: string,
  ) {}

  async load(ids: string[], report: Report = () => undefined): Promise<void> {
    const prefix = this.source.prefix;
    for (let i = 0; i < ids.length; i += READ_BATCH) {
      const batch = ids.slice(i, i + READ_BATCH);
      const found = await this.client.search(this.source.index, {
        size: batch.length,
        query: { ids: { values: batch } },
        _source: [...this.source.fields, ...new StoredLayout(prefix).paths('minhash', 'core', 'bands', 'sample', 'params')],
      });
      for (const hit of found.hits.hits) this.read(hit._id, hit._source);
      const answered = new Set(found.hits.hits.map((h) => h._id));
      for (const id of batch) if (!answered.has(id)) this.skipped.push({ id, reason: 'not in the index' });
      report('documents', Math.min(i + READ_BATCH, ids.length), ids.length);
    }
  }

  private read(id: string, source: unknown): void {
    const raw = storedIn(source, new StoredLayout(this.source.prefix));
    const problem = raw instanceof StoredProblem ? raw : checkStored(raw, ['minhash', 'bands'], this.params, ['sample']);
    if (problem) {
      this.skipped.push({ id, reason: problem.otherParams ? problem.reason : `stored signature left out: ${problem.reason}` });
      return;
    }
    const stored = raw as RawStored;
    try {
      const { text } = extractText(source, this.source.fields, this.source.maxChars);
      const tokens = new Set(this.tokenizer(text).sample);
      const bands = new Set(stored.bands as string[]);
      const sample = new Set(keyList(stored.sample) ?? []);
      this.docs.set(id, { id, tokens, minhash: storedValues(stored), bands, sample });
    } catch (err) {
      if (!(err instanceof DocumentTextError)) throw err;
      this.skipped.push({ id, reason: err.message });
    }
  }
}

function shared(x: Set<string>, y: Set<string>): number {
  let n = 0;
  for (const t of x) if (y.has(t)) n++;
  return n;
}

function measure(a: Doc, b: Doc, compare: (x: Uint32Array, y: Uint32Array) => number): Pick<EvaluatedPair, 'exact' | 'estimated' | 'candidate' | 'containment'> {
  const both = shared(a.tokens, b.tokens);
  const union = a.tokens.size + b.tokens.size - both;
  const estimated = compare(a.minhash, b.minhash);
  let candidate = false;
  for (const band of a.bands) if (b.bands.has(band)) candidate = true;
  return { exact: union === 0 ? 0 : both / union, estimated, candidate, containment: containment(a, b, both) };
}

/** How much of the smaller text is inside the other, exactly and as the stored samples estimate it (trusted from 32 sampled tokens). */
function containment(a: Doc, b: Doc, both: number): EvaluatedPair['containment'] {
  const [inner, outer] = a.tokens.size <= b.tokens.size ? [a, b] : [b, a];
  const exact = inner.tokens.size === 0 ? 0 : both / inner.tokens.size;
  const estimated = inner.sample.size >= MIN_TRUSTED_SAMPLE ? shared(inner.sample, outer.sample) / inner.sample.size : null;
  return { exact, estimated };
}
