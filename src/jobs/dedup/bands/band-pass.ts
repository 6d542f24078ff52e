// The bucket and verify stages, band by band: a band's key hashes sorted into buckets (band-sort.ts), its
// large keys marked (so later bands know which pairs they may not have decided), then its buckets verified
// in order a range of members at a time (band-members.ts) and a group at a time within it, the group's
// signatures loaded together: memory holds a range and a group whatever the size of the index. A spilled
// table's bands are sorted ahead on another core, its small buckets checked on the cores beyond this one's
// (verify/bucket-check.ts), and its ranges gathered first when the records outgrow the page cache
// (band-gather.ts). The pairs are the same wherever the signatures and members are kept.
import { rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { DEFAULT_RANGE_MEMBERS, type GatherTask, gatherBands, RangeRecords } from './band-gather.js';
import { type BandMembersAt, MembersInMemory, type MembersWindow, membersFiles, sortedToFiles } from './band-members.js';
import { type BandScratch, BandSorter, bandMembers, type SortedBand } from './band-sort.js';
import { LargeKeyJoin } from '../verify/large-buckets.js';
import { BucketChecker, type CheckedBuckets, defaultCheckers, PAIR_INTS } from '../verify/bucket-check.js';
import { PAIRWISE_BUCKET, type PairVerifier } from '../verify/pair-verifier.js';
import { ascendingOnce, type RecordLayout, RecordReader } from '../scan/spill-records.js';
import type { StoredSignature } from '../documents/signature-store.js';
import type { SignatureTable } from '../scan/signature-table.js';

/** Members whose signatures are loaded together, by default. */
const DEFAULT_GROUP_MEMBERS = 100_000;
/** Members of the buckets a checking thread is sent at once (smaller groups, so that the threads take turns). */
const CHECK_GROUP_MEMBERS = 20_000;
/** Members of a range of a band not gathered, verified at once: 4 bytes each, and 8 a bucket. */
const WINDOW_MEMBERS = 1 << 20;
/** The share of the memory available that a records file read where its records lie may take (else its bands are gathered). */
const CACHED_SHARE = 0.75;
/**
 * Bands sorted ahead and gathered in one pass over the records, by default, when they are gathered: each
 * pass reads the whole file, so two a pass halve what the bands read, for two bands' members in memory.
 */
const BANDS_PER_SWEEP = 2;

/** How one band is verified (BandsSettings says what each is), and what it is handed by the pass. */
export interface BandPassSettings extends Pick<BandsSettings, 'bucketChunk' | 'groupMembers' | 'sortPassKeys' | 'rangeMembers'> {
  /** A band a resumed run had finished: its large keys are marked, its buckets not verified again. */
  markOnly?: boolean;
  /** Arrays the band's sort reuses, band after band. */
  scratch?: BandScratch & { members?: Uint32Array };
  /** The band already sorted (by a BandSorter, on another core). */
  sorted?: SortedBand;
  /** Threads that check the small buckets of a table on disk (else every bucket is verified on this thread). */
  checker?: BucketChecker;
  /** Reads a gathered band's ranges (its buffers kept band after band). */
  rangeReader?: RecordReader;
}

/** Where the signatures of a range's members are read (the table, or the range's gathered file), and the file the checking threads read. */
interface MemberSource {
  load(slots: Uint32Array): Promise<(slot: number) => StoredSignature>;
  records?: { file: string; layout: RecordLayout };
  placeOf(slot: number): number;
  remove?(): void;
}

/** One range of a band to verify: its members and buckets, where their signatures are read, and how. */
interface RangeToVerify {
  verifier: PairVerifier;
  band: number;
  bucketChunk: number;
  numberOf: (slot: number) => number;
  /** The large keys of each band before this one (sent to the checking threads). */
  largeKeys: Int32Array[];
  checker?: BucketChecker;
  groupMembers: number;
  window: MembersWindow;
  source: MemberSource;
}

/** One band's bucket and verify stages, as the file header says; what the band left on the disk is removed either way. */
export async function verifyBandOf(table: SignatureTable, verifier: PairVerifier, band: number, settings: BandPassSettings): Promise<void> {
  const sorted = settings.sorted ?? sortHere(table, band, settings);
  try {
    for (const hash of sorted.largeKeys) verifier.markLargeKey(band, hash);
    if (settings.markOnly) return;
    // (The large keys of the bands before, as the checking threads are sent them: copied once a band.)
    const largeKeys = settings.checker ? Array.from({ length: band }, (_, j) => Int32Array.from(verifier.largeKeysOf(j) ?? [])) : [];
    const pass = { verifier, band, bucketChunk: settings.bucketChunk, numberOf: numbering(table, verifier), largeKeys, checker: settings.checker };
    const groupMembers = settings.groupMembers ?? DEFAULT_GROUP_MEMBERS;
    const reader = table.records && sorted.members.ranges.some((range) => range.file) ? (settings.rangeReader ?? new RecordReader(table.records().layout)) : undefined;
    // A part of a bucket cut into several ranges goes to the join of its key, finished with its last part.
    let join: LargeKeyJoin | undefined;
    for (const range of sorted.members.ranges) {
      const window = sorted.members.window(range);
      const source: MemberSource = range.file && reader ? new RangeRecords(range.file, window.order, reader) : { load: (slots) => table.load(slots), records: table.records?.(), placeOf: (slot) => slot };
      try {
        const toVerify = { ...pass, groupMembers, window, source };
        if (range.cutEnd === undefined) await verifyRuns(toVerify);
        else {
          join ??= newJoin(toVerify);
          await joinLoaded(toVerify, window.order, join);
          if (range.to >= range.cutEnd) {
            join.finish();
            join = undefined;
          }
        }
      } finally {
        source.remove?.();
      }
    }
  } finally {
    removeBand(sorted);
  }
}

/** What a sorted band leaves on the disk (its members' files, the range files not yet verified), removed. */
function removeBand(sorted: SortedBand): void {
  for (const range of sorted.members.ranges) if (range.file) rmSync(range.file, { force: true });
  sorted.members.remove();
}

/**
 * The runs of a range verified a group at a time, in order. With a checker, each group's small buckets are
 * sent a few groups ahead to be checked on other threads, and replayed in order as the answers come in.
 */
async function verifyRuns(range: RangeToVerify): Promise<void> {
  const records = range.source.records;
  const checker = records ? range.checker : undefined;
  const groups = groupsOf(range.window.runs, checker ? Math.min(range.groupMembers, CHECK_GROUP_MEMBERS) : range.groupMembers);
  const ahead = checker?.ahead ?? 0;
  const pending: Array<Promise<CheckedBuckets> | undefined> = [];
  const send = (g: number) => {
    if (!checker || !records || g >= groups.length) return;
    const { verifier, band, largeKeys } = range;
    const answer = checker.check({ ...records, band, minSimilarity: verifier.minSimilarity, comparing: verifier.comparing, largeKeys, ...smallRuns(range, ...groups[g]) });
    answer.catch(() => undefined); // (awaited in turn; one that fails after an earlier failure is not left unhandled)
    pending[g] = answer;
  };
  for (let g = 0; g < Math.min(groups.length, ahead); g++) send(g);
  for (let g = 0; g < groups.length; g++) {
    const checked = await pending[g];
    pending[g] = undefined;
    send(g + ahead);
    await verifyGroup(range, groups[g], checked);
  }
}

function newJoin(range: RangeToVerify): LargeKeyJoin {
  return new LargeKeyJoin(range.verifier, range.band, range.bucketChunk);
}

/**
 * Members of a large key added to its join, their signatures loaded a group at a time (a key held by millions
 * costs memory for a group); the join detached from each load's buffers before the next.
 */
async function joinLoaded(range: RangeToVerify, members: Uint32Array, into: LargeKeyJoin): Promise<void> {
  for (let from = 0; from < members.length; from += range.groupMembers) {
    const some = members.subarray(from, Math.min(members.length, from + range.groupMembers));
    const signatureOf = await range.source.load(ascendingOnce(some.slice()));
    for (const slot of some) into.add(range.numberOf(slot), signatureOf(slot));
    into.detach();
  }
}

/** Run k's members: order[runs[2k], runs[2k + 1]). */
function runAt({ order, runs }: MembersWindow, k: number): Uint32Array {
  return order.subarray(runs[2 * k], runs[2 * k + 1]);
}

function sizeOf(runs: Uint32Array, k: number): number {
  return runs[2 * k + 1] - runs[2 * k];
}

/** Whether run k is a large key of more members than a group: loaded a group at a time, never whole. */
function loadedInGroups(range: RangeToVerify, k: number): boolean {
  const size = sizeOf(range.window.runs, k);
  return size > range.bucketChunk && size > range.groupMembers;
}

/** Run k, a large key larger than a group, verified with its members loaded a group at a time. */
async function verifyLargeRun(range: RangeToVerify, k: number): Promise<void> {
  const join = newJoin(range);
  await joinLoaded(range, runAt(range.window, k), join);
  join.finish();
}

/** Run k verified on this thread: a bucket, or a large key a chunk at a time. */
function verifyRun(range: RangeToVerify, k: number, signatureOf: (slot: number) => StoredSignature): void {
  const { order, runs } = range.window;
  const start = runs[2 * k], end = runs[2 * k + 1];
  if (end - start > range.bucketChunk) {
    const join = newJoin(range);
    for (const slot of order.subarray(start, end)) join.add(range.numberOf(slot), signatureOf(slot));
    join.finish();
    return;
  }
  const numbers = new Int32Array(end - start);
  const signatures: StoredSignature[] = [];
  for (let p = start; p < end; p++) {
    numbers[p - start] = range.numberOf(order[p]);
    signatures.push(signatureOf(order[p]));
  }
  range.verifier.verifyMembersOf({ numbers, signatures }, range.band);
}

/** The runs in groups [from, to) of about `members` documents: at least one run a group, then as many as fit. */
function groupsOf(runs: Uint32Array, members: number): Array<[number, number]> {
  const groups: Array<[number, number]> = [];
  const last = runs.length / 2;
  for (let r = 0; r < last; ) {
    let held = 0;
    let end = r;
    while (end < last && (end === r || held + sizeOf(runs, end) <= members)) held += sizeOf(runs, end++);
    groups.push([r, end]);
    r = end;
  }
  return groups;
}

/** Whether run k is checked apart: a bucket whose every pair is tried, which a large key is not, however few its members. */
function checkedApart(range: RangeToVerify, k: number): boolean {
  const size = sizeOf(range.window.runs, k);
  return size <= PAIRWISE_BUCKET && size <= range.bucketChunk;
}

/** The runs of [from, to) checked apart: their records' places one after the other, and where each starts. */
function smallRuns(range: RangeToVerify, from: number, to: number): { order: Uint32Array; bounds: Uint32Array } {
  const { order, runs } = range.window;
  const picked: number[] = [];
  for (let k = from; k < to; k++) if (checkedApart(range, k)) picked.push(k);
  const bounds = new Uint32Array(picked.length + 1);
  for (const [i, k] of picked.entries()) bounds[i + 1] = bounds[i] + sizeOf(runs, k);
  const places = new Uint32Array(bounds[picked.length]);
  for (const [i, k] of picked.entries()) for (let p = runs[2 * k]; p < runs[2 * k + 1]; p++) places[bounds[i] + p - runs[2 * k]] = range.source.placeOf(order[p]);
  return { order: places, bounds };
}

/** A group's runs in order: a small one from its checked pairs (when checked), the others verified here. */
async function verifyGroup(range: RangeToVerify, [from, to]: [number, number], checked?: CheckedBuckets): Promise<void> {
  const verifier = range.verifier;
  if (checked) verifier.countRejected(checked.rejected);
  // (A run larger than a group is a group of its own.)
  if (to - from === 1 && loadedInGroups(range, from)) return verifyLargeRun(range, from);
  const here = [];
  for (let k = from; k < to; k++) if (!checked || !checkedApart(range, k)) here.push(k);
  const signatureOf = here.length > 0 ? await range.source.load(slotsOfRuns(range.window, here)) : undefined;
  let p = 0;
  let bucket = 0;
  for (let k = from; k < to; k++) {
    if (!checked || !checkedApart(range, k)) {
      verifyRun(range, k, signatureOf as (slot: number) => StoredSignature);
      continue;
    }
    const begin = p;
    while (p < checked.pairs.length && checked.pairs[p] === bucket) p += PAIR_INTS;
    verifier.applyChecked(Array.from(runAt(range.window, k), range.numberOf), checked, begin, p);
    bucket++;
  }
}

/** The slots of these runs, ascending, each once. */
function slotsOfRuns(window: MembersWindow, picked: readonly number[]): Uint32Array {
  const runs = picked.map((k) => runAt(window, k));
  const slots = new Uint32Array(runs.reduce((sum, members) => sum + members.length, 0));
  let at = 0;
  for (const members of runs) {
    slots.set(members, at);
    at += members.length;
  }
  return ascendingOnce(slots);
}

/**
 * Where a band's time went, in milliseconds: its sort on the sorting core, the gather and the wait here of its
 * set of bands (told with the set's first band reported, 0 with the others), its verification (which counts
 * the sort and gather of a band sorted on this thread).
 */
export interface BandTimes {
  sortMs: number;
  gatherMs: number;
  waitMs: number;
  verifyMs: number;
}

/** How a pass verifies every band: where a resumed run starts, what is sorted ahead, checked or gathered, what is told. */
export interface BandsSettings {
  /** Documents of one band key verified at once; a key held by more is a large key, verified a chunk at a time. */
  bucketChunk: number;
  /** Bands a resumed run had finished (marked only). */
  startAt?: number;
  /** Members whose signatures are loaded together (default 100,000, about 0.6 KB each). */
  groupMembers?: number;
  /** After each band verified (not those marked only), with where its time went. */
  onBand?: (band: number, times: BandTimes) => Promise<void> | void;
  /** Whether a table on disk has its bands sorted ahead on another core (default: when the machine has two). */
  sortAhead?: boolean;
  /** Threads that check the small buckets of a table on disk (default: one a core beyond this one's; 0: none). */
  checkers?: number;
  /** Members of a range when a table on disk has its bands gathered (0: never; default: rangesByDefault). */
  rangeMembers?: number;
  /** Keys a band's sort places at once (default 2^24: 128 MB). */
  sortPassKeys?: number;
  /** Bands sorted ahead and gathered in one pass over the records, when they are gathered. */
  bandsPerSweep?: number;
}

/**
 * Every band in turn, a set of bands at a time (one, or BANDS_PER_SWEEP when they are gathered), the next set
 * sorted ahead on another core when the table is on disk and the machine has one: each band then costs about
 * the longest of its sort (with its share of the set's gather), its checks and the rest.
 */
export async function verifyBands(table: SignatureTable, verifier: PairVerifier, settings: BandsSettings): Promise<void> {
  const { bucketChunk, groupMembers, startAt = 0, sortPassKeys } = settings;
  const rangeMembers = settings.rangeMembers ?? rangesByDefault(table);
  const onDisk = table.records !== undefined && table.size > 0;
  const sorter = (settings.sortAhead ?? os.availableParallelism() > 1) && table.bandFile && table.size > 0 ? new BandSorter(table.size, bucketChunk, table.bandFile.bind(table), windowMembers(bucketChunk), sortPassKeys) : undefined;
  const gather = (band: number) => (band >= startAt ? gatherTask(table, band, rangeMembers, bucketChunk) : undefined);
  const checkers = settings.checkers ?? (os.availableParallelism() > 1 ? defaultCheckers() : 0);
  const checker = onDisk && checkers > 0 ? new BucketChecker(checkers) : undefined;
  const scratch = { keys: new Uint32Array(0), order: new Uint32Array(0), members: new Uint32Array(0) };
  const rangeReader = onDisk && rangeMembers > 0 ? new RecordReader(table.records!().layout) : undefined;
  const sets = bandSets(table.bandCount, sorter && rangeMembers > 0 ? (settings.bandsPerSweep ?? BANDS_PER_SWEEP) : 1);
  // (The set sorted ahead is awaited in turn; marked as handled meanwhile, so that a failure of the worker
  // while this thread verifies does not end the process before the range files are removed below.)
  const ahead = (s: number) => {
    const set = s < sets.length ? sorter?.sort(sets[s], sets[s].map(gather)) : undefined;
    set?.catch(() => undefined);
    return set;
  };
  let next = ahead(0);
  let current: SortedBand[] | undefined;
  try {
    for (let s = 0; s < sets.length; s++) {
      const waited = performance.now();
      current = await next;
      let shared = { waitMs: performance.now() - waited, gatherMs: current?.reduce((sum, band) => sum + (band.gatherMs ?? 0), 0) ?? 0 };
      next = ahead(s + 1);
      for (const [k, band] of sets[s].entries()) {
        const sorted = current?.[k];
        const began = performance.now();
        await verifyBandOf(table, verifier, band, { bucketChunk, groupMembers, markOnly: band < startAt, scratch, sortPassKeys, sorted, checker, rangeMembers, rangeReader });
        if (band < startAt) continue;
        await settings.onBand?.(band, { sortMs: sorted?.sortMs ?? 0, ...shared, verifyMs: performance.now() - began });
        shared = { waitMs: 0, gatherMs: 0 };
      }
      current = undefined;
    }
  } finally {
    // The bands a failure left unverified, and a set sorted ahead (waited for: closing the pool would stop its
    // gather halfway, its files left where nothing knows of them): their files removed.
    for (const sorted of current ?? []) removeBand(sorted);
    await next?.then((set) => set.forEach(removeBand), () => undefined);
    await sorter?.close();
    await checker?.close();
  }
}

/** Bands 0..count-1 in sets of `size` (one when it is not a number of at least one), in order. */
export function bandSets(count: number, size: number): number[][] {
  const per = Number.isFinite(size) && size >= 1 ? Math.floor(size) : 1;
  return Array.from({ length: Math.ceil(count / per) }, (_, s) => Array.from({ length: Math.min(per, count - s * per) }, (_, k) => s * per + k));
}

/**
 * Members of a range by default: gathering costs a pass over the records file for each set of bands, worth
 * it only when reading the records where they lie would go to the device at random, that is when the file
 * is larger than most of the memory the system has available (page cache included).
 */
export function rangesByDefault(table: SignatureTable, available = os.freemem()): number {
  if (!table.records || table.size === 0) return 0;
  return statSync(table.records().file).size > CACHED_SHARE * available ? DEFAULT_RANGE_MEMBERS : 0;
}

/** Members of a range of a band not gathered, verified at once (a large key's chunk at least). */
function windowMembers(bucketChunk: number): number {
  return Math.max(WINDOW_MEMBERS, bucketChunk);
}

/**
 * The band sorted into buckets on this thread, its ranges planned (and gathered when asked): its members in
 * two files beside its hashes when the table has them on disk, else in memory.
 */
function sortHere(table: SignatureTable, band: number, settings: BandPassSettings): SortedBand {
  const scratch = settings.scratch ?? { keys: new Uint32Array(0), order: new Uint32Array(0) };
  const task = settings.markOnly ? undefined : gatherTask(table, band, settings.rangeMembers ?? 0, settings.bucketChunk);
  const target = task?.rangeMembers ?? windowMembers(settings.bucketChunk);
  const began = performance.now();
  const source = (visit: (chunk: Uint32Array) => void) => table.readBand(band, visit);
  const sort = { bucketChunk: settings.bucketChunk, scratch, passKeys: settings.sortPassKeys };
  let members: BandMembersAt;
  let largeKeys: Int32Array;
  if (table.bandFile) ({ members, sorted: largeKeys } = sortedToFiles(membersFiles(table.bandFile(band), band), target, (sink) => bandMembers(source, table.size, { ...sort, sink })));
  else {
    const inMemory = new MembersInMemory(target, scratch.members);
    largeKeys = bandMembers(source, table.size, { ...sort, sink: inMemory });
    scratch.members = inMemory.room;
    members = inMemory;
  }
  const sorted = performance.now();
  try {
    if (task) gatherBands([{ task, members }]);
  } catch (err) {
    members.remove();
    throw err;
  }
  return { members, largeKeys, sortMs: sorted - began, gatherMs: performance.now() - sorted };
}

/** What gathering a band takes, when the table is on disk and ranges are asked for (undefined: read where the records lie). */
function gatherTask(table: SignatureTable, band: number, rangeMembers: number, bucketChunk: number): GatherTask | undefined {
  if (!table.records || rangeMembers <= 0 || table.size === 0) return undefined;
  const { file, layout } = table.records();
  // (A range holds a large key's chunk at least: a bucket cut into ranges is then always a large key.)
  return { records: file, layout, documents: table.size, band, rangeMembers: Math.max(rangeMembers, bucketChunk) };
}

/** The verifier's number of a slot: the table's own when it shares the numbering, else looked up by id. */
function numbering(table: SignatureTable, verifier: PairVerifier): (slot: number) => number {
  const documents = verifier.clusters.documents;
  if (table.numbering === documents) return (slot) => table.numberAt(slot);
  return (slot) => documents.numberOf(table.idOf(slot));
}
