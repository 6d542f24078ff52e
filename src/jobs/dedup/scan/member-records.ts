// The records of the documents the clusters' cut reads, gathered out of the spill's records file first: the
// cut reads every family member's signature (the documents in a verified pair), a batch of families at a
// time, their slots scattered through the records file, each a page from the device at random once the file
// outgrows the page cache. So, as the bands are gathered (band-gather.ts), the members' records are copied
// out in one pass in order (records-sweep.ts) into a file of their own, in slot order, which the page cache
// holds (368 to 624 bytes a member); a member's place in it is its rank among the members (SlotBits: 0.25
// bytes a document). The file is removed with the spill.
import { closeSync, openSync, rmSync } from 'node:fs';
import { RecordWriter, SlotBits, sweepRecords } from '../spill/records-sweep.js';
import { spillRoom } from '../spill/spill-folder.js';
import { type RecordLayout, type RecordReader, recordBytes } from './spill-records.js';
import type { StoredSignature } from '../documents/signature-store.js';

/**
 * The records of the cut's family members, copied in one pass out of the spill's records file into a file of their own
 * in slot order, so that the cut reads them from the page cache, not the device at random (the file header says why).
 */
export class MemberRecords {
  private fd: number;

  private constructor(
    private readonly members: SlotBits,
    readonly file: string,
  ) {
    this.fd = openSync(file, 'r');
  }

  /**
   * The records of these slots (of a records file of `documents` records) copied into `file` in one pass;
   * undefined (nothing written) when they would not leave room on the disk.
   */
  static gather(records: { file: string; layout: RecordLayout }, documents: number, slots: Iterable<number>, file: string): MemberRecords | undefined {
    const members = new SlotBits(documents);
    for (const slot of slots) if (slot >= 0 && slot < documents) members.add(slot);
    const bytes = recordBytes(records.layout);
    if (members.size * bytes > spillRoom(records.file)) return undefined;
    const writer = new RecordWriter(file, bytes);
    try {
      sweepRecords(records.file, bytes, members, (_slot, record) => writer.add(record));
      writer.close();
    } catch (err) {
      writer.discard();
      throw err;
    }
    return new MemberRecords(members, file);
  }

  /** Whether every one of these slots was gathered. */
  holdsAll(slots: ArrayLike<number>): boolean {
    for (let i = 0; i < slots.length; i++) if (!this.members.has(slots[i])) return false;
    return true;
  }

  /** The signatures of these gathered slots (ascending), found by slot until the reader's next read. */
  read(reader: RecordReader, slots: Uint32Array): (slot: number) => StoredSignature {
    const signatureAt = reader.read(this.fd, slots.map((slot) => this.members.rank(slot)));
    return (slot) => signatureAt(this.members.rank(slot));
  }

  /** Closes the file and removes it. */
  remove(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
    rmSync(this.file, { force: true });
  }
}
