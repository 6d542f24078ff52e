// What a share writes to the pairs index, and how it is read back: pages of verified pairs (four columns, at
// most PAIRS_PER_PAGE pairs of one band of one share, the id fixed so that a band done again overwrites them)
// and one marker a share (the run's identity, how far the share got). Anyone who can write there can damage or
// forge a document, so every field is checked as it is read, a failure said in words, never thrown; and each
// pair is checked against the two stored signatures it names (checkPair). Pure.
import { hammingDistance } from '../../../sketch/simhash.js';
import type { StoredSignature } from '../documents/signature-store.js';
import { type Comparing, compactComparerOf, comparerOf } from '../verify/comparing.js';
import type { VerifiedPair } from '../verify/pair-verifier.js';
import { identityDifferences, type SharePlan, type ShareRunIdentity } from './plan.js';
import { forCount, plural } from '../../../plural.js';

/** Pairs per page document (about 200 KB of JSON with ids of 30 characters). */
export const PAIRS_PER_PAGE = 2000;
/** Bands a signature may have, at most (the params allow far fewer). */
const MAX_BANDS = 1024;
/** Pages a band of one share may have: a hundred million pairs. */
const MAX_PAGES = 50_000;
/** The engines refuse ids longer than 512 bytes. */
const MAX_ID_BYTES = 512;

/** How far a share got, as its marker says. */
export interface ShareProgress {
  bandCount: number;
  bandsDone: number;
  /** Pages written for each band done (0 for a band without pairs). */
  pages: number[];
  pairs: number;
  buckets: number;
  candidatePairs: number;
  verifiedPairs: number;
  /** Documents left out of the share's scan for a damaged signature. */
  damaged: number;
  complete: boolean;
  startedAt: string;
  updatedAt: string;
  /** The machine it ran on, for the user who looks for a share that never finished. */
  host: string;
}

/** The columns of one page. */
export interface PageColumns {
  a: string[];
  b: string[];
  jaccard: number[];
  hamming: number[];
}

/** A marker's progress: each member of ShareProgress and its name in the document, in the document's order. */
const PROGRESS_FIELDS = {
  bandCount: 'band_count',
  bandsDone: 'bands_done',
  pages: 'pages',
  pairs: 'pairs',
  buckets: 'buckets',
  candidatePairs: 'candidate_pairs',
  verifiedPairs: 'verified_pairs',
  damaged: 'damaged',
  complete: 'complete',
  startedAt: 'started_at',
  updatedAt: 'updated_at',
  host: 'host',
} as const satisfies Record<keyof ShareProgress, string>;

/** The marker document of a share. */
export function markerDocument(run: string, share: SharePlan, identity: ShareRunIdentity, progress: ShareProgress): Record<string, unknown> {
  return {
    kind: 'share',
    run,
    index: identity.index,
    share: share.number,
    shares: share.count,
    identity: { ...identity },
    progress: Object.fromEntries(Object.entries(PROGRESS_FIELDS).map(([key, field]) => [field, progress[key as keyof ShareProgress]])),
  };
}

/** A page document. */
export function pageDocument(run: string, share: SharePlan, band: number, page: number, columns: PageColumns): Record<string, unknown> {
  return { kind: 'pairs', run, share: share.number, shares: share.count, band, page, count: columns.a.length, pairs: columns };
}

/** Pairs sorted by their ids (a, then b): the same pages whatever order the pairs were verified in. */
export function sortedPairs(pairs: VerifiedPair[]): VerifiedPair[] {
  return pairs.sort((x, y) => (x.a < y.a ? -1 : x.a > y.a ? 1 : x.b < y.b ? -1 : x.b > y.b ? 1 : 0));
}

/** Pairs cut into the columns of pages of at most `perPage`. */
export function pagesOf(pairs: readonly VerifiedPair[], perPage = PAIRS_PER_PAGE): PageColumns[] {
  const pages: PageColumns[] = [];
  for (let i = 0; i < pairs.length; i += perPage) {
    const slice = pairs.slice(i, i + perPage);
    pages.push({ a: slice.map((p) => p.a), b: slice.map((p) => p.b), jaccard: slice.map((p) => p.jaccard), hamming: slice.map((p) => p.hamming) });
  }
  return pages;
}

/** What a marker must be: the run and share it is named for, with this identity. */
export interface MarkerExpected {
  run: string;
  share: SharePlan;
  identity: ShareRunIdentity;
}

/** A marker's progress, or why it cannot be trusted. */
export function readMarker(source: unknown, expected: MarkerExpected): ShareProgress | string {
  if (!isObject(source)) return 'it is not a JSON object';
  if (source.kind !== 'share' || source.run !== expected.run) return `it is not the marker of run ${expected.run} (kind ${show(source.kind)}, run ${show(source.run)})`;
  if (source.share !== expected.share.number || source.shares !== expected.share.count) return `it names share ${show(source.share)}/${show(source.shares)}`;
  const identity = source.identity;
  if (!isObject(identity)) return 'its identity is missing';
  const differ = identityDifferences(expected.identity, identity);
  if (differ.length > 0) return `its identity differs in ${differ.join(', ')}`;
  const p = source.progress;
  if (!isObject(p)) return 'its progress is missing';
  return progressOf(p);
}

function progressOf(p: Record<string, unknown>): ShareProgress | string {
  const bandCount = p.band_count, bandsDone = p.bands_done, pages = p.pages;
  if (!whole(bandCount, 1, MAX_BANDS)) return `its band count ${show(bandCount)} is not a whole number from 1 to ${MAX_BANDS}`;
  if (!whole(bandsDone, 0, bandCount)) return `its bands done ${show(bandsDone)} is not a whole number from 0 to ${bandCount}`;
  if (!Array.isArray(pages) || pages.length !== bandsDone || !pages.every((n) => whole(n, 0, MAX_PAGES))) return `its pages ${show(pages)} are not a count for each of its ${plural(bandsDone, 'band')} done`;
  const counters = { pairs: 0, buckets: 0, candidatePairs: 0, verifiedPairs: 0, damaged: 0 };
  for (const key of Object.keys(counters) as Array<keyof typeof counters>) {
    const value = p[PROGRESS_FIELDS[key]];
    if (!whole(value, 0, Number.MAX_SAFE_INTEGER)) return `its ${PROGRESS_FIELDS[key]} ${show(value)} is not a whole number`;
    counters[key] = value;
  }
  const totalPages = pages.reduce((sum: number, n: number) => sum + n, 0);
  const { pairs } = counters;
  if (pairs > totalPages * PAIRS_PER_PAGE || pairs < totalPages) return `its ${plural(pairs, 'pair')} ${forCount(pairs, 'does', 'do')} not fit its ${plural(totalPages, 'page')}`;
  if (typeof p.complete !== 'boolean') return 'it does not say whether the share is complete';
  if (p.complete && bandsDone !== bandCount) return `it says complete with ${bandsDone} of ${plural(bandCount, 'band')} done`;
  const text = (value: unknown) => (typeof value === 'string' ? value : '');
  return { bandCount, bandsDone, pages, ...counters, complete: p.complete, startedAt: text(p.started_at), updatedAt: text(p.updated_at), host: text(p.host) };
}

/** Where a page belongs: its run, share, band and place. */
export interface PageExpected {
  run: string;
  share: SharePlan;
  band: number;
  page: number;
  /** The bar every verified pair reached. */
  minSimilarity: number;
}

/** A page's pairs, each checked to be a pair of two ids with a similarity at the bar or above; or why not. */
export function readPage(source: unknown, expected: PageExpected): VerifiedPair[] | string {
  if (!isObject(source)) return 'it is not a JSON object';
  for (const [name, value] of [['kind', 'pairs'], ['run', expected.run], ['share', expected.share.number], ['shares', expected.share.count], ['band', expected.band], ['page', expected.page]] as const) {
    if (source[name] !== value) return `its ${name} is ${show(source[name])}, not ${show(value)}`;
  }
  const columns = source.pairs;
  if (!isObject(columns)) return 'it holds no pairs';
  const { a, b, jaccard, hamming } = columns;
  if (!Array.isArray(a) || !Array.isArray(b) || !Array.isArray(jaccard) || !Array.isArray(hamming)) return 'its pairs are not four columns (a, b, jaccard, hamming)';
  if (a.length === 0 || a.length > PAIRS_PER_PAGE || b.length !== a.length || jaccard.length !== a.length || hamming.length !== a.length) {
    return `its columns hold ${a.length}, ${b.length}, ${jaccard.length} and ${hamming.length} values (a page holds 1 to ${plural(PAIRS_PER_PAGE, 'pair')}, as many in each)`;
  }
  if (source.count !== a.length) return `its count ${show(source.count)} is not the ${plural(a.length, 'pair')} it holds`;
  const pairs: VerifiedPair[] = [];
  for (let i = 0; i < a.length; i++) {
    const problem = pairProblem(a[i], b[i], jaccard[i], hamming[i], expected.minSimilarity);
    if (problem) return `pair ${i + 1} ${problem}`;
    pairs.push({ a: a[i], b: b[i], jaccard: jaccard[i], hamming: hamming[i] });
  }
  return pairs;
}

/** Why four values are not a verified pair, or undefined. */
function pairProblem(a: unknown, b: unknown, jaccard: unknown, hamming: unknown, bar: number): string | undefined {
  if (!isId(a) || !isId(b)) return `has an id that is not a document id (${show(a)}, ${show(b)})`;
  if (!(a < b)) return `is not in order (${show(a)} then ${show(b)})`;
  if (typeof jaccard !== 'number' || !(jaccard >= bar && jaccard <= 1)) return `has similarity ${show(jaccard)}, not from the bar ${bar} to 1`;
  if (!whole(hamming, 0, 64)) return `has SimHash distance ${show(hamming)}, not a whole number from 0 to 64`;
  return undefined;
}

function isId(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0 && Buffer.byteLength(value) <= MAX_ID_BYTES;
}

function whole(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= min && value <= max;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A value as JSON, cut to 60 characters (a forged value may be long). */
function show(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** A pair checked: as the signatures give it, under the bar by its whole values only, or why it cannot be trusted. */
export type PairCheck = { pair: VerifiedPair } | { belowBar: true } | { problem: string };

/**
 * A pair read back, checked against the signatures of its two documents (compared as `comparing` says, else by the
 * share of equal values): one that passes is one the verifier would have found. Not damage: a share spilled compact
 * (16 bits a value) may say a similarity above the whole values' (never below); it is taken when it is exactly the
 * compact values' (under the core rule, the rule's of the masked values), and the pair keeps the whole values'.
 */
export function checkPair(pair: VerifiedPair, a: StoredSignature | undefined, b: StoredSignature | undefined, minSimilarity: number, comparing?: Comparing): PairCheck {
  for (const [id, signature] of [[pair.a, a], [pair.b, b]] as const) {
    if (!signature) return { problem: `names "${id}", which has no signature in scope (deleted, damaged or signed again since)` };
  }
  const x = a as StoredSignature, y = b as StoredSignature;
  if (x.values.length !== y.values.length) return { problem: 'names two signatures of different lengths' };
  if (!shareABand(x.bands, y.bands)) return { problem: 'names two documents that share no band key (no bucket made them candidates)' };
  const hamming = hammingDistance(x.simhash, y.simhash);
  if (hamming !== pair.hamming) return { problem: `says SimHash distance ${pair.hamming}, their signatures give ${hamming}` };
  const jaccard = comparerOf(comparing)(x.values, y.values);
  const compact = pair.jaccard !== jaccard && pair.jaccard === (comparing?.core ? compactComparerOf(comparing) : compactJaccard)(x.values, y.values);
  if (jaccard !== pair.jaccard && !compact) return { problem: `says similarity ${pair.jaccard}, their signatures give ${jaccard}` };
  if (jaccard < minSimilarity) return compact ? { belowBar: true } : { problem: `is below --min-similarity ${minSimilarity}` };
  return { pair: { ...pair, jaccard } };
}

/** The similarity of two signatures as a compact spill estimates it: values equal in their low 16 bits count as equal. */
export function compactJaccard(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let equal = 0;
  for (let i = 0; i < a.length; i++) if (((a[i] ^ b[i]) & 0xffff) === 0) equal++;
  return a.length === 0 ? 0 : equal / a.length;
}

function shareABand(a: Int32Array, b: Int32Array): boolean {
  for (let j = 0; j < a.length && j < b.length; j++) if (a[j] === b[j]) return true;
  return false;
}
