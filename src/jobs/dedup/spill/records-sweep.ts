// One pass in order over a spill's records file, copying the records of chosen slots into files of their
// own (the gathered bands, band-gather.ts; the cut's members, signature-table.ts), so that the disk is read
// in order at its full rate, not a page at a time at random, once the records outgrow the page cache. The
// chosen slots are a bit a document, with the count of chosen slots before each word (SlotBits: 0.25 bytes
// a document), so that a chosen slot's rank among them, the order the sweep meets them in, is found
// without a table of slots.
import { closeSync, openSync, rmSync } from 'node:fs';
import { popcount32 } from '../../../sketch/simhash.js';
import { readAll, writeAll } from './spill-folder.js';

/** Bytes of the records file read at once. */
const SWEEP_BYTES = 8 * 1024 * 1024;
/** Records a writer holds before it writes them. */
const WRITE_RECORDS = 256;

/** A set of slots 0..documents-1, a bit each, and each chosen slot's rank among them once sealed. */
export class SlotBits {
  private bits: Uint32Array;
  /** The chosen slots before each word (made by seal()). */
  private before?: Uint32Array;

  constructor(private slots: number) {
    this.bits = new Uint32Array(Math.ceil(slots / 32));
  }

  /** Slots it holds: 0..documents-1. */
  get documents(): number {
    return this.slots;
  }

  /** Made to hold slots 0..documents-1 (the slots chosen kept; never smaller). */
  grow(documents: number): void {
    if (documents <= this.slots) return;
    const words = Math.ceil(documents / 32);
    if (words > this.bits.length) {
      const bits = new Uint32Array(Math.max(words, 2 * this.bits.length));
      bits.set(this.bits);
      this.bits = bits;
    }
    this.slots = documents;
    this.before = undefined;
  }

  /** No slot chosen. */
  clear(): void {
    this.bits.fill(0);
    this.before = undefined;
  }

  /** The slots chosen in any of these sets (of `documents` slots each). */
  static union(documents: number, sets: readonly SlotBits[]): SlotBits {
    const union = new SlotBits(documents);
    for (const set of sets) for (let w = 0; w < union.bits.length; w++) union.bits[w] |= set.bits[w];
    return union;
  }

  add(slot: number): void {
    this.bits[slot >>> 5] |= 1 << (slot & 31);
    this.before = undefined;
  }

  has(slot: number): boolean {
    return slot >= 0 && slot < this.documents && (this.bits[slot >>> 5] & (1 << (slot & 31))) !== 0;
  }

  /** Chosen slots in all. */
  get size(): number {
    const before = this.sealed();
    const last = this.bits.length - 1;
    return last < 0 ? 0 : before[last] + popcount32(this.bits[last]);
  }

  /** A chosen slot's rank among the chosen slots, in slot order. */
  rank(slot: number): number {
    return this.sealed()[slot >>> 5] + popcount32(this.bits[slot >>> 5] & ((1 << (slot & 31)) - 1));
  }

  /** Lets go of the counts that rank the chosen slots (made again when a rank or the size is asked for). */
  forgetRanks(): void {
    this.before = undefined;
  }

  /** Whether any slot in [from, to) is chosen (whole words checked: a chosen slot past `to` may say yes). */
  anyIn(from: number, to: number): boolean {
    for (let w = from >>> 5; w <= (to - 1) >>> 5; w++) if (this.bits[w] !== 0) return true;
    return false;
  }

  /** Each chosen slot in [from, to), ascending (a chosen bit at a time, its place by counting zeros). */
  forEachIn(from: number, to: number, visit: (slot: number) => void): void {
    for (let w = from >>> 5; w <= (to - 1) >>> 5; w++) {
      let bits = this.bits[w];
      while (bits !== 0) {
        const low = bits & -bits;
        const slot = (w << 5) + 31 - Math.clz32(low);
        bits ^= low;
        if (slot >= from && slot < to) visit(slot);
      }
    }
  }

  private sealed(): Uint32Array {
    if (!this.before) {
      const before = new Uint32Array(this.bits.length);
      for (let w = 1; w < this.bits.length; w++) before[w] = before[w - 1] + popcount32(this.bits[w - 1]);
      this.before = before;
    }
    return this.before;
  }
}

/**
 * The records file read once in order (`bytes` a record, `documents` records), each chosen slot's record
 * handed to `visit` in slot order (a view valid during the call); reads with no chosen slot are skipped.
 */
export function sweepRecords(file: string, bytes: number, chosen: SlotBits, visit: (slot: number, record: Uint8Array) => void): void {
  const perRead = Math.max(1, Math.floor(SWEEP_BYTES / bytes));
  const chunk = new Uint8Array(perRead * bytes);
  const fd = openSync(file, 'r');
  try {
    for (let first = 0; first < chosen.documents; first += perRead) {
      const count = Math.min(perRead, chosen.documents - first);
      if (!chosen.anyIn(first, first + count)) continue;
      readAll(fd, chunk.subarray(0, count * bytes), first * bytes);
      chosen.forEachIn(first, first + count, (slot) => visit(slot, chunk.subarray((slot - first) * bytes, (slot - first + 1) * bytes)));
    }
  } finally {
    closeSync(fd);
  }
}

/** A file of records, written a few at a time (created new: a file planted under its name is refused). */
export class RecordWriter {
  private fd: number;
  private readonly buffer: Uint8Array;
  private used = 0;

  constructor(
    readonly file: string,
    private readonly bytes: number,
  ) {
    this.fd = openSync(file, 'wx', 0o600);
    this.buffer = new Uint8Array(WRITE_RECORDS * bytes);
  }

  add(record: Uint8Array): void {
    this.buffer.set(record, this.used);
    this.used += this.bytes;
    if (this.used === this.buffer.length) this.flush();
  }

  private flush(): void {
    writeAll(this.fd, this.buffer.subarray(0, this.used));
    this.used = 0;
  }

  /** Writes what it holds and closes the file (closed even when the write fails). */
  close(): void {
    if (this.fd < 0) return;
    try {
      this.flush();
    } finally {
      this.closeFile();
    }
  }

  /** Closes the file if open, and removes it. */
  discard(): void {
    this.closeFile();
    rmSync(this.file, { force: true });
  }

  private closeFile(): void {
    if (this.fd < 0) return;
    closeSync(this.fd);
    this.fd = -1;
  }
}
