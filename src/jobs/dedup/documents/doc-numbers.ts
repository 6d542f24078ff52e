// Documents numbered in the order dedup meets them, so that what it keeps about each one lives in typed
// arrays indexed by that number (its facts: a few bytes a document), or in rows found by it for the few that
// have a near-duplicate (doc-rows.ts). One numbering is shared by the signature store and the pair verifier,
// so every id is kept once: in two record files (spill/record-file.ts), in memory or, for an index too large
// for that, in a spill folder of its own: ids.bin, each id as UTF-8 after the other, and id-ends.bin, where
// each ends, a 64-bit float by number. A number is found by id through an index of every id, built the first
// time one is asked for and kept up to date after: a full run on disk that is not resumed never builds it.
import { type RecordFile, recordFile } from '../spill/record-file.js';
import { SpillFolder } from '../spill/spill-folder.js';

/** A numbering of documents: each id met gets the next number, and is found again by it. */
export interface DocIds {
  readonly size: number;
  /** The document's number, given it now if it had none. */
  numberOf(id: string): number;
  /** The document's number, or undefined if it was never met. */
  find(id: string): number | undefined;
  idOf(n: number): string;
  /** The ids of these numbers (ascending reads are the cheap ones). */
  idsOf(numbers: ArrayLike<number>): string[];
  /**
   * A document met by the scan: in memory looked up like numberOf (an alias over two indices may hold one _id
   * twice, which must stay one document, never a pair of itself); on disk numbered without looking it up, as
   * an index of every id would hold memory in proportion to the index.
   */
  append(id: string): number;
}

/**
 * The numbering: the ids in two record files, in memory or in a spill folder of its own (the file header says how);
 * on disk a read costs a small block of each file, so ids read in ascending numbers read each block once.
 */
export class DocNumbers implements DocIds {
  /** On disk, its folder (what goes with the ids, such as their facts, may be kept there too; removed with them). */
  readonly folder?: SpillFolder;
  private readonly idsFile: RecordFile;
  private readonly endsFile: RecordFile;
  private count = 0;
  /** An id encoded, and its end, on their way to the files. */
  private encoded = Buffer.alloc(1 << 12);
  private readonly end = Buffer.alloc(8);
  private index?: IdIndex;

  /** `spillDir`: where a folder of its own is made for the ids (in memory when not given). */
  constructor(spillDir?: string) {
    this.folder = spillDir === undefined ? undefined : new SpillFolder(spillDir);
    this.idsFile = recordFile('ids.bin', this.folder);
    this.endsFile = recordFile('id-ends.bin', this.folder);
  }

  get size(): number {
    return this.count;
  }

  append(id: string): number {
    return this.index || !this.folder ? this.numberOf(id) : this.write(id);
  }

  numberOf(id: string): number {
    const index = this.indexed();
    const found = index.find(id);
    if (found !== undefined) return found;
    const n = this.write(id);
    index.add(n, id);
    return n;
  }

  find(id: string): number | undefined {
    return this.indexed().find(id);
  }

  idOf(n: number): string {
    if (!Number.isInteger(n) || n < 0 || n >= this.count) throw new RangeError(`no document number ${n} (of ${this.count})`);
    // Where it ends, and where the one before it ends (negative: written as UTF-16).
    const at = n === 0 ? 0 : 8;
    const ends = this.endsFile.view(8 * n - at, 8 + at);
    const start = n === 0 ? 0 : Math.abs(ends.readDoubleLE(0));
    const end = ends.readDoubleLE(at);
    return this.idsFile.view(start, Math.abs(end) - start).toString(end < 0 ? 'utf16le' : 'utf8');
  }

  idsOf(numbers: ArrayLike<number>): string[] {
    return Array.from(numbers, (n) => this.idOf(n));
  }

  /** Lets the ids go: on disk, their folder removed. */
  close(): void {
    this.folder?.remove();
  }

  private write(id: string): number {
    const n = this.count++;
    // UTF-8 cannot hold a lone surrogate (an id read from JSON can have one): such an id goes as UTF-16,
    // its end kept negative to say so.
    const encoding = isWellFormed(id) ? 'utf8' : 'utf16le';
    const length = Buffer.byteLength(id, encoding);
    if (length > this.encoded.length) this.encoded = Buffer.alloc(length);
    this.idsFile.append(this.encoded.subarray(0, this.encoded.write(id, 0, encoding)));
    this.end.writeDoubleLE(encoding === 'utf8' ? this.idsFile.length : -this.idsFile.length);
    this.endsFile.append(this.end);
    return n;
  }

  /** The index by id, built from the ids the first time it is needed. */
  private indexed(): IdIndex {
    if (!this.index) {
      const index = new IdIndex(this.count, (n) => this.idOf(n));
      for (let n = 0; n < this.count; n++) index.add(n, this.idOf(n));
      this.index = index;
    }
    return this.index;
  }
}

/**
 * Numbers by id: an open-addressing table of number + 1 keyed by a hash of the id, with each number's hash
 * beside it so that only an equal hash costs a read of the id (4 + 4 to 8 bytes a document).
 */
class IdIndex {
  private table: Int32Array;
  private hashes: Uint32Array;
  private count = 0;
  private readonly key = (Math.random() * 2 ** 32) >>> 0;

  constructor(
    expected: number,
    private readonly idOf: (n: number) => string,
  ) {
    let size = 1024;
    while (size * 0.7 < expected) size *= 2;
    this.table = new Int32Array(size);
    this.hashes = new Uint32Array(Math.max(1024, expected));
  }

  find(id: string): number | undefined {
    const hash = this.hashOf(id);
    const mask = this.table.length - 1;
    for (let place = hash & mask; ; place = (place + 1) & mask) {
      const n = this.table[place] - 1;
      if (n < 0) return undefined;
      if (this.hashes[n] === hash && this.idOf(n) === id) return n;
    }
  }

  /** Number n, new, is `id`. */
  add(n: number, id: string): void {
    const hash = this.hashOf(id);
    this.hashes = withRoomFor(this.hashes, n);
    this.hashes[n] = hash;
    if (++this.count > this.table.length * 0.7) this.grow();
    this.place(n, hash);
  }

  private place(n: number, hash: number): void {
    const mask = this.table.length - 1;
    let place = hash & mask;
    while (this.table[place] !== 0) place = (place + 1) & mask;
    this.table[place] = n + 1;
  }

  private grow(): void {
    const old = this.table;
    this.table = new Int32Array(old.length * 2);
    for (const entry of old) if (entry !== 0) this.place(entry - 1, this.hashes[entry - 1]);
  }

  /** FNV-1a over the id's code units from a basis of this process's own (a crafted set of ids cannot pile up in one run of the table), mixed. */
  private hashOf(id: string): number {
    let h = 0x811c9dc5 ^ this.key;
    for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
    return mixed(h);
  }
}

/** Whether a string has no lone surrogate (String.prototype.isWellFormed, which Node 20 has). */
function isWellFormed(text: string): boolean {
  return (text as string & { isWellFormed(): boolean }).isWellFormed();
}

/** A 32-bit hash mixed so that its low bits depend on all of its bits. */
export function mixed(h: number): number {
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 12)) >>> 0;
}

/** A typed array with room for index `n`: the same one, or a copy half as large again (new places hold `fill`). */
export function withRoomFor<T extends Int32Array | Uint32Array | Float64Array | Uint16Array>(array: T, n: number, fill = 0): T {
  return n < array.length ? array : enlarged(array, Math.max(1024, Math.ceil((n + 1) * 1.5)), fill);
}

/** A copy of a typed array `length` long, the places past the old ones holding `fill`. */
export function enlarged<T extends Int32Array | Uint32Array | Float64Array | Uint16Array | Uint8Array>(array: T, length: number, fill = 0): T {
  const larger = new (array.constructor as new (length: number) => T)(length);
  larger.set(array);
  if (fill !== 0) larger.fill(fill, array.length);
  return larger;
}
