// The signatures of the whole-index pass as the bucket and verify stages read them: a column of band-key
// hashes per band (4 bytes a document, all of it at once: the band is sorted into buckets), and the full
// signatures of a bucket group's members (read together, in slot order). Held in memory (SignaturePool) or
// spilled to local disk (SpilledSignatures) when they do not fit the memory dedup is given; the stages do
// not know which.
import type { DocIds } from './doc-numbers.js';
import type { SignaturePool } from './signature-pool.js';
import type { StoredSignature } from './signature-store.js';

export interface SignatureTable {
  /** Documents, numbered 0..size-1 in the order the scan met them (their slots). */
  readonly size: number;
  readonly bandCount: number;
  /** Each slot's id. */
  idOf(slot: number): string;
  /** The numbering the table's documents have, if any; a verifier that shares it takes them by number. */
  readonly numbering?: DocIds;
  /** Each slot's number in that numbering. */
  numberAt(slot: number): number;
  /** The hash of every document's key in `band`, in slot order, a chunk at a time. */
  readBand(band: number, visit: (chunk: Uint32Array) => void): void;
  /** The signatures of these slots (ascending, no repeats), found by slot until the next load. */
  load(slots: Uint32Array): Promise<(slot: number) => StoredSignature>;
}

/** Hashes handed out at a time when a band is read. */
export const BAND_CHUNK = 1 << 16;

/** A pool in memory as a table: a band's hashes copied out a chunk at a time, its signatures views into it. */
export function poolTable(pool: SignaturePool): SignatureTable {
  return {
    size: pool.size,
    bandCount: pool.bandCount,
    idOf: (slot) => pool.ids[slot],
    numbering: pool.numbering,
    numberAt: (slot) => pool.numberAt(slot),
    readBand: (band, visit) => {
      const chunk = new Uint32Array(Math.min(pool.size, BAND_CHUNK));
      for (let start = 0; start < pool.size; start += chunk.length) {
        const length = Math.min(chunk.length, pool.size - start);
        for (let i = 0; i < length; i++) chunk[i] = pool.bandHash(start + i, band);
        visit(chunk.subarray(0, length));
      }
    },
    load: async () => (slot) => pool.signature(slot),
  };
}
