// LSH banding: how many bands (b) of how many rows (r) a signature is cut into, and the band keys that
// the engine indexes. Two documents become candidates when any band key is equal.
import { md5First64 } from './digests.js';

/** An LSH layout: b bands of r MinHash values each. */
export interface LshParams {
  /** Number of bands. */
  b: number;
  /** Rows (MinHash values) per band. */
  r: number;
}

/**
 * What the bands and rows are chosen for: the similarity threshold, the number of permutations, and how much a missed
 * pair weighs against a false candidate.
 */
export interface LshOptions {
  threshold?: number;
  numPerm?: number;
  /** Weight of false negatives in the error that (b, r) minimises; false positives weigh 1 - this. */
  falseNegativeWeight?: number;
}

/** The Jaccard similarity the bands and rows are chosen for unless given. */
export const DEFAULT_THRESHOLD = 0.5;
/**
 * A missed pair weighs three times a false candidate unless given: a false candidate costs a verification, a missed
 * pair is lost.
 */
export const DEFAULT_FALSE_NEGATIVE_WEIGHT = 0.75;

const legendreCache = new Map<number, { nodes: Float64Array; weights: Float64Array }>();

/** Gauss–Legendre nodes and weights on [-1, 1] (Newton's method on P_n), exact for degree <= 2n - 1. */
function gaussLegendre(n: number): { nodes: Float64Array; weights: Float64Array } {
  const cached = legendreCache.get(n);
  if (cached) return cached;
  const nodes = new Float64Array(n), weights = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let x = Math.cos((Math.PI * (i + 0.75)) / (n + 0.5));
    let dp = 0;
    for (let iter = 0; iter < 100; iter++) {
      let p0 = 1, p1 = x;
      for (let k = 2; k <= n; k++) {
        const p2 = ((2 * k - 1) * x * p1 - (k - 1) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      dp = (n * (x * p1 - p0)) / (x * x - 1);
      const dx = p1 / dp;
      x -= dx;
      if (Math.abs(dx) < 1e-16) break;
    }
    nodes[i] = x;
    weights[i] = 2 / ((1 - x * x) * dp * dp);
  }
  const rule = { nodes, weights };
  legendreCache.set(n, rule);
  return rule;
}

/** The integral of f over [lo, hi] by a Gauss–Legendre rule of n points. */
function integrate(f: (s: number) => number, lo: number, hi: number, n: number): number {
  const { nodes, weights } = gaussLegendre(n);
  const half = (hi - lo) / 2, mid = (hi + lo) / 2;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += weights[i] * f(mid + half * nodes[i]);
  return sum * half;
}

// The probability that two documents of Jaccard s share a band is 1 - (1 - s^r)^b, a polynomial of
// degree b * r <= num_perm, so a rule of num_perm / 2 + 1 points integrates it exactly (datasketch
// integrates the same curves numerically with scipy's quad).
function ruleSize(b: number, r: number): number {
  return Math.max(8, Math.ceil((b * r + 1) / 2));
}

/** Probability mass of pairs below the threshold that still become candidates (datasketch's definition). */
export function falsePositiveProbability(threshold: number, b: number, r: number): number {
  return integrate((s) => 1 - (1 - s ** r) ** b, 0, threshold, ruleSize(b, r));
}

/** Probability mass of pairs at or above the threshold that are missed. */
export function falseNegativeProbability(threshold: number, b: number, r: number): number {
  return integrate((s) => (1 - s ** r) ** b, threshold, 1, ruleSize(b, r));
}

/**
 * The (b, r) with b * r <= num_perm that minimises the weighted false positive and false negative
 * probabilities, searched in the same order and with the same strict comparison as datasketch's
 * MinHashLSH, so both pick the same parameters.
 */
export function optimalBandsRows(options: LshOptions = {}): LshParams {
  const threshold = options.threshold ?? DEFAULT_THRESHOLD;
  const numPerm = options.numPerm ?? 128;
  const fnWeight = options.falseNegativeWeight ?? DEFAULT_FALSE_NEGATIVE_WEIGHT;
  validateLshOptions(threshold, numPerm, fnWeight);
  // Hundreds of integrals: worth keeping, as a process asks for the same parameters again and again
  // (the command line's check, then each signer).
  const key = `${threshold}/${numPerm}/${fnWeight}`;
  let best = optimalCache.get(key);
  if (!best) {
    best = searchBandsRows(threshold, numPerm, fnWeight);
    optimalCache.set(key, best);
  }
  return { ...best };
}

/**
 * The search's answers for the usual settings (false-negative weight 0.75, thresholds 0.5 to 0.9, 64, 128
 * and 256 permutations), so that a process signing with them skips its hundreds of integrals (15-35 ms of
 * start-up, a share of `sign --jsonl` on a few thousand short texts). test/unit/sign-speed.test.ts
 * searches each of them again.
 */
export const KNOWN_OPTIMA: Readonly<Record<string, LshParams>> = {
  '0.5/64/0.75': { b: 16, r: 4 }, '0.6/64/0.75': { b: 12, r: 5 }, '0.7/64/0.75': { b: 10, r: 6 }, '0.8/64/0.75': { b: 7, r: 9 }, '0.9/64/0.75': { b: 4, r: 16 },
  '0.5/128/0.75': { b: 26, r: 4 }, '0.6/128/0.75': { b: 21, r: 6 }, '0.7/128/0.75': { b: 18, r: 7 }, '0.8/128/0.75': { b: 11, r: 11 }, '0.9/128/0.75': { b: 7, r: 18 },
  '0.5/256/0.75': { b: 51, r: 5 }, '0.6/256/0.75': { b: 36, r: 7 }, '0.7/256/0.75': { b: 28, r: 9 }, '0.8/256/0.75': { b: 19, r: 13 }, '0.9/256/0.75': { b: 11, r: 23 },
};

const optimalCache = new Map<string, LshParams>(Object.entries(KNOWN_OPTIMA));

/** The search itself, never cached (for the test of KNOWN_OPTIMA). */
export function searchBandsRows(threshold: number, numPerm: number, fnWeight: number): LshParams {
  const fpWeight = 1 - fnWeight;
  let minError = Infinity;
  let best: LshParams = { b: 0, r: 0 };
  for (let b = 1; b <= numPerm; b++) {
    const maxR = Math.floor(numPerm / b);
    for (let r = 1; r <= maxR; r++) {
      const error =
        falsePositiveProbability(threshold, b, r) * fpWeight + falseNegativeProbability(threshold, b, r) * fnWeight;
      if (error < minError) {
        minError = error;
        best = { b, r };
      }
    }
  }
  return best;
}

function validateLshOptions(threshold: number, numPerm: number, fnWeight: number): void {
  if (!(threshold > 0 && threshold < 1)) {
    throw new RangeError(`threshold must be between 0 and 1 (exclusive), got ${threshold}; try 0.5`);
  }
  if (!Number.isInteger(numPerm) || numPerm < 2) {
    throw new RangeError(`num_perm must be an integer of at least 2, got ${numPerm}; try 128`);
  }
  if (!(fnWeight >= 0 && fnWeight <= 1)) {
    throw new RangeError(`false-negative weight must be between 0 and 1, got ${fnWeight}; try 0.75`);
  }
}

/** Checks explicit (b, r) against the signature length. */
export function checkBandsRows({ b, r }: LshParams, numPerm: number): void {
  if (!Number.isInteger(b) || !Number.isInteger(r) || b < 1 || r < 1 || b * r > numPerm) {
    throw new RangeError(`bands (${b}) x rows (${r}) must be positive integers with b * r <= num_perm (${numPerm})`);
  }
}

/** Scratch for one band's bytes, grown when a band has more rows than it holds. */
let bandBytes = new Uint8Array(4 * 1024);
const digest = new Uint32Array(2);

/**
 * How band keys and sample terms are written (the `k` of params): 1, the first layout, band keys of 16 hex
 * digits and sample terms of 8; 2, compact: 48 bits of base64url per band key (8 characters) and 24 bits
 * per sample term (4). 48 bits keep accidental equal keys of one band below one in a thousand among a
 * million documents (a false candidate, which verification drops).
 */
export type KeyEncoding = 1 | 2;
/** The band key encoding unless given: 48 bits of the digest in 8 base64url characters, shorter keys in the index. */
export const DEFAULT_KEY_ENCODING: KeyEncoding = 2;

/**
 * One keyword per band: "<band>:<hash>", the hash being the first 64 bits of the MD5 of the band's r values
 * as little-endian uint32, as 16 hex digits (encoding 1) or its first 48 bits as 8 base64url characters
 * (encoding 2). The band number in the key keeps bands apart. `digestsOf` may compute the digests faster.
 */
export function bandKeys(values: Uint32Array, lsh: LshParams, encoding: KeyEncoding = 1, digestsOf: BandDigests = bandDigests): string[] {
  return bandKeysOfDigests(digestsOf(values, lsh), lsh.b, encoding);
}

/** The band keys of `b` bands from their digests (bandDigests). */
export function bandKeysOfDigests(digests: Uint32Array, b: number, encoding: KeyEncoding = 1): string[] {
  const keys: string[] = new Array(b);
  for (let band = 0; band < b; band++) {
    const hi = digests[2 * band], lo = digests[2 * band + 1];
    keys[band] = `${band}:${encoding === 1 ? hex32(hi) + hex32(lo) : base64url48(hi, lo)}`;
  }
  return keys;
}

/** The first 64 bits of the MD5 of each band's values (as little-endian uint32), as (high, low) pairs. */
export type BandDigests = (values: Uint32Array, lsh: LshParams) => Uint32Array;

/**
 * The first 64 bits of the MD5 of each band's values, as (high, low) pairs: the JavaScript reference the kernels
 * match.
 */
export function bandDigests(values: Uint32Array, { b, r }: LshParams): Uint32Array {
  const digests = new Uint32Array(2 * b);
  if (4 * r > bandBytes.length) bandBytes = new Uint8Array(4 * r);
  const view = new DataView(bandBytes.buffer);
  for (let band = 0; band < b; band++) {
    for (let j = 0; j < r; j++) view.setUint32(4 * j, values[band * r + j], true);
    md5First64(bandBytes, 0, 4 * r, digest);
    digests[2 * band] = digest[0];
    digests[2 * band + 1] = digest[1];
  }
  return digests;
}

const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** The first 48 bits of (high, low), big-endian, as 8 base64url characters. */
function base64url48(high: number, low: number): string {
  const top = high >>> 0;
  const rest = low >>> 16;
  return base64url24(top >>> 8) + base64url24(((top & 0xff) << 16) | rest);
}

/** 24 bits as 4 base64url characters. */
export function base64url24(v: number): string {
  return B64URL[(v >>> 18) & 63] + B64URL[(v >>> 12) & 63] + B64URL[(v >>> 6) & 63] + B64URL[v & 63];
}

/** A 32-bit value as 8 hexadecimal digits. */
export function hex32(v: number): string {
  return (v >>> 0).toString(16).padStart(8, '0');
}
