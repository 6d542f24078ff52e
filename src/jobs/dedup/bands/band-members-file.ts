// A spilled band's members kept on the disk between its sort and its verification (band-ranges.ts), so that
// memory holds one range of them at a time, not the members of every band in hand: the sort (on the sorting
// core) writes the members' slots in bucket order to one file and the buckets' [start, end) places among them
// to another, planning the ranges and their checks as it goes; the verification reads a range's window back
// (its members and the buckets that touch it), held to the range's check, and removes both files once the
// band is verified. Both files are created new beside the band's hashes (a file planted under the name is
// refused), 4 bytes a member and 8 a bucket.
import { closeSync, openSync, rmSync } from 'node:fs';
import path from 'node:path';
import { type BandMembersAt, type BandRange, localRuns, type MembersSink, type MembersWindow, RangePlanner, windowCheck } from './band-ranges.js';
import { readAll, writeAll } from '../spill/spill-folder.js';

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

/** 32-bit values appended to a file a buffer at a time. */
class ValueWriter {
  private readonly buffer = new Uint32Array(WRITE_VALUES);
  private used = 0;
  readonly fd: number;

  constructor(file: string) {
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
}

/** Writes a band's members as they are sorted, and plans their ranges (of about `target` members) with their checks. */
class MembersFileWriter implements MembersSink {
  private readonly planner: RangePlanner;
  private order?: ValueWriter;
  private runs?: ValueWriter;
  private readonly run = new Uint32Array(2);
  /** The files it made (a file planted under a name is refused, and not its to remove). */
  private readonly made: string[] = [];

  constructor(
    readonly files: MembersFiles,
    target: number,
  ) {
    this.planner = new RangePlanner(target);
    try {
      this.order = new ValueWriter(files.order);
      this.made.push(files.order);
      this.runs = new ValueWriter(files.runs);
      this.made.push(files.runs);
    } catch (err) {
      this.discard();
      throw err;
    }
  }

  addRun(slots: Uint32Array): void {
    this.run[0] = this.planner.members;
    this.run[1] = this.planner.members + slots.length;
    this.planner.add(slots.length, slots);
    this.order?.add(slots);
    this.runs?.add(this.run);
  }

  /** Writes what it holds and closes both files: the ranges planned, and the members in all. */
  close(): { ranges: BandRange[]; members: number } {
    try {
      this.order?.flush();
      this.runs?.flush();
    } finally {
      this.closeFiles();
    }
    return { ranges: this.planner.ranges, members: this.planner.members };
  }

  /** Closes the files it made if open, and removes them. */
  discard(): void {
    this.closeFiles();
    for (const file of this.made.splice(0)) rmSync(file, { force: true });
  }

  private closeFiles(): void {
    for (const writer of [this.order, this.runs]) if (writer) closeSync(writer.fd);
    this.order = this.runs = undefined;
  }
}

/**
 * A band's members written to its files as `sort` hands them to the sink it is given, their ranges of about
 * `target` planned: the members on the disk, and what the sort gave back; nothing of its own left when it fails.
 */
export function sortedToFiles<T>(files: MembersFiles, target: number, sort: (sink: MembersSink) => T): { members: MembersOnDisk; sorted: T } {
  const writer = new MembersFileWriter(files, target);
  try {
    const sorted = sort(writer);
    const { ranges, members } = writer.close();
    return { members: new MembersOnDisk(files, ranges, members), sorted };
  } catch (err) {
    writer.discard();
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

  /** Closes its files (read again if a window is asked for). */
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
