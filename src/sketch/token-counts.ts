// In how many documents each token hash occurs, in bounded memory: what a template sample counts
// (template-tokens.ts). Two JS Maps held every distinct token of the sample and threw past 2^24 entries
// (about 16.7 million: 10,000 long documents of word 4-shingles reach that); here one open-addressing table
// of typed arrays (12 bytes a slot) holds at most `maxTracked` tokens. When it is full, the tokens seen in
// the fewest documents are dropped until half the room is free (lossy counting, as Manku and Motwani's):
// a token dropped and seen again counts from 1, so any count is short by at most `undercount`, the sum of
// the dropped counts' ceilings. Template tokens, in a share of every document, are never the fewest; a
// count past the ceiling is exact up to it.
import { fmix32 } from './minhash.js';

/** Distinct tokens tracked at most, by default: 2^22 (a table of 2^23 slots, 96 MB). */
export const DEFAULT_MAX_TRACKED = 2 ** 22;

/**
 * In how many documents each token hash occurs, in bounded memory (lossy counting: the file header says how far off a
 * count may be).
 */
export class TokenCounts {
  private keys = new Uint32Array(0);
  private counts = new Uint32Array(0);
  private lastDoc = new Uint32Array(0);
  private mask = -1;
  private size = 0;
  private undercountBound = 0;

  constructor(readonly maxTracked = DEFAULT_MAX_TRACKED) {
    if (!Number.isInteger(maxTracked) || maxTracked < 2) throw new RangeError(`tokens tracked must be a whole number of 2 or more, got ${maxTracked}`);
    this.resize(Math.min(1 << 16, 2 ** Math.ceil(Math.log2(maxTracked * 2))));
  }

  /** Distinct tokens held now (at most maxTracked). */
  get tracked(): number {
    return this.size;
  }

  /** How many documents a token's count may be short by (0 until the table was first full). */
  get undercount(): number {
    return this.undercountBound;
  }

  /** Counts `h` for document number `doc` (1, 2, ...: documents in order), once per document. */
  add(h: number, doc: number): void {
    let slot = this.slotOf(h);
    if (this.counts[slot] !== 0) {
      if (this.lastDoc[slot] !== doc) {
        this.lastDoc[slot] = doc;
        this.counts[slot]++;
      }
      return;
    }
    if (this.size >= this.maxTracked) {
      this.prune();
      slot = this.slotOf(h);
    } else if (this.size * 2 >= this.keys.length) {
      this.resize(this.keys.length * 2);
      slot = this.slotOf(h);
    }
    this.keys[slot] = h;
    this.counts[slot] = 1;
    this.lastDoc[slot] = doc;
    this.size++;
  }

  /** Calls `each` with every token held and its count. */
  forEach(each: (h: number, count: number) => void): void {
    for (let i = 0; i < this.keys.length; i++) if (this.counts[i] !== 0) each(this.keys[i], this.counts[i]);
  }

  /** The slot of `h`: where it is, or the empty one where it goes (a count of 0 marks an empty slot). */
  private slotOf(h: number): number {
    let slot = mix(h) & this.mask;
    while (this.counts[slot] !== 0 && this.keys[slot] !== h) slot = (slot + 1) & this.mask;
    return slot;
  }

  /** Drops the tokens of the smallest counts, the fewest ceiling that frees at least half of the room. */
  private prune(): void {
    const histogram = new Map<number, number>();
    this.forEach((_, c) => {
      histogram.set(c, (histogram.get(c) ?? 0) + 1);
    });
    let ceiling = 0;
    let freed = 0;
    for (const c of [...histogram.keys()].sort((a, b) => a - b)) {
      ceiling = c;
      freed += histogram.get(c) as number;
      if (freed * 2 >= this.size) break;
    }
    this.undercountBound += ceiling;
    this.rebuild(this.keys.length, ceiling);
  }

  private resize(slots: number): void {
    this.rebuild(slots, 0);
  }

  /** The table again in `slots` slots, without the tokens counted `dropAtMost` times or fewer. */
  private rebuild(slots: number, dropAtMost: number): void {
    const { keys, counts, lastDoc } = this;
    this.keys = new Uint32Array(slots);
    this.counts = new Uint32Array(slots);
    this.lastDoc = new Uint32Array(slots);
    this.mask = slots - 1;
    this.size = 0;
    for (let i = 0; i < keys.length; i++) {
      if (counts[i] <= dropAtMost) continue; // an empty slot's 0 too
      const slot = this.slotOf(keys[i]);
      this.keys[slot] = keys[i];
      this.counts[slot] = counts[i];
      this.lastDoc[slot] = lastDoc[i];
      this.size++;
    }
  }
}

// Slots are a mix of the hash with a key drawn when the process starts (as distinct.ts does): documents are
// written by anyone, and chosen hashes must not be able to pile into one run of the table.
const SLOT_KEY = globalThis.crypto.getRandomValues(new Uint32Array(1))[0];
const mix = (h: number): number => fmix32((h ^ SLOT_KEY) >>> 0);
