// A set of ids kept in 8 bytes each: a 64-bit hash of each id, sorted once every id is in, found by binary
// search. The write-back asks of every document that holds cluster fields in the index whether this run
// clustered it; answering that from the numbering would need an index of every id in the index (about 10
// bytes a document when the ids are on disk: a gigabyte at a hundred million), where only the clustered
// documents matter. Two ids hash alike with odds of about (ids in the set) / 2^64 a lookup (one in a
// trillion at ten million clustered documents); a stale document so mistaken keeps its old cluster fields,
// and the write-back's count check with the engine then says the run is not complete (the same ids would
// collide again in the next run: the hash has no seed, so that runs are alike). Once every id is in, the
// set is sealed (sorted, and on disk written out) before the write-back asks its first question: the
// write-back then writes nothing to the disk, so a disk that fills cannot stop it half way.
import { mixed } from '../documents/doc-numbers.js';
import { checkOf, type RecordFile, recordFile } from '../spill/record-file.js';
import { requireRoom, type SpillFolder } from '../spill/spill-folder.js';
import { forCount } from '../../../plural.js';

/** Hashes (by their top byte) in this many lists while ids are added. */
const LISTS = 256;
/** Hashes a list gathers before they are written out as one of its blocks. */
const LIST_BLOCK = 2048;
/** Hashes of the sorted file read by a look-up (512 bytes); the first of each page, and its check, are kept in memory. */
const PAGE = 64;

/**
 * The set, in two record files (spill/record-file.ts; on disk for a run that spills its ids): while ids are
 * added, each hash goes to one of 256 lists by its top byte, each appended a block at a time to
 * clustered-ids.bin; when sealed (or at the first look-up) each list is read back, sorted and appended to
 * clustered-ids-sorted.bin (the lists are ranges of the hashes, so the file is sorted whole), with the first
 * hash of each page of 64 kept in memory with a check of the page. A look-up then reads one page. Memory
 * beside the files: the lists' blocks while adding (grown to 16 KB each), the largest list while sorting, 12
 * bytes a page of 64 hashes after. Every block and page read is held to its check (a damaged file is said,
 * never taken as "not clustered").
 */
export class IdSet {
  private readonly listsFile: RecordFile;
  private readonly sortedFile: RecordFile;
  private lists?: BigUint64Array[];
  private readonly listed = new Int32Array(LISTS);
  /** Each list's blocks written out: where each starts in the lists' file, in hashes, and its check. */
  private readonly blocks: Array<Array<{ at: number; check: number }>> = Array.from({ length: LISTS }, () => []);
  private count = 0;
  /** The first hash of each page of the sorted file, and a check of each page. */
  private firsts?: BigUint64Array;
  private checks?: Uint32Array;
  private readonly page: { at: number; hashes: BigUint64Array; length: number };
  private readonly listBlock: number;
  private readonly pageHashes: number;

  /** `spill`: the folder of a run that spills its ids (else memory); `sizes`: other sizes of the lists' blocks and of the sorted file's pages (for tests). */
  constructor(
    private readonly spill?: SpillFolder,
    sizes: { listBlock?: number; page?: number } = {},
  ) {
    this.listsFile = recordFile('clustered-ids.bin', spill, 0);
    this.sortedFile = recordFile('clustered-ids-sorted.bin', spill, 0);
    this.listBlock = sizes.listBlock ?? LIST_BLOCK;
    this.pageHashes = sizes.page ?? PAGE;
    this.lists = Array.from({ length: LISTS }, () => new BigUint64Array(Math.min(16, this.listBlock)));
    this.page = { at: -1, hashes: new BigUint64Array(this.pageHashes), length: 0 };
  }

  get size(): number {
    return this.count;
  }

  add(id: string): void {
    const lists = this.lists;
    if (!lists) throw new Error('an id was added to the clustered ids after the first look-up');
    const hash = hash64(id);
    const b = Number(hash >> 56n);
    if (this.listed[b] === lists[b].length) this.makeRoom(b);
    lists[b][this.listed[b]++] = hash;
    this.count++;
  }

  has(id: string): boolean {
    const firsts = this.seal();
    const wanted = hash64(id);
    // The last page whose first hash is at most the one wanted, and in it the last hash at most that.
    const k = atMost(firsts, firsts.length, wanted);
    if (k < 0) return false;
    const page = this.readPage(k);
    return page.hashes[atMost(page.hashes, page.length, wanted)] === wanted;
  }

  /** Room in the b-th list: it grows to a block (so that a small set holds little), then its block is appended. */
  private makeRoom(b: number): void {
    const list = this.lists![b];
    if (list.length < this.listBlock) {
      this.lists![b] = new BigUint64Array(Math.min(2 * list.length, this.listBlock));
      this.lists![b].set(list);
      return;
    }
    this.blocks[b].push({ at: this.listsFile.append(bytesOf(list)) / 8, check: checkOf(halvesOf(list)) });
    this.listed[b] = 0;
  }

  /**
   * Every id is in: the sorted file made, once, its room on the disk checked first (`free`: the bytes free
   * there, for tests); each list read back, sorted and appended; the lists and their file let go. Gives the
   * first hash of each page.
   */
  seal(free?: number): BigUint64Array {
    if (this.firsts) return this.firsts;
    if (this.spill) requireRoom(this.spill, this.count * 8, `the ${this.count.toLocaleString('en')} ${forCount(this.count, 'id')} it writes cluster fields to (8 bytes each), before it writes any`, free);
    const every = this.pageHashes;
    const firsts = new BigUint64Array(Math.ceil(this.count / every));
    const checks = new Uint32Array(firsts.length);
    let placed = 0;
    for (let b = 0; b < LISTS; b++) {
      const hashes = this.listOf(b).sort();
      // The hashes at the places that begin a page (multiples of `every` in the whole file).
      for (let at = Math.ceil(placed / every) * every; at < placed + hashes.length; at += every) firsts[at / every] = hashes[at - placed];
      // Each page's check, over the hashes of it this list holds (a page may span lists).
      for (let i = 0; i < hashes.length; ) {
        const k = Math.floor((placed + i) / every);
        const end = Math.min(hashes.length, (k + 1) * every - placed);
        checks[k] = checkOf(halvesOf(hashes.subarray(i, end)), checks[k]);
        i = end;
      }
      this.sortedFile.append(bytesOf(hashes));
      placed += hashes.length;
    }
    this.listsFile.truncate();
    this.lists = undefined;
    this.checks = checks;
    this.firsts = firsts;
    return firsts;
  }

  /** The b-th list's hashes: its blocks read back (each held to its check), then those not written out. */
  private listOf(b: number): BigUint64Array {
    const block = this.listBlock;
    const blocks = this.blocks[b];
    const hashes = new BigUint64Array(blocks.length * block + this.listed[b]);
    for (let k = 0; k < blocks.length; k++) {
      const read = hashes.subarray(k * block, (k + 1) * block);
      this.listsFile.read(blocks[k].at * 8, bytesOf(read));
      if (checkOf(halvesOf(read)) !== blocks[k].check) throw changed();
    }
    hashes.set(this.lists![b].subarray(0, this.listed[b]), blocks.length * block);
    return hashes;
  }

  /** The k-th page of the sorted file (kept for the next look-up), held to its check. */
  private readPage(k: number): { hashes: BigUint64Array; length: number } {
    const page = this.page;
    if (page.at !== k) {
      page.length = Math.min(this.pageHashes, this.count - k * this.pageHashes);
      this.sortedFile.read(k * this.pageHashes * 8, bytesOf(page.hashes.subarray(0, page.length)));
      page.at = -1;
      if (checkOf(halvesOf(page.hashes.subarray(0, page.length))) !== this.checks![k] || page.hashes[0] !== this.firsts![k]) throw changed();
      page.at = k;
    }
    return page;
  }
}

/** The 32-bit halves of some hashes, for their check. */
function halvesOf(hashes: BigUint64Array): Uint32Array {
  return new Uint32Array(hashes.buffer, hashes.byteOffset, 2 * hashes.length);
}

function changed(): Error {
  return new Error("the clustered ids' files dedup spilled were changed while it ran (a hash out of place): run dedup again");
}

/** The bytes of an array of hashes, for a read or a write. */
function bytesOf(hashes: BigUint64Array): Uint8Array {
  return new Uint8Array(hashes.buffer, hashes.byteOffset, hashes.byteLength);
}

/** The place of the last of the first `length` of sorted `hashes` that is at most `wanted` (-1: none). */
function atMost(hashes: BigUint64Array, length: number, wanted: bigint): number {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (hashes[mid] <= wanted) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** Two 32-bit hashes of the id's UTF-16 code units (FNV-1a, and a multiply-rotate one seeded with the length), each mixed, as one 64-bit number. */
function hash64(id: string): bigint {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9 ^ id.length;
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b = (b << 13) | (b >>> 19);
  }
  return (BigInt(mixed(a)) << 32n) | BigInt(mixed(b));
}
