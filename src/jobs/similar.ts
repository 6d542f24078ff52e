// "More like this" by signature: candidates from the engine (band keys, SimHash blocks), verified here
// against the stored signatures, ranked. Only the signature fields are read, never the documents' text.
import { DEFAULT_PREFIX, type StoredField, StoredLayout } from '../stored/layout.js';
import { checkStored, paramsShape, type RawStored, readSignature, type StoredSignature, storedSignatureOf, StoredProblem, storedIn, storedInDocValues, storedValues } from '../stored/read.js';
import type { EngineClient } from '../engine/client.js';
import { EngineResponseError } from '../engine/errors.js';
import { requireWholeNumbers, UsageError, UserError } from '../errors.js';
import { createSigner, resolveSignerSettings, signerOptionsFromParams, type SignerOptions } from '../signature.js';
import { signatureComparer } from '../sketch/core-similarity.js';
import { blocksToMatch } from '../sketch/simhash.js';
import { simhashDistance } from '../sketch/simhash-doc.js';
import { CONTAINMENT_DIRECTIONS, type ContainmentDirection, DEFAULT_DIRECTION, findContaining } from './containment-lookup.js';
import { minhashDocValues, withoutDocValues } from './doc-values.js';
import { paramsHeld } from './params-held.js';
import { loadTemplate } from '../indices/template-store.js';
import { planMapping } from '../indices/mapping.js';

/** Which candidates `similar` asks the engine for: by band keys, by SimHash blocks, or both. */
export type SimilarMethod = 'minhash' | 'simhash' | 'both';
/** What a hit is measured by: the Jaccard of the two token sets, or how much of one is inside the other. */
export type SimilarMeasure = 'jaccard' | 'containment';
/** Every measure, in the order the command line offers them. */
export const SIMILAR_MEASURES: readonly SimilarMeasure[] = ['jaccard', 'containment'];
/** The default minSimilarity of each measure. */
export const DEFAULT_MIN_SIMILARITY: Readonly<Record<SimilarMeasure, number>> = { jaccard: 0.5, containment: 0.8 };

/** Every default of findSimilar, in one place (the command line's defaults are these too). */
export const SIMILAR_DEFAULTS = {
  prefix: DEFAULT_PREFIX,
  measure: 'jaccard',
  direction: DEFAULT_DIRECTION,
  method: 'both',
  maxDistance: 3,
  limit: 10,
  candidateLimit: 1000,
} as const satisfies Partial<SimilarOptions>;

/** What `similar` looks up (a stored document or a text) and what it keeps. */
export interface SimilarOptions {
  index: string;
  prefix?: string;
  /** Look up by a stored document... */
  id?: string;
  /** ...with the custom routing it was indexed with (found without it too, by asking every shard). */
  routing?: string;
  /** ...or by a text, signed with `signer`. */
  text?: string;
  signer?: SignerOptions;
  /** jaccard (default), or containment: hits that hold the query, or that it holds. */
  measure?: SimilarMeasure;
  /** With containment: hits that hold the query (inside, the default), that it holds (holds), or either (both). */
  direction?: ContainmentDirection;
  /** Estimated Jaccard a MinHash hit must reach (default 0.5), or containment either way (default 0.8). */
  minSimilarity?: number;
  method?: SimilarMethod;
  /** Most differing SimHash bits for a SimHash hit (default 3). */
  maxDistance?: number;
  limit?: number;
  /** Most candidates fetched from the engine (default 1000). */
  candidateLimit?: number;
}

/** A candidate left out because its stored signature is damaged, named so that it can be annotated again. */
export interface DamagedDocument {
  id: string;
  index: string;
  reason: string;
}

/** Damaged candidates named in a lookup's answer; the rest are counted. */
export const MAX_DAMAGED_NAMED = 10;

/** A document found similar, with its measures. */
export interface SimilarHit {
  id: string;
  index: string;
  jaccard: number;
  hamming: number;
  /** With --measure containment: share of the query inside the hit, and of the hit inside the query, with 95% intervals. */
  containment?: number;
  containment_interval?: [number, number];
  reverse_containment?: number;
  reverse_containment_interval?: [number, number];
}

/** The hits of a lookup, ranked, and what the lookup did, for its report. */
export interface SimilarResult {
  query: { id?: string; params: string; tokens: number; distinct_tokens?: number; sampled?: number };
  /**
   * Candidates whose stored signature is damaged (a MinHash that does not decode or has the wrong length,
   * a SimHash that is not 16 hex digits, ...): left out, the lookup going on with the others.
   */
  damaged: number;
  /** The first of them, with the reason. */
  damagedDocuments?: DamagedDocument[];
  /** Where an estimate is weaker than it looks (a short query for containment). */
  warnings?: string[];
  hits: SimilarHit[];
  /** Candidates the engine returned. */
  candidates: number;
  /** Candidates signed with other parameters: never compared. */
  excludedParams: number;
  tookMs: number;
}

/** The options given, without the members left undefined (so that spreading them keeps the defaults). */
function definedOnly<T extends object>(options: T): Partial<T> {
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** The lookup's options, checked here once for the CLI and the library alike. */
export function checkSimilarOptions(options: SimilarOptions): void {
  if ((options.id === undefined) === (options.text === undefined)) throw new UsageError((o) => `give exactly one of ${o('id')} or ${o('text')} to look up`);
  if (options.id !== undefined && options.id.trim() === '') throw new UsageError((o) => `${o('id')} is empty; give the id of a stored document`);
  if (options.routing !== undefined && options.id === undefined) throw new UsageError((o) => `${o('routing')} goes with ${o('id')}: it says where a stored document is`);
  if (options.measure !== undefined && !SIMILAR_MEASURES.includes(options.measure)) {
    throw new UsageError((o) => `${o('measure')} must be one of ${SIMILAR_MEASURES.join(', ')}, got "${options.measure}"`);
  }
  if (options.direction !== undefined && !CONTAINMENT_DIRECTIONS.includes(options.direction)) {
    throw new UsageError((o) => `${o('direction')} must be one of ${CONTAINMENT_DIRECTIONS.join(', ')}, got "${options.direction}"`);
  }
  const minSimilarity = options.minSimilarity ?? DEFAULT_MIN_SIMILARITY[options.measure ?? SIMILAR_DEFAULTS.measure];
  if (!(minSimilarity >= 0 && minSimilarity <= 1)) throw new UsageError((o) => `${o('minSimilarity')} must be from 0 to 1, got ${minSimilarity}`);
  if (options.measure === 'containment' && minSimilarity === 0) throw new UsageError((o) => `${o('minSimilarity')} must be above 0 with ${o('measure')} containment (every document holds 0% of the query)`);
  requireWholeNumbers([['maxDistance', options.maxDistance, 0], ['limit', options.limit, 1], ['candidateLimit', options.candidateLimit, 1]]);
}

/**
 * The near-duplicates of a stored document or of a text (what `near-dup similar` does): candidates found by
 * the engine (band keys, SimHash blocks), verified here against their stored signatures, ranked. A text is
 * signed the way the index was.
 *
 * @param client near-dup's client, from `connect()`.
 * @param options `index`; exactly one of `id` (with `routing` if it was indexed with one) or `text`
 *   (with `signer`, only to choose among several parameter sets); `measure` (jaccard, or containment with
 *   `direction`); `minSimilarity` (DEFAULT_MIN_SIMILARITY: 0.5, or 0.8 for containment); `method`,
 *   `maxDistance`, `limit`, `candidateLimit` (defaults in SIMILAR_DEFAULTS).
 * @returns the hits, best first, and how many candidates were compared, left out or damaged.
 * @throws {UsageError} options out of range or that conflict, signer options that do not match the
 *   index's signatures; the message names the option key.
 * @throws {UserError} no such document, a document without a usable signature, an index without
 *   near-dup fields, an engine that refuses or cannot be reached.
 */
export async function findSimilar(client: EngineClient, options: SimilarOptions): Promise<SimilarResult> {
  const started = performance.now();
  checkSimilarOptions(options);
  const { prefix, method, measure, maxDistance, limit, candidateLimit } = { ...SIMILAR_DEFAULTS, ...definedOnly(options) };
  const layout = new StoredLayout(prefix);
  const minSimilarity = options.minSimilarity ?? DEFAULT_MIN_SIMILARITY[measure];

  try {
    await checkLookupMapping(client, options.index, prefix);
    const query =
      options.id !== undefined
        ? await storedSignature(client, options.index, options.id, prefix, options.routing)
        : signText(options.text!, await withTemplate(client, options.index, await signerForIndex(client, options.index, prefix, options.signer)));
    if (options.id !== undefined) checkSignerForStored(options.signer, query.params, options.id, options.index);
    const result: SimilarResult = { query: { id: options.id, params: query.params, tokens: query.tokens }, hits: [], candidates: 0, excludedParams: 0, damaged: 0, tookMs: 0 };
    if (method !== 'minhash' && query.blocks.length > 0 && maxDistance >= query.blocks.length) {
      const blocks = query.blocks.length;
      throw new UsageError((o) => `${o('maxDistance')} must be a whole number from 0 to ${blocks - 1} (below the ${blocks} SimHash blocks), got ${maxDistance}`);
    }
    if (query.tokens === 0) return { ...result, tookMs: performance.now() - started };
    if (measure === 'containment') {
      const lookup = { index: options.index, prefix, minSimilarity, direction: options.direction, candidateLimit, excludeId: options.id };
      const found = await findContaining(client, query, lookup);
      return {
        ...result,
        query: { ...result.query, distinct_tokens: query.distinct, sampled: found.sampled },
        warnings: found.warnings,
        hits: found.hits.slice(0, limit),
        candidates: found.candidates,
        ...damageOf(found.damaged),
        tookMs: performance.now() - started,
      };
    }

    // One constant-score clause per band key: a candidate's score is the number of bands it shares, so
    // when there are more candidates than `candidateLimit`, the likeliest near-duplicates come first.
    const should: Record<string, unknown>[] = [];
    if (method !== 'simhash') {
      for (const key of query.bands) should.push({ constant_score: { filter: { term: { [layout.path('bands')]: key } }, boost: 1 } });
    }
    if (method !== 'minhash' && query.blocks.length > 0) {
      const blocks = {
        bool: {
          should: query.blocks.map((key) => ({ term: { [layout.path('simhash_blocks')]: key } })),
          minimum_should_match: blocksToMatch(query.blocks.length, maxDistance),
        },
      };
      should.push({ constant_score: { filter: blocks, boost: 1 } });
    }
    if (should.length === 0) return { ...result, tookMs: performance.now() - started };
    const candidateQuery = {
      bool: {
        should,
        minimum_should_match: 1,
        must_not: options.id !== undefined ? [{ ids: { values: [options.id] } }] : [],
      },
    };
    const keep = (jaccard: number, hamming: number) =>
      method === 'minhash' ? jaccard >= minSimilarity : method === 'simhash' ? hamming <= maxDistance : jaccard >= minSimilarity || hamming <= maxDistance;
    // A `;core=` signature's core field has no doc values: such signatures are read from _source.
    const core = paramsShape(query.params)?.core === true;
    const signatures = core ? undefined : await fetchSignatures(client, options.index, layout, candidateQuery, candidateLimit);
    const verified = verifyCandidates(signatures ?? [], query);
    if (signatures && verified.damaged.length === 0 && signatures.every((c) => !(c.raw instanceof StoredProblem) && typeof c.raw.content_hash === 'string')) {
      // Signatures without ids (reading a document's id costs the engine more than reading its doc values):
      // verified by content hash, then only the ids of the documents that passed are asked for. Equal
      // content hash and params mean equal signatures, so every document found so is a verified hit.
      Object.assign(result, { candidates: signatures.length, excludedParams: verified.otherParams });
      const passed = new Map<string, { jaccard: number; hamming: number }>();
      for (const { candidate, jaccard, hamming } of verified.measured) if (keep(jaccard, hamming)) passed.set((candidate.raw as RawStored).content_hash as string, { jaccard, hamming });
      for (const hit of await idsByContentHash(client, options.index, layout, [...passed.keys()], query.params, options.id, candidateLimit)) {
        result.hits.push({ id: hit.id, index: hit.index, ...passed.get(hit.contentHash)! });
      }
    } else {
      // Read with their ids: without doc values, or to name the documents whose stored signature is damaged.
      const candidates = await fetchCandidates(client, options.index, layout, candidateQuery, candidateLimit, core);
      const checked = verifyCandidates(candidates, query);
      Object.assign(result, { candidates: candidates.length, excludedParams: checked.otherParams, ...damageOf(checked.damaged) });
      for (const { candidate, jaccard, hamming } of checked.measured) if (keep(jaccard, hamming)) result.hits.push({ id: candidate.id!, index: candidate.index!, jaccard, hamming });
    }
    result.hits.sort((a, b) => b.jaccard - a.jaccard || a.hamming - b.hamming || (a.id < b.id ? -1 : 1));
    result.hits = result.hits.slice(0, limit);
    result.tookMs = performance.now() - started;
    return result;
  } catch (err) {
    throw client.explain(err, options.index);
  }
}

/** A candidate's stored fields as read (unchecked), with its id and index when they were read. */
interface Candidate {
  id?: string;
  index?: string;
  raw: RawStored | StoredProblem;
}

/** The stored fields a lookup queries or reads: mapped otherwise (band keys as text), it would find nothing, or fail opaquely. */
const LOOKUP_FIELDS = new Set<string>(['bands', 'simhash_blocks', 'params', 'sample'] satisfies StoredField[]);

/**
 * Refuses a lookup on an index whose near-dup fields are mapped so that it cannot work, naming the field,
 * its mapping and the way out: documents written through the library into an index `near-dup init` never
 * prepared get the engine's dynamic mapping (band keys as analysed text), where a lookup would silently
 * find nothing or fail with the engine's search_phase_execution_exception.
 */
async function checkLookupMapping(client: EngineClient, index: string, prefix: string): Promise<void> {
  let mappings: Awaited<ReturnType<EngineClient['getMapping']>>;
  try {
    mappings = await client.getMapping(index);
  } catch {
    return; // the lookup itself says what is wrong with the index (missing, no rights to read its mapping)
  }
  for (const [name, { mappings: mapping }] of Object.entries(mappings)) {
    const wrong = planMapping(mapping, prefix).conflicts.filter((c) => c.field === prefix || LOOKUP_FIELDS.has(c.field.slice(prefix.length + 1)));
    if (wrong.length === 0) continue;
    const fields = wrong.map((c) => `${c.field} is mapped as ${c.existing}, a lookup needs ${c.wanted}`).join('; ');
    throw new UserError(
      `cannot look up near-duplicates in "${name}": ${fields} (the engine's own mapping of documents written before near-dup init prepared the index). ` +
        `A field's mapping cannot change in place: create a new index with near-dup init --index NEW_INDEX, reindex into it (POST _reindex), ` +
        `then near-dup annotate --index NEW_INDEX --field FIELD --force`,
    );
  }
}

/** Candidates checked against the query's params and measured; those of other params counted, damaged ones named. */
function verifyCandidates(candidates: readonly Candidate[], query: StoredSignature) {
  const measured: Array<{ candidate: Candidate; jaccard: number; hamming: number }> = [];
  const damaged: DamagedDocument[] = [];
  let otherParams = 0;
  const shape = paramsShape(query.params);
  const compare = signatureComparer(shape?.numPerm ?? query.values.length, shape?.core === true);
  for (const candidate of candidates) {
    const problem = candidate.raw instanceof StoredProblem ? candidate.raw : checkStored(candidate.raw, ['minhash', 'simhash'], query.params, ['content_hash']);
    if (problem?.otherParams) otherParams++;
    else if (problem) damaged.push({ id: candidate.id ?? '?', index: candidate.index ?? '?', reason: problem.reason });
    else {
      const raw = candidate.raw as RawStored; // checked above
      measured.push({ candidate, jaccard: compare(query.values, storedValues(raw)), hamming: simhashDistance(query.simhash, raw.simhash as string) });
    }
  }
  return { measured, damaged, otherParams };
}

/** The damaged candidates of a lookup as its answer gives them: a count, the first few named. */
export function damageOf(damaged: readonly DamagedDocument[]): Pick<SimilarResult, 'damaged' | 'damagedDocuments'> {
  return damaged.length === 0 ? { damaged: 0 } : { damaged: damaged.length, damagedDocuments: damaged.slice(0, MAX_DAMAGED_NAMED) };
}

const VERIFIED: StoredField[] = ['minhash', 'simhash', 'params', 'content_hash'];

/**
 * The candidates' signatures and content hashes from doc values, without their ids (`stored_fields:
 * _none_`), so the engine neither loads each document's _source nor its stored id. Undefined where the
 * MinHash field has no doc values: then fetchCandidates reads ids and signatures together.
 */
async function fetchSignatures(client: EngineClient, index: string, layout: StoredLayout, query: object, size: number): Promise<Candidate[] | undefined> {
  if (!(await minhashDocValues(client, index, layout.path('minhash')))) return undefined;
  try {
    const response = await client.search(index, { size, track_total_hits: false, stored_fields: '_none_', docvalue_fields: layout.paths(...VERIFIED), query });
    return response.hits.hits.map((h) => ({ raw: storedInDocValues(h.fields, layout, VERIFIED) }));
  } catch (err) {
    if (!(err instanceof EngineResponseError && err.statusCode === 400)) throw err;
    withoutDocValues(index);
    return undefined;
  }
}

/** The documents (ids) with these content hashes and params, the query document left out. */
async function idsByContentHash(
  client: EngineClient,
  index: string,
  layout: StoredLayout,
  hashes: string[],
  params: string,
  exclude: string | undefined,
  size: number,
): Promise<Array<{ id: string; index: string; contentHash: string }>> {
  if (hashes.length === 0) return [];
  const field = layout.path('content_hash');
  const response = await client.search(index, {
    size,
    track_total_hits: false,
    _source: false,
    docvalue_fields: [field],
    query: {
      bool: {
        filter: [{ terms: { [field]: hashes } }, { term: { [layout.path('params')]: params } }],
        must_not: exclude !== undefined ? [{ ids: { values: [exclude] } }] : [],
      },
    },
  });
  return response.hits.hits.map((h) => ({ id: h._id, index: h._index, contentHash: h.fields?.[field]?.[0] as string }));
}

/** Ids and signatures together, from _source (filtered to the signature's fields). */
async function fetchCandidates(client: EngineClient, index: string, layout: StoredLayout, query: object, size: number, core: boolean): Promise<Candidate[]> {
  const response = await client.search(index, { size, track_total_hits: false, _source: layout.paths(...VERIFIED, ...(core ? (['core'] as const) : [])), query });
  return response.hits.hits.map((h) => ({ id: h._id, index: h._index, raw: storedIn(h._source, layout) }));
}

/**
 * A text is signed the way the index was. Signer options given (any field set) are used when the index
 * holds signatures made with them, and refused when it does not: a text signed otherwise could match
 * nothing, and ignoring options that were asked for would be a silent surprise. Without options, the one
 * parameter set the index holds is used (or the defaults, when it holds those among several).
 */
export async function signerForIndex(client: EngineClient, index: string, prefix: string, asked?: SignerOptions): Promise<SignerOptions | undefined> {
  const held = (await paramsHeld(client, index, prefix)).map((b) => b.key);
  const given = hasSignerOptions(asked);
  const wanted = resolveSignerSettings(given ? asked : undefined).params;
  if (held.includes(wanted)) return given ? asked : undefined;
  const listed = held.map((p) => `"${p}"`).join(', ');
  if (given) {
    throw new UsageError(
      `the signature options given sign the text with "${wanted}", but "${index}" holds signatures made with ${listed}, which it could never match; ` +
        (held.length === 1 ? 'leave the signature options out (the text is then signed as the index was), or give the ones it was made with' : 'give the options one of them was made with'),
    );
  }
  const readable = held.map((p) => signerOptionsFromParams(p));
  if (held.length === 1 && readable[0]) return readable[0];
  throw new UserError(
    (o) =>
      `"${index}" holds signatures made with ${listed}; ` +
      `give the options the ones to look among were made with (${signerKeys(o)})`,
  );
}

/** The signer options that choose a parameter set, as a message names them. */
function signerKeys(o: (key: string) => string): string {
  const [preset, condenser, seed, scheme, bands, rows, threshold, blocks] = ['preset', 'condenser', 'seed', 'scheme', 'bands', 'rows', 'threshold', 'simhashBlocks'].map((k) => o(`signer.${k}`));
  return `${preset}, ${condenser}, ${seed}, ${scheme}, ${bands}/${rows} or ${threshold}, ${blocks}`;
}

/** Whether any signer option was given (an empty object, or one of undefined fields, asks for nothing). */
function hasSignerOptions(options: SignerOptions | undefined): options is SignerOptions {
  return options !== undefined && Object.values(options).some((v) => v !== undefined);
}

/** A lookup by a stored document uses its stored signature: signer options that would make another one are refused, not ignored. */
function checkSignerForStored(asked: SignerOptions | undefined, stored: string, id: string, index: string): void {
  if (!hasSignerOptions(asked)) return;
  const wanted = resolveSignerSettings(asked).params;
  if (wanted === stored) return;
  throw new UsageError(
    (o) => `a lookup by ${o('id')} uses the signature stored with document "${id}" of "${index}" ("${stored}"); the signature options given would make "${wanted}", and are not used: leave them out`,
  );
}

/** Options that name template tokens (params tpl=) with the set the index keeps under that digest. */
async function withTemplate(client: EngineClient, index: string, signer: SignerOptions | undefined): Promise<SignerOptions | undefined> {
  const digest = signer?.templateDigest;
  return digest === undefined ? signer : { ...signer, template: await loadTemplate(client, index, digest) };
}

function signText(text: string, signer?: SignerOptions): StoredSignature {
  const sign = createSigner(signer);
  return storedSignatureOf(sign(text), sign.settings.params);
}

/**
 * The stored signature of document `id`, found by a search on its id rather than a GET: a search works on
 * an alias over several indices, a pattern and a data stream, and without the routing a document was
 * indexed with (it asks every shard; with `routing`, only that one).
 */
async function storedSignature(client: EngineClient, index: string, id: string, prefix: string, routing?: string): Promise<StoredSignature> {
  const found = await client.search(index, { size: 2, query: { ids: { values: [id] } }, _source: { includes: [`${prefix}.*`] } }, routing === undefined ? undefined : { routing });
  const hits = found.hits.hits;
  if (hits.length === 0) throw new UserError(`no document "${id}" in "${index}" on ${client.url}${routing === undefined ? '' : ` with routing "${routing}"`}; check the id`);
  if (hits.length > 1) {
    // Two indices behind the name, or one index where the id was indexed with two routings.
    const places = hits.map((h) => (h._routing === undefined ? h._index : `${h._index} with routing "${h._routing}"`)).join(', ');
    throw new UserError((o) => `"${index}" holds more than one document "${id}" (${places}); name the one to look up with ${o('index')} and ${o('routing')}`);
  }
  const read = readStoredQuery(hits[0]._source, new StoredLayout(prefix));
  if (read instanceof StoredProblem) {
    const fix = read.reason.startsWith('no near-dup signature') ? 'run near-dup annotate' : 'sign it again with near-dup annotate --force';
    throw new UserError(`document "${id}" of "${index}" has no usable near-dup signature under "${prefix}" (${read.reason}); ${fix} --index ${index} --field FIELD --query '{"ids":{"values":["${id}"]}}'`);
  }
  return read;
}

function readStoredQuery(source: unknown, layout: StoredLayout) {
  const raw = storedIn(source, layout);
  return raw instanceof StoredProblem ? raw : readSignature(raw);
}
