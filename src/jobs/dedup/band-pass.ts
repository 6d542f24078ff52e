// The bucket and verify stages of one band: the band's key hashes sorted into buckets (band-sort.ts), its
// large keys marked (so later bands know which pairs they may not have decided), then its buckets verified
// in order, a group at a time: the signatures of a group's members are loaded together (from memory, or in
// slot order from the disk), so memory holds one group whatever the size of the index. The buckets, their
// members' order and so the pairs are the same wherever the signatures are kept.
import os from 'node:os';
import { bandBuckets, type BandScratch } from './band-sort.js';
import { BandSorter, type SortedBand } from './band-sorter.js';
import { LargeKeyJoin } from './large-key.js';
import { type CheckedBuckets, PAIR_INTS } from './bucket-check.js';
import { BucketChecker, defaultCheckers } from './bucket-checker.js';
import { type BucketMembers, PAIRWISE_BUCKET, type PairVerifier } from './pair-verifier.js';
import { ascendingOnce, type RecordLayout } from './spill-records.js';
import type { StoredSignature } from './signature-store.js';
import type { SignatureTable } from './signature-table.js';

/** Members whose signatures are loaded together, by default (about 0.6 KB each). */
export const DEFAULT_GROUP_MEMBERS = 100_000;
/** Members of the buckets a checking thread is sent at once (smaller groups, so that the threads take turns). */
const CHECK_GROUP_MEMBERS = 20_000;

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
  /** Threads that check the small buckets of a table on disk (else every bucket is verified on this thread). */
  checker?: BucketChecker;
}

export async function verifyBandOf(table: SignatureTable, verifier: PairVerifier, band: number, settings: BandPassSettings): Promise<void> {
  const sorted = settings.sorted ?? sortHere(table, band, settings);
  for (const hash of sorted.largeKeys) verifier.markLargeKey(band, hash);
  if (settings.markOnly) return;
  const records = settings.checker && table.records?.();
  const pass = { table, verifier, band, sorted, bucketChunk: settings.bucketChunk, numberOf: numbering(table, verifier) };
  const groupMembers = settings.groupMembers ?? DEFAULT_GROUP_MEMBERS;
  if (records && settings.checker) await verifyChecked(pass, settings.checker, records, Math.min(groupMembers, CHECK_GROUP_MEMBERS));
  else await verifyHere(pass, groupMembers);
}

/** What the verification of one sorted band works with. */
interface BandInHand {
  table: SignatureTable;
  verifier: PairVerifier;
  band: number;
  sorted: SortedBand;
  bucketChunk: number;
  numberOf: (slot: number) => number;
}

/** The band's buckets verified on this thread, a group of them at a time. */
async function verifyHere(pass: BandInHand, groupMembers: number): Promise<void> {
  const { order, runs } = pass.sorted;
  for (const [from, to] of groupsOf(runs, groupMembers)) {
    const signatureOf = await pass.table.load(slotsOf(order, runs, from, to));
    for (let k = from; k < to; k++) verifyRun(pass, k, signatureOf);
  }
}

/** Run k of the band verified on this thread: a bucket, or a large key a chunk at a time. */
function verifyRun(pass: BandInHand, k: number, signatureOf: (slot: number) => StoredSignature): void {
  const { verifier, band, bucketChunk, numberOf } = pass;
  const { order, runs } = pass.sorted;
  const start = runs[2 * k], end = runs[2 * k + 1];
  if (end - start > bucketChunk) verifyLargeKey(verifier, band, bucketChunk, order.subarray(start, end), numberOf, signatureOf);
  else verifier.verifyMembersOf(bucketOf(order, start, end, numberOf, signatureOf), band);
}

/** The runs in groups [from, to) of about `members` documents: at least one run a group, then as many as fit. */
function groupsOf(runs: Uint32Array, members: number): Array<[number, number]> {
  const runCount = runs.length / 2;
  const sizeOf = (r: number) => runs[2 * r + 1] - runs[2 * r];
  const groups: Array<[number, number]> = [];
  for (let r = 0; r < runCount; ) {
    let held = 0;
    let last = r;
    while (last < runCount && (last === r || held + sizeOf(last) <= members)) held += sizeOf(last++);
    groups.push([r, last]);
    r = last;
  }
  return groups;
}

/**
 * The band's buckets verified with the small ones checked on other threads (bucket-checker.ts): the groups
 * sent a few ahead, and each group replayed in order as soon as its answer is in, the buckets too large to
 * check apart verified here at their turn. Pairs, counts and clusters come out as verifyHere's.
 */
async function verifyChecked(pass: BandInHand, checker: BucketChecker, records: { file: string; layout: RecordLayout }, groupMembers: number): Promise<void> {
  const { order, runs } = pass.sorted;
  const groups = groupsOf(runs, groupMembers);
  const largeKeys = Array.from({ length: pass.band }, (_, j) => Int32Array.from(pass.verifier.largeKeysOf(j) ?? []));
  const pending: Array<Promise<CheckedBuckets> | undefined> = [];
  const send = (g: number) => {
    const [from, to] = groups[g];
    const task = { ...records, band: pass.band, minSimilarity: pass.verifier.minSimilarity, largeKeys, ...smallRuns(runs, order, from, to) };
    const answer = checker.check(task);
    answer.catch(() => undefined); // (awaited in turn; one that fails after an earlier failure is not left unhandled)
    pending[g] = answer;
  };
  for (let g = 0; g < Math.min(groups.length, checker.ahead); g++) send(g);
  for (let g = 0; g < groups.length; g++) {
    const checked = await (pending[g] as Promise<CheckedBuckets>);
    pending[g] = undefined;
    if (g + checker.ahead < groups.length) send(g + checker.ahead);
    await replayGroup(pass, groups[g], checked, records.layout.width);
  }
}

/** The small runs (buckets checked apart) of runs [from, to): their slots one after the other, and where each starts. */
function smallRuns(runs: Uint32Array, order: Uint32Array, from: number, to: number): { order: Uint32Array; bounds: Uint32Array } {
  const picked: number[] = [];
  for (let k = from; k < to; k++) if (runs[2 * k + 1] - runs[2 * k] <= PAIRWISE_BUCKET) picked.push(k);
  const bounds = new Uint32Array(picked.length + 1);
  for (const [i, k] of picked.entries()) bounds[i + 1] = bounds[i] + runs[2 * k + 1] - runs[2 * k];
  const slots = new Uint32Array(bounds[picked.length]);
  for (const [i, k] of picked.entries()) slots.set(order.subarray(runs[2 * k], runs[2 * k + 1]), bounds[i]);
  return { order: slots, bounds };
}

/** A group's runs in order: a small one from its checked pairs, a larger one verified here (its signatures loaded here). */
async function replayGroup(pass: BandInHand, [from, to]: [number, number], checked: CheckedBuckets, width: number): Promise<void> {
  const { order, runs } = pass.sorted;
  const isSmall = (k: number) => runs[2 * k + 1] - runs[2 * k] <= PAIRWISE_BUCKET;
  const larger = [];
  for (let k = from; k < to; k++) if (!isSmall(k)) larger.push(k);
  const signatureOf = larger.length > 0 ? await pass.table.load(slotsOfRuns(order, runs, larger)) : undefined;
  pass.verifier.countRejected(checked.rejected);
  const pairs = checked.pairs;
  let p = 0;
  let bucket = 0;
  for (let k = from; k < to; k++) {
    if (!isSmall(k)) {
      verifyRun(pass, k, signatureOf as (slot: number) => StoredSignature);
      continue;
    }
    const begin = p;
    while (p < pairs.length && pairs[p] === bucket) p += PAIR_INTS;
    const numbers = Array.from(order.subarray(runs[2 * k], runs[2 * k + 1]), pass.numberOf);
    pass.verifier.applyChecked(numbers, width, pairs, begin, p);
    bucket++;
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
  /** Threads that check the small buckets of a table on disk (default: one a core beyond this one's; 0: none). */
  checkers?: number;
}

/**
 * Every band in turn. The bands of a table spilled to disk are sorted one ahead on another core when the
 * machine has one (band-sorter.ts), and its small buckets checked on the cores beyond this one's
 * (bucket-checker.ts): each band then costs about the longest of its sort, its checks and the rest.
 */
export async function verifyBands(table: SignatureTable, verifier: PairVerifier, settings: BandsSettings): Promise<void> {
  const { bucketChunk, groupMembers, startAt = 0 } = settings;
  const sorter = (settings.sortAhead ?? os.availableParallelism() > 1) ? sorterFor(table, bucketChunk) : undefined;
  const checkers = settings.checkers ?? (os.availableParallelism() > 1 ? defaultCheckers() : 0);
  const checker = table.records && table.size > 0 && checkers > 0 ? new BucketChecker(checkers) : undefined;
  const scratch = { keys: new Uint32Array(0), order: new Uint32Array(0) };
  let next = sorter?.sort(0);
  try {
    for (let band = 0; band < table.bandCount; band++) {
      const sorted = await next;
      next = band + 1 < table.bandCount ? sorter?.sort(band + 1) : undefined;
      await verifyBandOf(table, verifier, band, { bucketChunk, groupMembers, markOnly: band < startAt, scratch, sorted, checker });
      if (band >= startAt) await settings.onBand?.(band);
    }
  } finally {
    next?.catch(() => undefined); // (a sort asked for ahead of a failure)
    await sorter?.close();
    await checker?.close();
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
  return slotsOfRuns(order, runs, Array.from({ length: to - from }, (_, i) => from + i));
}

/** The slots of these runs, ascending, each once. */
function slotsOfRuns(order: Uint32Array, runs: Uint32Array, picked: readonly number[]): Uint32Array {
  let count = 0;
  for (const k of picked) count += runs[2 * k + 1] - runs[2 * k];
  const slots = new Uint32Array(count);
  let at = 0;
  for (const k of picked) {
    slots.set(order.subarray(runs[2 * k], runs[2 * k + 1]), at);
    at += runs[2 * k + 1] - runs[2 * k];
  }
  return ascendingOnce(slots);
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
