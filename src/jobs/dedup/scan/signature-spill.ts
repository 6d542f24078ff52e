// The signatures of the whole-index pass spilled to local disk, for an index whose signatures do not fit the
// memory dedup is given. Written once as the scan reads them, in scan order, into a fresh folder of its own
// (mkdtemp; every file created there with O_EXCL, so nothing planted is followed), removed when the run ends:
//  - records.bin: each document's signature at slot * recordBytes (MinHash values, SimHash halves, the
//    hash of each band key), read back a bucket group at a time, in slot order, close slots in one read;
//    the values whole (32 bits), or their low 16 bits when the spill is made compact (`valueBits` 16: 368
//    bytes a document instead of 624 at 128 values and 26 bands). Two values equal in their low 16 bits
//    and not above are then counted as equal: each of a pair's differing values does so with chance 2^-16,
//    so a pair's estimated similarity gains 1/width with chance about (differing values) / 65,536 (0.1% of
//    pairs at 128 values and a Jaccard of 0.5), never loses; the error measured is in BENCHMARKS.md;
//  - band-<b>.bin: the hash of each document's key in band b, by slot (4 bytes a document), read a chunk at
//    a time (twice) to sort that band into buckets.
// Memory holds the write buffers, and nothing a document: its id is kept by the numbering, and its slot is
// its number while the two go together (the spill is the numbering's only writer during the scan, as when
// the ids are spilled too); only once they part does each slot's number take 8 bytes a document.
import os from 'node:os';
import path from 'node:path';
import type { Hash64 } from '../../../sketch/simhash.js';
import { type DocIds, withRoomFor } from '../documents/doc-numbers.js';
import { fieldValues, keyHash, type SignatureFields, type StoredSignature } from '../documents/signature-store.js';
import { BAND_CHUNK, type SignatureTable } from './signature-table.js';
import { MemberRecords } from './member-records.js';
import { freeBytes, gigabytes, readAll, SpillFolder, spillRoom, spillTooLarge, writeAll } from '../spill/spill-folder.js';
import { type RecordLayout, RecordReader, recordBytes, type SpillValueBits, writeRecord } from './spill-records.js';

export type { SpillValueBits } from './spill-records.js';

const RECORD_BUFFER_BYTES = 4 * 1024 * 1024;
/**
 * Disk a document takes beside its signature's record and band hashes: its id (most are shorter), its facts,
 * its set and best match when they are written by number (sets-on-disk.ts, 16 bytes), and, were every
 * document a near-duplicate, what the cut writes (44 bytes: its place in a cluster, 12, and its cluster's
 * share of a record head, at most 8; its id's hash, twice while sorted, 16; itself and its root by range of
 * roots, 8). Before the cut, the members of the bands in hand are on the disk (band-members-file.ts: at most
 * four bands of 4 bytes a member and 8 a bucket of two, 32 bytes a document were every document a member),
 * less than the cut's and gone before it.
 */
const OTHER_BYTES_PER_DOCUMENT = 140;
const BAND_BUFFER_VALUES = 16 * 1024;

/**
 * The signatures of a whole-index pass spilled to local disk (records.bin and a band-<b>.bin a band, as the file header
 * says), for an index whose signatures do not fit the memory dedup is given; its folder is removed on close.
 */
export class SignatureSpill implements SignatureTable {
  private readonly folder: SpillFolder;
  /** Each slot's id, when the spill has no numbering to find it in. */
  private readonly ids: string[] = [];
  private count = 0;
  private width = 0;
  bandCount = 0;
  /** Documents whose signature had another shape than the first one's (other params): left out. */
  leftOut = 0;
  private recordFile = -1;
  private bandFiles: number[] = [];
  private recordBuffer = Buffer.alloc(0);
  private recordUsed = 0;
  private bandBuffers: Uint32Array[] = [];
  private bandUsed = 0;
  private finished = false;
  /** Each document's slot + 1 by its number (0: not here), and each slot's number, once they differ (else undefined). */
  private slots?: Int32Array;
  private numbers?: Int32Array;
  private recordLayout: RecordLayout;
  /** Reads the records back, once the spill is finished. */
  private reader?: RecordReader;
  /** Where a band's hashes are read into, a chunk at a time. */
  private readonly bandChunk = new Uint32Array(BAND_CHUNK);
  /** The family members' records, once gathered for the clusters' cut (member-records.ts). */
  private members?: MemberRecords;

  /** Bits kept of each MinHash value: 32, or 16 (compact); chosen by the first document when 'auto'. */
  private bits: SpillValueBits | 'auto';
  /** Documents expected, to tell up front whether the spill fits the disk (0: not known, not checked). */
  private readonly expected: number;

  /**
   * `parent`: where the spill's own folder is made (default: the system's temporary folder); `valueBits`:
   * 32, 16, or 'auto' (32 when the whole spill of `expected` documents fits the disk's free space, else 16
   * when that fits; when neither does, the first document is refused with the sizes and the way out).
   */
  constructor(parent: string = os.tmpdir(), private readonly documents?: DocIds, { valueBits = 32, expected = 0 }: { valueBits?: SpillValueBits | 'auto'; expected?: number } = {}) {
    this.folder = new SpillFolder(parent);
    this.bits = valueBits;
    this.expected = expected;
    this.recordLayout = { width: 0, bandCount: 0, valueBits: valueBits === 'auto' ? 32 : valueBits };
  }

  /** The bits kept of each value (known once the first document is in, when chosen then). */
  get valueBits(): SpillValueBits {
    return this.recordLayout.valueBits;
  }

  /** The folder the spill is in. */
  get path(): string {
    return this.folder.path;
  }

  get size(): number {
    return this.count;
  }

  /** Bytes of disk a document takes. */
  get bytesPerDocument(): number {
    return this.recordBytes + 4 * this.bandCount;
  }

  private get recordBytes(): number {
    return recordBytes(this.layout);
  }

  /** The layout of each document's record in records.bin (set by the first document). */
  get layout(): RecordLayout {
    return this.recordLayout;
  }

  /** The file of the records and their layout (everything added is written to it first), for a thread that reads them itself. */
  records(): { file: string; layout: RecordLayout } {
    this.finish();
    return { file: path.join(this.folder.path, 'records.bin'), layout: this.layout };
  }

  idOf(slot: number): string {
    return this.documents ? this.documents.idOf(this.numberAt(slot)) : this.ids[slot];
  }

  get numbering(): DocIds | undefined {
    return this.documents;
  }

  numberAt(slot: number): number {
    return this.numbers ? this.numbers[slot] : slot;
  }

  /** The slot of document number n, or -1 when it is not in the spill. */
  private slotOf(n: number): number {
    if (!this.slots) return n < this.count ? n : -1;
    return n < this.slots.length ? this.slots[n] - 1 : -1;
  }

  /** A document from its stored fields (the MinHash decoded, the band keys hashed), appended: its number (-1: left out). */
  addFields(id: string, fields: SignatureFields): number {
    return this.add(id, fieldValues(fields, true), fields.bands.length, (k) => keyHash(fields.bands[k]), fields.simhash);
  }

  /** A document from its decoded signature, appended: its number (-1: left out). */
  addSignature(id: string, signature: { values: Uint32Array; bands: Int32Array; simhash: Hash64 }): number {
    return this.add(id, signature.values, signature.bands.length, (k) => signature.bands[k], signature.simhash);
  }

  private add(id: string, values: Uint32Array, bandCount: number, bandHash: (k: number) => number, simhash: Hash64): number {
    if (this.finished) throw new Error('the signature spill is finished: nothing more can be added');
    if (this.size === 0) this.open(values.length, bandCount);
    if (values.length !== this.width || bandCount !== this.bandCount) {
      this.leftOut++;
      return -1;
    }
    if (this.recordUsed + this.recordBytes > this.recordBuffer.length) this.flushRecords();
    const bandUsed = this.bandUsed;
    writeRecord(this.layout, this.recordBuffer, this.recordUsed, values, simhash, (k) => (this.bandBuffers[k][bandUsed] = bandHash(k)));
    this.recordUsed += this.recordBytes;
    if (++this.bandUsed === BAND_BUFFER_VALUES) this.flushBands();
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
    const valueBits = this.bits === 'auto' ? chooseValueBits({ expected: this.expected, width, bandCount, free: freeBytes(this.folder.path), where: this.folder.path }) : this.bits;
    this.recordLayout = { width, bandCount, valueBits };
    if (this.expected > 0) this.folder.expectedBytes = spillBytes(this.expected, width, bandCount, valueBits);
    this.recordBuffer = Buffer.alloc(Math.max(1, Math.floor(RECORD_BUFFER_BYTES / this.recordBytes)) * this.recordBytes);
    this.recordFile = this.folder.create('records.bin');
    for (let k = 0; k < bandCount; k++) {
      this.bandFiles.push(this.folder.create(`band-${k}.bin`));
      this.bandBuffers.push(new Uint32Array(BAND_BUFFER_VALUES));
    }
  }

  private flushRecords(): void {
    writeAll(this.recordFile, this.recordBuffer.subarray(0, this.recordUsed));
    this.recordUsed = 0;
  }

  private flushBands(): void {
    for (let k = 0; k < this.bandCount; k++) writeAll(this.bandFiles[k], new Uint8Array(this.bandBuffers[k].buffer, 0, 4 * this.bandUsed));
    this.bandUsed = 0;
  }

  /** Everything added is on disk (in the page cache at least): the table can be read. */
  finish(): void {
    if (this.finished) return;
    if (this.size > 0) {
      this.flushRecords();
      this.flushBands();
    }
    this.recordBuffer = Buffer.alloc(0);
    this.bandBuffers = [];
    this.finished = true;
  }

  /** The file of a band's hashes (everything added is written to it first). */
  bandFile(band: number): string {
    this.finish();
    return path.join(this.folder.path, `band-${band}.bin`);
  }

  readBand(band: number, visit: (chunk: Uint32Array) => void): void {
    this.finish();
    const chunk = this.bandChunk;
    for (let start = 0; start < this.size; start += chunk.length) {
      const length = Math.min(chunk.length, this.size - start);
      readAll(this.bandFiles[band], new Uint8Array(chunk.buffer, 0, 4 * length), 4 * start);
      visit(chunk.subarray(0, length));
    }
  }

  async load(slots: Uint32Array): Promise<(slot: number) => StoredSignature> {
    this.finish();
    this.reader ??= new RecordReader(this.layout);
    return this.reader.read(this.recordFile, slots);
  }

  /** Whether the document was added (only known with a numbering). */
  holds(id: string): boolean {
    const n = this.documents?.find(id);
    return n !== undefined && this.slotOf(n) >= 0;
  }

  /**
   * The signatures of these ids (those in the spill), for cutting the families into clusters; found by
   * their numbers when given (-1: none), else by looking each id up in the numbering.
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
   * Copies the records of these documents (the families, by number) out of the records file in one pass in
   * order into a file of their own, which find reads from then on: for the clusters' cut of a spill larger
   * than the page cache. False when the disk has no room for them (they are then read where they lie).
   */
  gatherMembers(families: Iterable<ArrayLike<number>>): boolean {
    this.finish();
    this.members?.remove();
    const slotOf = (n: number) => this.slotOf(n);
    function* slots(): Generator<number> {
      for (const family of families) for (let k = 0; k < family.length; k++) yield slotOf(family[k]);
    }
    this.members = MemberRecords.gather(this.records(), this.size, slots(), path.join(this.folder.path, 'members.bin'));
    return this.members !== undefined;
  }

  /** Closes the files and removes the folder. */
  close(): void {
    this.members?.remove();
    this.members = undefined;
    this.recordFile = -1;
    this.bandFiles = [];
    this.folder.remove();
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
