// Documents numbered in the order dedup meets them, so that what it keeps about each one lives in typed
// arrays indexed by that number (its facts: a few bytes a document), or in rows found by it for the few that
// have a near-duplicate (their cluster and best similarity: doc-rows.ts). One
// numbering is shared by the signature store and the pair verifier, so every document's id is kept once:
// here in memory, or on local disk for an index too large for that (dedup/documents/spilled-ids.ts).

/** A numbering of documents: each id met gets the next number, and is found again by it. */
export interface DocIds {
  readonly size: number;
  /** The document's number, given it now if it had none. */
  numberOf(id: string): number;
  /** The document's number, or undefined if it was never met. */
  find(id: string): number | undefined;
  idOf(n: number): string;
  /** The ids of these numbers (ascending reads are the cheap ones). */
  idsOf(numbers: ArrayLike<number>): string[];
  /** A document met for the first time (a scan meets each once): numbered without looking it up, when the numbering can. */
  append(id: string): number;
}

/**
 * The numbering of an index whose ids fit in memory, kept in typed chunks rather than a Map of strings (see within).
 */
export class DocNumbers implements DocIds {
  // The ids are kept as UTF-16 code units in large typed chunks, found again through an open-addressing
  // table of numbers keyed by a hash of the id: about 2 bytes a character and 24 a document, none of it
  // objects the garbage collector walks (a Map of ten million strings took 1.2 GB and minutes of marking).
  private chunks: Uint16Array[] = [];
  private used = CHUNK_UNITS; // (no chunk yet)
  /** Where each id starts: chunk * CHUNK_UNITS + offset. */
  private starts = new Float64Array(0);
  private lengths = new Uint32Array(0);
  private hashes = new Uint32Array(0);
  /** Number + 1 of the id in each place (0: empty); a power of two, at most half full. */
  private table = new Int32Array(1024);
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The document's number, given it now if it had none. */
  numberOf(id: string): number {
    const hash = hashOf(id);
    const place = this.placeOf(id, hash);
    if (this.table[place] > 0) return this.table[place] - 1;
    const n = this.count++;
    this.store(n, id, hash);
    this.table[place] = n + 1;
    if (this.count * 2 > this.table.length) this.rehash();
    return n;
  }

  /** The document's number, or undefined if it was never met. */
  find(id: string): number | undefined {
    const n = this.table[this.placeOf(id, hashOf(id))];
    return n > 0 ? n - 1 : undefined;
  }

  append(id: string): number {
    return this.numberOf(id);
  }

  idsOf(numbers: ArrayLike<number>): string[] {
    return Array.from(numbers, (n) => this.idOf(n));
  }

  idOf(n: number): string {
    const start = this.starts[n];
    const chunk = this.chunks[Math.floor(start / CHUNK_UNITS)];
    const offset = start % CHUNK_UNITS;
    return readString(chunk, offset, this.lengths[n]);
  }

  /** The place of `id` in the table, or the empty place where it would go. */
  private placeOf(id: string, hash: number): number {
    const mask = this.table.length - 1;
    for (let place = hash & mask; ; place = (place + 1) & mask) {
      const n = this.table[place] - 1;
      if (n < 0 || (this.hashes[n] === hash && this.holds(n, id))) return place;
    }
  }

  private holds(n: number, id: string): boolean {
    if (this.lengths[n] !== id.length) return false;
    const start = this.starts[n];
    const chunk = this.chunks[Math.floor(start / CHUNK_UNITS)];
    const offset = start % CHUNK_UNITS;
    for (let i = 0; i < id.length; i++) if (chunk[offset + i] !== id.charCodeAt(i)) return false;
    return true;
  }

  private store(n: number, id: string, hash: number): void {
    if (n >= this.starts.length) {
      const capacity = Math.max(1024, Math.ceil(n * 1.5));
      this.starts = enlarged(this.starts, capacity);
      this.lengths = enlarged(this.lengths, capacity);
      this.hashes = enlarged(this.hashes, capacity);
    }
    if (this.used + id.length > CHUNK_UNITS) {
      this.chunks.push(new Uint16Array(Math.max(CHUNK_UNITS, id.length)));
      this.used = 0;
    }
    const chunk = this.chunks[this.chunks.length - 1];
    for (let i = 0; i < id.length; i++) chunk[this.used + i] = id.charCodeAt(i);
    this.starts[n] = (this.chunks.length - 1) * CHUNK_UNITS + this.used;
    this.lengths[n] = id.length;
    this.hashes[n] = hash;
    this.used += id.length;
  }

  private rehash(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let n = 0; n < this.count; n++) {
      let place = this.hashes[n] & mask;
      while (table[place] !== 0) place = (place + 1) & mask;
      table[place] = n + 1;
    }
    this.table = table;
  }
}

/** Code units per chunk of ids (8 MB); an id longer than that gets a chunk of its own. */
const CHUNK_UNITS = 1 << 22;

/** FNV-1a over the id's UTF-16 code units, mixed so that the low bits (the table's place) depend on all of them. */
function hashOf(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return mixed(h);
}

/** A 32-bit hash mixed so that its low bits depend on all of its bits. */
export function mixed(h: number): number {
  h ^= h >>> 15;
  h = Math.imul(h, 0x2c1b3c6d);
  return (h ^ (h >>> 12)) >>> 0;
}

function readString(chunk: Uint16Array, offset: number, length: number): string {
  let text = '';
  // In slices: String.fromCharCode takes its arguments on the stack.
  for (let at = 0; at < length; at += 4096) text += String.fromCharCode(...chunk.subarray(offset + at, offset + Math.min(length, at + 4096)));
  return text;
}

/** A typed array with room for index `n`: the same one, or a copy half as large again (new places hold `fill`). */
export function withRoomFor<T extends Int32Array | Float64Array | Uint16Array>(array: T, n: number, fill = 0): T {
  return n < array.length ? array : enlarged(array, Math.max(1024, Math.ceil((n + 1) * 1.5)), fill);
}

/** A copy of a typed array `length` long, the places past the old ones holding `fill`. */
export function enlarged<T extends Int32Array | Uint32Array | Float64Array | Uint16Array | Uint8Array>(array: T, length: number, fill = 0): T {
  const larger = new (array.constructor as new (length: number) => T)(length);
  larger.set(array);
  if (fill !== 0) larger.fill(fill, array.length);
  return larger;
}
