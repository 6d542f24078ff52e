// Token hashes: a token's UTF-8 bytes to an unsigned 32-bit integer, the input of MinHash.
import { crc32 } from 'node:zlib';
import murmur from 'murmurhash3js-revisited';
import { byteSwap, sha1FirstWord } from './digests.js';
import { encodeUtf8, utf8Scratch } from './utf8.js';

export type TokenHashName = 'sha1' | 'mmh3' | 'crc32';
export const TOKEN_HASHES: readonly TokenHashName[] = ['sha1', 'mmh3', 'crc32'];

/** A function from the bytes [0, len) of a buffer to an unsigned 32-bit hash. */
export type ByteHash32 = (bytes: Uint8Array, len: number) => number;

const byteHashes: Record<TokenHashName, ByteHash32> = {
  // datasketch's sha1_hash32: the first 4 digest bytes read little-endian.
  sha1: (bytes, len) => byteSwap(sha1FirstWord(bytes, len)),
  // MurmurHash3 x86 32-bit, seed 0, as Python's mmh3.hash(b, 0, signed=False).
  mmh3: (bytes, len) => murmur.x86.hash32(bytes.subarray(0, len), 0) >>> 0,
  // zlib's CRC-32, as Python's zlib.crc32.
  crc32: (bytes, len) => crc32(bytes.subarray(0, len)) >>> 0,
};

export function byteHash(name: TokenHashName): ByteHash32 {
  return byteHashes[name];
}

/** Hashes one token (a string, taken as UTF-8) with the named hash. */
export function tokenHash(name: TokenHashName, token: string): number {
  const len = encodeUtf8(token);
  return byteHashes[name](utf8Scratch(), len);
}
