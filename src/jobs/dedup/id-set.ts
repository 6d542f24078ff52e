// A set of ids kept in 8 bytes each: a 64-bit hash of each id, sorted once every id is in, found by binary
// search. The write-back asks of every document that holds cluster fields in the index whether this run
// clustered it; answering that from the numbering would need an index of every id in the index (about 10
// bytes a document when the ids are on disk: a gigabyte at a hundred million), where only the clustered
// documents matter. Two ids hash alike with odds of about (ids in the set) / 2^64 a lookup (one in a
// trillion at ten million clustered documents); a stale document so mistaken keeps its old cluster fields,
// and the write-back's count check with the engine then says the run is not complete (the same ids would
// collide again in the next run: the hash has no seed, so that runs are alike).
import { mixed } from './doc-numbers.js';

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
    const wanted = hash64(id);
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.hashes[mid] < wanted) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.count && this.hashes[lo] === wanted;
  }
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
