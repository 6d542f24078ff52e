// The clusters a dedup run cut (cluster-list.ts), one record after another in the order cut: a header (the
// cluster's size, its canonical's place among its members, its family's first member by number, a check of
// the members) then each member's document number and its similarity to the canonical, in a record file
// (spill/record-file.ts: on disk when the run spills its ids, so that the clusters of a hundred million
// documents hold no memory). Input: clusters appended; output: the records in order (read a chunk
// at a time) or one at its place. Every record read back is checked (a number the run has, a similarity in
// [0, 1], the canonical's own similarity 1, the check of its members): a damaged or changed file is said,
// never written into the index.
import type { RecordFile } from '../spill/record-file.js';
import { foldCheck } from '../spill/spill-folder.js';
import { plural } from '../../../plural.js';

/** A cluster as stored: its place (where its record starts), its members by number and their similarities. */
export interface ClusterRecord {
  place: number;
  /** The canonical, as an index among the members. */
  canonicalAt: number;
  /** The family's first member in the --canonical order, by number. */
  family: number;
  numbers: Int32Array;
  similarities: Float64Array;
}

const HEADER_BYTES = 16;
const MEMBER_BYTES = 12;
/** Bytes read at once when the records are gone through in order. */
const READ_BYTES = 1 << 20;

/**
 * The clusters' records one after another in a record file, each checked as it is read back, so that a damaged file is
 * said rather than written into the index.
 */
export class ClusterLog {
  /** `documents`: how many documents the run numbered (every number read back is below). */
  constructor(
    private readonly bytes: RecordFile,
    private readonly documents: () => number,
  ) {}

  /** Appends a cluster's record; its place. */
  append(cluster: Omit<ClusterRecord, 'place'>): number {
    const size = cluster.numbers.length;
    const record = new DataView(new ArrayBuffer(HEADER_BYTES + MEMBER_BYTES * size));
    record.setUint32(0, size, true);
    record.setUint32(4, cluster.canonicalAt, true);
    record.setInt32(8, cluster.family, true);
    record.setUint32(12, checkOf(cluster), true);
    for (let k = 0; k < size; k++) {
      record.setInt32(HEADER_BYTES + 4 * k, cluster.numbers[k], true);
      record.setFloat64(HEADER_BYTES + 4 * size + 8 * k, cluster.similarities[k], true);
    }
    return this.bytes.append(new Uint8Array(record.buffer));
  }

  /** The record at `place`. */
  at(place: number): ClusterRecord {
    const header = new DataView(new ArrayBuffer(HEADER_BYTES));
    this.bytes.read(place, new Uint8Array(header.buffer));
    const whole = new DataView(new ArrayBuffer(this.recordBytes(header, 0, place)));
    this.bytes.read(place, new Uint8Array(whole.buffer));
    return this.parsed(whole, 0, place);
  }

  /** Every record, in the order appended, read a chunk at a time. */
  *records(): Generator<ClusterRecord> {
    let chunk = new DataView(new ArrayBuffer(Math.min(READ_BYTES, this.bytes.length)));
    let first = 0; // the place of chunk's first byte
    let filled = 0;
    for (let place = 0; place < this.bytes.length; ) {
      if (place + HEADER_BYTES > first + filled || place + this.recordBytes(chunk, place - first, place) > first + filled) {
        // Read again from this record: a chunk's worth, or the whole record when it is larger.
        first = place;
        const wanted = Math.min(this.bytes.length - place, READ_BYTES);
        const header = new DataView(new ArrayBuffer(HEADER_BYTES));
        this.bytes.read(place, new Uint8Array(header.buffer));
        const length = Math.max(wanted, this.recordBytes(header, 0, place));
        if (chunk.byteLength < length) chunk = new DataView(new ArrayBuffer(length));
        this.bytes.read(place, new Uint8Array(chunk.buffer, 0, length));
        filled = length;
      }
      const record = this.parsed(chunk, place - first, place);
      place += HEADER_BYTES + MEMBER_BYTES * record.numbers.length;
      yield record;
    }
  }

  /** The bytes of the record whose header is at `at` in `view`, checked to lie within what was appended. */
  private recordBytes(view: DataView, at: number, place: number): number {
    if (at + HEADER_BYTES > view.byteLength) return Number.POSITIVE_INFINITY;
    const size = view.getUint32(at, true);
    const bytes = HEADER_BYTES + MEMBER_BYTES * size;
    if (size < 2 || place + bytes > this.bytes.length) throw changed(`a cluster of ${plural(size, 'member')} at ${place}, which it never wrote`);
    return bytes;
  }

  private parsed(view: DataView, at: number, place: number): ClusterRecord {
    const size = view.getUint32(at, true);
    const canonicalAt = view.getUint32(at + 4, true);
    const family = view.getInt32(at + 8, true);
    const documents = this.documents();
    const numbers = new Int32Array(size);
    const similarities = new Float64Array(size);
    for (let k = 0; k < size; k++) {
      numbers[k] = view.getInt32(at + HEADER_BYTES + 4 * k, true);
      similarities[k] = view.getFloat64(at + HEADER_BYTES + 4 * size + 8 * k, true);
      if (!(numbers[k] >= 0 && numbers[k] < documents)) throw changed(`a document number ${numbers[k]} it never wrote`);
      if (!(similarities[k] >= 0 && similarities[k] <= 1)) throw changed(`a similarity ${similarities[k]} it never wrote`);
    }
    if (canonicalAt >= size || similarities[canonicalAt] !== 1 || !(family >= 0 && family < documents) || view.getUint32(at + 12, true) !== checkOf({ numbers, similarities, canonicalAt, family })) {
      throw changed(`a cluster at ${place} whose members do not match its check`);
    }
    return { place, canonicalAt, family, numbers, similarities };
  }
}

/** A check of a cluster's members, their similarities, its canonical and family (a multiply-rotate hash over them). */
function checkOf({ numbers, similarities, canonicalAt, family }: Omit<ClusterRecord, 'place'>): number {
  const halves = new Uint32Array(Float64Array.from(similarities).buffer);
  let h = Math.imul(0x9e3779b9 ^ numbers.length, 0x85ebca6b) ^ canonicalAt;
  for (let k = 0; k < numbers.length; k++) h = foldCheck(foldCheck(foldCheck(h, numbers[k]), halves[2 * k]), halves[2 * k + 1]);
  return (Math.imul(h ^ family, 0x1b873593) ^ (h >>> 13)) >>> 0;
}

function changed(what: string): Error {
  return new Error(`the clusters' file dedup spilled holds ${what}: its folder was changed while dedup ran; run dedup again`);
}
