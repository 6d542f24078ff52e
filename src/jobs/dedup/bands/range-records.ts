// The records of one gathered range (band-gather.ts) read back while the range is verified: its file holds
// its members' records in slot order, so a member's place in the file is its rank among the range's slots.
// The verifier loads a group of members from it as it would from the records file (RecordReader, close
// places in one read), and the checking threads read it by those places; the file is removed once the range
// is verified.
import { closeSync, openSync, rmSync } from 'node:fs';
import { placeIn, type RecordLayout, type RecordReader } from '../scan/spill-records.js';
import type { StoredSignature } from '../documents/signature-store.js';

/** One gathered range's records, read back by rank from the range's own file while the range is verified. */
export class RangeRecords {
  /** The range's slots, ascending: the i-th record of the file is slots[i]'s. */
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

  /** A member's record in the file (its rank among the range's slots). */
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
