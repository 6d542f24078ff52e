// The numbering of an index too large to keep its ids in memory (a hundred million ids of 20 to 100
// characters are 2 to 10 GB): the ids on local disk, in the order they were numbered, in a spill folder of
// their own (spill-folder.ts), two record files (record-file.ts):
//  - ids.bin: each id as UTF-8, one after the other;
//  - id-ends.bin: where each id ends in ids.bin, a 64-bit float by number.
// Memory holds the write buffers and one small block of each file (the last read: 2 KB of ends, 4 KB of
// ids), so reading ids in ascending numbers, as the families and the journal do, reads each block once,
// and an id read alone costs two small reads. Finding a number by id needs an index
// of every id: built the first time one is asked for (a scan restarted, a resumed run's pairs, a split
// run's final step), about 10 bytes a document, and kept up to date after that. A full dedup run that is
// not resumed never builds it: its clusters are cut and written back by number.
import { type DocIds, mixed } from './doc-numbers.js';
import { type RecordFile, recordFile } from '../spill/record-file.js';
import { SpillFolder } from '../spill/spill-folder.js';

const ENDS_PER_BLOCK = 256;
const ID_BLOCK_BYTES = 1 << 12;

/**
 * The numbering of an index whose ids do not fit in memory: the ids in two record files of their own spill folder, read
 * a small block at a time (the file header says what it costs).
 */
export class SpilledIds implements DocIds {
  /** Its folder (what goes with the ids, such as their facts, may be kept there too; removed with them). */
  readonly folder: SpillFolder;
  private readonly idsFile: RecordFile;
  private readonly endsFile: RecordFile;
  private count = 0;
  /** An id encoded, and its end, on their way to the files. */
  private encoded = Buffer.alloc(1 << 12);
  private readonly end = new Float64Array(1);
  /** The last block of ends read: its first number, and the ends. */
  private endBlock = { first: -1, count: 0, ends: new Float64Array(ENDS_PER_BLOCK) };
  /** The last block of id bytes read: where it starts in ids.bin, and its bytes. */
  private idBlock = { start: -1, length: 0, bytes: Buffer.alloc(ID_BLOCK_BYTES) };
  private index?: IdIndex;

  /** `parent`: where its folder is made (default: the system's temporary folder). */
  constructor(parent?: string) {
    this.folder = new SpillFolder(parent);
    this.idsFile = recordFile('ids.bin', this.folder);
    this.endsFile = recordFile('id-ends.bin', this.folder);
  }

  get size(): number {
    return this.count;
  }

  get path(): string {
    return this.folder.path;
  }

  append(id: string): number {
    if (this.index) return this.numberOf(id);
    return this.write(id);
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
    const start = n === 0 ? 0 : this.endOf(n - 1);
    const end = this.endOf(n);
    return this.text(start, end, this.endBlock.ends[n - this.endBlock.first] < 0 ? 'utf16le' : 'utf8');
  }

  idsOf(numbers: ArrayLike<number>): string[] {
    return Array.from(numbers, (n) => this.idOf(n));
  }

  /** Removes its folder. */
  close(): void {
    this.folder.remove();
  }

  private write(id: string): number {
    const n = this.count++;
    // UTF-8 cannot hold a lone surrogate (an id read from JSON can have one): such an id goes as UTF-16,
    // its end kept negative to say so.
    const encoding = isWellFormed(id) ? 'utf8' : 'utf16le';
    const length = Buffer.byteLength(id, encoding);
    if (length > this.encoded.length) this.encoded = Buffer.alloc(length);
    this.idsFile.append(this.encoded.subarray(0, this.encoded.write(id, 0, encoding)));
    this.end[0] = encoding === 'utf8' ? this.idsFile.length : -this.idsFile.length;
    this.endsFile.append(new Uint8Array(this.end.buffer));
    return n;
  }

  /** Where id n ends in ids.bin, through the block of ends that holds it. */
  private endOf(n: number): number {
    const block = this.endBlock;
    if (block.first < 0 || n < block.first || n >= block.first + block.count) {
      block.first = n - (n % ENDS_PER_BLOCK);
      block.count = Math.min(ENDS_PER_BLOCK, this.count - block.first);
      this.endsFile.read(8 * block.first, new Uint8Array(block.ends.buffer, 0, 8 * block.count));
    }
    return Math.abs(block.ends[n - block.first]);
  }

  /** The id whose UTF-8 bytes are at [start, end) of ids.bin, through the block of bytes that holds them. */
  private text(start: number, end: number, encoding: 'utf8' | 'utf16le'): string {
    const block = this.idBlock;
    if (start < block.start || end > block.start + block.length) {
      if (end - start > block.bytes.length) block.bytes = Buffer.alloc(end - start);
      block.start = start;
      block.length = Math.min(block.bytes.length, this.idsFile.length - start);
      this.idsFile.read(start, block.bytes.subarray(0, block.length));
    }
    return block.bytes.toString(encoding, start - block.start, end - block.start);
  }

  /** The index by id, built from the disk the first time it is needed. */
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
    if (n >= this.hashes.length) {
      const larger = new Uint32Array(Math.ceil((n + 1) * 1.5));
      larger.set(this.hashes);
      this.hashes = larger;
    }
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
