// Token hashes: a token's UTF-8 bytes to an unsigned 32-bit integer, the input of MinHash. Each is one
// entry of TOKEN_HASH_REGISTRY: its function, and the fast paths the signer takes where it has them.
import { createRequire } from 'node:module';
import type Murmur from 'murmurhash3js-revisited';
import { Registry } from '../text/registry.js';
import { byteSwap, sha1FirstWord } from './digests.js';
import { encodeUtf8, utf8Scratch } from './utf8.js';

/** The token hashes a condenser spec may name. */
export type TokenHashName = 'sha1' | 'mmh3' | 'crc32';

/** A function from the bytes [start, end) of a buffer to an unsigned 32-bit hash. */
export type ByteHash32 = (bytes: Uint8Array, start: number, end: number) => number;

// The JavaScript MurmurHash3, loaded the first time it hashes: the WebAssembly kernels hash tokens
// themselves, and a process that never needs it saves its loading (a few ms of every start).
let murmur: typeof Murmur | undefined;
const murmurLib = (): typeof Murmur => (murmur ??= createRequire(import.meta.url)('murmurhash3js-revisited') as typeof Murmur);
// zlib likewise (its CRC-32), half a millisecond of every start.
let zlib: typeof import('node:zlib') | undefined;
const zlibLib = (): typeof import('node:zlib') => (zlib ??= createRequire(import.meta.url)('node:zlib') as typeof import('node:zlib'));

/** The WebAssembly kernels that hash many tokens in one call (assembly/kernels.ts, wasm-kernels.ts). */
export type TokenHashKernel = 'tokenHashesSha1' | 'tokenHashesMmh3' | 'tokenHashesCrc32';

/** One token hash. */
export interface TokenHashEntry {
  /** The name a condenser spec and the params keyword write. */
  readonly name: TokenHashName;
  readonly aliases?: readonly string[];
  readonly hash: ByteHash32;
  /** Worth a memo of recent tokens (CachedByteHash): it costs more than the memo's look-up. */
  readonly memo?: boolean;
  /** The fast path: its WebAssembly kernel, if it has one. */
  readonly kernel?: TokenHashKernel;
}

/** The token hashes, by name. */
export const TOKEN_HASH_REGISTRY = new Registry<TokenHashEntry>('hashes', [
  // datasketch's sha1_hash32: the first 4 digest bytes read little-endian.
  { name: 'sha1', hash: (bytes, start, end) => byteSwap(sha1FirstWord(bytes, start, end)), memo: true, kernel: 'tokenHashesSha1' },
  // MurmurHash3 x86 32-bit, seed 0, as Python's mmh3.hash(b, 0, signed=False).
  { name: 'mmh3', hash: (bytes, start, end) => murmurLib().x86.hash32(bytes.subarray(start, end), 0) >>> 0, kernel: 'tokenHashesMmh3' },
  // zlib's CRC-32, as Python's zlib.crc32.
  { name: 'crc32', hash: (bytes, start, end) => zlibLib().crc32(bytes.subarray(start, end)) >>> 0, kernel: 'tokenHashesCrc32' },
]);
/** Every token hash, by name, in the order they were registered. */
export const TOKEN_HASHES = TOKEN_HASH_REGISTRY.names as readonly TokenHashName[];
/** The token hash unless given: SHA-1's first 32 bits, as datasketch's default. */
export const DEFAULT_TOKEN_HASH: TokenHashName = 'sha1';

/** The entry of a token hash name; RangeError for an unknown one. */
export function tokenHashEntry(name: string): TokenHashEntry {
  const entry = TOKEN_HASH_REGISTRY.get(name);
  if (!entry) throw new RangeError(`unknown token hash "${name}"`);
  return entry;
}

/** The hash function of a token hash name, over a byte range. */
export function byteHash(name: TokenHashName): ByteHash32 {
  return tokenHashEntry(name).hash;
}

/** Hashes one token (a string, taken as UTF-8) with the named hash. */
export function tokenHash(name: TokenHashName, token: string): number {
  const len = encodeUtf8(token); // may grow the scratch buffer: read it after
  return byteHash(name)(utf8Scratch(), 0, len);
}

const SLOT_BYTES = 24;

/**
 * A fixed-size, direct-mapped memo of token hashes. Word frequencies in text are Zipfian, so most
 * tokens of a document were seen recently; checking a slot (a cheap FNV-1a of the bytes, then a byte
 * comparison) costs a fraction of a SHA-1. Tokens longer than a slot are hashed every time. Results
 * are exactly those of the wrapped hash: a slot only answers for the very same bytes.
 */
export class CachedByteHash {
  private readonly keys: Uint8Array;
  private readonly lengths: Int32Array;
  private readonly values: Uint32Array;
  private readonly mask: number;

  constructor(private readonly hash: ByteHash32, slotsLog2 = 16) {
    const slots = 1 << slotsLog2;
    this.mask = slots - 1;
    this.keys = new Uint8Array(slots * SLOT_BYTES);
    this.lengths = new Int32Array(slots).fill(-1);
    this.values = new Uint32Array(slots);
  }

  get(bytes: Uint8Array, start: number, end: number): number {
    const len = end - start;
    if (len > SLOT_BYTES) return this.hash(bytes, start, end);
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
    const slot = (h ^ (h >>> 16)) & this.mask;
    const keys = this.keys;
    const base = slot * SLOT_BYTES;
    if (this.lengths[slot] === len) {
      let i = 0;
      while (i < len && keys[base + i] === bytes[start + i]) i++;
      if (i === len) return this.values[slot];
    }
    const value = this.hash(bytes, start, end);
    for (let i = 0; i < len; i++) keys[base + i] = bytes[start + i];
    this.lengths[slot] = len;
    this.values[slot] = value;
    return value;
  }
}
