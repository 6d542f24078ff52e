// A spilled band's members gathered in bucket order, so that verifying it reads the disk in order. The
// records file holds every document's signature in scan order; a band's buckets want their members' records
// in the order of their keys, scattered through it. Read where they lie, a hundred million documents' records
// (37 GB and more, larger than the page cache) come from the device a 4 KB page at a time, at random: the
// bands of a hundred million took longer than a session. So, as datatrove lays its buckets out before it
// reads them, each band's members are first copied out of the records file in one pass in order (the disk's
// full rate, about 2 GB/s here against 54 MB/s at random), into range files: a range is a run of buckets of
// about `target` members, the range files of one band hold each member once, each file in slot order.
// Verifying a range then reads one small file, mostly from the page cache, and memory holds one range.
//
// A bucket larger than a range (a key of boilerplate held by millions) is cut into several ranges, read one
// after the other (its members are verified a chunk at a time anyway: large-key.ts).
//
// Input: the band sorted into buckets (band-sort.ts), the records file and its layout; output: the ranges,
// each with its file. The gather runs beside the sort, on the sorting core when there is one
// (band-sort-worker.ts); the verifier removes each range file once the range is verified.
import path from 'node:path';
import { RecordWriter, SlotBits, sweepRecords } from './records-sweep.js';
import { freeBytes } from './spill-folder.js';
import { type RecordLayout, recordBytes } from './spill-records.js';

/** Members a range holds, by default: about 150 MB of whole records at 128 values and 26 bands. */
export const DEFAULT_RANGE_MEMBERS = 250_000;
/** Room left on the disk after a band's ranges, at least; a band that would leave less is read where it lies. */
const DISK_MARGIN_BYTES = 1024 ** 3;

/**
 * A run of buckets in bucket order: runs [fromRun, toRun) of the sorted band, their places in the band's
 * order within [from, to) (a bucket cut into several ranges has a part in each).
 */
export interface BandRange {
  from: number;
  to: number;
  fromRun: number;
  toRun: number;
  /** Documents of the range (the places between its buckets, of documents in none, are not). */
  members: number;
  /** Its file, the members' records in slot order (once gathered). */
  file?: string;
}

/** What the gather of one band needs. */
export interface GatherTask {
  /** The spill's records file, and its layout. */
  records: string;
  layout: RecordLayout;
  /** Documents in the table (slots 0..documents-1). */
  documents: number;
  band: number;
  /** Members a range holds (a bucket larger than that is cut into several ranges). */
  rangeMembers: number;
}

/**
 * The ranges of a sorted band: whole buckets packed while they fit `target` members, a bucket larger than
 * that cut into ranges of `target` members each (the ranges of one bucket follow each other).
 */
export function planRanges(runs: Uint32Array, target: number): BandRange[] {
  const ranges: BandRange[] = [];
  let open: BandRange | undefined;
  for (let r = 0; r < runs.length / 2; r++) {
    const start = runs[2 * r], end = runs[2 * r + 1];
    if (open && open.members + end - start > target) open = undefined;
    if (end - start > target) {
      for (let from = start; from < end; from += target) {
        const to = Math.min(end, from + target);
        ranges.push({ from, to, fromRun: r, toRun: r + 1, members: to - from });
      }
      continue;
    }
    if (!open) ranges.push((open = { from: start, to: start, fromRun: r, toRun: r, members: 0 }));
    open.to = end;
    open.toRun = r + 1;
    open.members += end - start;
  }
  return ranges;
}

/** Members of a band (documents in buckets). */
export function membersOf(ranges: readonly BandRange[]): number {
  return ranges.reduce((sum, range) => sum + range.members, 0);
}

/** Each place of the band's order that the range holds, in bucket order. */
export function forEachPlace(range: BandRange, runs: Uint32Array, visit: (place: number) => void): void {
  for (let r = range.fromRun; r < range.toRun; r++) {
    const end = Math.min(runs[2 * r + 1], range.to);
    for (let p = Math.max(runs[2 * r], range.from); p < end; p++) visit(p);
  }
}

/**
 * Gathers a sorted band into range files beside the records file, in one pass over it in order; the ranges
 * with their files. Undefined (nothing written) when the band's ranges would not leave room on the disk:
 * that band is then read where its records lie.
 */
export function gatherBand(task: GatherTask, order: Uint32Array, runs: Uint32Array): BandRange[] | undefined {
  return gatherBands([{ task, order, runs }])[0];
}

/** A sorted band to gather: what the gather needs, its members' slots in bucket order and its runs. */
export interface BandToGather {
  task: GatherTask;
  order: Uint32Array;
  runs: Uint32Array;
}

/**
 * Gathers several sorted bands of one records file in a single pass over it (a pass a band costs a read of
 * the whole file, 34 GB at a hundred million documents: gathering two bands a pass halves what the bands
 * read from the device). Each band's ranges with their files, in the order given; undefined for a band whose
 * ranges would not leave room on the disk beside those of the bands before it (read where its records lie).
 * `free`: the bytes free on the records' disk (asked of the system when not given).
 */
export function gatherBands(bands: readonly BandToGather[], free?: number): Array<BandRange[] | undefined> {
  if (bands.length === 0) return [];
  const { records, layout, documents } = bands[0].task;
  const bytes = recordBytes(layout);
  let room = (free ?? freeBytes(path.dirname(records))) - DISK_MARGIN_BYTES;
  const planned = bands.map(({ task, runs }) => {
    const ranges = planRanges(runs, Math.max(1, task.rangeMembers));
    const fits = ranges.length === 0 || membersOf(ranges) * bytes <= room;
    if (fits) room -= membersOf(ranges) * bytes;
    return fits ? ranges : undefined;
  });
  const gathered: GatheredBand[] = [];
  try {
    for (const [k, { task, order, runs }] of bands.entries()) {
      const ranges = planned[k];
      if (ranges && ranges.length > 0) gathered.push(openBand(task, order, runs, ranges, bytes));
    }
    if (gathered.length > 0) sweep(records, bytes, documents, gathered);
    for (const band of gathered) for (const writer of band.writers) writer.close();
  } catch (err) {
    // A gather that fails (a planted name refused, descriptors or disk run out, the records file cut short)
    // leaves nothing of its own: each file it made closed and removed (a planted file, not its own, stays).
    for (const band of gathered) for (const writer of band.writers) writer.discard();
    throw err;
  }
  return planned;
}

/** A band being gathered: which slots are its members and in which range, and a writer a range. */
interface GatheredBand {
  members: MemberRanges;
  writers: RecordWriter[];
}

/** A band's range files made (created new, for records of `bytes` each), each range given its file. */
function openBand(task: GatherTask, order: Uint32Array, runs: Uint32Array, ranges: BandRange[], bytes: number): GatheredBand {
  const folder = path.dirname(task.records);
  const band: GatheredBand = { members: new MemberRanges(task.documents, order, runs, ranges), writers: [] };
  try {
    for (const [k, range] of ranges.entries()) {
      band.writers.push(new RecordWriter(path.join(folder, `band-${task.band}-range-${k}.bin`), bytes));
      range.file = band.writers[k].file;
    }
  } catch (err) {
    for (const writer of band.writers) writer.discard();
    throw err;
  }
  return band;
}

/** The records file read once in order, each band's members' records appended to their range's file. */
function sweep(records: string, bytes: number, documents: number, bands: readonly GatheredBand[]): void {
  const chosen = bands.length === 1 ? bands[0].members.slots : SlotBits.union(documents, bands.map((band) => band.members.slots));
  const ranks = new Uint32Array(bands.length);
  sweepRecords(records, bytes, chosen, (slot, record) => {
    for (let k = 0; k < bands.length; k++) {
      const { members, writers } = bands[k];
      if (members.slots.has(slot)) writers[members.rangeByRank[ranks[k]++]].add(record);
    }
  });
}

/**
 * Which slots are members of the band (a bit a document), and in which range: a range a member by its rank
 * among the members in slot order (the order in which the sweep meets them; a byte a member while there
 * are at most 256 ranges). The counts that ranked them are let go once they are ranked: the sweep counts.
 */
class MemberRanges {
  readonly slots: SlotBits;
  readonly rangeByRank: Uint8Array | Uint16Array | Uint32Array;

  constructor(documents: number, order: Uint32Array, runs: Uint32Array, ranges: readonly BandRange[]) {
    const slots = new SlotBits(documents);
    for (const range of ranges) forEachPlace(range, runs, (p) => slots.add(order[p]));
    const members = membersOf(ranges);
    this.rangeByRank = ranges.length <= 2 ** 8 ? new Uint8Array(members) : ranges.length <= 2 ** 16 ? new Uint16Array(members) : new Uint32Array(members);
    for (const [k, range] of ranges.entries()) forEachPlace(range, runs, (p) => (this.rangeByRank[slots.rank(order[p])] = k));
    slots.forgetRanks();
    this.slots = slots;
  }
}
