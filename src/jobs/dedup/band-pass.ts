// The bucket and verify stages of one band: the band's key hashes sorted into buckets (band-sort.ts), its
// large keys marked (so later bands know which pairs they may not have decided), then its buckets verified
// in order, a group at a time: the signatures of a group's members are loaded together (from memory, or in
// slot order from the disk), so memory holds one group whatever the size of the index. The buckets, their
// members' order and so the pairs are the same wherever the signatures are kept.
import os from 'node:os';
import { bandBuckets, type BandScratch } from './band-sort.js';
import { BandSorter, type SortedBand } from './band-sorter.js';
import { LargeKeyJoin } from './large-key.js';
import type { BucketMembers, PairVerifier } from './pair-verifier.js';
import type { StoredSignature } from './signature-store.js';
import type { SignatureTable } from './signature-table.js';

/** Members whose signatures are loaded together, by default (about 0.6 KB each). */
export const DEFAULT_GROUP_MEMBERS = 100_000;

export interface BandPassSettings {
  /** Documents of one band key verified at once; a key held by more is a large key, verified a chunk at a time. */
  bucketChunk: number;
  /** A band a resumed run had finished: its large keys are marked, its buckets not verified again. */
  markOnly?: boolean;
  /** Members whose signatures are loaded together. */
  groupMembers?: number;
  /** Arrays the band's sort reuses (the same object for every band of a pass: 8 bytes a document, made once). */
  scratch?: BandScratch;
  /** The band already sorted (by a BandSorter, on another core). */
  sorted?: SortedBand;
}

export async function verifyBandOf(table: SignatureTable, verifier: PairVerifier, band: number, settings: BandPassSettings): Promise<void> {
  const { bucketChunk } = settings;
  const { order, runs, largeKeys } = settings.sorted ?? sortHere(table, band, settings);
  const runCount = runs.length / 2;
  for (const hash of largeKeys) verifier.markLargeKey(band, hash);
  if (settings.markOnly) return;
  const numberOf = numbering(table, verifier);
  const groupMembers = settings.groupMembers ?? DEFAULT_GROUP_MEMBERS;
  const sizeOf = (r: number) => runs[2 * r + 1] - runs[2 * r];
  for (let r = 0; r < runCount; ) {
    // The runs of one group: at least one, then as many as fit.
    let members = 0;
    let last = r;
    while (last < runCount && (last === r || members + sizeOf(last) <= groupMembers)) members += sizeOf(last++);
    const signatureOf = await table.load(slotsOf(order, runs, r, last));
    for (let k = r; k < last; k++) {
      const start = runs[2 * k], end = runs[2 * k + 1];
      if (end - start > bucketChunk) verifyLargeKey(verifier, band, bucketChunk, order.subarray(start, end), numberOf, signatureOf);
      else verifier.verifyMembersOf(bucketOf(order, start, end, numberOf, signatureOf), band);
    }
    r = last;
  }
}


export interface BandsSettings {
  bucketChunk: number;
  /** Bands a resumed run had finished (marked only). */
  startAt?: number;
  groupMembers?: number;
  /** After each band verified (not those marked only). */
  onBand?: (band: number) => Promise<void> | void;
  /** Whether a table on disk has its bands sorted one ahead on another core (default: when the machine has two). */
  sortAhead?: boolean;
}

/**
 * Every band in turn. The bands of a table spilled to disk are sorted one ahead on another core when the
 * machine has one (band-sorter.ts): each band then costs the longer of its sort and its verification.
 */
export async function verifyBands(table: SignatureTable, verifier: PairVerifier, settings: BandsSettings): Promise<void> {
  const { bucketChunk, groupMembers, startAt = 0 } = settings;
  const sorter = (settings.sortAhead ?? os.availableParallelism() > 1) ? sorterFor(table, bucketChunk) : undefined;
  const scratch = { keys: new Uint32Array(0), order: new Uint32Array(0) };
  let next = sorter?.sort(0);
  try {
    for (let band = 0; band < table.bandCount; band++) {
      const sorted = await next;
      next = band + 1 < table.bandCount ? sorter?.sort(band + 1) : undefined;
      await verifyBandOf(table, verifier, band, { bucketChunk, groupMembers, markOnly: band < startAt, scratch, sorted });
      if (band >= startAt) await settings.onBand?.(band);
    }
  } finally {
    next?.catch(() => undefined); // (a sort asked for ahead of a failure)
    await sorter?.close();
  }
}

/** A sorter on another core, for a table spilled to disk. */
function sorterFor(table: SignatureTable, bucketChunk: number): BandSorter | undefined {
  if (!table.bandFile || table.size === 0) return undefined;
  const fileOf = table.bandFile.bind(table);
  return new BandSorter(table.size, bucketChunk, fileOf);
}

/** The band sorted into buckets on this thread. */
function sortHere(table: SignatureTable, band: number, settings: BandPassSettings): SortedBand {
  const { order, keys, runs } = bandBuckets((visit) => table.readBand(band, visit), table.size, settings.scratch);
  // (As the signatures hold them: signed 32-bit.)
  const largeKeys: number[] = [];
  for (let r = 0; r < runs.length; r += 2) if (runs[r + 1] - runs[r] > settings.bucketChunk) largeKeys.push(keys[runs[r]] | 0);
  return { order, runs, largeKeys: Int32Array.from(largeKeys) };
}

/** The verifier's number of a slot: the table's own when it shares the numbering, else looked up by id. */
function numbering(table: SignatureTable, verifier: PairVerifier): (slot: number) => number {
  const documents = verifier.clusters.documents;
  if (table.numbering === documents) return (slot) => table.numberAt(slot);
  return (slot) => documents.numberOf(table.idOf(slot));
}

/** The slots of runs [from, to), ascending, each once. */
function slotsOf(order: Uint32Array, runs: Uint32Array, from: number, to: number): Uint32Array {
  let count = 0;
  for (let k = from; k < to; k++) count += runs[2 * k + 1] - runs[2 * k];
  const slots = new Uint32Array(count);
  let at = 0;
  for (let k = from; k < to; k++) {
    slots.set(order.subarray(runs[2 * k], runs[2 * k + 1]), at);
    at += runs[2 * k + 1] - runs[2 * k];
  }
  slots.sort();
  let unique = 0;
  for (let i = 0; i < slots.length; i++) if (i === 0 || slots[i] !== slots[i - 1]) slots[unique++] = slots[i];
  return slots.subarray(0, unique);
}

function verifyLargeKey(
  verifier: PairVerifier,
  band: number,
  bucketChunk: number,
  members: Uint32Array,
  numberOf: (slot: number) => number,
  signatureOf: (slot: number) => StoredSignature,
): void {
  const join = new LargeKeyJoin(verifier, band, bucketChunk);
  for (const slot of members) join.add(numberOf(slot), signatureOf(slot));
  join.finish();
}

/** The documents at order[start, end), with their numbers and signatures, as the verifier takes them. */
function bucketOf(order: Uint32Array, start: number, end: number, numberOf: (slot: number) => number, signatureOf: (slot: number) => StoredSignature): BucketMembers {
  const numbers = new Int32Array(end - start);
  const signatures: StoredSignature[] = [];
  for (let k = start; k < end; k++) {
    const slot = order[k];
    numbers[k - start] = numberOf(slot);
    signatures.push(signatureOf(slot));
  }
  return { numbers, signatures };
}
