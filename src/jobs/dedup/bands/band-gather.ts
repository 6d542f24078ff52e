// A spilled band's members gathered in bucket order, so that its verification reads the disk in order: once
// the records outgrow the page cache, read where they lie they come a page at a time at random. As datatrove
// lays its buckets out before it reads them, the members' records are copied in one pass over the records
// file (records-sweep.ts) into a file a range (band-members.ts), which is read back while its range is
// verified (RangeRecords) and removed after. The gather runs on the sorting core when there is one.
import { closeSync, openSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { BandMembersAt } from './band-members.js';
import { RecordWriter, SlotBits, sweepRecords } from '../spill/records-sweep.js';
import { spillRoom } from '../spill/spill-folder.js';
import { placeIn, type RecordLayout, type RecordReader, recordBytes } from '../scan/spill-records.js';
import type { StoredSignature } from '../documents/signature-store.js';

/** Members a range holds, by default: about 150 MB of whole records at 128 values and 26 bands. */
export const DEFAULT_RANGE_MEMBERS = 250_000;

/** What the gather of one band needs: the spill's records file, and the members a range holds (what its sort plans by). */
export interface GatherTask {
  records: string;
  layout: RecordLayout;
  /** Documents in the table (slots 0..documents-1). */
  documents: number;
  band: number;
  rangeMembers: number;
}

/** A sorted band to gather: what the gather needs, and its members with their ranges. */
export interface BandToGather {
  task: GatherTask;
  members: BandMembersAt;
}

/**
 * Several sorted bands of one records file gathered in one pass over it (each pass reads the whole file),
 * each range given its file. Whether each band was gathered: not one with no bucket, nor one whose ranges
 * would not leave room on the disk beside those before it. `free`: the bytes free there (else asked).
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
    for (const [k, { task, members }] of bands.entries()) {
      if (!planned[k]) continue;
      // Each range's file made (created new), and the range given it.
      const band: GatheredBand = { members: new MemberRanges(task.documents, members), writers: [] };
      gathered.push(band);
      for (const [r, range] of members.ranges.entries()) {
        band.writers.push(new RecordWriter(path.join(path.dirname(task.records), `band-${task.band}-range-${r}.bin`), bytes));
        range.file = band.writers[r].file;
      }
    }
    if (gathered.length > 0) sweep(records, bytes, documents, gathered);
    for (const band of gathered) for (const writer of band.writers) writer.close();
  } catch (err) {
    // (Nothing of its own left: each file it made removed, a planted one not its own kept, no range with a file.)
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
 * Which slots are members of the band (a bit a document), and each one's range by its rank among the members
 * in slot order, the order the sweep meets them in (a byte a member up to 256 ranges).
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

/** One gathered range's records, read back while the range is verified: the i-th record of its file is its i-th slot's, ascending. */
export class RangeRecords {
  private readonly slots: Uint32Array;
  private readonly fd: number;

  /** `members`: the range's slots (its window's, in bucket order). */
  constructor(
    private readonly file: string,
    members: Uint32Array,
    private readonly reader: RecordReader,
  ) {
    this.slots = members.slice().sort();
    this.fd = openSync(file, 'r');
  }

  /** The file the checking threads read (by placeOf), and its records' layout. */
  get records(): { file: string; layout: RecordLayout } {
    return { file: this.file, layout: this.reader.layout };
  }

  /** A member's place in the file. */
  readonly placeOf = (slot: number): number => {
    const place = placeIn(this.slots, slot);
    if (place < 0) throw new Error(`slot ${slot} is not a member of the gathered range`);
    return place;
  };

  /** The signatures of these member slots (ascending), found by slot until the next load. */
  async load(slots: Uint32Array): Promise<(slot: number) => StoredSignature> {
    const signatureAt = this.reader.read(this.fd, slots.map((slot) => this.placeOf(slot)));
    return (slot) => signatureAt(this.placeOf(slot));
  }

  /** Closes the file and removes it (the range is verified). */
  remove(): void {
    closeSync(this.fd);
    rmSync(this.file, { force: true });
  }
}
