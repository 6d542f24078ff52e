// The clusters a dedup run cut, kept compact until they are written: each a record of its members' document
// numbers and similarities to the canonical, one after another in the order cut in a record file (on disk
// when the run spills its ids), made whole (its members' ids read from the numbering) only as it is handed
// out. Memory holds the counts of clusters by size and nothing a cluster: a hundred million documents with a
// seventh of them in clusters would otherwise hold fourteen million ids and a Map entry each, several
// gigabytes, from the cut to the end of the write-back. The largest clusters (the summary's) are picked in
// one pass over the records. Every record read back is checked (a number the run has, a similarity in
// [0, 1], the canonical's own similarity 1, a check of its members): a damaged or changed file is said,
// never written into the index.
import type { DocIds } from '../documents/doc-numbers.js';
import { plural } from '../../../plural.js';
import { type RecordFile, recordFile } from '../spill/record-file.js';
import { foldCheck } from '../spill/spill-folder.js';
import type { SpillFolder } from '../spill/spill-folder.js';

/** A cluster as dedup writes it: its canonical, its members by id and each one's similarity to the canonical. */
export interface DedupCluster {
  /** The canonical's id. */
  id: string;
  canonical: string;
  /** Sorted by id. */
  members: string[];
  /** Each duplicate's estimated Jaccard to the canonical (the canonical's own is 1). */
  similarity: Map<string, number>;
  /** The family it was cut from, named by the family's first member in the --canonical order. */
  family: string;
  /** Each member's number in the run's numbering, beside `members` (when the list knows them). */
  numbers?: Int32Array;
  /** Where the list keeps it (ClusterList.at). */
  place?: number;
}

/** Canonicals whose ids are read at once while the largest clusters are picked. */
const PICK_CHUNK = 1 << 16;

/**
 * The clusters a run cut, as compact records until each is handed out whole in the order cut (the file header says why
 * not as objects).
 */
export class ClusterList implements Iterable<DedupCluster> {
  private count = 0;
  private members = 0;
  /** Clusters by size. */
  private readonly sizes = new Map<number, number>();

  private readonly log: ClusterLog;

  /** `spill`: where the records go when the run spills its ids (else memory). */
  constructor(
    private readonly documents: DocIds,
    spill?: SpillFolder,
  ) {
    this.log = new ClusterLog(recordFile('clusters.bin', spill), () => documents.size);
  }

  get length(): number {
    return this.count;
  }

  /** Members in every cluster. */
  get memberCount(): number {
    return this.members;
  }

  /** The members of the largest cluster (0: none). */
  get largestSize(): number {
    return Math.max(0, ...this.sizes.keys());
  }

  /** A cluster as the cut made it, `numberOf` giving each member's number. */
  add(cluster: DedupCluster, numberOf: (id: string) => number): void {
    const numbers = Int32Array.from(cluster.members, (id) => wholeNumber(numberOf(id), id));
    const canonicalAt = cluster.members.indexOf(cluster.canonical);
    if (canonicalAt < 0) throw new Error(`cluster ${cluster.canonical}: its canonical is not among its members`);
    const similarities = Float64Array.from(cluster.members, (id) => cluster.similarity.get(id) ?? 1);
    this.log.append({ canonicalAt, family: wholeNumber(numberOf(cluster.family), cluster.family), numbers, similarities });
    this.count++;
    this.members += numbers.length;
    this.sizes.set(numbers.length, (this.sizes.get(numbers.length) ?? 0) + 1);
  }

  /** The cluster kept at `place` (a DedupCluster's), made whole. */
  at(place: number): DedupCluster {
    return this.whole(this.log.at(place));
  }

  /** Every cluster in the order cut, each made whole as it is handed out. */
  *[Symbol.iterator](): Iterator<DedupCluster> {
    for (const record of this.log.records()) yield this.whole(record);
  }

  /**
   * The k largest clusters, then by their canonical's id: those larger than the k-th's size all, and of its
   * size those with the smallest canonical ids, found in one pass with their ids read a chunk at a time.
   */
  top(k: number): DedupCluster[] {
    const edge = this.edgeSize(k);
    const larger: Canonical[] = [];
    let atEdge: Array<{ place: number; id: string }> = [];
    let pending: Canonical[] = [];
    const settle = () => {
      // Of the k-th's size, those with the smallest canonical ids.
      atEdge = [...atEdge, ...this.named(pending)].sort((a, b) => compareIds(a.id, b.id)).slice(0, Math.max(0, k - larger.length));
      pending = [];
    };
    for (const record of this.log.records()) {
      const size = record.numbers.length;
      const canonical = { place: record.place, n: record.numbers[record.canonicalAt] };
      if (size > edge) larger.push(canonical);
      else if (size === edge) pending.push(canonical);
      if (pending.length >= PICK_CHUNK) settle();
    }
    settle();
    const picked = [...this.named(larger), ...atEdge].map(({ place }) => this.at(place));
    return picked.sort((a, b) => b.members.length - a.members.length || compareIds(a.canonical, b.canonical)).slice(0, k);
  }

  /** Every duplicate's similarity to its canonical (the canonicals' own left out), in the order cut. */
  *duplicateSimilarities(): Generator<number> {
    for (const { similarities, canonicalAt } of this.log.records()) {
      for (let k = 0; k < similarities.length; k++) if (k !== canonicalAt) yield similarities[k];
    }
  }

  /** The least and the median similarity of the duplicates to their canonicals, and how many are below the bar. */
  spread(bar: number): { min: number | null; median: number | null; belowMinSimilarity: number } {
    // Counted by value: a MinHash estimate takes one of a few hundred values, however many duplicates there are.
    const counts = new Map<number, number>();
    let total = 0;
    for (const s of this.duplicateSimilarities()) {
      counts.set(s, (counts.get(s) ?? 0) + 1);
      total++;
    }
    const values = Float64Array.from(counts.keys()).sort();
    let belowMinSimilarity = 0;
    let seen = 0;
    let median: number | null = null;
    for (const s of values) {
      if (s < bar) belowMinSimilarity += counts.get(s)!;
      seen += counts.get(s)!;
      // (The value at place total / 2, rounded down, of them all sorted.)
      if (median === null && seen > Math.floor(total / 2)) median = s;
    }
    return { min: total === 0 ? null : values[0], median, belowMinSimilarity };
  }

  /** The size of the k-th largest cluster (the smallest size when there are k or fewer). */
  private edgeSize(k: number): number {
    const sizes = [...this.sizes.keys()].sort((a, b) => b - a);
    let above = 0;
    for (const size of sizes) {
      above += this.sizes.get(size)!;
      if (above >= k) return size;
    }
    return sizes.length > 0 ? sizes[sizes.length - 1] : 0;
  }

  /** These clusters' places with their canonicals' ids (read in ascending numbers). */
  private named(canonicals: readonly Canonical[]): Array<{ place: number; id: string }> {
    const byNumber = [...canonicals].sort((a, b) => a.n - b.n);
    const ids = this.documents.idsOf(Int32Array.from(byNumber, (c) => c.n));
    return byNumber.map((c, i) => ({ place: c.place, id: ids[i] }));
  }

  private whole(record: ClusterRecord): DedupCluster {
    const { numbers, similarities, canonicalAt, family, place } = record;
    const members = this.documents.idsOf(numbers);
    const canonical = members[canonicalAt];
    const similarity = new Map(members.map((id, k) => [id, similarities[k]]));
    return { id: canonical, canonical, members, similarity, family: family === numbers[canonicalAt] ? canonical : this.documents.idOf(family), numbers, place };
  }
}

/** A cluster's place and its canonical's number. */
interface Canonical {
  place: number;
  n: number;
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function wholeNumber(n: number, id: string): number {
  if (!Number.isInteger(n) || n < 0) throw new Error(`cluster member ${id} has no number in the run's numbering`);
  return n;
}

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

/** The clusters' records one after another in a record file, each checked as it is read back. */
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
