// The SimHash of the simhash-doc scheme, and the SimHash as text in either of the forms near-dup stores:
// 16 hexadecimal digits (near-dup's own SimHash) or 13 base32 characters (simhash-doc's).
import { simhashDocTokens } from '../text/simhash-doc.js';
import { Base32Error, base32Decode, base32Encode } from './base32.js';
import { type Hash64, hammingDistance, parseSimhashHex, SimhashAccumulator, unsignedHash } from './simhash.js';

/**
 * The parts the draft leaves open, as near-dup fills them: each token is one feature (no shingles), every
 * occurrence counted, hashed with simhash-py's `unsigned_hash` (the first 8 bytes of the MD5 of its UTF-8,
 * big-endian); a bit is set when more than half the features have it set.
 */
export function simhashDoc(text: string): Hash64 {
  return simhashDocOf(text).fingerprint;
}

/**
 * simhashDoc with the number of tokens it was made of (0: a text without any, whose fingerprint is 0).
 * `tokenized`: the text is the simhash-doc normalizer's already, its tokens joined by single spaces.
 */
export function simhashDocOf(text: string, tokenized = false): { fingerprint: Hash64; wordCount: number } {
  const acc = new SimhashAccumulator();
  const tokens = !tokenized ? simhashDocTokens(text) : text === '' ? [] : text.split(' ');
  for (const token of tokens) {
    const { hi, lo } = tokenHash(token);
    acc.add(hi, lo);
  }
  return { fingerprint: acc.result(), wordCount: tokens.length };
}

// Words repeat (a text's tokens are mostly a few hundred words): their MD5s are kept, in a table cleared when
// it grows large, so most tokens cost a lookup instead of a digest. Only short tokens: V8 makes a substring
// of 13 characters or more a view of the whole text it was cut from, so a long token kept here would keep
// its document alive (thousands of documents' worth, at the table's size).
const hashes = new Map<string, Hash64>();
/** Tokens this long or shorter have their digests kept (the comment above says why longer ones are not). */
export const MAX_KEPT_TOKEN = 12;

function tokenHash(token: string): Hash64 {
  if (token.length > MAX_KEPT_TOKEN) return unsignedHash(token);
  let h = hashes.get(token);
  if (h === undefined) {
    if (hashes.size >= 1 << 16) hashes.clear();
    h = unsignedHash(token);
    hashes.set(token, h);
  }
  return h;
}

const bytes = new Uint8Array(8);
const view = new DataView(bytes.buffer);

/** The 64 bits as 8 bytes, most significant first (as the hex digits read), in base32: 13 characters. */
export function simhashBase32({ hi, lo }: Hash64): string {
  view.setUint32(0, hi);
  view.setUint32(4, lo);
  return base32Encode(bytes);
}

/** A SimHash from the 13 base32 characters simhash-doc writes. */
export function parseSimhashBase32(text: string): Hash64 {
  const decoded = base32Decode(text, 8);
  const v = new DataView(decoded.buffer);
  return { hi: v.getUint32(0), lo: v.getUint32(4) };
}

/**
 * A stored SimHash in either form: 16 hexadecimal digits, or base32 (13 characters, either case, the
 * padding allowed). The two cannot be confused: they differ in length.
 */
export function parseSimhash(text: string): Hash64 {
  if (text.length === 16 && /^[0-9a-fA-F]{16}$/.test(text)) return parseSimhashHex(text);
  try {
    return parseSimhashBase32(text);
  } catch (err) {
    if (!(err instanceof Base32Error)) throw err;
    throw new RangeError(`a SimHash is 16 hexadecimal digits or 13 base32 characters (64 bits): ${err.message}`);
  }
}

/** Whether a text is a SimHash in base32 (13 characters, either case, padding allowed). */
export function isSimhashBase32(text: string): boolean {
  try {
    parseSimhashBase32(text);
    return true;
  } catch {
    return false;
  }
}

/** Bits that differ between two SimHashes, each in either stored form (simhash.ts hammingDistance reads hex only). */
export function simhashDistance(a: string | Hash64, b: string | Hash64): number {
  return hammingDistance(typeof a === 'string' ? parseSimhash(a) : a, typeof b === 'string' ? parseSimhash(b) : b);
}
