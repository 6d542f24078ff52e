// The members of the clusters a dedup run cut (cluster-list.ts), one cluster after another: each member's
// document number and its similarity to its cluster's canonical. In memory (12 bytes a member, and up to
// half as many again of room) or, when the run spills its ids, appended to a file of the spill folder (12
// bytes a member on disk, a buffer of fixed size in memory), so that the clusters of a hundred million
// documents hold no memory for their members. Input: members appended in order; output: a range of them.
import { enlarged } from './doc-numbers.js';
import { readAll, type SpillFolder, writeAll } from './spill-folder.js';

export interface MemberRange {
  numbers: Int32Array;
  similarities: Float64Array;
}

export interface ClusterMembers {
  /** Members appended. */
  readonly length: number;
  append(numbers: ArrayLike<number>, similarities: ArrayLike<number>): void;
  /** Members [start, end), in arrays of their own. */
  read(start: number, end: number): MemberRange;
}

export class MembersInMemory implements ClusterMembers {
  private numbers = new Int32Array(1024);
  private similarities = new Float64Array(1024);
  length = 0;

  append(numbers: ArrayLike<number>, similarities: ArrayLike<number>): void {
    const end = this.length + numbers.length;
    if (end > this.numbers.length) {
      this.numbers = enlarged(this.numbers, Math.ceil(end * 1.5));
      this.similarities = enlarged(this.similarities, Math.ceil(end * 1.5));
    }
    this.numbers.set(numbers, this.length);
    this.similarities.set(similarities, this.length);
    this.length = end;
  }

  read(start: number, end: number): MemberRange {
    return { numbers: this.numbers.slice(start, end), similarities: this.similarities.slice(start, end) };
  }
}

/** Members written at once. */
const PENDING_MEMBERS = 1 << 16;
const MEMBER_BYTES = 12;

/**
 * The members in the file cluster-members.bin, member i at i * 12 bytes (its number, then its similarity),
 * gathered in a buffer written when full or before a read. Every value read back is checked: a number of
 * a document the run has and a similarity in [0, 1], else the folder was changed under the run.
 */
export class MembersOnDisk implements ClusterMembers {
  private readonly file: number;
  private readonly pending = new DataView(new ArrayBuffer(PENDING_MEMBERS * MEMBER_BYTES));
  private pendingCount = 0;
  /** Members in the file. */
  private written = 0;

  /** `documents`: how many documents the run numbered (every number read back is below). */
  constructor(
    folder: SpillFolder,
    private readonly documents: () => number,
  ) {
    this.file = folder.create('cluster-members.bin');
  }

  get length(): number {
    return this.written + this.pendingCount;
  }

  append(numbers: ArrayLike<number>, similarities: ArrayLike<number>): void {
    for (let k = 0; k < numbers.length; k++) {
      if (this.pendingCount === PENDING_MEMBERS) this.flush();
      const at = this.pendingCount++ * MEMBER_BYTES;
      this.pending.setInt32(at, numbers[k], true);
      this.pending.setFloat64(at + 4, similarities[k], true);
    }
  }

  read(start: number, end: number): MemberRange {
    this.flush();
    const count = end - start;
    const bytes = new DataView(new ArrayBuffer(count * MEMBER_BYTES));
    readAll(this.file, new Uint8Array(bytes.buffer), start * MEMBER_BYTES);
    const range = { numbers: new Int32Array(count), similarities: new Float64Array(count) };
    const documents = this.documents();
    for (let k = 0; k < count; k++) {
      const n = bytes.getInt32(k * MEMBER_BYTES, true);
      const similarity = bytes.getFloat64(k * MEMBER_BYTES + 4, true);
      if (!(n >= 0 && n < documents)) throw changed(`document number ${n}`);
      if (!(similarity >= 0 && similarity <= 1)) throw changed(`similarity ${similarity}`);
      range.numbers[k] = n;
      range.similarities[k] = similarity;
    }
    return range;
  }

  private flush(): void {
    if (this.pendingCount === 0) return;
    writeAll(this.file, new Uint8Array(this.pending.buffer, 0, this.pendingCount * MEMBER_BYTES), this.written * MEMBER_BYTES);
    this.written += this.pendingCount;
    this.pendingCount = 0;
  }
}

function changed(what: string): Error {
  return new Error(`the clusters' file dedup spilled holds a ${what} it never wrote: its folder was changed while dedup ran; run dedup again`);
}
