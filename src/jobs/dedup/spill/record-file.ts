// The one way a dedup stage keeps bytes it may spill: a file of records, appended (or written at a place), in
// memory or in a file of the run's spill folder (spill-folder.ts: its own folder, O_EXCL, 0600), behind
// the same interface, so that a stage is written once for both. What a stage reads back from disk it holds
// to a check it kept in memory (checkOf), so that a file changed under the run is said, never used.
import { ftruncateSync } from 'node:fs';
import { foldCheck, readAll, type SpillFolder, writeAll } from './spill-folder.js';

/**
 * A file of records a stage appends and reads back, the same in memory or on the spill, so that a stage is written once
 * for both.
 */
export interface RecordFile {
  /** Bytes appended (and not cleared). */
  readonly length: number;
  /** Appends `bytes` after what was appended; their place. */
  append(bytes: Uint8Array): number;
  /** Writes `bytes` at `place` (over what was there, or past the end: bytes between read as zeros). */
  write(place: number, bytes: Uint8Array): void;
  /** Fills `into` from `place` (which with its length is within what was appended). */
  read(place: number, into: Uint8Array): void;
  /**
   * The bytes at [place, place + length): in memory a view of them (no copy), from disk a view of the block of the
   * file last read (4 KB at least, so that close reads read it once); good until the next write or view.
   */
  view(place: number, length: number): Buffer;
  /** What was appended, in the file (a thread that reads it by its path sees it all), its buffer let go; nothing to do in memory. */
  flush(): void;
  /** The file cut or made `length` bytes long (bytes added read as zeros); by default every byte let go, the disk's room too. */
  truncate(length?: number): void;
}

/**
 * A record file named `name`: in memory (room made for `expectedBytes` at once), or in `folder` (on disk) when
 * given, its appends gathered in a buffer of `bufferBytes` (appends as large go straight to the file).
 */
export function recordFile(name: string, folder?: SpillFolder, bufferBytes = 1 << 20, expectedBytes = 1 << 16): RecordFile {
  return folder ? new DiskRecords(folder, name, bufferBytes) : new MemoryRecords(expectedBytes);
}

/** The check of the 32-bit words of `words`, folded on from `check` (so that a check may span appends). */
export function checkOf(words: Uint32Array | Int32Array, check = 0): number {
  for (let i = 0; i < words.length; i++) check = foldCheck(check, words[i]);
  return check;
}

class MemoryRecords implements RecordFile {
  private bytes: Buffer;
  length = 0;

  constructor(expectedBytes: number) {
    this.bytes = Buffer.alloc(expectedBytes);
  }

  append(bytes: Uint8Array): number {
    const place = this.length;
    this.write(place, bytes);
    return place;
  }

  write(place: number, bytes: Uint8Array): void {
    const end = place + bytes.length;
    if (end > this.bytes.length) {
      const larger = Buffer.alloc(Math.max(1 << 16, Math.ceil(end * 1.5)));
      larger.set(this.bytes.subarray(0, this.length));
      this.bytes = larger;
    }
    this.bytes.set(bytes, place);
    this.length = Math.max(this.length, end);
  }

  read(place: number, into: Uint8Array): void {
    into.set(this.bytes.subarray(place, place + into.length));
  }

  view(place: number, length: number): Buffer {
    return this.bytes.subarray(place, place + length);
  }

  flush(): void {}

  truncate(length = 0): void {
    if (length > this.length) this.write(length - 1, new Uint8Array(1));
    else if (length === 0) this.bytes = Buffer.alloc(1 << 16);
    else this.bytes.fill(0, length, this.length);
    this.length = length;
  }
}

/** Bytes of a file read at once for a view, at least. */
const VIEW_BYTES = 4096;

class DiskRecords implements RecordFile {
  private readonly file: number;
  /** Appends not yet written, to go at the file's end (made when first needed, let go by flush). */
  private pending = new Uint8Array(0);
  private pendingLength = 0;
  /** Bytes the file holds. */
  private end = 0;
  /** The block last viewed: where it starts, its bytes, and how many of them were read. */
  private readonly viewed = { start: 0, bytes: Buffer.alloc(0), length: 0 };

  constructor(
    folder: SpillFolder,
    name: string,
    private readonly bufferBytes: number,
  ) {
    this.file = folder.create(name);
  }

  get length(): number {
    return this.end + this.pendingLength;
  }

  append(bytes: Uint8Array): number {
    const place = this.length;
    if (this.pendingLength + bytes.length > this.bufferBytes) this.writePending();
    if (bytes.length >= this.bufferBytes) this.write(place, bytes);
    else {
      if (this.pending.length === 0) this.pending = new Uint8Array(this.bufferBytes);
      this.pending.set(bytes, this.pendingLength);
      this.pendingLength += bytes.length;
    }
    return place;
  }

  write(place: number, bytes: Uint8Array): void {
    this.writePending();
    this.viewed.length = 0;
    writeAll(this.file, bytes, place);
    this.end = Math.max(this.end, place + bytes.length);
  }

  read(place: number, into: Uint8Array): void {
    this.writePending();
    readAll(this.file, into, place);
  }

  view(place: number, length: number): Buffer {
    const viewed = this.viewed;
    if (place < viewed.start || place + length > viewed.start + viewed.length) {
      viewed.start = place - (place % VIEW_BYTES);
      const size = Math.max(VIEW_BYTES, place + length - viewed.start);
      if (viewed.bytes.length < size) viewed.bytes = Buffer.alloc(size);
      viewed.length = Math.min(size, this.length - viewed.start);
      this.read(viewed.start, viewed.bytes.subarray(0, viewed.length));
    }
    return viewed.bytes.subarray(place - viewed.start, place - viewed.start + length);
  }

  truncate(length = 0): void {
    this.writePending();
    this.viewed.length = 0;
    this.end = length;
    ftruncateSync(this.file, length);
  }

  flush(): void {
    this.writePending();
    this.pending = new Uint8Array(0);
  }

  private writePending(): void {
    if (this.pendingLength === 0) return;
    const pending = this.pending.subarray(0, this.pendingLength);
    this.pendingLength = 0;
    this.write(this.end, pending);
  }
}
