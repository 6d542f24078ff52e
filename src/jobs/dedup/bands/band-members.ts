// A sorted band's members (the documents of its buckets, bucket after bucket) and its ranges, which the
// verification reads one at a time and the gather (band-gather.ts) copies one to a file: a range is a run of
// whole buckets of about `target` members, or a part of a bucket larger than that. Held whole, the members
// of every band in hand would take memory that grows with the index, so for a table on disk they go, as they
// are sorted, to two files of the spill (created new, 0600), and each range read back is held to the check
// it was planned with: a file changed under the run is said, never verified.
import { closeSync, openSync, rmSync } from 'node:fs';
import path from 'node:path';
import { enlarged } from '../documents/doc-numbers.js';
import { foldCheck, readAll, writeAll } from '../spill/spill-folder.js';

/**
 * Runs [fromRun, toRun) of a sorted band, at places [from, to) among its members. A part of a bucket cut into
 * several ranges has `cutEnd`, where that bucket ends (the part is its last when `to` is there).
 */
export interface BandRange {
  from: number;
  to: number;
  fromRun: number;
  toRun: number;
  /** to - from. */
  members: number;
  cutEnd?: number;
  /** The check of its window (when planned with its members). */
  check?: number;
  /** Its members' records in slot order, once gathered. */
  file?: string;
}

/** One range's members: their slots in bucket order, and its buckets as [start, end) places among them, from 0 to the last. */
export interface MembersWindow {
  order: Uint32Array;
  runs: Uint32Array;
}

/** A sorted band's members, where the band keeps them: its ranges, and one range's window when asked. */
export interface BandMembersAt {
  readonly ranges: readonly BandRange[];
  /** Members of the band in all. */
  readonly members: number;
  window(range: BandRange): MembersWindow;
  /** Lets go of what it holds (its files, when on disk). */
  remove(): void;
}

/** Where the members of a sorted band go as they are sorted: each bucket in turn, its slots ascending. */
export interface MembersSink {
  addRun(slots: Uint32Array): void;
}

/** Plans a band's ranges as its buckets come, folding each range's check over its window when given the slots. */
class RangePlanner {
  readonly ranges: BandRange[] = [];
  private open: BandRange | undefined;
  /** Members planned so far. */
  members = 0;
  private run = 0;

  constructor(private readonly target: number) {}

  add(size: number, slots?: Uint32Array): void {
    const start = this.members, end = start + size, r = this.run++;
    this.members = end;
    if (this.open && this.open.members + size > this.target) this.open = undefined;
    if (size > this.target) {
      for (let from = start; from < end; from += this.target) {
        const to = Math.min(end, from + this.target);
        const range: BandRange = { from, to, fromRun: r, toRun: r + 1, members: to - from, cutEnd: end };
        if (slots) range.check = foldRun(0, slots, from - start, to - start, 0);
        this.ranges.push(range);
      }
      return;
    }
    if (!this.open) this.ranges.push((this.open = { from: start, to: start, fromRun: r, toRun: r, members: 0, ...(slots ? { check: 0 } : {}) }));
    const range = this.open;
    if (slots) range.check = foldRun(range.check as number, slots, 0, size, start - range.from);
    range.to = end;
    range.toRun = r + 1;
    range.members += size;
  }
}

/** The check folded over one bucket of a window: its slots slots[from, to), then its place [at, at + to - from). */
function foldRun(check: number, slots: Uint32Array, from: number, to: number, at: number): number {
  for (let k = from; k < to; k++) check = foldCheck(check, slots[k]);
  return foldCheck(foldCheck(check, at), at + to - from);
}

/** The check of a window, as its range was planned with; undefined when its buckets are not one after the other from 0 to its end. */
export function windowCheck({ order, runs }: MembersWindow): number | undefined {
  let h = 0;
  let at = 0;
  for (let r = 0; r < runs.length; r += 2) {
    const start = runs[r], end = runs[r + 1];
    if (start !== at || end <= start || end > order.length) return undefined;
    h = foldRun(h, order, start, end, start);
    at = end;
  }
  return at === order.length ? h : undefined;
}

/** The ranges, without checks, of a band whose buckets are given as flat [start, end, ...] places among its members. */
export function planRanges(runs: Uint32Array, target: number): BandRange[] {
  const planner = new RangePlanner(target);
  for (let r = 0; r < runs.length; r += 2) {
    if (runs[r] !== planner.members || runs[r + 1] <= runs[r]) throw new Error(`bucket ${r / 2} of a band is not at the place after the one before it`);
    planner.add(runs[r + 1] - runs[r]);
  }
  return planner.ranges;
}

/** Members of a band (documents in buckets). */
export function membersOf(ranges: readonly BandRange[]): number {
  return ranges.reduce((sum, range) => sum + range.members, 0);
}

/** A range's runs (places among the band's members) as places in its window: a cut bucket's part is the whole window. */
function localRuns(runs: Uint32Array, range: BandRange): Uint32Array {
  return runs.map((place) => Math.min(Math.max(place, range.from), range.to) - range.from);
}

/** A band's members in memory (a table in memory), windows as views. */
export class MembersInMemory implements MembersSink, BandMembersAt {
  private order: Uint32Array;
  private runs = new Uint32Array(1024);
  private runCount = 0;
  private readonly planner: RangePlanner;

  /** `into`: room for the members (grown if the band has more; handed band after band, see `room`). */
  constructor(target: number, into?: Uint32Array) {
    this.planner = new RangePlanner(target);
    this.order = into ?? new Uint32Array(1024);
  }

  addRun(slots: Uint32Array): void {
    const at = this.planner.members;
    if (at + slots.length > this.order.length) this.order = enlarged(this.order, Math.max(at + slots.length, 2 * this.order.length));
    this.order.set(slots, at);
    if (this.runCount + 2 > this.runs.length) this.runs = enlarged(this.runs, 2 * this.runs.length);
    this.runs[this.runCount++] = at;
    this.runs[this.runCount++] = at + slots.length;
    this.planner.add(slots.length);
  }

  get ranges(): readonly BandRange[] {
    return this.planner.ranges;
  }

  get members(): number {
    return this.planner.members;
  }

  /** The room it holds its members in (for the next band). */
  get room(): Uint32Array {
    return this.order;
  }

  window(range: BandRange): MembersWindow {
    return { order: this.order.subarray(range.from, range.to), runs: localRuns(this.runs.subarray(2 * range.fromRun, 2 * range.toRun), range) };
  }

  remove(): void {}
}

/** The two files of a band's members: their slots in bucket order, and the buckets' places among them. */
export interface MembersFiles {
  order: string;
  runs: string;
}

/** The files of a band's members, beside the file of its hashes. */
export function membersFiles(bandFile: string, band: number): MembersFiles {
  const folder = path.dirname(bandFile);
  return { order: path.join(folder, `band-${band}-members.bin`), runs: path.join(folder, `band-${band}-buckets.bin`) };
}

/** Values a writer holds before it writes them. */
const WRITE_VALUES = 1 << 16;

/** 32-bit values appended a buffer at a time to a file created new (a file planted under its name is refused). */
class ValueWriter {
  private readonly buffer = new Uint32Array(WRITE_VALUES);
  private used = 0;
  private fd: number;

  constructor(readonly file: string) {
    this.fd = openSync(file, 'wx', 0o600);
  }

  add(values: Uint32Array): void {
    for (let k = 0; k < values.length; ) {
      const take = Math.min(values.length - k, WRITE_VALUES - this.used);
      this.buffer.set(values.subarray(k, k + take), this.used);
      this.used += take;
      k += take;
      if (this.used === WRITE_VALUES) this.flush();
    }
  }

  flush(): void {
    writeAll(this.fd, new Uint8Array(this.buffer.buffer, 0, 4 * this.used));
    this.used = 0;
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

/**
 * A band's members written to `files` as `sort` hands them to the sink it is given, their ranges of about
 * `target` planned with their checks: the members on the disk, and what the sort gave back. A failure leaves
 * no file of its own (a file planted under a name is refused, and stays).
 */
export function sortedToFiles<T>(files: MembersFiles, target: number, sort: (sink: MembersSink) => T): { members: MembersOnDisk; sorted: T } {
  const planner = new RangePlanner(target);
  const writers: ValueWriter[] = [];
  try {
    for (const file of [files.order, files.runs]) writers.push(new ValueWriter(file));
    const [order, runs] = writers;
    const run = new Uint32Array(2);
    const sorted = sort({
      addRun(slots) {
        run[0] = planner.members;
        run[1] = planner.members + slots.length;
        planner.add(slots.length, slots);
        order.add(slots);
        runs.add(run);
      },
    });
    try {
      for (const writer of writers) writer.flush();
    } finally {
      for (const writer of writers) writer.close();
    }
    return { members: new MembersOnDisk(files, planner.ranges, planner.members), sorted };
  } catch (err) {
    for (const writer of writers) {
      writer.close();
      rmSync(writer.file, { force: true });
    }
    throw err;
  }
}

/** A band's members in its two files, read back a range's window at a time (each held to its range's check). */
export class MembersOnDisk implements BandMembersAt {
  private fds?: { order: number; runs: number };

  constructor(
    readonly files: MembersFiles,
    readonly ranges: readonly BandRange[],
    readonly members: number,
  ) {}

  window(range: BandRange): MembersWindow {
    this.fds ??= { order: openSync(this.files.order, 'r'), runs: openSync(this.files.runs, 'r') };
    const order = new Uint32Array(range.to - range.from);
    readAll(this.fds.order, new Uint8Array(order.buffer), 4 * range.from);
    const runs = new Uint32Array(2 * (range.toRun - range.fromRun));
    readAll(this.fds.runs, new Uint8Array(runs.buffer), 8 * range.fromRun);
    const window = { order, runs: localRuns(runs, range) };
    if (range.check === undefined || windowCheck(window) !== range.check) {
      throw new Error(`the members of a band's range (places ${range.from} to ${range.to}) read back from ${this.files.order} are not those written: its spill folder was changed while dedup ran`);
    }
    return window;
  }

  /** Closes its files (opened again if a window is asked for). */
  close(): void {
    if (this.fds) for (const fd of [this.fds.order, this.fds.runs]) closeSync(fd);
    this.fds = undefined;
  }

  remove(): void {
    this.close();
    rmSync(this.files.order, { force: true });
    rmSync(this.files.runs, { force: true });
  }
}
