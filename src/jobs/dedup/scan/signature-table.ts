// The signatures of the whole-index pass as the scan writes them and the bucket and verify stages read them:
// each document's record (its MinHash values, SimHash halves and band-key hashes: spill-records.ts) in one
// record file (spill/record-file.ts), in memory or, past --max-cached-signatures, in a spill folder of the
// table's own, the same code either way. On disk a column of key hashes a band goes beside it (what sorts a
// band reads, there or on a thread of its own); in memory a band's column is gathered from the records.
import { closeSync, openSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseSimhash } from '../../../sketch/simhash-doc.js';
import type { Hash64 } from '../../../sketch/simhash.js';
import { type DocIds, withRoomFor } from '../documents/doc-numbers.js';
import { fieldValues, keyHash, type SignatureFields, type StoredSignature } from '../documents/signature-store.js';
import { type RecordFile, recordFile } from '../spill/record-file.js';
import { RecordWriter, SlotBits, sweepRecords } from '../spill/records-sweep.js';
import { freeBytes, gigabytes, SpillFolder, spillRoom, spillTooLarge } from '../spill/spill-folder.js';
import { type RecordLayout, RecordReader, recordBytes, type SpillValueBits, writeRecord } from './spill-records.js';

export type { SpillValueBits } from './spill-records.js';

/**
 * The signatures of a whole-index pass as the bucket and verify stages read them, the same whether held in memory or
 * spilled to disk.
 */
export interface SignatureTable {
  /** Documents, numbered 0..size-1 in the order the scan met them (their slots). */
  readonly size: number;
  readonly bandCount: number;
  /** Each slot's id. */
  idOf(slot: number): string;
  /** The numbering the table's documents have, if any; a verifier that shares it takes them by number. */
  readonly numbering?: DocIds;
  /** Each slot's number in that numbering. */
  numberAt(slot: number): number;
  /** The hash of every document's key in `band`, in slot order, a chunk at a time. */
  readBand(band: number, visit: (chunk: Uint32Array) => void): void;
  /** The file that holds a band's hashes, when the table is on disk (another thread may read it there). */
  bandFile?(band: number): string;
  /** The file that holds the signatures' records and their layout, when the table is on disk (likewise). */
  records?(): { file: string; layout: RecordLayout };
  /** The signatures of these slots (ascending, no repeats), found by slot until the next load. */
  load(slots: Uint32Array): Promise<(slot: number) => StoredSignature>;
}

/** Hashes handed out at a time when a band is read from the disk. */
export const BAND_CHUNK = 1 << 16;

const RECORD_BUFFER_BYTES = 4 * 1024 * 1024;
const BAND_BUFFER_VALUES = 16 * 1024;
/**
 * Disk a document takes beside its signature's record and band hashes: its id (most are shorter), its facts,
 * its set and best match when they are written by number (sets-on-disk.ts, 16 bytes), and, were every
 * document a near-duplicate, what the cut writes (44 bytes: its place in a cluster, 12, and its cluster's
 * share of a record head, at most 8; its id's hash, twice while sorted, 16; itself and its root by range of
 * roots, 8). Before the cut, the members of the bands in hand are on the disk (band-members.ts: at most
 * four bands of 4 bytes a member and 8 a bucket of two, 32 bytes a document were every document a member),
 * less than the cut's and gone before it.
 */
const OTHER_BYTES_PER_DOCUMENT = 140;

/** Where a table keeps its signatures: in memory, or in a folder of its own made in `spillDir`. */
export interface TableOptions {
  /** Documents expected: room made for them at once in memory; on disk, the spill's size checked up front (0: not known). */
  expected?: number;
  /** Where the table's spill folder is made; the table is in memory when not given. */
  spillDir?: string;
  /**
   * Bits kept of each value on disk: 32, 16 (compact), or 'auto' (32 when the whole spill of `expected` documents
   * fits the disk's free space, else 16 when that fits; when neither does, the first document is refused with the
   * sizes and the way out).
   */
  valueBits?: SpillValueBits | 'auto';
}

/** The signatures of a whole-index pass, in a record file in memory or in a spill folder removed on close (the file header says how). */
export class SignatureRecords implements SignatureTable {
  private readonly folder?: SpillFolder;
  /** The records (an empty one in memory until the first document sets their layout). */
  private recordsFile: RecordFile = recordFile('records.bin', undefined, 0, 0);
  /** One record, on its way to the file. */
  private record = new Uint8Array(0);
  /** On disk, the band columns, and a block of each on its way there. */
  private columns: RecordFile[] = [];
  private columnBlocks: Uint32Array[] = [];
  private blockUsed = 0;
  /** In memory, the band whose column was last gathered (the sort reads a band twice). */
  private gathered?: { band: number; column: Uint32Array };
  /** Each slot's id, when the table has no numbering to find it in. */
  private readonly ids: string[] = [];
  private count = 0;
  private width = 0;
  bandCount = 0;
  /** Documents whose signature had another shape than the first one's (other params): left out. */
  leftOut = 0;
  private finished = false;
  /** Each document's slot + 1 by its number (0: not here), and each slot's number, once they differ (else undefined). */
  private slots?: Int32Array;
  private numbers?: Int32Array;
  private recordLayout: RecordLayout;
  private reader?: RecordReader;
  /** The family members' records, once gathered for the clusters' cut (MemberRecords). */
  private members?: MemberRecords;
  private readonly bits: SpillValueBits | 'auto';
  private readonly expected: number;
  /** On disk: the file of the records and their layout (everything added written there first), for a thread that reads them itself. */
  records?: () => { file: string; layout: RecordLayout };
  /** On disk: the file of a band's hashes (everything added written there first). */
  bandFile?: (band: number) => string;

  constructor(
    private readonly documents?: DocIds,
    { expected = 0, spillDir, valueBits = 32 }: TableOptions = {},
  ) {
    this.expected = expected;
    this.bits = spillDir === undefined ? 32 : valueBits;
    this.recordLayout = { width: 0, bandCount: 0, valueBits: this.bits === 'auto' ? 32 : this.bits };
    if (spillDir === undefined) return;
    const folder = new SpillFolder(spillDir);
    this.folder = folder;
    this.records = () => {
      this.finish();
      return { file: path.join(folder.path, 'records.bin'), layout: this.layout };
    };
    this.bandFile = (band) => {
      this.finish();
      return path.join(folder.path, `band-${band}.bin`);
    };
  }

  /** The folder the table is spilled to (a table in memory has none). */
  get path(): string {
    if (!this.folder) throw new Error('a table in memory has no folder');
    return this.folder.path;
  }

  get size(): number {
    return this.count;
  }

  /** Bytes of disk a document takes. */
  get bytesPerDocument(): number {
    return recordBytes(this.layout) + 4 * this.bandCount;
  }

  /** The layout of each document's record (set by the first document). */
  get layout(): RecordLayout {
    return this.recordLayout;
  }

  get numbering(): DocIds | undefined {
    return this.documents;
  }

  idOf(slot: number): string {
    return this.documents ? this.documents.idOf(this.numberAt(slot)) : this.ids[slot];
  }

  numberAt(slot: number): number {
    return this.numbers ? this.numbers[slot] : slot;
  }

  /** The slot of document number n, or -1 when it is not in the table. */
  private slotOf(n: number): number {
    if (!this.slots) return n < this.count ? n : -1;
    return n < this.slots.length ? this.slots[n] - 1 : -1;
  }

  /** A document from its stored fields (the MinHash decoded, the band keys hashed), appended: its number (-1: left out). */
  addFields(id: string, fields: SignatureFields): number {
    return this.add(id, fieldValues(fields, true), fields.bands.length, (k) => keyHash(fields.bands[k]), fields.simhash);
  }

  /** A document from its decoded signature, appended: its number (-1: left out). */
  addSignature(id: string, signature: StoredSignature): number {
    const simhash = typeof signature.simhash === 'string' ? parseSimhash(signature.simhash) : signature.simhash;
    return this.add(id, signature.values, signature.bands.length, (k) => signature.bands[k], simhash);
  }

  private add(id: string, values: Uint32Array, bandCount: number, bandHash: (k: number) => number, simhash: Hash64): number {
    if (this.finished) throw new Error('the signature table is finished: nothing more can be added');
    if (this.size === 0) this.open(values.length, bandCount);
    if (values.length !== this.width || bandCount !== this.bandCount) {
      this.leftOut++;
      return -1;
    }
    const used = this.blockUsed;
    const hashOf = this.folder ? (k: number) => (this.columnBlocks[k][used] = bandHash(k)) : bandHash;
    writeRecord(this.layout, this.record, 0, values, simhash, hashOf);
    this.recordsFile.append(this.record);
    if (this.folder && ++this.blockUsed === BAND_BUFFER_VALUES) this.flushColumns();
    return this.number(id);
  }

  private number(id: string): number {
    const slot = this.count++;
    if (!this.documents) {
      this.ids.push(id);
      return slot;
    }
    const n = this.documents.append(id);
    if (n !== slot && !this.slots) this.partNumbersFromSlots();
    if (this.slots && this.numbers) {
      this.slots = withRoomFor(this.slots, n);
      this.slots[n] = slot + 1;
      this.numbers = withRoomFor(this.numbers, slot);
      this.numbers[slot] = n;
    }
    return n;
  }

  /** The slots so far were their numbers: from now on each is kept (a document numbered before the scan met it). */
  private partNumbersFromSlots(): void {
    const before = this.count - 1;
    this.numbers = Int32Array.from({ length: Math.max(1024, before + 1) }, (_, slot) => slot);
    this.slots = Int32Array.from({ length: Math.max(1024, before + 1) }, (_, n) => (n < before ? n + 1 : 0));
  }

  private open(width: number, bandCount: number): void {
    this.width = width;
    this.bandCount = bandCount;
    const folder = this.folder;
    const valueBits = this.bits === 'auto' && folder ? chooseValueBits({ expected: this.expected, width, bandCount, free: freeBytes(folder.path), where: folder.path }) : this.layout.valueBits;
    this.recordLayout = { width, bandCount, valueBits };
    const bytes = recordBytes(this.layout);
    this.record = new Uint8Array(bytes);
    this.recordsFile = recordFile('records.bin', folder, RECORD_BUFFER_BYTES, Math.max(1, this.expected) * bytes);
    if (!folder) return;
    if (this.expected > 0) folder.expectedBytes = spillBytes(this.expected, width, bandCount, valueBits);
    for (let k = 0; k < bandCount; k++) {
      this.columns.push(recordFile(`band-${k}.bin`, folder, 0));
      this.columnBlocks.push(new Uint32Array(BAND_BUFFER_VALUES));
    }
  }

  private flushColumns(): void {
    for (let k = 0; k < this.bandCount; k++) this.columns[k].append(new Uint8Array(this.columnBlocks[k].buffer, 0, 4 * this.blockUsed));
    this.blockUsed = 0;
  }

  /** Everything added is in its files (on disk, in the page cache at least): the table can be read. */
  finish(): void {
    if (this.finished) return;
    if (this.blockUsed > 0) this.flushColumns();
    this.recordsFile.flush();
    this.columnBlocks = [];
    this.finished = true;
  }

  readBand(band: number, visit: (chunk: Uint32Array) => void): void {
    this.finish();
    if (this.columns.length === 0) {
      visit(this.gather(band));
      return;
    }
    const chunk = new Uint32Array(Math.min(BAND_CHUNK, this.size));
    for (let start = 0; start < this.size; start += chunk.length) {
      const length = Math.min(chunk.length, this.size - start);
      this.columns[band].read(4 * start, new Uint8Array(chunk.buffer, 0, 4 * length));
      visit(chunk.subarray(0, length));
    }
  }

  /** A band's hashes gathered from the records in memory, kept for the band's next reading. */
  private gather(band: number): Uint32Array {
    if (this.gathered?.band !== band) {
      const column = this.gathered?.column ?? new Uint32Array(this.size);
      const stride = recordBytes(this.layout) / 4;
      const bytes = this.recordsFile.view(0, 4 * stride * this.size);
      const words = new Uint32Array(bytes.buffer, bytes.byteOffset, stride * this.size);
      for (let i = 0, at = stride - this.bandCount + band; i < this.size; i++, at += stride) column[i] = words[at];
      this.gathered = { band, column };
    }
    return this.gathered.column;
  }

  async load(slots: Uint32Array): Promise<(slot: number) => StoredSignature> {
    this.finish();
    this.reader ??= new RecordReader(this.layout);
    // In memory, read where they lie (views, no copy); from disk, into the reader's buffers.
    if (this.folder) return this.reader.read(this.recordsFile, slots);
    const bytes = this.recordsFile.view(0, this.recordsFile.length);
    return this.reader.inPlace(new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
  }

  /** Whether the document was added (only known with a numbering). */
  holds(id: string): boolean {
    const n = this.documents?.find(id);
    return n !== undefined && this.slotOf(n) >= 0;
  }

  /**
   * The signatures of these ids (those in the table), for cutting the families into clusters; found by their
   * numbers when given (-1: none), else by looking each id up in the numbering.
   */
  async find(ids: readonly string[], numbers: ArrayLike<number> = ids.map((id) => this.documents?.find(id) ?? -1)): Promise<Map<string, StoredSignature>> {
    const wanted = new Map<number, string>();
    for (let i = 0; i < ids.length; i++) {
      const slot = numbers[i] < 0 ? -1 : this.slotOf(numbers[i]);
      if (slot >= 0) wanted.set(slot, ids[i]);
    }
    const slots = Uint32Array.from(wanted.keys()).sort();
    this.reader ??= new RecordReader(this.layout);
    const signatureOf = this.members?.holdsAll(slots) ? this.members.read(this.reader, slots) : await this.load(slots);
    const found = new Map<string, StoredSignature>();
    for (const slot of slots) found.set(wanted.get(slot) as string, signatureOf(slot));
    return found;
  }

  /**
   * On disk, copies the records of these documents (the families, by number) out of the records file in one
   * pass in order into a file of their own, which find reads from then on: for the clusters' cut of a spill
   * larger than the page cache. False when the disk has no room for them (they are then read where they lie),
   * or the table is in memory.
   */
  gatherMembers(families: Iterable<ArrayLike<number>>): boolean {
    if (!this.records) return false;
    this.members?.remove();
    const slotOf = (n: number) => this.slotOf(n);
    function* slots(): Generator<number> {
      for (const family of families) for (let k = 0; k < family.length; k++) yield slotOf(family[k]);
    }
    this.members = MemberRecords.gather(this.records(), this.size, slots(), path.join(this.path, 'members.bin'));
    return this.members !== undefined;
  }

  /** Lets the signatures go: on disk, the files closed and the folder removed. */
  close(): void {
    this.members?.remove();
    this.members = undefined;
    this.recordsFile = recordFile('records.bin', undefined, 0, 0);
    this.gathered = undefined;
    this.columns = [];
    this.folder?.remove();
  }
}

/** Bytes the spill of `expected` documents takes on disk, with their ids and facts, at these value bits. */
export function spillBytes(expected: number, width: number, bandCount: number, valueBits: SpillValueBits): number {
  return expected * (recordBytes({ width, bandCount, valueBits }) + 4 * bandCount + OTHER_BYTES_PER_DOCUMENT);
}

/**
 * The value bits of an 'auto' spill: whole values when the spill fits the free space (with a margin), else
 * 16 bits when that fits; else a UserError with both sizes and the way out.
 */
export function chooseValueBits({ expected, width, bandCount, free, where }: { expected: number; width: number; bandCount: number; free: number; where: string }): SpillValueBits {
  const room = spillRoom(where, free);
  const whole = spillBytes(expected, width, bandCount, 32);
  if (expected === 0 || whole <= room) return 32;
  const compact = spillBytes(expected, width, bandCount, 16);
  if (compact <= room) return 16;
  throw spillTooLarge({
    spill: `dedup would spill ${expected.toLocaleString('en')} signatures to ${where}`,
    needs: `${gigabytes(compact)} at least (${gigabytes(whole)} with whole values)`,
    free,
    limit: 'limits.maxCachedSignatures',
  });
}

/**
 * The records of the cut's family members, copied out of the records file in one pass in order
 * (records-sweep.ts) into a file of their own, in slot order, as the bands are gathered. The cut reads every
 * member's signature a batch of families at a time, their slots scattered through the records file, each a
 * page from the device at random once the file outgrows the page cache; the page cache holds this file
 * (368 to 624 bytes a member). A member's place in it is its rank among the members (SlotBits: 0.25 bytes
 * a document). The file is removed with the spill.
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
