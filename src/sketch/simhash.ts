// 64-bit SimHash as simhash-py computes it, and the block keys that let the engine find every
// fingerprint within k differing bits (pigeonhole: split 64 bits into m blocks; k flipped bits touch at
// most k blocks, so near fingerprints share at least m - k blocks exactly).
import { md5First64 } from './digests.js';
import { hex32 } from './lsh.js';
import { encodeUtf8, utf8Scratch } from './utf8.js';

/** A 64-bit value as two unsigned 32-bit halves. */
export interface Hash64 {
  hi: number;
  lo: number;
}

const md5Out = new Uint32Array(2);

/** simhash-py's `unsigned_hash`: the first 8 bytes of MD5, big-endian. Strings are taken as UTF-8. */
export function unsignedHash(data: string | Uint8Array): Hash64 {
  if (typeof data === 'string') {
    const len = encodeUtf8(data); // may grow the scratch buffer: read it after
    md5First64(utf8Scratch(), 0, len, md5Out);
  }
  else md5First64(data, 0, data.length, md5Out);
  return { hi: md5Out[0], lo: md5Out[1] };
}

/**
 * simhash-py's `shingle(tokens, window)`: every run of `window` consecutive tokens, and nothing for a
 * list shorter than the window. (near-dup's default SimHash features differ on that one point: a text
 * of fewer words than the window is one feature, so that short texts get a fingerprint.)
 */
export function shingle<T>(tokens: readonly T[], window = 4): T[][] {
  if (!Number.isInteger(window) || window <= 0) throw new RangeError(`shingle window must be positive, got ${window}`);
  if (tokens.length < window) return [];
  const out: T[][] = [];
  for (let i = 0; i + window <= tokens.length; i++) out.push(tokens.slice(i, i + window));
  return out;
}

/**
 * Counts, for each of the 64 bit positions, how many feature hashes have it set (a repeated feature
 * counts once per occurrence, as in simhash-py's `compute` over a list with repeats). Counts are kept
 * packed, eight 4-bit counters per 32-bit word, and spilled every 15 features, so one feature costs a
 * handful of word operations rather than 64 bit tests.
 */
export class SimhashAccumulator {
  private readonly ones = new Float64Array(64);
  private readonly packed = new Int32Array(8);
  private pending = 0;
  private total = 0;

  add(hi: number, lo: number): void {
    const p = this.packed;
    p[0] += lo & 0x11111111;
    p[1] += (lo >>> 1) & 0x11111111;
    p[2] += (lo >>> 2) & 0x11111111;
    p[3] += (lo >>> 3) & 0x11111111;
    p[4] += hi & 0x11111111;
    p[5] += (hi >>> 1) & 0x11111111;
    p[6] += (hi >>> 2) & 0x11111111;
    p[7] += (hi >>> 3) & 0x11111111;
    this.total++;
    if (++this.pending === 15) this.spill();
  }

  private spill(): void {
    const p = this.packed, ones = this.ones;
    for (let k = 0; k < 8; k++) {
      const word = p[k];
      const base = k < 4 ? k : 32 + (k - 4);
      for (let slot = 0; slot < 8; slot++) ones[base + 4 * slot] += (word >>> (4 * slot)) & 0xf;
      p[k] = 0;
    }
    this.pending = 0;
  }

  /** Bit i is set when more features have it set than not; ties give 0, as in simhash-py. */
  result(): Hash64 {
    this.spill();
    let hi = 0, lo = 0;
    for (let i = 0; i < 32; i++) {
      if (2 * this.ones[i] > this.total) lo |= 1 << i;
      if (2 * this.ones[32 + i] > this.total) hi |= 1 << i;
    }
    return { hi: hi >>> 0, lo: lo >>> 0 };
  }
}

/** simhash-py's `compute` over a list of 64-bit hashes (BigInt or {hi, lo}). */
export function computeSimhash(hashes: Iterable<bigint | Hash64>): Hash64 {
  const acc = new SimhashAccumulator();
  for (const h of hashes) {
    if (typeof h === 'bigint') acc.add(Number((h >> 32n) & 0xffffffffn), Number(h & 0xffffffffn));
    else acc.add(h.hi, h.lo);
  }
  return acc.result();
}

/** A 64-bit SimHash as 16 hex digits, most significant first (simhash-py's integer in hex): the stored `simhash` field. */
export function simhashHex({ hi, lo }: Hash64): string {
  return hex32(hi) + hex32(lo);
}

/** A SimHash from its 16 hexadecimal digits; a RangeError saying what it is when the text is not one. */
export function parseSimhashHex(hex: string): Hash64 {
  if (!/^[0-9a-fA-F]{16}$/.test(hex)) {
    throw new RangeError(`a SimHash is 16 hexadecimal digits (64 bits), got "${hex}"`);
  }
  return { hi: parseInt(hex.slice(0, 8), 16), lo: parseInt(hex.slice(8), 16) };
}

/** Bits set in a 32-bit word. */
export function popcount32(v: number): number {
  v = v - ((v >>> 1) & 0x55555555);
  v = (v & 0x33333333) + ((v >>> 2) & 0x33333333);
  return (Math.imul((v + (v >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24);
}

/** Number of differing bits (simhash-py's `num_differing_bits`). */
export function hammingDistance(a: Hash64 | string, b: Hash64 | string): number {
  const x = typeof a === 'string' ? parseSimhashHex(a) : a;
  const y = typeof b === 'string' ? parseSimhashHex(b) : b;
  return popcount32((x.hi ^ y.hi) >>> 0) + popcount32((x.lo ^ y.lo) >>> 0);
}

/**
 * SimHash blocks unless given: with 8 blocks, two SimHashes at most 7 bits apart share one whole block, so a block
 * query finds them.
 */
export const DEFAULT_SIMHASH_BLOCKS = 8;

/** Bit widths of m contiguous blocks covering 64 bits, the wider blocks first. */
export function blockWidths(blocks: number): number[] {
  if (!Number.isInteger(blocks) || blocks < 2 || blocks > 64) {
    throw new RangeError(`SimHash blocks must be an integer from 2 to 64, got ${blocks}`);
  }
  const base = Math.floor(64 / blocks), extra = 64 % blocks;
  return Array.from({ length: blocks }, (_, i) => base + (i < extra ? 1 : 0));
}

/**
 * Block keys "<block>:<hex value of the block>", most significant block first. Two fingerprints within
 * k bits share at least blocks - k keys, so `minimum_should_match: blocks - k` finds all of them.
 */
export function simhashBlockKeys(fingerprint: Hash64 | string, blocks = DEFAULT_SIMHASH_BLOCKS): string[] {
  const { hi, lo } = typeof fingerprint === 'string' ? parseSimhashHex(fingerprint) : fingerprint;
  const value = (BigInt(hi) << 32n) | BigInt(lo);
  const keys: string[] = [];
  let shift = 64n;
  blockWidths(blocks).forEach((width, index) => {
    shift -= BigInt(width);
    const block = (value >> shift) & ((1n << BigInt(width)) - 1n);
    keys.push(`${index}:${block.toString(16)}`);
  });
  return keys;
}

/** The `minimum_should_match` for finding fingerprints within k bits with m blocks; k must be below m. */
export function blocksToMatch(blocks: number, maxDistance: number): number {
  if (!Number.isInteger(maxDistance) || maxDistance < 0 || maxDistance >= blocks) {
    throw new RangeError(
      `max distance must be an integer from 0 to ${blocks - 1} with ${blocks} SimHash blocks, got ${maxDistance}`,
    );
  }
  return blocks - maxDistance;
}
