// Containment, C(Q, D) = |Q ∩ D| / |Q|, from a consistent sample of each document's distinct token hashes.
//
// Every document keeps the token hashes whose mixed value falls under one fixed cut (1 token in `every`,
// the same tokens in every document). The sample of Q ∩ D is then exactly the shared part of the two
// samples, so the share of Q's sampled tokens found in D estimates C(Q, D) with a binomial error that
// depends only on how many tokens Q has sampled, not on how much larger D is. MinHash cannot do that:
// its estimate of C goes through Jaccard, whose error is multiplied by about (|Q| + |D|) / |Q|.
// The engine counts the shared sampled tokens (one term clause per token, minimum_should_match), so
// candidates need no band keys of their own.
import { base64url24, type KeyEncoding } from './lsh.js';
import { fmix32 } from './minhash.js';

/** Sample 1 distinct token in this many by default (0: no sample, 1: every token, exact containment). */
export const DEFAULT_CONTAINMENT_SAMPLE = 4;
/** Salt of the sampling mix, so that which tokens are sampled is unrelated to the MinHash permutations. */
const SAMPLE_SALT = 0x9e3779b9;
/** Most term clauses one query holds (the engines' default max_clause_count is 1,024). */
export const MAX_QUERY_TERMS = 1000;
/** Fewer sampled query tokens than this give estimates too rough to trust without a warning. */
export const MIN_TRUSTED_SAMPLE = 32;

/** The mixed value that decides whether a token hash is sampled (uniform over uint32). */
export function sampleRank(hash: number): number {
  return fmix32((hash ^ SAMPLE_SALT) >>> 0);
}

/** Ranks below this are sampled: 1 in `every`. */
export function sampleCut(every: number): number {
  return every <= 1 ? 2 ** 32 : Math.floor(2 ** 32 / every);
}

/**
 * A sampled token hash as it is stored and queried: 8 lowercase hex digits of the token hash (key encoding
 * 1), or its top 24 bits as 4 base64url characters (2; which tokens are sampled does not change, and two
 * different sampled tokens share a term about once in 16 million).
 */
export function sampleTerm(hash: number, encoding: KeyEncoding = 1): string {
  return encoding === 1 ? (hash >>> 0).toString(16).padStart(8, '0') : base64url24(hash >>> 8);
}

/**
 * The sample of a set of distinct token hashes (the first `count` of `hashes`): those whose rank falls
 * under the cut of 1 in `every`, as terms, in rank order (so that a query that must be cut short keeps
 * a smaller consistent sample: the lowest ranks).
 */
export function containmentSample(hashes: ArrayLike<number>, count: number, every: number, encoding: KeyEncoding = 1): string[] {
  scratch.fill(hashes, count, every);
  return scratch.terms(encoding);
}

/**
 * The ranks of a containment sample, in order (the sample's terms are those of their hashes, read back
 * with hashOfRank): the sample as numbers, before any term is made. Reused from document to document.
 * The rank is a bijection of the hash: the ranks alone are sorted, and each hash is read back from its rank.
 */
export class SampleRanks {
  values = new Uint32Array(256);
  count = 0;

  /** The sample of 1 in `every` of the first `count` of `hashes` (distinct token hashes). */
  fill(hashes: ArrayLike<number>, count: number, every: number): void {
    this.count = 0;
    if (every <= 0 || count === 0) return;
    const cut = sampleCut(every);
    if (this.values.length < count) this.values = new Uint32Array(Math.max(count, 2 * this.values.length));
    const values = this.values;
    let kept = 0;
    for (let i = 0; i < count; i++) {
      const rank = sampleRank(hashes[i]);
      if (rank < cut) values[kept++] = rank;
    }
    sortUint32(values, kept, cut);
    this.count = kept;
  }

  terms(encoding: KeyEncoding = 1): string[] {
    const terms = new Array<string>(this.count);
    for (let k = 0; k < this.count; k++) terms[k] = sampleTerm(hashOfRank(this.values[k]), encoding);
    return terms;
  }
}

const scratch = new SampleRanks();

// Scratch of sortUint32: a bucket's count (then its next place), and the values dealt into buckets.
let bucketCounts = new Uint32Array(257);
let dealt = new Uint32Array(256);

/**
 * Sorts values[0, n) ascending. A sample holds a few dozen to a few thousand ranks, spread evenly below the
 * cut (they are hash mixes): dealt into about n buckets by their top bits (a counting sort), they come out
 * nearly in order, which an insertion sort then finishes in one pass. Twice as fast as the typed array's
 * sort at 60 ranks (the sample of a 2 KB text), whose call costs more than its work; insertion sort alone
 * grows as n^2.
 */
function sortUint32(values: Uint32Array, n: number, cut: number): void {
  if (n > 16) dealByTopBits(values, n, cut);
  for (let i = 1; i < n; i++) {
    const v = values[i];
    let j = i - 1;
    while (j >= 0 && values[j] > v) {
      values[j + 1] = values[j];
      j--;
    }
    values[j + 1] = v;
  }
}

/** values[0, n) (each below `cut`) in order of their top bits: 2^k buckets for n between 2^k and 2^(k+1). */
function dealByTopBits(values: Uint32Array, n: number, cut: number): void {
  const bits = Math.min(12, 31 - Math.clz32(n));
  const shift = Math.max(0, 32 - Math.clz32(cut - 1) - bits);
  const buckets = 1 << bits;
  if (bucketCounts.length < buckets + 1) bucketCounts = new Uint32Array(buckets + 1);
  if (dealt.length < n) dealt = new Uint32Array(2 * n);
  const counts = bucketCounts;
  counts.fill(0, 0, buckets + 1);
  for (let i = 0; i < n; i++) counts[(values[i] >>> shift) + 1]++;
  for (let b = 1; b < buckets; b++) counts[b] += counts[b - 1];
  for (let i = 0; i < n; i++) dealt[counts[values[i] >>> shift]++] = values[i];
  values.set(dealt.subarray(0, n));
}

/** The token hash of a rank: the inverse of sampleRank (murmur3's fmix32 undone step by step, then the salt). */
export function hashOfRank(rank: number): number {
  let h = rank ^ (rank >>> 16);
  h = Math.imul(h, 0x7ed1b41d); // inverse of 0xc2b2ae35 modulo 2^32
  h ^= (h >>> 13) ^ (h >>> 26);
  h = Math.imul(h, 0xa5cb9243); // inverse of 0x85ebca6b modulo 2^32
  h ^= h >>> 16;
  return (h ^ SAMPLE_SALT) >>> 0;
}

/** A containment estimate: the share of `sampled` query tokens found, and its 95% (Wilson) interval. */
export interface ContainmentEstimate {
  value: number;
  low: number;
  high: number;
}

/** The estimate of a share from `found` of `sampled` tokens, with its Wilson score interval at 95%. */
export function estimateShare(found: number, sampled: number): ContainmentEstimate {
  if (sampled <= 0) return { value: 0, low: 0, high: 1 };
  const p = Math.min(1, found / sampled);
  const z2 = 1.96 * 1.96;
  const centre = (p + z2 / (2 * sampled)) / (1 + z2 / sampled);
  const half = (1.96 / (1 + z2 / sampled)) * Math.sqrt((p * (1 - p)) / sampled + z2 / (4 * sampled * sampled));
  // The interval holds the estimate itself, whatever the rounding.
  return { value: p, low: Math.max(0, Math.min(p, centre - half)), high: Math.min(1, Math.max(p, centre + half)) };
}

/**
 * Containment of Q in D derived from MinHash Jaccard and the two set sizes, C = J (|Q| + |D|) / (|Q| (1 + J)):
 * kept for comparison, as its error grows with |D| / |Q| (see BENCHMARKS.md).
 */
export function containmentFromJaccard(jaccard: number, querySize: number, docSize: number): number {
  if (querySize <= 0) return 0;
  return Math.min(1, (jaccard * (querySize + docSize)) / (querySize * (1 + jaccard)));
}
