// MinHash exactly as datasketch computes it, in both of its permutation schemes:
// - "affine32" (datasketch >= 2.0 default): the 32-bit token hash is pre-mixed with the MurmurHash3
//   finalizer, then h_i = a_i * h + b_i mod 2^32 with odd a_i.
// - "legacy" (datasketch < 2.0, and scheme="legacy" since): h_i = ((a_i * h + b_i) mod 2^64) mod p,
//   p = 2^61 - 1, truncated to 32 bits. The uint64 arithmetic is done exactly on 32-bit halves in
//   doubles rather than with BigInt, because this is the innermost loop of the whole product.
// Permutations are drawn with numpy's legacy RandomState(seed), as datasketch draws them.
import { LegacyRandomState } from './legacy-random.js';

/**
 * How the MinHash permutes token hashes: datasketch 2.0's 32-bit affine scheme, or its earlier 61-bit one (the file
 * header says how).
 */
export type MinhashScheme = 'affine32' | 'legacy';
/** Every scheme, in the order the command line offers them. */
export const MINHASH_SCHEMES: readonly MinhashScheme[] = ['affine32', 'legacy'];

/** 2^61 - 1, the prime of the legacy scheme's permutations. */
export const MERSENNE_PRIME = (1n << 61n) - 1n;
/** The largest 32-bit value: an empty MinHash holds it in every slot, as datasketch's. */
export const MAX_HASH = 0xffffffff;

/** The coefficients of `numPerm` permutations; for "legacy" the 61-bit values are split in 32-bit halves. */
export interface Permutations {
  readonly scheme: MinhashScheme;
  readonly numPerm: number;
  readonly seed: number;
  readonly aHi: Float64Array;
  readonly aLo: Float64Array;
  readonly bHi: Float64Array;
  readonly bLo: Float64Array;
  /** affine32 coefficients (uint32). */
  readonly a32: Uint32Array;
  readonly b32: Uint32Array;
}

const permutationCache = new Map<string, Permutations>();

/** The permutations of datasketch's `MinHash(num_perm, seed, scheme=...)`, drawn in the same order. */
export function minhashPermutations(numPerm: number, seed = 1, scheme: MinhashScheme = 'affine32'): Permutations {
  const key = `${scheme}/${numPerm}/${seed}`;
  const cached = permutationCache.get(key);
  if (cached) return cached;
  if (!Number.isInteger(numPerm) || numPerm < 1 || numPerm > 1 << 16) {
    throw new RangeError(`num_perm must be an integer from 1 to 65536, got ${numPerm}`);
  }
  const gen = new LegacyRandomState(seed);
  const aHi = new Float64Array(numPerm), aLo = new Float64Array(numPerm);
  const bHi = new Float64Array(numPerm), bLo = new Float64Array(numPerm);
  let a32: Uint32Array = new Uint32Array(0), b32: Uint32Array = new Uint32Array(0);
  if (scheme === 'legacy') {
    for (let i = 0; i < numPerm; i++) {
      const a = gen.randintUint64(1n, MERSENNE_PRIME);
      const b = gen.randintUint64(0n, MERSENNE_PRIME);
      aHi[i] = Number(a >> 32n);
      aLo[i] = Number(a & 0xffffffffn);
      bHi[i] = Number(b >> 32n);
      bLo[i] = Number(b & 0xffffffffn);
    }
  } else {
    a32 = gen.randintUint32(0, 2 ** 31, numPerm).map((a) => a * 2 + 1);
    b32 = gen.randintUint32(0, 2 ** 32, numPerm);
  }
  const perms = { scheme, numPerm, seed, aHi, aLo, bHi, bLo, a32, b32 };
  permutationCache.set(key, perms);
  return perms;
}

/** A fresh signature: every value at the maximum, as datasketch's empty MinHash. */
export function emptyMinhash(numPerm: number): Uint32Array {
  return new Uint32Array(numPerm).fill(MAX_HASH);
}

/** The MurmurHash3 32-bit finalizer, datasketch's pre-mix for the affine scheme. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/**
 * Folds 32-bit token hashes into `values` (a signature of perms.numPerm values), as datasketch's
 * `MinHash.update_batch`. Duplicate hashes change nothing, so callers may pass distinct ones only.
 */
export function updateMinhash(values: Uint32Array, perms: Permutations, hashes: ArrayLike<number>, count = hashes.length): void {
  if (perms.scheme === 'legacy') updateLegacy(values, perms, hashes, count);
  else updateAffine32(values, perms, hashes, count);
}

function updateAffine32(values: Uint32Array, perms: Permutations, hashes: ArrayLike<number>, count: number): void {
  const { numPerm, a32, b32 } = perms;
  for (let t = 0; t < count; t++) {
    const h = fmix32(hashes[t] >>> 0);
    for (let i = 0; i < numPerm; i++) {
      const v = (Math.imul(a32[i], h) + b32[i]) >>> 0;
      if (v < values[i]) values[i] = v;
    }
  }
}

const TWO_32 = 4294967296;
const INV_2_16 = 1 / 65536;
const INV_2_32 = 1 / TWO_32;
const INV_2_29 = 1 / 536870912;

function updateLegacy(values: Uint32Array, perms: Permutations, hashes: ArrayLike<number>, count: number): void {
  const { numPerm, aHi, aLo, bHi, bLo } = perms;
  for (let t = 0; t < count; t++) {
    const hv = hashes[t] >>> 0;
    const hvLo16 = hv & 0xffff;
    const hvHi16 = hv >>> 16;
    for (let i = 0; i < numPerm; i++) {
      const al = aLo[i];
      // a * hv mod 2^64 with a = aHi * 2^32 + al: 16-bit partial products keep every step exact.
      const y = al * hvHi16;
      const yHi = Math.floor(y * INV_2_16);
      const low = al * hvLo16 + (y - yHi * 65536) * 65536;
      const carry = Math.floor(low * INV_2_32);
      let lo = low - carry * TWO_32;
      let hi = (yHi + carry + (Math.imul(aHi[i], hv) >>> 0)) % TWO_32;
      // + b, mod 2^64.
      lo += bLo[i];
      if (lo >= TWO_32) { lo -= TWO_32; hi += 1; }
      hi = (hi + bHi[i]) % TWO_32;
      // mod (2^61 - 1): fold the top 3 bits back in, subtract p once if still at or above it.
      const top = Math.floor(hi * INV_2_29);
      let sHi = hi - top * 536870912;
      let sLo = lo + top;
      if (sLo >= TWO_32) { sLo -= TWO_32; sHi += 1; }
      if (sHi > 0x1fffffff || (sHi === 0x1fffffff && sLo === 0xffffffff)) sLo = (sLo + 1) % TWO_32;
      if (sLo < values[i]) values[i] = sLo;
    }
  }
}

/** Estimated Jaccard similarity: the share of equal values, as datasketch's `MinHash.jaccard`. */
export function minhashJaccard(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) {
    throw new RangeError(`cannot compare MinHash signatures of ${a.length} and ${b.length} permutations`);
  }
  if (a.length === 0) return 0;
  return equalValues(a, b) / a.length;
}

/**
 * How many of two MinHash signatures' values are equal, place by place (the count the estimate divides by the
 * length); of the first `length` only, when words follow the values (a `;core=` signature's core words).
 */
export function equalValues(a: ArrayLike<number>, b: ArrayLike<number>, length = a.length): number {
  let equal = 0;
  for (let i = 0; i < length; i++) if (a[i] === b[i]) equal++;
  return equal;
}
