// One share's view of the signature table (dedup --share K/N): the same documents and signatures, but each
// band's key hashes outside the share's range hidden, so that the band pass (band-pass.ts) makes, loads and
// verifies only the share's buckets. A hidden hash is replaced by a value of its own outside the range
// (range end + slot), which no other document has: it makes no bucket.
//
// One thing the hidden keys still tell: which of them are large (held by more documents than one bucket
// verifies at once). A pair that met first in a large key may not have been decided there, so a later band
// verifies it again unless it is joined (pair-verifier.ts, decidedEarlier); a share that did not know the
// other shares' large keys would take such a pair as decided and lose it. So the hidden large keys of each
// band are counted here (two reads of the band, a table of counters of at most 16 MB) and reported before
// the band is verified, as the band pass reports its own.
import { mixed } from '../documents/doc-numbers.js';
import { inRange, type KeyRange } from './plan.js';
import type { SignatureTable } from '../scan/signature-table.js';

/** The share's key range, the bucket chunk that makes a key large, and who is told of other shares' large keys. */
export interface ShareTableSettings {
  range: KeyRange;
  /** Documents of one band key verified at once: a key held by more is large. */
  bucketChunk: number;
  /** A large key of another share (as the signatures hold it: signed 32-bit), before its band is verified. */
  onForeignLargeKey: (band: number, hash: number) => void;
}

/** 2^32: hashes wrap around it. */
const SPACE = 2 ** 32;

/**
 * The table as a share sees it. Its band file is left out (a band sorted from the file on another core
 * would see every key); every other member is the table's own.
 */
export function shareTable(table: SignatureTable, settings: ShareTableSettings): SignatureTable {
  const { range } = settings;
  let scratch = new Uint32Array(0);
  const reported = new Set<number>();
  const counters = new LargeKeyCounters(table.size);
  const view: SignatureTable = {
    get size() {
      return table.size;
    },
    get bandCount() {
      return table.bandCount;
    },
    get numbering() {
      return table.numbering;
    },
    idOf: (slot) => table.idOf(slot),
    numberAt: (slot) => table.numberAt(slot),
    load: (slots) => table.load(slots),
    readBand(band, visit) {
      if (!reported.has(band)) {
        reported.add(band);
        for (const hash of counters.largeKeys((v) => table.readBand(band, v), range, settings.bucketChunk)) settings.onForeignLargeKey(band, hash);
      }
      let slot = 0;
      table.readBand(band, (chunk) => {
        if (scratch.length < chunk.length) scratch = new Uint32Array(chunk.length);
        const out = scratch.subarray(0, chunk.length);
        for (let k = 0; k < chunk.length; k++, slot++) out[k] = inRange(range, chunk[k]) ? chunk[k] : (range.hi + slot) % SPACE;
        visit(out);
      });
    },
  };
  // The signatures' records on disk, when the table has them: the band pass may check small buckets on other
  // threads from there (its buckets are this view's, so still only the share's).
  if (table.records) view.records = () => (table.records as NonNullable<SignatureTable['records']>).call(table);
  return view;
}

/**
 * The keys outside a range held by more than a number of documents in one band: counted approximately in a
 * table of counters (a key's counter counts it and the keys that share its place), then exactly for the
 * few places past the number.
 */
export class LargeKeyCounters {
  private readonly counters: Uint32Array;
  private readonly mask: number;

  constructor(documents: number) {
    const bits = Math.min(22, Math.max(10, Math.ceil(Math.log2(Math.max(1, documents)))));
    this.counters = new Uint32Array(1 << bits);
    this.mask = (1 << bits) - 1;
  }

  /** The hashes (signed 32-bit) outside `range` that more than `threshold` documents of the band hold. */
  largeKeys(read: (visit: (chunk: Uint32Array) => void) => void, range: KeyRange, threshold: number): number[] {
    const { counters, mask } = this;
    counters.fill(0);
    read((chunk) => {
      for (let k = 0; k < chunk.length; k++) if (!inRange(range, chunk[k])) counters[mixed(chunk[k]) & mask]++;
    });
    if (!counters.some((c) => c > threshold)) return [];
    const exact = new Map<number, number>();
    read((chunk) => {
      for (let k = 0; k < chunk.length; k++) {
        const h = chunk[k];
        if (!inRange(range, h) && counters[mixed(h) & mask] > threshold) exact.set(h, (exact.get(h) ?? 0) + 1);
      }
    });
    const large: number[] = [];
    for (const [hash, count] of exact) if (count > threshold) large.push(hash | 0);
    return large;
  }
}
