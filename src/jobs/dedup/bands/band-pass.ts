// The bucket and verify stages of one band: the band's key hashes sorted into buckets (band-sort.ts), its
// large keys marked (so later bands know which pairs they may not have decided), then its buckets verified
// in order, a range of members at a time (band-ranges.ts: read back from the band's files when the sort ran
// on another core), a group at a time within it: the signatures of a group's members are loaded together
// (from memory, or in slot order from the disk), so memory holds one range and one group whatever the size
// of the index. The buckets, their members' order and so the pairs are the same wherever the signatures and
// the members are kept.
import { rmSync, statSync } from 'node:fs';
import os from 'node:os';
import { DEFAULT_RANGE_MEMBERS, type GatherTask, gatherBands } from './band-gather.js';
import { membersFiles, sortedToFiles } from './band-members-file.js';
import { type BandMembersAt, type BandRange, MembersInMemory, type MembersWindow } from './band-ranges.js';
import { type BandScratch, BandSorter, bandMembers, type SortedBand } from './band-sort.js';
import { LargeKeyJoin } from '../verify/large-key.js';
import { BucketChecker, type CheckedBuckets, defaultCheckers, PAIR_INTS } from '../verify/bucket-check.js';
import { type BucketMembers, PAIRWISE_BUCKET, type PairVerifier } from '../verify/pair-verifier.js';
import { RangeRecords } from './range-records.js';
import { ascendingOnce, type RecordLayout, RecordReader } from '../scan/spill-records.js';
import type { StoredSignature } from '../documents/signature-store.js';
import type { SignatureTable } from '../scan/signature-table.js';

/** Members whose signatures are loaded together, by default (about 0.6 KB each). */
export const DEFAULT_GROUP_MEMBERS = 100_000;
/** Members of the buckets a checking thread is sent at once (smaller groups, so that the threads take turns). */
const CHECK_GROUP_MEMBERS = 20_000;
/** Members of a range of a band not gathered, verified at once: 4 bytes each, and 8 a bucket. */
const WINDOW_MEMBERS = 1 << 20;
/** The share of the memory available that a records file read where its records lie may take (else its bands are gathered). */
const CACHED_SHARE = 0.75;

/**
 * How one band is verified: its bucket chunk, whether it is only marked (a band a resumed run had finished), and where
 * its sort, its checking threads and its gathered ranges come from.
 */
export interface BandPassSettings {
  /** Documents of one band key verified at once; a key held by more is a large key, verified a chunk at a time. */
  bucketChunk: number;
  /** A band a resumed run had finished: its large keys are marked, its buckets not verified again. */
  markOnly?: boolean;
  /** Members whose signatures are loaded together. */
  groupMembers?: number;
  /** Arrays the band's sort reuses (the same object for every band of a pass: 8 bytes a key of a part, made once; the members of a band sorted here). */
  scratch?: BandScratch & { members?: Uint32Array };
  /** Keys sorted at once (default SORT_PASS_KEYS). */
  sortPassKeys?: number;
  /** The band already sorted (by a BandSorter, on another core). */
  sorted?: SortedBand;
  /** Threads that check the small buckets of a table on disk (else every bucket is verified on this thread). */
  checker?: BucketChecker;
  /** Members of a range when a band of a table on disk is gathered before it is verified (band-gather.ts; 0: not gathered). */
  rangeMembers?: number;
  /** Reads a gathered band's ranges (its buffers kept band after band). */
  rangeReader?: RecordReader;
}

/**
 * One band's bucket and verify stages, as the file header says: its large keys marked, then its buckets verified a
 * range and a group at a time; what the band left on the disk is removed either way.
 */
export async function verifyBandOf(table: SignatureTable, verifier: PairVerifier, band: number, settings: BandPassSettings): Promise<void> {
  const sorted = settings.sorted ?? sortHere(table, band, settings);
  try {
    for (const hash of sorted.largeKeys) verifier.markLargeKey(band, hash);
    if (settings.markOnly) return;
    // (The large keys of the bands before, as the checking threads are sent them: copied once a band.)
    const largeKeys = settings.checker ? Array.from({ length: band }, (_, j) => Int32Array.from(verifier.largeKeysOf(j) ?? [])) : [];
    const pass = { verifier, band, bucketChunk: settings.bucketChunk, numberOf: numbering(table, verifier), largeKeys };
    const verify = { checker: settings.checker, groupMembers: settings.groupMembers ?? DEFAULT_GROUP_MEMBERS };
    const reader = table.records && sorted.members.ranges.some((range) => range.file) ? (settings.rangeReader ?? new RecordReader(table.records().layout)) : undefined;
    await verifyRanges(pass, sorted.members, (range, window) => (range.file && reader ? new RangeRecords(range.file, window.order, reader) : tableSource(table)), verify);
  } finally {
    removeBand(sorted);
  }
}

/** What a sorted band leaves on the disk (its members' files, the range files not yet verified), removed. */
function removeBand(sorted: SortedBand): void {
  for (const range of sorted.members.ranges) if (range.file) rmSync(range.file, { force: true });
  sorted.members.remove();
}

/** Where the signatures of a band's members are read: the table, or the gathered range at hand. */
interface MemberSource {
  load(slots: Uint32Array): Promise<(slot: number) => StoredSignature>;
  /** The file of records the checking threads read, and the place of a slot's record in it (when on disk). */
  records?: { file: string; layout: RecordLayout };
  placeOf(slot: number): number;
  /** Lets go of the source once its range is verified (a gathered range's file removed). */
  remove?(): void;
}

/** What the verification of one sorted band works with: a window of its members at a time. */
interface BandToVerify {
  verifier: PairVerifier;
  band: number;
  /** The large keys of each band before this one (sent to the checking threads). */
  largeKeys: Int32Array[];
  bucketChunk: number;
  numberOf: (slot: number) => number;
}

/** One range of the band to verify: its members and buckets, and where their signatures are read. */
interface RangeToVerify extends BandToVerify {
  window: MembersWindow;
  source: MemberSource;
  /** Members whose signatures are loaded at once, at most (but for a bucket verified pairwise). */
  groupMembers: number;
}

/** How runs are verified: on this thread only, or with the small buckets checked on others. */
interface VerifySettings {
  checker?: BucketChecker;
  groupMembers: number;
}

function tableSource(table: SignatureTable): MemberSource {
  return { load: (slots) => table.load(slots), records: table.records?.(), placeOf: (slot) => slot };
}

/**
 * A sorted band verified a range at a time, each range's members read from where the band keeps them
 * (band-ranges.ts) and their signatures from its source (its gathered file, or the table): the ranges that
 * pack whole buckets as runs; the parts of a bucket cut into several fed in turn to one large-key join.
 */
async function verifyRanges(pass: BandToVerify, members: BandMembersAt, sourceOf: (range: BandRange, window: MembersWindow) => MemberSource, settings: VerifySettings): Promise<void> {
  let join: LargeKeyJoin | undefined;
  for (const range of members.ranges) {
    const window = members.window(range);
    const source = sourceOf(range, window);
    try {
      const toVerify = { ...pass, window, source, groupMembers: settings.groupMembers };
      if (range.cutEnd !== undefined) join = await joinPart(toVerify, range, join);
      else await verifyRuns(toVerify, settings);
    } finally {
      source.remove?.();
    }
  }
}

/** The runs of a range verified, a group at a time, with their small buckets checked on other threads when there are. */
async function verifyRuns(range: RangeToVerify, settings: VerifySettings): Promise<void> {
  const { checker, groupMembers } = settings;
  const records = range.source.records;
  const runs = range.window.runs;
  if (checker && records) await verifyChecked(range, checker, records, groupsOf(runs, Math.min(groupMembers, CHECK_GROUP_MEMBERS)));
  else await verifyHere(range, groupsOf(runs, groupMembers));
}

/** One part of a bucket cut into several: its members added to the key's join, which is finished with the bucket's last part. */
async function joinPart(range: RangeToVerify, part: BandRange, join?: LargeKeyJoin): Promise<LargeKeyJoin | undefined> {
  const into = join ?? new LargeKeyJoin(range.verifier, range.band, range.bucketChunk);
  await joinLoaded(range, range.window.order, into);
  if (part.to < (part.cutEnd as number)) return into;
  into.finish();
  return undefined;
}

/**
 * Members of a large key added to its join, their signatures loaded a group at a time (a key of boilerplate
 * held by millions costs memory for a group, not for the key); the join detached from each load's buffers
 * before the next.
 */
async function joinLoaded(range: RangeToVerify, members: Uint32Array, into: LargeKeyJoin): Promise<void> {
  for (let from = 0; from < members.length; from += range.groupMembers) {
    const some = members.subarray(from, Math.min(members.length, from + range.groupMembers));
    const signatureOf = await range.source.load(ascendingOnce(some.slice()));
    for (const slot of some) into.add(range.numberOf(slot), signatureOf(slot));
    into.detach();
  }
}

/** Whether run k is a large key of more members than a group: loaded a group at a time (joinLoaded), never whole. */
function loadedInGroups(range: RangeToVerify, k: number): boolean {
  const size = range.window.runs[2 * k + 1] - range.window.runs[2 * k];
  return size > range.bucketChunk && size > range.groupMembers;
}

/** Run k, a large key larger than a group, verified with its members loaded a group at a time. */
async function verifyLargeRun(range: RangeToVerify, k: number): Promise<void> {
  const join = new LargeKeyJoin(range.verifier, range.band, range.bucketChunk);
  await joinLoaded(range, range.window.order.subarray(range.window.runs[2 * k], range.window.runs[2 * k + 1]), join);
  join.finish();
}

/** The groups' buckets verified on this thread, a group at a time. */
async function verifyHere(pass: RangeToVerify, groups: Array<[number, number]>): Promise<void> {
  const { order, runs } = pass.window;
  for (const [from, to] of groups) {
    // (A run larger than a group is a group of its own.)
    if (loadedInGroups(pass, from)) {
      await verifyLargeRun(pass, from);
      continue;
    }
    const signatureOf = await pass.source.load(slotsOf(order, runs, from, to));
    for (let k = from; k < to; k++) verifyRun(pass, k, signatureOf);
  }
}

/** Run k of the band verified on this thread: a bucket, or a large key a chunk at a time. */
function verifyRun(pass: RangeToVerify, k: number, signatureOf: (slot: number) => StoredSignature): void {
  const { verifier, band, bucketChunk, numberOf } = pass;
  const { order, runs } = pass.window;
  const start = runs[2 * k], end = runs[2 * k + 1];
  if (end - start > bucketChunk) verifyLargeKey(verifier, band, bucketChunk, order.subarray(start, end), numberOf, signatureOf);
  else verifier.verifyMembersOf(bucketOf(order, start, end, numberOf, signatureOf), band);
}

/** The runs in groups [from, to) of about `members` documents: at least one run a group, then as many as fit. */
function groupsOf(runs: Uint32Array, members: number): Array<[number, number]> {
  const sizeOf = (r: number) => runs[2 * r + 1] - runs[2 * r];
  const groups: Array<[number, number]> = [];
  const last = runs.length / 2;
  for (let r = 0; r < last; ) {
    let held = 0;
    let end = r;
    while (end < last && (end === r || held + sizeOf(end) <= members)) held += sizeOf(end++);
    groups.push([r, end]);
    r = end;
  }
  return groups;
}

/**
 * The groups' buckets verified with the small ones checked on other threads (bucket-check.ts): the groups
 * sent a few ahead, and each group replayed in order as soon as its answer is in, the buckets too large to
 * check apart verified here at their turn. Pairs, counts and clusters come out as verifyHere's.
 */
async function verifyChecked(pass: RangeToVerify, checker: BucketChecker, records: { file: string; layout: RecordLayout }, groups: Array<[number, number]>): Promise<void> {
  const largeKeys = pass.largeKeys;
  const pending: Array<Promise<CheckedBuckets> | undefined> = [];
  const send = (g: number) => {
    const [from, to] = groups[g];
    const task = { ...records, band: pass.band, minSimilarity: pass.verifier.minSimilarity, comparing: pass.verifier.comparing, largeKeys, ...smallRuns(pass, from, to) };
    const answer = checker.check(task);
    answer.catch(() => undefined); // (awaited in turn; one that fails after an earlier failure is not left unhandled)
    pending[g] = answer;
  };
  for (let g = 0; g < Math.min(groups.length, checker.ahead); g++) send(g);
  for (let g = 0; g < groups.length; g++) {
    const checked = await (pending[g] as Promise<CheckedBuckets>);
    pending[g] = undefined;
    if (g + checker.ahead < groups.length) send(g + checker.ahead);
    await replayGroup(pass, groups[g], checked);
  }
}

/**
 * Whether run k is checked apart: a bucket whose every pair is tried, which a large key (more than
 * bucketChunk members, verified here a chunk at a time) is not, however few its members.
 */
function checkedApart(pass: RangeToVerify, k: number): boolean {
  const size = pass.window.runs[2 * k + 1] - pass.window.runs[2 * k];
  return size <= PAIRWISE_BUCKET && size <= pass.bucketChunk;
}

/** The small runs (buckets checked apart) of runs [from, to): their records' places one after the other, and where each starts. */
function smallRuns(pass: RangeToVerify, from: number, to: number): { order: Uint32Array; bounds: Uint32Array } {
  const { order, runs } = pass.window;
  const placeOf = pass.source.placeOf;
  const picked: number[] = [];
  for (let k = from; k < to; k++) if (checkedApart(pass, k)) picked.push(k);
  const bounds = new Uint32Array(picked.length + 1);
  for (const [i, k] of picked.entries()) bounds[i + 1] = bounds[i] + runs[2 * k + 1] - runs[2 * k];
  const slots = new Uint32Array(bounds[picked.length]);
  for (const [i, k] of picked.entries()) for (let p = runs[2 * k]; p < runs[2 * k + 1]; p++) slots[bounds[i] + p - runs[2 * k]] = placeOf(order[p]);
  return { order: slots, bounds };
}

/** A group's runs in order: a small one from its checked pairs, a larger one verified here (its signatures loaded here). */
async function replayGroup(pass: RangeToVerify, [from, to]: [number, number], checked: CheckedBuckets): Promise<void> {
  const { order, runs } = pass.window;
  const isSmall = (k: number) => checkedApart(pass, k);
  if (to - from === 1 && loadedInGroups(pass, from)) {
    pass.verifier.countRejected(checked.rejected);
    await verifyLargeRun(pass, from);
    return;
  }
  const larger = [];
  for (let k = from; k < to; k++) if (!isSmall(k)) larger.push(k);
  const signatureOf = larger.length > 0 ? await pass.source.load(slotsOfRuns(order, runs, larger)) : undefined;
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
    pass.verifier.applyChecked(numbers, checked, begin, p);
    bucket++;
  }
}


/**
 * Where a band's time went, in milliseconds: its sort on the sorting core, the gather and the wait here of its
 * set of bands (told with the set's first band reported, 0 with the others), its verification (a band sorted
 * on this thread, with no sorting core, counts its sort and gather in verifyMs).
 */
export interface BandTimes {
  sortMs: number;
  gatherMs: number;
  waitMs: number;
  verifyMs: number;
}

/**
 * How a pass verifies every band: where a resumed run starts, what is sorted ahead, checked on other threads or
 * gathered on the disk, and what is told after each band.
 */
export interface BandsSettings {
  bucketChunk: number;
  /** Bands a resumed run had finished (marked only). */
  startAt?: number;
  groupMembers?: number;
  /** After each band verified (not those marked only), with where its time went. */
  onBand?: (band: number, times: BandTimes) => Promise<void> | void;
  /** Whether a table on disk has its bands sorted ahead on another core (default: when the machine has two). */
  sortAhead?: boolean;
  /** Threads that check the small buckets of a table on disk (default: one a core beyond this one's; 0: none). */
  checkers?: number;
  /**
   * Members of a range when each band of a table on disk is gathered in bucket order before it is verified
   * (0: every band read where its records lie). Default: DEFAULT_RANGE_MEMBERS when the records file is
   * larger than the page cache can be expected to hold (rangesByDefault), else 0.
   */
  rangeMembers?: number;
  /** Keys a band's sort places at once (default SORT_PASS_KEYS: 128 MB). */
  sortPassKeys?: number;
  /** Bands sorted ahead and gathered in one pass over the records, when they are gathered (default BANDS_PER_SWEEP). */
  bandsPerSweep?: number;
}

/**
 * Bands sorted ahead and gathered in one pass over the records file, by default, when the bands are gathered:
 * each pass reads the whole file (34 GB at a hundred million documents), so two bands a pass halve what the
 * bands read from the device, for two more bands' members in memory (their order and runs: about 8 bytes a
 * member) and the member bits of two bands in the worker while they are gathered.
 */
export const BANDS_PER_SWEEP = 2;

/**
 * Every band in turn. The bands of a table spilled to disk are sorted ahead on another core when the
 * machine has one (band-sort.ts), a set of bands at a time (one, or BANDS_PER_SWEEP when they are
 * gathered), and its small buckets checked on the cores beyond this one's (bucket-check.ts): each band then
 * costs about the longest of its sort (and its share of the set's gather), its checks and the rest.
 */
export async function verifyBands(table: SignatureTable, verifier: PairVerifier, settings: BandsSettings): Promise<void> {
  const { bucketChunk, groupMembers, startAt = 0, sortPassKeys } = settings;
  const rangeMembers = settings.rangeMembers ?? rangesByDefault(table);
  const sorter = (settings.sortAhead ?? os.availableParallelism() > 1) ? sorterFor(table, bucketChunk, sortPassKeys) : undefined;
  const gather = (band: number) => (band >= startAt ? gatherTask(table, band, rangeMembers, bucketChunk) : undefined);
  const checkers = settings.checkers ?? (os.availableParallelism() > 1 ? defaultCheckers() : 0);
  const checker = table.records && table.size > 0 && checkers > 0 ? new BucketChecker(checkers) : undefined;
  const scratch = { keys: new Uint32Array(0), order: new Uint32Array(0), members: new Uint32Array(0) };
  const rangeReader = table.records && table.size > 0 && rangeMembers > 0 ? new RecordReader(table.records().layout) : undefined;
  const sets = bandSets(table.bandCount, sorter && rangeMembers > 0 ? (settings.bandsPerSweep ?? BANDS_PER_SWEEP) : 1);
  const sortSet = (s: number) => (s < sets.length ? sorter?.sort(sets[s], sets[s].map(gather)) : undefined);
  // (The set sorted ahead is awaited in turn; marked as handled meanwhile, so that a failure of the worker
  // while this thread verifies does not end the process before the range files are removed below.)
  const ahead = (s: number) => {
    const set = sortSet(s);
    set?.catch(() => undefined);
    return set;
  };
  let next = ahead(0);
  let current: SortedBand[] | undefined;
  try {
    for (let s = 0; s < sets.length; s++) {
      const waited = performance.now();
      current = await next;
      // The set's wait and gather, told with the first of its bands that is reported (not one marked only).
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
    // The bands of the set in hand that a failure left unverified, and a set sorted ahead of it (waited for:
    // closing the pool would stop its gather halfway, its files left where nothing knows of them): their
    // members' and range files removed (nothing verifies them now).
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
 * Members of a range by default: gathering costs a pass over the records file for each set of bands (on the
 * sorting core), worth it only when reading the records where they lie would go to the device at random,
 * that is when the file is larger than most of the memory the system has available (page cache included).
 */
export function rangesByDefault(table: SignatureTable, available = os.freemem()): number {
  if (!table.records || table.size === 0) return 0;
  return statSync(table.records().file).size > CACHED_SHARE * available ? DEFAULT_RANGE_MEMBERS : 0;
}

/** A sorter on another core, for a table spilled to disk. */
function sorterFor(table: SignatureTable, bucketChunk: number, passKeys?: number): BandSorter | undefined {
  if (!table.bandFile || table.size === 0) return undefined;
  const fileOf = table.bandFile.bind(table);
  return new BandSorter(table.size, bucketChunk, fileOf, windowMembers(bucketChunk), passKeys);
}

/** Members of a range of a band not gathered, verified at once (a large key's chunk at least). */
function windowMembers(bucketChunk: number): number {
  return Math.max(WINDOW_MEMBERS, bucketChunk);
}

/** The band sorted into buckets on this thread, its ranges planned (and gathered when asked). */
function sortHere(table: SignatureTable, band: number, settings: BandPassSettings): SortedBand {
  const scratch = settings.scratch ?? { keys: new Uint32Array(0), order: new Uint32Array(0) };
  const task = settings.markOnly ? undefined : gatherTask(table, band, settings.rangeMembers ?? 0, settings.bucketChunk);
  const began = performance.now();
  const { members, largeKeys } = membersHere(table, band, task?.rangeMembers ?? windowMembers(settings.bucketChunk), settings, scratch);
  const sorted = performance.now();
  try {
    if (task) gatherBands([{ task, members }]);
  } catch (err) {
    members.remove();
    throw err;
  }
  return { members, largeKeys, sortMs: sorted - began, gatherMs: performance.now() - sorted };
}

/**
 * A band's members sorted here, in ranges of `target`: in two files beside its hashes when the table has them
 * on disk (as the sorting worker keeps them: memory holds a range at a time), else in memory.
 */
function membersHere(table: SignatureTable, band: number, target: number, settings: BandPassSettings, scratch: NonNullable<BandPassSettings['scratch']>): { members: BandMembersAt; largeKeys: Int32Array } {
  const source = (visit: (chunk: Uint32Array) => void) => table.readBand(band, visit);
  const sort = { bucketChunk: settings.bucketChunk, scratch, passKeys: settings.sortPassKeys };
  if (!table.bandFile) {
    const inMemory = new MembersInMemory(target, scratch.members);
    const largeKeys = bandMembers(source, table.size, { ...sort, sink: inMemory });
    scratch.members = inMemory.room;
    return { members: inMemory, largeKeys };
  }
  const { members, sorted } = sortedToFiles(membersFiles(table.bandFile(band), band), target, (sink) => bandMembers(source, table.size, { ...sort, sink }));
  return { members, largeKeys: sorted };
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
