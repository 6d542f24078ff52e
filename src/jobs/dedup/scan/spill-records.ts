// The records file of the signature table as its readers see it: the layout of one document's record (its
// MinHash values whole or in their low 16 bits, the SimHash halves, the hash of each band key) and the
// reading of a group of records by slot, close slots in one read. Shared by the table (signature-table.ts,
// through its record file) and the threads that verify buckets beside it (bucket-check.worker.ts), each
// reading through a file descriptor of its own.
import type { StoredSignature } from '../documents/signature-store.js';
import type { RecordFile } from '../spill/record-file.js';
import { readAll } from '../spill/spill-folder.js';

/** How many bits of each MinHash value the spill keeps: 32 (the values as they are), or 16 (compact). */
export type SpillValueBits = 16 | 32;

/** The shape of one document's record in the spill's records file; its size and offsets follow from it. */
export interface RecordLayout {
  /** MinHash values a document. */
  width: number;
  bandCount: number;
  valueBits: SpillValueBits;
}

/** Slots at most this far apart are read in one request (the bytes between them read and dropped). */
const MAX_GAP_SLOTS = 4;
const MAX_READ_BYTES = 1024 * 1024;

/** Bytes of a record's values (4-aligned, so that what follows them reads as 32-bit words). */
export function valueBytes(layout: RecordLayout): number {
  return layout.valueBits === 32 ? 4 * layout.width : 4 * Math.ceil(layout.width / 2);
}

/** Bytes of one document's record. */
export function recordBytes(layout: RecordLayout): number {
  return valueBytes(layout) + 4 * (2 + layout.bandCount);
}

/** Writes a document's record at `at` in `into` (recordBytes(layout) bytes from there). */
export function writeRecord(layout: RecordLayout, into: Uint8Array, at: number, values: Uint32Array, simhash: { hi: number; lo: number }, bandHash: (k: number) => number): void {
  const { width, bandCount } = layout;
  const offset = into.byteOffset + at;
  if (layout.valueBits === 32) new Uint32Array(into.buffer, offset, width).set(values);
  else new Uint16Array(into.buffer, offset, width).set(values); // keeps each value's low 16 bits
  const rest = new Uint32Array(into.buffer, offset + valueBytes(layout), 2 + bandCount);
  rest[0] = simhash.hi;
  rest[1] = simhash.lo;
  for (let k = 0; k < bandCount; k++) rest[2 + k] = bandHash(k);
}

/**
 * Reads groups of records from a records file into buffers it keeps from group to group (a new buffer a
 * group would make the garbage collector's work grow with the groups). The signatures of a group are views
 * of those buffers, good until the next group is read.
 */
export class RecordReader {
  private held = new Uint8Array(0);
  private expanded = new Uint32Array(0);
  private readonly scratch = new Uint8Array(MAX_READ_BYTES + 64 * 1024);
  private readonly bytes: number;
  private readonly words: number;

  constructor(readonly layout: RecordLayout) {
    this.bytes = recordBytes(layout);
    this.words = layout.width + 2 + layout.bandCount;
  }

  /** The signatures of these slots (ascending, no repeats) in a records file (open as `fd`, or a record file), found by slot until the next read. */
  read(fd: number | RecordFile, slots: Uint32Array): (slot: number) => StoredSignature {
    const bytes = this.bytes;
    if (this.held.length < slots.length * bytes) this.held = new Uint8Array(Math.ceil(slots.length * 1.25) * bytes);
    for (let i = 0; i < slots.length; ) {
      let j = i + 1;
      while (j < slots.length && slots[j] - slots[j - 1] <= MAX_GAP_SLOTS && (slots[j] - slots[i] + 1) * bytes <= MAX_READ_BYTES) j++;
      this.readRun(fd, slots, i, j);
      i = j;
    }
    const records = this.layout.valueBits === 32 ? new Uint32Array(this.held.buffer, 0, (slots.length * bytes) / 4) : this.expand(slots.length);
    return (slot) => this.signatureAt(records, placeIn(slots, slot));
  }

  /** The signatures of a records file of whole values held in memory as `words`, by slot: views of it, no copy. */
  inPlace(words: Uint32Array): (slot: number) => StoredSignature {
    return (slot) => this.signatureAt(words, slot);
  }

  /** Slots i..j-1, close together, in one read: straight into place when they follow each other, else through the scratch buffer. */
  private readRun(fd: number | RecordFile, slots: Uint32Array, i: number, j: number): void {
    const bytes = this.bytes;
    const span = slots[j - 1] - slots[i] + 1;
    const read = (into: Uint8Array, at: number) => (typeof fd === 'number' ? readAll(fd, into, at) : fd.read(at, into));
    if (span === j - i) {
      read(this.held.subarray(i * bytes, j * bytes), slots[i] * bytes);
      return;
    }
    read(this.scratch.subarray(0, span * bytes), slots[i] * bytes);
    for (let k = i; k < j; k++) {
      const from = (slots[k] - slots[i]) * bytes;
      this.held.set(this.scratch.subarray(from, from + bytes), k * bytes);
    }
  }

  /** `count` compact records as whole ones: each value widened to 32 bits (its high bits 0). */
  private expand(count: number): Uint32Array {
    const { width, bandCount } = this.layout;
    const words = this.words;
    if (this.expanded.length < count * words) this.expanded = new Uint32Array(Math.ceil(count * 1.25) * words);
    const skip = valueBytes(this.layout);
    for (let i = 0; i < count; i++) {
      const at = i * this.bytes;
      this.expanded.set(new Uint16Array(this.held.buffer, at, width), i * words);
      this.expanded.set(new Uint32Array(this.held.buffer, at + skip, 2 + bandCount), i * words + width);
    }
    return this.expanded;
  }

  /** The signature of the i-th record read, from the records with whole values. */
  private signatureAt(records: Uint32Array, i: number): StoredSignature {
    if (i < 0) throw new Error('a signature was asked for that was not loaded');
    const { width, bandCount } = this.layout;
    const record = records.subarray(i * this.words, (i + 1) * this.words);
    return {
      values: record.subarray(0, width),
      simhash: { hi: record[width], lo: record[width + 1] },
      bands: new Int32Array(record.buffer, record.byteOffset + 4 * (width + 2), bandCount),
    };
  }
}

/** The slots ascending, each once, as RecordReader.read takes them (sorted in place; a view of the start of `slots`). */
export function ascendingOnce(slots: Uint32Array): Uint32Array {
  slots.sort();
  let unique = 0;
  for (let i = 0; i < slots.length; i++) if (i === 0 || slots[i] !== slots[i - 1]) slots[unique++] = slots[i];
  return slots.subarray(0, unique);
}

/** Where `slot` is in the ascending `slots` (-1: not there). */
export function placeIn(slots: Uint32Array, slot: number): number {
  let lo = 0;
  let hi = slots.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (slots[mid] < slot) lo = mid + 1;
    else if (slots[mid] > slot) hi = mid - 1;
    else return mid;
  }
  return -1;
}
