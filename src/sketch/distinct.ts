// A set of uint32 values that is emptied in O(1) between documents: MinHash needs each distinct token
// hash once, and a JS Set of numbers allocates and hashes far more than this open-addressing table.
import { randomBytes } from 'node:crypto';
import { fmix32 } from './minhash.js';

// The slot of a value is a mix of it with a key drawn when the process starts. Token hashes can be chosen by
// whoever writes a document (a CRC-32 is easily forged; the low bits of a SHA-1 by trying): with a fixed
// mapping, n chosen hashes could all land in one run of the table, and adding them would cost n^2. Which
// slot a value takes changes nothing else: the values are listed in the order they came.
// (node:crypto's randomBytes: Web Crypto's getRandomValues would load Web Crypto, 0.6 ms of every start.)
const SLOT_KEY = randomBytes(4).readUInt32LE(0);

/** The distinct token hashes of one document, emptied in O(1) for the next (the file header says why not a Set). */
export class DistinctUint32 {
  private table = new Uint32Array(1 << 12);
  private stamps = new Uint32Array(1 << 12);
  private stamp = 1;
  private mask = (1 << 12) - 1;
  values = new Uint32Array(1 << 11);
  size = 0;

  /** Empties the set, sized for up to `expected` values. */
  clear(expected: number): void {
    if (this.table.length < expected * 2) {
      let cap = this.table.length;
      while (cap < expected * 2) cap *= 2;
      this.table = new Uint32Array(cap);
      this.stamps = new Uint32Array(cap);
      this.mask = cap - 1;
      this.stamp = 0;
    }
    if (this.values.length < expected) this.values = new Uint32Array(expected);
    this.stamp++;
    if (this.stamp === 0xffffffff) {
      this.stamps.fill(0);
      this.stamp = 1;
    }
    this.size = 0;
  }

  /** Adds v; `clear(expected)` must have allowed for it. */
  add(v: number): void {
    let slot = fmix32((v ^ SLOT_KEY) >>> 0) & this.mask;
    while (this.stamps[slot] === this.stamp) {
      if (this.table[slot] === v) return;
      slot = (slot + 1) & this.mask;
    }
    this.stamps[slot] = this.stamp;
    this.table[slot] = v;
    this.values[this.size++] = v;
  }
}
