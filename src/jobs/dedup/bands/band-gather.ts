// A spilled band's members gathered in bucket order, so that its verification reads the disk in order (read
// where they lie, once the records outgrow the page cache, they come a page at a time at random). As datatrove
// lays its buckets out before it reads them, each band's members are copied out of the records file in one
// pass in order (records-sweep.ts) into range files, by the ranges its sort planned (band-ranges.ts: runs of
// buckets of about `target` members, a larger bucket cut into several); each file, in slot order, is read back
// (mostly from the page cache) while its range is verified (range-records.ts) and removed after. The gather
// runs on the sorting core when there is one (band-sort.worker.ts).
import path from 'node:path';
import type { BandMembersAt } from './band-ranges.js';
import { RecordWriter, SlotBits, sweepRecords } from '../spill/records-sweep.js';
import { spillRoom } from '../spill/spill-folder.js';
import { type RecordLayout, recordBytes } from '../scan/spill-records.js';

/** Members a range holds, by default: about 150 MB of whole records at 128 values and 26 bands. */
export const DEFAULT_RANGE_MEMBERS = 250_000;

/** What the gather of one band needs. */
export interface GatherTask {
  /** The spill's records file, and its layout. */
  records: string;
  layout: RecordLayout;
  /** Documents in the table (slots 0..documents-1). */
  documents: number;
  band: number;
  /** Members a range holds (a bucket larger than that is cut into several ranges): what the band's sort plans its ranges by. */
  rangeMembers: number;
}

/** A sorted band to gather: what the gather needs, and its members with their ranges. */
export interface BandToGather {
  task: GatherTask;
  members: BandMembersAt;
}

/**
 * Gathers several sorted bands of one records file in a single pass over it (a pass a band costs a read of
 * the whole file, 34 GB at a hundred million documents: gathering two bands a pass halves what the bands
 * read from the device): each range of a band gathered is given its file. Whether each band was gathered, in
 * the order given: not a band with no bucket, nor one whose ranges would not leave room on the disk beside
 * those of the bands before it (read where its records lie). `free`: the bytes free on the records' disk
 * (asked of the system when not given).
 */
export function gatherBands(bands: readonly BandToGather[], free?: number): boolean[] {
  if (bands.length === 0) return [];
  const { records, layout, documents } = bands[0].task;
  const bytes = recordBytes(layout);
  let room = spillRoom(path.dirname(records), free);
  const planned = bands.map(({ members }) => {
    const fits = members.members > 0 && members.members * bytes <= room;
    if (fits) room -= members.members * bytes;
    return fits;
  });
  const gathered: GatheredBand[] = [];
  try {
    for (const [k, { task, members }] of bands.entries()) if (planned[k]) gathered.push(openBand(task, members, bytes));
    if (gathered.length > 0) sweep(records, bytes, documents, gathered);
    for (const band of gathered) for (const writer of band.writers) writer.close();
  } catch (err) {
    // A gather that fails (a planted name refused, descriptors or disk run out, the records file cut short)
    // leaves nothing of its own: each file it made closed and removed (a planted file, not its own, stays),
    // no range left with a file.
    for (const band of gathered) for (const writer of band.writers) writer.discard();
    for (const { members } of bands) for (const range of members.ranges) range.file = undefined;
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
function openBand(task: GatherTask, members: BandMembersAt, bytes: number): GatheredBand {
  const folder = path.dirname(task.records);
  const band: GatheredBand = { members: new MemberRanges(task.documents, members), writers: [] };
  try {
    for (const [k, range] of members.ranges.entries()) {
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
 * are at most 256 ranges). The members are read a range at a time, twice; the counts that ranked them are
 * let go once they are ranked: the sweep counts.
 */
class MemberRanges {
  readonly slots: SlotBits;
  readonly rangeByRank: Uint8Array | Uint16Array | Uint32Array;

  constructor(documents: number, members: BandMembersAt) {
    const { ranges } = members;
    const slots = new SlotBits(documents);
    for (const range of ranges) for (const slot of members.window(range).order) slots.add(slot);
    const count = members.members;
    this.rangeByRank = ranges.length <= 2 ** 8 ? new Uint8Array(count) : ranges.length <= 2 ** 16 ? new Uint16Array(count) : new Uint32Array(count);
    for (const [k, range] of ranges.entries()) for (const slot of members.window(range).order) this.rangeByRank[slots.rank(slot)] = k;
    slots.forgetRanks();
    this.slots = slots;
  }
}
