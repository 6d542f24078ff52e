// The pairs the final step of a split dedup gathers from the shares, kept each once (final-pairs.ts), a part
// at a time when there are more than memory is given for. Held in memory, a pair takes about 45 bytes: a
// hundred million pairs, 4.5 GB. So when the run spills (its ids on disk), the pairs the shares' markers
// announce are split into parts of about `maxPairs`: each pair goes, by a hash of its two numbers, to its
// part's file in the spill folder (24 bytes a pair), so that every copy of a pair lands in the same part;
// once every page is read, each part is read back into a PairList of its own (its file then emptied) and
// handed out, checked and recorded before the next one is read. A part read back is held to a check of what
// was written to it. The parts are not begun without room for them on the disk.
//
// Input: the pairs as the pages give them (numbers, similarity, distance, page); output: the parts, each
// with its pairs once and the copies that disagree with them, and the counts of all.
import { hashOf, PairList } from './final-pairs.js';
import { checkOf, type RecordFile, recordFile } from '../spill/record-file.js';
import { freeBytes, gigabytes, type SpillFolder, spillRoom, spillTooLarge } from '../spill/spill-folder.js';
import { forCount } from '../../../plural.js';

/** Parts at most (each with a write buffer while the pages are read). */
const MAX_PARTS = 256;
/** Bytes a pair takes in a part's file: a, b, page (4 each), hamming (1, then 3 unused), jaccard (8). */
const PAIR_BYTES = 24;
/** Pairs a part's file is written and read a block at a time. */
const BLOCK_PAIRS = 2048;

/** A pair by its numbers, with the page it came from (a copy given again with another similarity or distance by another share is checked, not recorded). */
export interface PagedPair {
  na: number;
  nb: number;
  jaccard: number;
  hamming: number;
  page: number;
}

/** One part of the pairs: each once, and the copies that disagree with them. */
export interface PairPart {
  pairs: PairList;
  copies: PagedPair[];
}

/** Where the pairs are split when there are many: the spill's folder, and the pairs a part holds. */
export interface PairSpill {
  folder: SpillFolder;
  maxPairs: number;
}

/**
 * The gathered pairs in memory, or past `maxPairs` split by a hash of the pair into parts on the spill, each read back,
 * checked and handed out before the next (the file header says why).
 */
export class PairParts {
  private readonly memory?: PairPart;
  private readonly files: PartFile[] = [];
  /** Distinct pairs and copies dropped (the same pair again), counted as the parts are handed out. */
  count = 0;
  duplicates = 0;

  /** `expected`: the pairs the shares' markers announce; more than `spill.maxPairs` of them are split into parts on disk. */
  constructor(expected: number, spill?: PairSpill) {
    const parts = spill ? Math.min(MAX_PARTS, Math.ceil(expected / Math.max(1, spill.maxPairs))) : 1;
    if (!spill || parts <= 1) {
      this.memory = { pairs: new PairList(), copies: [] };
      return;
    }
    requireRoom(spill.folder.path, expected);
    for (let k = 0; k < parts; k++) this.files.push(new PartFile(spill.folder, k));
  }

  /** Parts the pairs are split into (1: in memory). */
  get partCount(): number {
    return this.memory ? 1 : this.files.length;
  }

  /** A pair as a page gives it (numbers in either order). */
  add(x: number, y: number, jaccard: number, hamming: number, page: number): void {
    const [a, b] = x < y ? [x, y] : [y, x];
    if (this.memory) keep(this.memory, a, b, jaccard, hamming, page);
    // (The part by the hash's high bits: each part's table places its pairs by the low ones.)
    else this.files[Math.floor(((hashOf(a, b) >>> 0) / 2 ** 32) * this.files.length)].add(a, b, jaccard, hamming, page);
  }

  /** Each part in turn, its pairs once; the counts grow as they come. */
  *parts(): Generator<PairPart> {
    if (this.memory) {
      this.counted(this.memory);
      yield this.memory;
      return;
    }
    for (const file of this.files) file.flush();
    for (const file of this.files) {
      const part: PairPart = { pairs: new PairList(), copies: [] };
      file.readBack((a, b, jaccard, hamming, page) => keep(part, a, b, jaccard, hamming, page));
      file.empty();
      this.counted(part);
      yield part;
    }
  }

  private counted(part: PairPart): void {
    this.count += part.pairs.count;
    this.duplicates += part.pairs.duplicates;
  }
}

/** Refuses, naming the sizes and the way out, when the parts of `expected` pairs would not leave room on the disk of `folder`. */
function requireRoom(folder: string, expected: number): void {
  const needs = expected * PAIR_BYTES;
  const free = freeBytes(folder);
  if (needs <= spillRoom(folder, free)) return;
  throw spillTooLarge({
    spill: `the final step would spill the ${expected.toLocaleString('en')} ${forCount(expected, 'pair')} the shares announce to ${folder}`,
    needs: gigabytes(needs),
    free,
    limit: 'limits.maxCachedMembers',
    cost: 'about 45 bytes a pair',
  });
}

/** A pair added to a part: kept once, a copy that disagrees kept aside. */
function keep(part: PairPart, a: number, b: number, jaccard: number, hamming: number, page: number): void {
  const added = part.pairs.add(a, b, jaccard, hamming, page);
  if (typeof added === 'object') part.copies.push({ na: a, nb: b, jaccard, hamming, page });
}

/** One part's file: pairs appended a block at a time, with a check of every value written. */
class PartFile {
  private readonly file: RecordFile;
  private readonly name: string;
  private readonly block = new ArrayBuffer(BLOCK_PAIRS * PAIR_BYTES);
  private readonly ints = new Int32Array(this.block);
  private readonly floats = new Float64Array(this.block);
  private readonly bytes = new Uint8Array(this.block);
  private used = 0;
  private check = 0;

  constructor(folder: SpillFolder, k: number) {
    this.name = `pairs-part-${k}.bin`;
    this.file = recordFile(this.name, folder, 0);
  }

  add(a: number, b: number, jaccard: number, hamming: number, page: number): void {
    const i = this.used++;
    this.ints[6 * i] = a;
    this.ints[6 * i + 1] = b;
    this.ints[6 * i + 2] = page;
    this.ints[6 * i + 3] = hamming & 0xff;
    this.floats[3 * i + 2] = jaccard;
    this.check = checkOf(this.ints.subarray(6 * i, 6 * i + 6), this.check);
    if (this.used === BLOCK_PAIRS) this.flush();
  }

  flush(): void {
    this.file.append(this.bytes.subarray(0, this.used * PAIR_BYTES));
    this.used = 0;
  }

  /** Every pair written, in order, held to the check of what was written. */
  readBack(visit: (a: number, b: number, jaccard: number, hamming: number, page: number) => void): void {
    let check = 0;
    const written = this.file.length / PAIR_BYTES;
    for (let first = 0; first < written; first += BLOCK_PAIRS) {
      const count = Math.min(BLOCK_PAIRS, written - first);
      this.file.read(first * PAIR_BYTES, this.bytes.subarray(0, count * PAIR_BYTES));
      for (let i = 0; i < count; i++) {
        check = checkOf(this.ints.subarray(6 * i, 6 * i + 6), check);
        visit(this.ints[6 * i], this.ints[6 * i + 1], this.floats[3 * i + 2], this.ints[6 * i + 3], this.ints[6 * i + 2]);
      }
    }
    if (check !== this.check) throw new Error(`the pairs read back from ${this.name} are not those written: dedup's spill folder was changed while it ran`);
  }

  /** Lets the disk have its room back once the part is read (the file stays, empty, until the folder goes). */
  empty(): void {
    this.file.truncate();
  }
}
