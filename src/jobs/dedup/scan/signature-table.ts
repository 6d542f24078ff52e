// The signatures of the whole-index pass as the bucket and verify stages read them: a column of band-key
// hashes per band (4 bytes a document, all of it at once: the band is sorted into buckets), and the full
// signatures of a bucket group's members (read together, in slot order). Held in memory (SignaturePool) or
// spilled to local disk (SpilledSignatures) when they do not fit the memory dedup is given; the stages do
// not know which.
import type { DocIds } from '../documents/doc-numbers.js';
import type { RecordLayout } from './spill-records.js';
import type { SignaturePool } from './signature-pool.js';
import type { StoredSignature } from '../documents/signature-store.js';

/**
 * The signatures of a whole-index pass as the bucket and verify stages read them, the same whether held in memory or
 * spilled to disk.
 */
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
  /** The file that holds a band's hashes, when the table is on disk (another thread may read it there). */
  bandFile?(band: number): string;
  /** The file that holds the signatures' records and their layout, when the table is on disk (likewise). */
  records?(): { file: string; layout: RecordLayout };
  /** The signatures of these slots (ascending, no repeats), found by slot until the next load. */
  load(slots: Uint32Array): Promise<(slot: number) => StoredSignature>;
}

/** Hashes handed out at a time when a band is read from the disk. */
export const BAND_CHUNK = 1 << 16;

/** A pool in memory as a table: a band's hashes copied out into a column (4 bytes a document, kept for the next band), its signatures views into it. */
export function poolTable(pool: SignaturePool): SignatureTable {
  // The band last read, kept for its second reading (the sort reads a band twice; the pool's hashes of one
  // band are strided through memory, slow to gather).
  let last: { band: number; column: Uint32Array } | undefined;
  return {
    size: pool.size,
    bandCount: pool.bandCount,
    idOf: (slot) => pool.ids[slot],
    numbering: pool.numbering,
    numberAt: (slot) => pool.numberAt(slot),
    readBand: (band, visit) => {
      if (last?.band !== band) {
        const column = last?.column.length === pool.size ? last.column : new Uint32Array(pool.size);
        for (let i = 0; i < pool.size; i++) column[i] = pool.bandHash(i, band);
        last = { band, column };
      }
      visit(last.column);
    },
    load: async () => (slot) => pool.signature(slot),
  };
}
