// A band's members in bucket order, handed to its verification a range at a time. Sorting a band
// (band-sort.ts) gives its members (the documents in a bucket), one bucket after the other; held whole they
// take 4 bytes a member and 8 a bucket, for every band in hand, a share of memory that grows with the index.
// So the members go, as they are sorted, to where the band keeps them (in memory, for a table in memory;
// two files of the spill, for a table on disk: band-members-file.ts) while their ranges are planned: a
// range is a run of whole buckets of about `target` members, a bucket larger than that cut into ranges of
// `target` members each. The verification then asks for one range's members at a time (its window: its
// slots in bucket order, and its buckets as places among them), and the gather (band-gather.ts) copies one
// range's records into a file of its own by the same ranges.
//
// Each range carries a check of its window (a fold of its members and buckets) made as they were planned,
// so that a window read back from the disk that is not what was written is said, never verified.
import { foldCheck } from '../spill/spill-folder.js';

/**
 * A run of buckets in bucket order: runs [fromRun, toRun) of the sorted band, their places among its members
 * within [from, to). A bucket cut into several ranges (more members than a range holds) has a part in each,
 * each with `cutEnd`, the place where that bucket ends (a part is its bucket's last when its `to` is there).
 */
export interface BandRange {
  from: number;
  to: number;
  fromRun: number;
  toRun: number;
  /** Members of the range: to - from. */
  members: number;
  /** For a part of a bucket cut into several ranges: where that bucket ends among the members. */
  cutEnd?: number;
  /** The check of its window (when planned with its members). */
  check?: number;
  /** Its file, the members' records in slot order (once gathered). */
  file?: string;
}

/** One range's members: their slots in bucket order, and its buckets as [start, end) places among them (one after the other, from 0 to the last). */
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

/** Where the members of a sorted band go as they are sorted: each bucket in turn, its slots in slot order. */
export interface MembersSink {
  addRun(slots: Uint32Array): void;
}

/**
 * Plans the ranges of a band as its buckets come, in bucket order: whole buckets packed while they fit
 * `target` members, a larger bucket cut into ranges of `target` each; and folds each range's check over its
 * members and its buckets' places within it, as MembersWindow gives them (windowCheck).
 */
export class RangePlanner {
  readonly ranges: BandRange[] = [];
  private open: BandRange | undefined;
  private placed = 0;
  private run = 0;

  constructor(private readonly target: number) {}

  /** The next bucket (its slots, when the check is made; else only its size). */
  add(size: number, slots?: Uint32Array): void {
    const start = this.placed, end = start + size, r = this.run++;
    this.placed = end;
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

  /** Members planned so far. */
  get members(): number {
    return this.placed;
  }
}

/** The check folded over one bucket of a window: its slots slots[from, to), then its place [at, at + to - from) in the window. */
function foldRun(check: number, slots: Uint32Array, from: number, to: number, at: number): number {
  let h = check;
  for (let k = from; k < to; k++) h = foldCheck(h, slots[k]);
  return foldCheck(foldCheck(h, at), at + to - from);
}

/** The check of a window, as RangePlanner made it for its range; undefined when its buckets are not one after the other from 0 to its end. */
export function windowCheck(window: MembersWindow): number | undefined {
  const { order, runs } = window;
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

/** The ranges of a band whose buckets are given as flat [start, end, ...] places among its members (one after the other from 0), without checks. */
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

/** A band's members held in memory (a table in memory, or a band sorted on this thread), windows as views. */
export class MembersInMemory implements MembersSink, BandMembersAt {
  private order: Uint32Array;
  private runs: Uint32Array = new Uint32Array(1024);
  private runCount = 0;
  private readonly planner: RangePlanner;

  /** `into`: room for the members (grown if the band has more; reused band after band when given). */
  constructor(target: number, into?: Uint32Array) {
    this.planner = new RangePlanner(target);
    this.order = into ?? new Uint32Array(1024);
  }

  addRun(slots: Uint32Array): void {
    const at = this.planner.members;
    if (at + slots.length > this.order.length) this.order = grown(this.order, at + slots.length);
    this.order.set(slots, at);
    if (this.runCount + 2 > this.runs.length) this.runs = grown(this.runs, this.runCount + 2);
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

  /** The room it holds its members in (to be handed to the next band). */
  get room(): Uint32Array {
    return this.order;
  }

  window(range: BandRange): MembersWindow {
    return { order: this.order.subarray(range.from, range.to), runs: localRuns(this.runs.subarray(2 * range.fromRun, 2 * range.toRun), range) };
  }

  remove(): void {}
}

/** A range's runs (flat places among the band's members) as places in its window: a cut bucket's part is the whole window. */
export function localRuns(runs: Uint32Array, range: BandRange): Uint32Array {
  const local = new Uint32Array(runs.length);
  for (let k = 0; k < runs.length; k++) local[k] = Math.min(Math.max(runs[k], range.from), range.to) - range.from;
  return local;
}

/** An array of at least `length`, twice as large as before at least, with what it held. */
function grown(array: Uint32Array, length: number): Uint32Array {
  const larger = new Uint32Array(Math.max(length, 2 * array.length));
  larger.set(array);
  return larger;
}
