// Every signature of an index in a few flat arrays, for the full pass that holds them all: the MinHash
// values of document i at [i * width, (i + 1) * width), its band-key hashes and its SimHash (two 32-bit
// halves) likewise, its id in an array of strings. About 620 bytes a document for 128 values and 26
// bands, against about 1 KB as separate objects; a document read from the index is decoded straight into
// them, and a signature handed out is a view into the arrays.
import { parseSimhash } from '../../../sketch/simhash-doc.js';
import { type DocIds, enlarged, withRoomFor } from '../documents/doc-numbers.js';
import { fieldValues, keyHash, type SignatureFields, type StoredSignature } from '../documents/signature-store.js';

/**
 * Every signature of an index held in memory in a few flat arrays (the file header gives the layout): the table of a
 * whole-index pass whose documents fit --max-cached-signatures.
 */
export class SignaturePool {
  readonly ids: string[] = [];
  private values = new Uint32Array(0);
  private simhashes = new Uint32Array(0);
  private bands = new Int32Array(0);
  private width = 0;
  /** Band keys per document. */
  bandCount = 0;
  /** Documents whose signature had another length than the first one's (other params): left out. */
  leftOut = 0;

  /** Each document's slot + 1, by its number (0: not here), when the pool is given the numbering. */
  private slots = new Int32Array(0);
  /** Each slot's document number, when the pool is given the numbering. */
  private numbers = new Int32Array(0);

  /**
   * `expected`: how many documents will be added (the arrays grow past it if need be); `documents`: the
   * numbering to find a signature by id with (4 bytes a document), when it is to be found again.
   */
  constructor(
    private readonly expected: number,
    private readonly documents?: DocIds,
  ) {}

  /** The numbering the pool was given, if any. */
  get numbering(): DocIds | undefined {
    return this.documents;
  }

  /** Slot i's document number in that numbering. */
  numberAt(i: number): number {
    return this.numbers[i];
  }

  /** A document's signature by id (a view into the arrays), when the pool was given the numbering. */
  find(id: string): StoredSignature | undefined {
    const n = this.documents?.find(id);
    const slot = n === undefined || n >= this.slots.length ? 0 : this.slots[n];
    return slot > 0 ? this.signature(slot - 1) : undefined;
  }

  /** Whether the document was added (only known with a numbering). */
  holds(id: string): boolean {
    return this.find(id) !== undefined;
  }

  get size(): number {
    return this.ids.length;
  }

  add(id: string, signature: StoredSignature): void {
    const { hi, lo } = typeof signature.simhash === 'string' ? parseSimhash(signature.simhash) : signature.simhash;
    const i = this.slotFor(id, signature.values, signature.bands.length);
    if (i !== undefined) {
      this.bands.set(signature.bands, i * this.bandCount);
      this.simhashes[2 * i] = hi;
      this.simhashes[2 * i + 1] = lo;
    }
  }

  /** A document from its stored fields, decoded straight into the arrays (no signature object made): its number (-1: left out). */
  addFields(id: string, fields: SignatureFields): number {
    const i = this.slotFor(id, fieldValues(fields, true), fields.bands.length);
    if (i === undefined) return -1;
    for (let k = 0; k < fields.bands.length; k++) this.bands[i * this.bandCount + k] = keyHash(fields.bands[k]);
    const { hi, lo } = fields.simhash;
    this.simhashes[2 * i] = hi;
    this.simhashes[2 * i + 1] = lo;
    return this.documents ? this.numbers[i] : i;
  }

  /** The next document's number, its values copied in; undefined (left out) when its shape is not the first one's. */
  private slotFor(id: string, values: Uint32Array, bandCount: number): number | undefined {
    if (this.size === 0) this.shape(values.length, bandCount);
    if (values.length !== this.width || bandCount !== this.bandCount) {
      this.leftOut++;
      return undefined;
    }
    const i = this.size;
    if ((i + 1) * this.width > this.values.length) this.grow();
    this.values.set(values, i * this.width);
    this.ids.push(id);
    if (this.documents) {
      const n = this.documents.numberOf(id);
      this.slots = withRoomFor(this.slots, n);
      this.slots[n] = i + 1;
      this.numbers = withRoomFor(this.numbers, i);
      this.numbers[i] = n;
    }
    return i;
  }

  /** Document i's hash of its key in `band`. */
  bandHash(i: number, band: number): number {
    return this.bands[i * this.bandCount + band];
  }

  signature(i: number): StoredSignature {
    return {
      values: this.values.subarray(i * this.width, (i + 1) * this.width),
      simhash: { hi: this.simhashes[2 * i], lo: this.simhashes[2 * i + 1] },
      bands: this.bands.subarray(i * this.bandCount, (i + 1) * this.bandCount),
    };
  }

  private shape(width: number, bandCount: number): void {
    this.width = width;
    this.bandCount = bandCount;
    this.values = new Uint32Array(Math.max(1, this.expected) * this.width);
    this.bands = new Int32Array(Math.max(1, this.expected) * this.bandCount);
    this.simhashes = new Uint32Array(Math.max(1, this.expected) * 2);
  }

  private grow(): void {
    const capacity = Math.ceil((this.values.length / this.width) * 1.25) + 1;
    this.values = enlarged(this.values, capacity * this.width);
    this.bands = enlarged(this.bands, capacity * this.bandCount);
    this.simhashes = enlarged(this.simhashes, capacity * 2);
  }
}
