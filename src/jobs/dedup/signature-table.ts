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
  /** The hash of every document's key in `band`, by slot. */
  bandColumn(band: number): Promise<Uint32Array>;
  /** The signatures of these slots (ascending, no repeats), found by slot until the next load. */
  load(slots: Uint32Array): Promise<(slot: number) => StoredSignature>;
}

/** A pool in memory as a table: its columns copied out a band at a time, its signatures views into it. */
export function poolTable(pool: SignaturePool): SignatureTable {
  return {
    size: pool.size,
    bandCount: pool.bandCount,
    idOf: (slot) => pool.ids[slot],
    numbering: pool.numbering,
    numberAt: (slot) => pool.numberAt(slot),
    bandColumn: async (band) => {
      const column = new Uint32Array(pool.size);
      for (let i = 0; i < pool.size; i++) column[i] = pool.bandHash(i, band);
      return column;
    },
    load: async () => (slot) => pool.signature(slot),
  };
}
