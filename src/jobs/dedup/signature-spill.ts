// The signatures of the whole-index pass spilled to local disk, for an index whose signatures do not fit the
// memory dedup is given. Written once as the scan reads them, in scan order, into a fresh folder of its own
// (mkdtemp; every file created there with O_EXCL, so nothing planted is followed), removed when the run ends:
//  - records.bin: each document's full signature at slot * recordBytes (MinHash values, SimHash halves, the
//    hash of each band key), read back a bucket group at a time, in slot order, close slots in one read;
//  - band-<b>.bin: the hash of each document's key in band b, by slot (4 bytes a document), read a chunk at
//    a time (twice) to sort that band into buckets.
// Memory holds the write buffers, and nothing a document: its id is kept by the numbering, and its slot is
// its number while the two go together (the spill is the numbering's only writer during the scan, as when
// the ids are spilled too); only once they part does each slot's number take 8 bytes a document.
import os from 'node:os';
import path from 'node:path';
import { minhashValuesScratch } from '../../sketch/lean-minhash.js';
import type { Hash64 } from '../../sketch/simhash.js';
import { type DocIds, withRoomFor } from './doc-numbers.js';
import { keyHash, type SignatureFields, type StoredSignature } from './signature-store.js';
import { BAND_CHUNK, type SignatureTable } from './signature-table.js';
import { readAll, SpillFolder, writeAll } from './spill-folder.js';

const RECORD_BUFFER_BYTES = 4 * 1024 * 1024;
const BAND_BUFFER_VALUES = 16 * 1024;
/** Slots at most this far apart are read in one request (the bytes between them read and dropped). */
const MAX_GAP_SLOTS = 4;
const MAX_READ_BYTES = 1024 * 1024;

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
  /** The signatures of the last load, and where reads that skip a few slots land first. */
  private held = new Uint8Array(0);
  private readonly scratch = new Uint8Array(MAX_READ_BYTES + 64 * 1024);
  /** Where a band's hashes are read into, a chunk at a time. */
  private readonly bandChunk = new Uint32Array(BAND_CHUNK);

  /** `parent`: where the spill's own folder is made (default: the system's temporary folder). */
  constructor(
    parent: string = os.tmpdir(),
    private readonly documents?: DocIds,
  ) {
    this.folder = new SpillFolder(parent);
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
    return 4 * (this.width + 2 + this.bandCount);
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
    return this.add(id, minhashValuesScratch(fields.minhash), fields.bands.length, (k) => keyHash(fields.bands[k]), fields.simhash);
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
    const record = new Uint32Array(this.recordBuffer.buffer, this.recordBuffer.byteOffset + this.recordUsed, this.recordBytes / 4);
    record.set(values);
    record[this.width] = simhash.hi;
    record[this.width + 1] = simhash.lo;
    for (let k = 0; k < bandCount; k++) {
      const hash = bandHash(k);
      record[this.width + 2 + k] = hash;
      this.bandBuffers[k][this.bandUsed] = hash;
    }
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
    const bytes = this.recordBytes;
    // One buffer for every load, grown as needed: the signatures of a load are views of it, good until the
    // next (a new buffer a group would make the garbage collector's work grow with the loads).
    if (this.held.length < slots.length * bytes) this.held = new Uint8Array(Math.ceil(slots.length * 1.25) * bytes);
    const held = this.held;
    const scratch = this.scratch;
    for (let i = 0; i < slots.length; ) {
      let j = i + 1;
      while (j < slots.length && slots[j] - slots[j - 1] <= MAX_GAP_SLOTS && (slots[j] - slots[i] + 1) * bytes <= MAX_READ_BYTES) j++;
      const span = slots[j - 1] - slots[i] + 1;
      if (span === j - i) readAll(this.recordFile, held.subarray(i * bytes, j * bytes), slots[i] * bytes);
      else {
        readAll(this.recordFile, scratch.subarray(0, span * bytes), slots[i] * bytes);
        for (let k = i; k < j; k++) held.set(scratch.subarray((slots[k] - slots[i]) * bytes, (slots[k] - slots[i] + 1) * bytes), k * bytes);
      }
      i = j;
    }
    return (slot) => this.signatureAt(held, indexOf(slots, slot));
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
    const signatureOf = await this.load(slots);
    const found = new Map<string, StoredSignature>();
    for (const slot of slots) found.set(wanted.get(slot) as string, signatureOf(slot));
    return found;
  }

  private signatureAt(held: Uint8Array, i: number): StoredSignature {
    if (i < 0) throw new Error('a signature was asked for that was not loaded');
    const record = new Uint32Array(held.buffer, held.byteOffset + i * this.recordBytes, this.recordBytes / 4);
    return {
      values: record.subarray(0, this.width),
      simhash: { hi: record[this.width], lo: record[this.width + 1] },
      bands: new Int32Array(record.buffer, record.byteOffset + 4 * (this.width + 2), this.bandCount),
    };
  }

  /** Closes the files and removes the folder. */
  close(): void {
    this.recordFile = -1;
    this.bandFiles = [];
    this.folder.remove();
  }
}

/** Where `slot` is in the ascending `slots` (-1: not there). */
function indexOf(slots: Uint32Array, slot: number): number {
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
