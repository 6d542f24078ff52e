// The pairs the final step gathers from the shares, by document number, each kept once: a pair two shares
// both found is counted, a copy that disagrees about its similarity kept aside to be checked. In memory a pair
// takes about 45 bytes (a hundred million, 4.5 GB), so a run that spills splits them by a hash of the pair into
// parts on its disk (24 bytes a pair, every copy of a pair in the same part), each read back, held to a check
// of what was written, and handed out before the next.
import { enlarged, mixed } from '../documents/doc-numbers.js';
import { checkOf, type RecordFile, recordFile } from '../spill/record-file.js';
import { freeBytes, gigabytes, type SpillFolder, spillRoom, spillTooLarge } from '../spill/spill-folder.js';
import { forCount } from '../../../plural.js';

/** Parts at most (each with a write buffer while the pages are read). */
const MAX_PARTS = 256;
/** Bytes a pair takes in a part's file: a, b, page (4 each), hamming (1, then 3 unused), jaccard (8). */
const PAIR_BYTES = 24;
/** Pairs a part's file is written and read a block at a time. */
const BLOCK_PAIRS = 2048;

/** The pairs by document number, each kept once, in typed columns (no object a pair). */
export class PairList {
  na = new Int32Array(1024);
  nb = new Int32Array(1024);
  jaccard = new Float64Array(1024);
  hamming = new Uint8Array(1024);
  /** Each pair's page, as a place in the caller's list of pages (to name it when a check fails). */
  page = new Int32Array(1024);
  count = 0;
  /** Pairs given again (the same documents, the same similarity and distance). */
  duplicates = 0;
  /** Index + 1 of each pair in its place (0: empty); a power of two, at most half full. */
  private table = new Int32Array(4096);

  /**
   * Adds a pair (numbers in either order): 'added', 'duplicate' (the same pair again, dropped), or the
   * place of the pair it disagrees with (the same documents, another similarity or distance).
   */
  add(x: number, y: number, jaccard: number, hamming: number, page: number): 'added' | 'duplicate' | { disagrees: number } {
    const [a, b] = x < y ? [x, y] : [y, x];
    const place = this.placeOf(a, b);
    const found = this.table[place] - 1;
    if (found >= 0) {
      if (this.jaccard[found] !== jaccard || this.hamming[found] !== hamming) return { disagrees: found };
      this.duplicates++;
      return 'duplicate';
    }
    if (this.count === this.na.length) this.grow(this.count * 2);
    const i = this.count++;
    this.na[i] = a;
    this.nb[i] = b;
    this.jaccard[i] = jaccard;
    this.hamming[i] = hamming;
    this.page[i] = page;
    this.table[place] = this.count;
    if (this.count * 2 > this.table.length) this.rehash();
    return 'added';
  }

  private grow(length: number): void {
    [this.na, this.nb, this.jaccard, this.page, this.hamming] = [enlarged(this.na, length), enlarged(this.nb, length), enlarged(this.jaccard, length), enlarged(this.page, length), enlarged(this.hamming, length)];
  }

  private placeOf(a: number, b: number): number {
    const mask = this.table.length - 1;
    for (let place = hashOf(a, b) & mask; ; place = (place + 1) & mask) {
      const i = this.table[place] - 1;
      if (i < 0 || (this.na[i] === a && this.nb[i] === b)) return place;
    }
  }

  private rehash(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let i = 0; i < this.count; i++) {
      let place = hashOf(this.na[i], this.nb[i]) & mask;
      while (table[place] !== 0) place = (place + 1) & mask;
      table[place] = i + 1;
    }
    this.table = table;
  }
}

function hashOf(a: number, b: number): number {
  return mixed(Math.imul(a, 0x9e3779b1) ^ b);
}

/** A pair by its numbers, with the page it came from. */
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

/** The gathered pairs in memory, or past `maxPairs` split into parts on the spill (the file header says why). */
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
    for (const file of this.files) file.flush();
    for (let k = 0; k < this.partCount; k++) {
      const part = this.memory ?? { pairs: new PairList(), copies: [] };
      this.files[k]?.readBack((a, b, jaccard, hamming, page) => keep(part, a, b, jaccard, hamming, page));
      this.count += part.pairs.count;
      this.duplicates += part.pairs.duplicates;
      yield part;
    }
  }
}

/** Refuses, naming the sizes and the way out, when the parts of `expected` pairs would not leave room on the disk of `folder`. */
function requireRoom(folder: string, expected: number): void {
  const needs = expected * PAIR_BYTES;
  const free = freeBytes(folder);
  if (needs <= spillRoom(folder, free)) return;
  const spill = `the final step would spill the ${expected.toLocaleString('en')} ${forCount(expected, 'pair')} the shares announce to ${folder}`;
  throw spillTooLarge({ spill, needs: gigabytes(needs), free, limit: 'limits.maxCachedMembers', cost: 'about 45 bytes a pair' });
}

/** A pair added to a part: kept once, a copy that disagrees kept aside. */
function keep(part: PairPart, a: number, b: number, jaccard: number, hamming: number, page: number): void {
  if (typeof part.pairs.add(a, b, jaccard, hamming, page) === 'object') part.copies.push({ na: a, nb: b, jaccard, hamming, page });
}

/** One part's file: pairs appended with a check of every value written, read back once and emptied. */
class PartFile {
  private readonly file: RecordFile;
  private readonly name: string;
  private readonly scratch = pairBlock(1);
  private check = 0;

  constructor(folder: SpillFolder, k: number) {
    this.name = `pairs-part-${k}.bin`;
    this.file = recordFile(this.name, folder, BLOCK_PAIRS * PAIR_BYTES);
  }

  add(a: number, b: number, jaccard: number, hamming: number, page: number): void {
    const { ints, floats, bytes } = this.scratch;
    ints[0] = a;
    ints[1] = b;
    ints[2] = page;
    ints[3] = hamming & 0xff;
    floats[2] = jaccard;
    this.check = checkOf(ints, this.check);
    this.file.append(bytes);
  }

  /** The pairs appended let go of memory, in the file. */
  flush(): void {
    this.file.flush();
  }

  /** Every pair written, in order, held to the check of what was written; then the file emptied (the disk's room back). */
  readBack(visit: (a: number, b: number, jaccard: number, hamming: number, page: number) => void): void {
    const { ints, floats, bytes } = pairBlock(BLOCK_PAIRS);
    let check = 0;
    const written = this.file.length / PAIR_BYTES;
    for (let first = 0; first < written; first += BLOCK_PAIRS) {
      const count = Math.min(BLOCK_PAIRS, written - first);
      this.file.read(first * PAIR_BYTES, bytes.subarray(0, count * PAIR_BYTES));
      for (let i = 0; i < count; i++) {
        check = checkOf(ints.subarray(6 * i, 6 * i + 6), check);
        visit(ints[6 * i], ints[6 * i + 1], floats[3 * i + 2], ints[6 * i + 3], ints[6 * i + 2]);
      }
    }
    if (check !== this.check) throw new Error(`the pairs read back from ${this.name} are not those written: dedup's spill folder was changed while it ran`);
    this.file.truncate();
  }
}

/** Room for `pairs` pairs, seen as bytes, 32-bit words and numbers. */
function pairBlock(pairs: number): { bytes: Uint8Array; ints: Int32Array; floats: Float64Array } {
  const bytes = new Uint8Array(pairs * PAIR_BYTES);
  return { bytes, ints: new Int32Array(bytes.buffer), floats: new Float64Array(bytes.buffer) };
}
