// The union-find's rows (each document's set) and the best matches, past --max-cached-members documents in
// a verified pair: written by number into three files of the run's spill folder and let go, so that memory
// holds the rows met since the last write. set-roots.bin holds each document's root's number + 1 (0: never
// written), best-similarity.bin its best similarity (a 64-bit float), best-partner.bin that match's number
// + 1; a bit a document says which were written. A written document met again is read back, so the sets
// are those of every pair recorded. A write is one pass in order over the chunks that hold a row or a
// document whose root moved (16 bytes a document of the index, which the page cache holds).
import { familiesOf } from './doc-rows.js';
import { SlotBits } from '../spill/records-sweep.js';
import { type RecordFile, recordFile } from '../spill/record-file.js';
import { foldCheck, type SpillFolder } from '../spill/spill-folder.js';
import { plural } from '../../../plural.js';

/** Documents read or written at once in a pass over the files. */
const CHUNK_DOCS = 1 << 20;
/** The roots are counted in at most about this many blocks, which the families' ranges are made of. */
const ROOT_BLOCKS = 1 << 16;
/** The families are read in about this many ranges of roots at most (each larger than asked if need be). */
const MAX_RANGES = 256;
/** Documents and roots a range's buffer gathers before they are written to its part of the file. */
const DISTRIBUTE_PAIRS = 4096;

type Visit = (n: number, root: number) => void;

/** A range [from, to) of roots, and the members of their families. */
interface RootRange {
  from: number;
  to: number;
  members: number;
}

/** The range whose end is the first above `root` (ranges in order, `tos` their ends). */
function rangeOf(tos: Float64Array, root: number): number {
  let lo = 0;
  let hi = tos.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (tos[mid] > root) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
const NONE = new Int32Array(0);

/** The sets of two or more members, each ascending by number (in no order that results depend on). */
export interface Families extends Iterable<Int32Array> {
  readonly count: number;
}

/** The rows of the union-find, as written: each asked for by its place k among `numbers` (no other array as long as the rows is made). */
export interface WrittenSets {
  /** The numbers of the documents that have a row, ascending. */
  numbers: Int32Array;
  /** The number of the root of the k-th. */
  rootAt(k: number): number;
  /** The number of the root of a document that has a row, else -1. */
  rootNow(n: number): number;
}

/** Each row's best match, by its place k among `numbers`. */
export interface WrittenBest {
  numbers: Int32Array;
  similarityAt(k: number): number;
  /** The partner's number, -1 for none. */
  partnerAt(k: number): number;
  /** Whether a match (similarity, partner) is better than (than, thanPartner): the verifier's rule. */
  better(similarity: number, partner: number, than: number, thanPartner: number): boolean;
}

/** The sets and best matches written by document number to the spill, as the file header says. */
export class SetsOnDisk {
  private readonly roots: RecordFile;
  private readonly similarities: RecordFile;
  private readonly partners: RecordFile;
  /** A bit a document: written (as many slots as the files hold documents). */
  private readonly written = new SlotBits(0);
  /** The written roots that are not roots any more, found anew at each write. */
  private readonly moved = new SlotBits(0);
  private count = 0;
  /** Times the rows were written, and the milliseconds it took (for reports). */
  readonly writes = { count: 0, ms: 0 };
  private chunk?: { roots: Int32Array; similarities: Float64Array; partners: Int32Array };
  private readonly one = new ArrayBuffer(8);

  /** The families' members by range of roots, made when there is more than one (families()). */
  private familyMembers?: RecordFile;

  constructor(private readonly folder: SpillFolder) {
    this.roots = recordFile('set-roots.bin', folder, 0);
    this.similarities = recordFile('best-similarity.bin', folder, 0);
    this.partners = recordFile('best-partner.bin', folder, 0);
  }

  /** Documents written. */
  get size(): number {
    return this.count;
  }

  has(n: number): boolean {
    return this.written.has(n);
  }

  /** Documents the files hold (one past the largest number written). */
  private get extent(): number {
    return this.written.documents;
  }

  /** The number of the root of written document n's set, as last written. */
  rootOf(n: number): number {
    this.roots.read(4 * n, new Uint8Array(this.one, 0, 4));
    return this.checkedRoot(new Int32Array(this.one, 0, 1)[0] - 1);
  }

  /** Document n's best match as last written (similarity 0 and partner -1: none). */
  bestOf(n: number): { similarity: number; partner: number } {
    if (!this.has(n)) return { similarity: 0, partner: -1 };
    this.similarities.read(8 * n, new Uint8Array(this.one));
    const similarity = new Float64Array(this.one)[0];
    this.partners.read(4 * n, new Uint8Array(this.one, 0, 4));
    const partner = new Int32Array(this.one, 0, 1)[0] - 1;
    return { similarity: this.checkedSimilarity(similarity), partner: this.checkedPartner(partner) };
  }

  /**
   * The rows' sets written: each row's document gets its root, and every document written before under a
   * root that has moved since (its set joined another) gets the new root. Only the chunks that hold a row,
   * or a document that may move, are read; only those that change are written.
   */
  writeSets(sets: WrittenSets): void {
    const began = performance.now();
    const { numbers } = sets;
    this.cover(numbers.length > 0 ? numbers[numbers.length - 1] + 1 : 0);
    // The written roots that are not roots any more: only the documents under one of them move.
    const moved = this.moved;
    moved.clear();
    let anyMoved = false;
    numbers.forEach((n, k) => {
      if (!this.has(n) || sets.rootAt(k) === n) return;
      moved.add(n);
      anyMoved = true;
    });
    let k = 0;
    for (const [first, end] of this.chunksOf(numbers, anyMoved)) {
      const view = this.readChunk(this.roots, this.buffers().roots, first, end - first);
      let changed = false;
      this.written.forEachIn(first, end, (n) => {
        const was = view[n - first] - 1;
        if (!moved.has(was)) return;
        view[n - first] = sets.rootNow(was) + 1;
        changed = true;
      });
      while (k < numbers.length && numbers[k] < first) k++;
      for (; k < numbers.length && numbers[k] < end; k++, changed = true) view[numbers[k] - first] = sets.rootAt(k) + 1;
      if (changed) this.writeChunk(this.roots, view, first);
    }
    for (const n of numbers) {
      if (!this.has(n)) this.count++;
      this.written.add(n);
    }
    this.writes.count++;
    this.writes.ms += performance.now() - began;
  }

  /**
   * The rows' best matches written, each kept where it is better than the one written before (the
   * verifier's rule); only the chunks that hold a row are read and written.
   */
  writeBest(best: WrittenBest): void {
    const began = performance.now();
    const { numbers } = best;
    this.cover(numbers.length > 0 ? numbers[numbers.length - 1] + 1 : 0);
    let k = 0;
    for (const [first, end] of this.chunksOf(numbers, false)) {
      const similarities = this.readChunk(this.similarities, this.buffers().similarities, first, end - first);
      const partners = this.readChunk(this.partners, this.buffers().partners, first, end - first);
      while (k < numbers.length && numbers[k] < first) k++;
      for (; k < numbers.length && numbers[k] < end; k++) {
        const at = numbers[k] - first;
        const similarity = best.similarityAt(k);
        const partner = best.partnerAt(k);
        if (this.has(numbers[k]) && !best.better(similarity, partner, this.checkedSimilarity(similarities[at]), this.checkedPartner(partners[at] - 1))) continue;
        similarities[at] = similarity;
        partners[at] = partner + 1;
      }
      this.writeChunk(this.similarities, similarities, first);
      this.writeChunk(this.partners, partners, first);
    }
    this.writes.ms += performance.now() - began;
  }

  /**
   * The written documents' sets of two or more, each ascending, a range of roots at a time of about
   * `maxMembers` members at most (rootRanges). With several ranges, each document and its root are first
   * copied to its range's part of a file (distribute), so that a range reads only its own. Within a range,
   * in the order of their first member; their count checked as they are read.
   */
  families(maxMembers = Number.POSITIVE_INFINITY): Families {
    const { ranges, count } = this.rootRanges(Math.max(maxMembers, Math.ceil(this.count / MAX_RANGES)));
    const members = ranges.length > 1 ? this.distribute(ranges) : undefined;
    const visitRange = (r: number) => (members ? members(r) : (visit: Visit) => this.forEachWritten(visit));
    return {
      count,
      *[Symbol.iterator]() {
        let yielded = 0;
        for (const [r, { from, to }] of ranges.entries()) {
          const found = familiesOf(visitRange(r), from, to, changed);
          for (let f = 0; f < found.count; f++, yielded++) yield found.members.subarray(found.starts[f], found.starts[f + 1]);
        }
        if (yielded !== count) throw changed(`set of ${plural(count, 'family')} read as ${yielded}`);
      },
    };
  }

  /**
   * Ranges [from, to) of roots, consecutive, each of at most about `maxMembers` members (a block of roots with
   * more taken alone), from a pass that counts them by block; and the families (each root is a member of its own).
   */
  private rootRanges(maxMembers: number): { ranges: RootRange[]; count: number } {
    const blockSize = 2 ** Math.max(0, Math.ceil(Math.log2(Math.max(1, this.extent) / ROOT_BLOCKS)));
    const perBlock = new Float64Array(Math.floor(this.extent / blockSize) + 1);
    let count = 0;
    this.forEachWritten((n, root) => {
      perBlock[Math.floor(root / blockSize)]++;
      if (n === root) count++;
    });
    const ranges: RootRange[] = [];
    let from = 0;
    let members = 0;
    for (let block = 0; block < perBlock.length; block++) {
      if (members > 0 && members + perBlock[block] > maxMembers) {
        ranges.push({ from, to: block * blockSize, members });
        from = block * blockSize;
        members = 0;
      }
      members += perBlock[block];
    }
    if (members > 0) ranges.push({ from, to: this.extent, members });
    return { ranges, count };
  }

  /** Every written document and its root copied in one pass to its range's part of family-members.bin; each range's members read back. */
  private distribute(ranges: readonly RootRange[]): (r: number) => (visit: Visit) => void {
    this.familyMembers ??= recordFile('family-members.bin', this.folder, 0);
    const file = this.familyMembers;
    const starts = new Float64Array(ranges.length + 1);
    for (let r = 0; r < ranges.length; r++) starts[r + 1] = starts[r] + ranges[r].members;
    const written = starts.slice(0, ranges.length);
    const buffers = ranges.map(() => ({ pairs: new Int32Array(2 * DISTRIBUTE_PAIRS), used: 0 }));
    const flush = (r: number) => {
      const { pairs, used } = buffers[r];
      if (written[r] + used / 2 > starts[r + 1]) throw changed(`set root in range ${r} (read again)`);
      file.write(8 * written[r], new Uint8Array(pairs.buffer, 0, 4 * used));
      written[r] += used / 2;
      buffers[r].used = 0;
    };
    const tos = Float64Array.from(ranges, (range) => range.to);
    // A check of each range's part, kept here: what is read back is what was written.
    const checks = new Uint32Array(ranges.length);
    this.forEachWritten((n, root) => {
      const r = rangeOf(tos, root);
      const buffer = buffers[r];
      buffer.pairs[buffer.used++] = n;
      buffer.pairs[buffer.used++] = root;
      checks[r] = foldCheck(foldCheck(checks[r], n), root);
      if (buffer.used === buffer.pairs.length) flush(r);
    });
    ranges.forEach((_, r) => {
      flush(r);
      if (written[r] !== starts[r + 1]) throw changed(`set root in range ${r} (read again)`);
    });
    return (r) => {
      let pairs: Int32Array | undefined; // (read once, for the two passes of familiesIn)
      return (visit) => {
        if (!pairs) {
          pairs = new Int32Array(2 * ranges[r].members);
          file.read(8 * starts[r], new Uint8Array(pairs.buffer));
          let check = 0;
          for (let k = 0; k < pairs.length; k += 2) check = foldCheck(foldCheck(check, pairs[k]), pairs[k + 1]);
          if (check !== checks[r]) throw changed(`family member in range ${r} of its roots`);
        }
        for (let k = 0; k < pairs.length; k += 2) visit(pairs[k], pairs[k + 1]);
      };
    };
  }

  /** The written documents with a best similarity above 0, ascending. */
  *involved(): Generator<number> {
    for (const [first, end] of this.chunksOf(NONE, true)) {
      const view = this.readChunk(this.similarities, this.buffers().similarities, first, end - first);
      const found: number[] = [];
      this.written.forEachIn(first, end, (n) => {
        if (this.checkedSimilarity(view[n - first]) > 0) found.push(n);
      });
      yield* found;
    }
  }

  /** Calls visit(n, root) for every written document, in ascending numbers. */
  private forEachWritten(visit: (n: number, root: number) => void): void {
    for (const [first, end] of this.chunksOf(NONE, true)) {
      const view = this.readChunk(this.roots, this.buffers().roots, first, end - first);
      this.written.forEachIn(first, end, (n) => visit(n, this.checkedRoot(view[n - first] - 1)));
    }
  }

  /** The chunks [first, end) that hold one of `numbers` (ascending), or, with `written`, a document written. */
  private *chunksOf(numbers: Int32Array, written: boolean): Generator<[number, number]> {
    let k = 0;
    for (let first = 0; first < this.extent; first += CHUNK_DOCS) {
      const end = Math.min(this.extent, first + CHUNK_DOCS);
      while (k < numbers.length && numbers[k] < first) k++;
      if ((k < numbers.length && numbers[k] < end) || (written && this.written.anyIn(first, end))) yield [first, end];
    }
  }

  private writeChunk(file: RecordFile, view: Int32Array | Float64Array, first: number): void {
    file.write(view.BYTES_PER_ELEMENT * first, new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
  }

  /** A chunk of a file read into the start of `buffer` (one of this.buffers()). */
  private readChunk<T extends Int32Array | Float64Array>(file: RecordFile, buffer: T, first: number, length: number): T {
    const view = buffer.subarray(0, length) as T;
    file.read(view.BYTES_PER_ELEMENT * first, new Uint8Array(view.buffer, view.byteOffset, view.byteLength));
    return view;
  }

  /** The buffers the passes read into, made once (16 MB), so that writing the rows again and again makes no garbage. */
  private buffers(): { roots: Int32Array; similarities: Float64Array; partners: Int32Array } {
    this.chunk ??= { roots: new Int32Array(CHUNK_DOCS), similarities: new Float64Array(CHUNK_DOCS), partners: new Int32Array(CHUNK_DOCS) };
    return this.chunk;
  }

  /** A root read back: a document written (what dedup wrote there), else the file was changed under it. */
  private checkedRoot(root: number): number {
    if (!this.has(root)) throw changed(`set root ${root}`);
    return root;
  }

  /** A best similarity read back, within [0, 1]. */
  private checkedSimilarity(similarity: number): number {
    if (!(similarity >= 0 && similarity <= 1)) throw changed(`best similarity ${similarity}`);
    return similarity;
  }

  /** A best partner read back: none (-1) or a document written. */
  private checkedPartner(partner: number): number {
    if (partner !== -1 && !this.has(partner)) throw changed(`best partner ${partner}`);
    return partner;
  }

  /** The files made long enough for documents 0..documents-1 (the new part reads as zeros: nothing written). */
  private cover(documents: number): void {
    if (documents <= this.extent) return;
    this.roots.truncate(4 * documents);
    this.similarities.truncate(8 * documents);
    this.partners.truncate(4 * documents);
    this.written.grow(documents);
    this.moved.grow(documents);
  }
}

/** The error for a value read back that dedup did not write. */
function changed(what: string): Error {
  return new Error(`a file dedup spilled holds a ${what} it never wrote: its folder was changed while dedup ran; run dedup again`);
}
