// A set of ids kept in 8 bytes each: a 64-bit hash of each id, sorted once every id is in, found by binary
// search. The write-back asks of every document that holds cluster fields in the index whether this run
// clustered it; answering that from the numbering would need an index of every id in the index (about 10
// bytes a document when the ids are on disk: a gigabyte at a hundred million), where only the clustered
// documents matter. Two ids hash alike with odds of about (ids in the set) / 2^64 a lookup (one in a
// trillion at ten million clustered documents); a stale document so mistaken keeps its old cluster fields,
// and the write-back's count check with the engine then says the run is not complete (the same ids would
// collide again in the next run: the hash has no seed, so that runs are alike).
import { mixed } from './doc-numbers.js';
import { readAll, type SpillFolder, writeAll } from './spill-folder.js';

export class IdSet {
  /** The hashes added (sorted once a lookup comes), 8 bytes each and up to half as many again of room. */
  private hashes = new BigUint64Array(1024);
  private count = 0;
  private sorted = true;

  get size(): number {
    return this.count;
  }

  add(id: string): void {
    if (this.count === this.hashes.length) {
      const larger = new BigUint64Array(Math.ceil(this.hashes.length * 1.5));
      larger.set(this.hashes);
      this.hashes = larger;
    }
    this.hashes[this.count++] = hash64(id);
    this.sorted = false;
  }

  has(id: string): boolean {
    if (!this.sorted) {
      this.hashes.subarray(0, this.count).sort();
      this.sorted = true;
    }
    return binarySearch(this.hashes, this.count, hash64(id));
  }
}

/** Hashes (by their top byte) in this many lists while ids are added. */
const BUCKETS = 256;
/** Hashes a list gathers before they are written as a block. */
const BLOCK_HASHES = 2048;
/** One hash in this many of the sorted file is kept in memory, to find the block a look-up reads. */
const SPARSE = 512;

/**
 * The same set with its hashes on disk, for a run that spills its ids: while ids are added, each hash goes
 * to one of 256 lists by its top byte, each written a block at a time into clustered-ids.bin; at the first
 * look-up each list is read back, sorted and appended to clustered-ids-sorted.bin (the lists are ranges of
 * the hashes, so the file is sorted whole), with one hash in 512 kept in memory. A look-up then reads one
 * block of 4 KB. Memory: 4 MB of lists while adding, the largest list while sorting, 1/64 byte a hash after.
 */
export class IdSetOnDisk {
  private readonly blocksFile: number;
  private readonly sortedFile: number;
  private lists?: BigUint64Array[];
  private readonly listed = new Int32Array(BUCKETS);
  /** Each list's blocks written: their places in the blocks file, in hashes. */
  private readonly blocks: number[][] = Array.from({ length: BUCKETS }, () => []);
  /** Hashes in the blocks file. */
  private inBlocks = 0;
  private count = 0;
  private sparse?: BigUint64Array;
  private readonly block: { first: number; hashes: BigUint64Array; length: number };
  private readonly blockHashes: number;
  private readonly sparseEvery: number;

  /** `sizes`: other sizes of the lists' blocks and of the sorted file's blocks (for tests). */
  constructor(folder: SpillFolder, sizes: { block?: number; sparse?: number } = {}) {
    this.blocksFile = folder.create('clustered-ids.bin');
    this.sortedFile = folder.create('clustered-ids-sorted.bin');
    this.blockHashes = sizes.block ?? BLOCK_HASHES;
    this.sparseEvery = sizes.sparse ?? SPARSE;
    this.lists = Array.from({ length: BUCKETS }, () => new BigUint64Array(this.blockHashes));
    this.block = { first: -1, hashes: new BigUint64Array(this.sparseEvery), length: 0 };
  }

  get size(): number {
    return this.count;
  }

  add(id: string): void {
    const lists = this.lists;
    if (!lists) throw new Error('an id was added to the clustered ids after the first look-up');
    const hash = hash64(id);
    const b = Number(hash >> 56n);
    lists[b][this.listed[b]++] = hash;
    this.count++;
    if (this.listed[b] === this.blockHashes) this.writeBlock(b);
  }

  has(id: string): boolean {
    const sparse = this.sorted();
    const wanted = hash64(id);
    // The last block whose first hash is at most the one wanted.
    let lo = 0;
    let hi = sparse.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sparse[mid] <= wanted) lo = mid + 1;
      else hi = mid;
    }
    if (lo === 0) return false;
    const hashes = this.readBlock(lo - 1);
    return binarySearch(hashes, this.block.length, wanted);
  }

  private writeBlock(b: number): void {
    writeAll(this.blocksFile, bytesOf(this.lists![b]), this.inBlocks * 8);
    this.blocks[b].push(this.inBlocks);
    this.inBlocks += this.blockHashes;
    this.listed[b] = 0;
  }

  /** The sorted file made, once: each list read back, sorted and appended; the lists let go. */
  private sorted(): BigUint64Array {
    if (this.sparse) return this.sparse;
    const every = this.sparseEvery;
    const sparse = new BigUint64Array(Math.ceil(this.count / every));
    let placed = 0;
    for (let b = 0; b < BUCKETS; b++) {
      const hashes = this.listOf(b).sort();
      for (let k = (every - (placed % every)) % every; k < hashes.length; k += every) sparse[(placed + k) / every] = hashes[k];
      writeAll(this.sortedFile, bytesOf(hashes), placed * 8);
      placed += hashes.length;
    }
    this.lists = undefined;
    this.sparse = sparse;
    return sparse;
  }

  /** The b-th list's hashes: its blocks read back, then those not written. */
  private listOf(b: number): BigUint64Array {
    const block = this.blockHashes;
    const blocks = this.blocks[b];
    const hashes = new BigUint64Array(blocks.length * block + this.listed[b]);
    for (let k = 0; k < blocks.length; k++) readAll(this.blocksFile, bytesOf(hashes.subarray(k * block, (k + 1) * block)), blocks[k] * 8);
    hashes.set(this.lists![b].subarray(0, this.listed[b]), blocks.length * block);
    return hashes;
  }

  /** The k-th block of the sorted file (kept for the next look-up), each hash checked to follow the one before. */
  private readBlock(k: number): BigUint64Array {
    const block = this.block;
    if (block.first !== k) {
      block.length = Math.min(this.sparseEvery, this.count - k * this.sparseEvery);
      readAll(this.sortedFile, bytesOf(block.hashes.subarray(0, block.length)), k * this.sparseEvery * 8);
      block.first = k;
      for (let i = 1; i < block.length; i++) {
        if (block.hashes[i] < block.hashes[i - 1]) throw new Error("the clustered ids' file dedup spilled is out of order: its folder was changed while dedup ran; run dedup again");
      }
    }
    return block.hashes;
  }
}

/** The bytes of an array of hashes, for a read or a write. */
function bytesOf(hashes: BigUint64Array): Uint8Array {
  return new Uint8Array(hashes.buffer, hashes.byteOffset, hashes.byteLength);
}

/** Whether `wanted` is among the first `length` of sorted `hashes`. */
function binarySearch(hashes: BigUint64Array, length: number, wanted: bigint): boolean {
  let lo = 0;
  let hi = length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (hashes[mid] < wanted) lo = mid + 1;
    else hi = mid;
  }
  return lo < length && hashes[lo] === wanted;
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
