// Tokens as byte ranges of one UTF-8 buffer rather than as strings: the hashes read bytes, and a
// document has thousands of tokens, so building a string and encoding it per token would cost more
// than the hashing. Words are laid out joined by single spaces, which makes every word shingle (the
// tokens of white-space-N-grams and the SimHash features) one contiguous range.
import { splitWhiteSpace } from './white-space.js';

/**
 * A document's tokens as byte ranges of one UTF-8 buffer, filled anew for each document (the file header says why not
 * strings).
 */
export class TokenRanges {
  /** The buffer this object owns and writes into. */
  bytes = new Uint8Array(1 << 16);
  /** The buffer the ranges point into: `bytes`, or another layout's for shingles of its words. */
  source = this.bytes;
  starts = new Int32Array(1 << 12);
  ends = new Int32Array(1 << 12);
  count = 0;
  length = 0;

  reset(byteCapacity: number, rangeCapacity: number): void {
    if (this.bytes.length < byteCapacity) this.bytes = new Uint8Array(Math.max(byteCapacity, this.bytes.length * 2));
    this.source = this.bytes;
    this.ensureRanges(rangeCapacity);
    this.count = 0;
    this.length = 0;
  }

  ensureRanges(capacity: number): void {
    if (this.starts.length < capacity) {
      const size = Math.max(capacity, this.starts.length * 2);
      const starts = new Int32Array(size), ends = new Int32Array(size);
      starts.set(this.starts.subarray(0, this.count));
      ends.set(this.ends.subarray(0, this.count));
      this.starts = starts;
      this.ends = ends;
    }
  }

  push(start: number, end: number): void {
    if (this.count === this.starts.length) this.ensureRanges(this.count + 1);
    this.starts[this.count] = start;
    this.ends[this.count] = end;
    this.count++;
  }
}

const encoder = new TextEncoder();

// Python's str.isspace() for the ASCII range (the non-ASCII ones are handled by the regex path).
const ASCII_SPACE = new Uint8Array(128);
for (const c of [9, 10, 11, 12, 13, 28, 29, 30, 31, 32]) ASCII_SPACE[c] = 1;

/**
 * Lays out the words of `text` (as Python's str.split() finds them) joined by single spaces, with one
 * range per word.
 */
export function layoutWords(text: string, out: TokenRanges): void {
  const n = text.length;
  out.reset(n * 3 + 1, 1024);
  const bytes = out.bytes;
  let pos = 0;
  let wordStart = -1;
  let i = 0;
  for (; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128) break;
    if (ASCII_SPACE[c]) {
      if (wordStart >= 0) {
        out.push(wordStart, pos);
        wordStart = -1;
      }
    } else {
      if (wordStart < 0) {
        if (out.count > 0) bytes[pos++] = 32;
        wordStart = pos;
      }
      bytes[pos++] = c;
    }
  }
  if (i === n) {
    if (wordStart >= 0) out.push(wordStart, pos);
    out.length = pos;
    return;
  }
  // Not all ASCII: split as Python does, encode once, and find the words between the single spaces.
  const joined = splitWhiteSpace(text).join(' ');
  out.reset(joined.length * 3 + 1, 1024);
  const written = encoder.encodeInto(joined, out.bytes).written;
  out.length = written;
  if (written === 0) return;
  let start = 0;
  for (let k = 0; k < written; k++) {
    if (out.bytes[k] === 32) {
      out.push(start, k);
      start = k + 1;
    }
  }
  out.push(start, written);
}

/** Ranges of every run of n consecutive words (one range of all words if there are fewer than n). */
export function shingleRanges(words: TokenRanges, n: number, out: TokenRanges): void {
  out.count = 0;
  out.source = words.source;
  if (words.count === 0) return;
  if (words.count <= n) {
    out.push(words.starts[0], words.ends[words.count - 1]);
    return;
  }
  out.ensureRanges(words.count - n + 1);
  for (let i = 0; i + n <= words.count; i++) out.push(words.starts[i], words.ends[i + n - 1]);
}

/** Encodes string tokens one after another into `out`, one range each. */
export function layoutStrings(tokens: readonly string[], out: TokenRanges): void {
  let total = 0;
  for (const t of tokens) total += t.length;
  out.reset(total * 3 + 1, tokens.length);
  let pos = 0;
  for (const t of tokens) {
    const written = encoder.encodeInto(t, out.bytes.subarray(pos)).written;
    out.push(pos, pos + written);
    pos += written;
  }
  out.length = pos;
}

/** Character n-grams of an all-ASCII text, as byte ranges; false if the text is not all ASCII. */
export function asciiCharacterShingles(text: string, n: number, out: TokenRanges): boolean {
  const len = text.length;
  out.reset(len, Math.max(1, len - n + 1));
  const bytes = out.bytes;
  for (let i = 0; i < len; i++) {
    const c = text.charCodeAt(i);
    if (c >= 128) return false;
    bytes[i] = c;
  }
  out.length = len;
  if (len === 0) return true;
  if (len <= n) out.push(0, len);
  else for (let i = 0; i + n <= len; i++) out.push(i, i + n);
  return true;
}
