// Rows for the documents in a verified pair, found by document number: what dedup keeps about a document's
// family and best match concerns only those, a few in a hundred where most documents are unique, so it is
// kept in rows given out as they are met rather than in arrays as long as the index. A row is found through
// an open-addressing table of row + 1 keyed by the mixed number (at most half full): 12 to 20 bytes a row,
// less than an array by number until about a third of the documents have a near-duplicate. And the families
// that documents and their roots make, counted and placed by root with such rows.
import { enlarged, mixed } from '../documents/doc-numbers.js';

/** Rows given out to the documents in a verified pair, found by document number (the file header says why). */
export class DocRows {
  /** Row + 1 at each place (0: empty); a power of two, at most half full. */
  private table = new Int32Array(1024);
  /** Each row's document number. */
  private numbers = new Int32Array(1024);
  private count = 0;
  /** Called with the new length whenever the rows outgrow their arrays (the owners of columns grow theirs). */
  onGrow?: (length: number) => void;

  /** Rows given out. */
  get size(): number {
    return this.count;
  }

  /** Length of the row arrays now (columns kept beside them are at least this long). */
  get capacity(): number {
    return this.numbers.length;
  }

  /** Document n's row, or -1 when it has none. */
  find(n: number): number {
    return this.table[this.placeOf(n)] - 1;
  }

  /** Document n's row, given one now if it had none. */
  rowOf(n: number): number {
    const place = this.placeOf(n);
    if (this.table[place] > 0) return this.table[place] - 1;
    const row = this.count++;
    if (row >= this.numbers.length) {
      this.numbers = enlarged(this.numbers, Math.ceil(this.numbers.length * 1.5));
      this.onGrow?.(this.numbers.length);
    }
    this.numbers[row] = n;
    this.table[place] = row + 1;
    if (this.count * 2 > this.table.length) this.rehash();
    return row;
  }

  /** Every row let go (their documents have none any more). */
  clear(): void {
    this.table = new Int32Array(1024);
    this.numbers = new Int32Array(1024);
    this.count = 0;
  }

  /** The document number of a row. */
  numberAt(row: number): number {
    return this.numbers[row];
  }

  /** The rows, in ascending document numbers. */
  ascending(): Int32Array {
    const rows = new Int32Array(this.count);
    const numbers = this.numbers.slice(0, this.count).sort();
    for (let k = 0; k < numbers.length; k++) rows[k] = this.find(numbers[k]);
    return rows;
  }

  /** Where n is in the table, or the empty place where it would go. */
  private placeOf(n: number): number {
    const mask = this.table.length - 1;
    for (let place = mixed(n) & mask; ; place = (place + 1) & mask) {
      const row = this.table[place] - 1;
      if (row < 0 || this.numbers[row] === n) return place;
    }
  }

  private rehash(): void {
    const table = new Int32Array(this.table.length * 2);
    const mask = table.length - 1;
    for (let row = 0; row < this.count; row++) {
      let place = mixed(this.numbers[row]) & mask;
      while (table[place] !== 0) place = (place + 1) & mask;
      table[place] = row + 1;
    }
    this.table = table;
  }
}

/** Families as views of one flat array: family f is members[starts[f], starts[f + 1]). */
export interface FlatFamilies {
  count: number;
  starts: Int32Array;
  members: Int32Array;
}

/**
 * The families of the documents `members` visits with their roots (in ascending numbers, twice the same), of the
 * roots in [from, to): in the order of their first member, each ascending. A visit that does not make families
 * (a root not a member of its own, a family of one, a second visit not the first) is `fail`'s error.
 */
export function familiesOf(members: (visit: (n: number, root: number) => void) => void, from: number, to: number, fail: (what: string) => Error): FlatFamilies {
  const byRoot = new DocRows();
  let sizes = new Int32Array(byRoot.capacity);
  // Whether the family's root was met under itself.
  let rooted = new Uint8Array(byRoot.capacity);
  byRoot.onGrow = (length) => {
    sizes = enlarged(sizes, length);
    rooted = enlarged(rooted, length);
  };
  members((n, root) => {
    if (root < from || root >= to) return;
    const family = byRoot.rowOf(root); // (which may grow the arrays: taken first)
    sizes[family]++;
    if (n === root) rooted[family] = 1;
  });
  const count = byRoot.size;
  for (let f = 0; f < count; f++) if (!rooted[f] || sizes[f] < 2) throw fail(`set root ${byRoot.numberAt(f)} (a family of ${sizes[f]})`);
  const starts = new Int32Array(count + 1);
  for (let f = 0; f < count; f++) starts[f + 1] = starts[f] + sizes[f];
  const next = starts.slice(0, count);
  const placed = new Int32Array(starts[count]);
  members((n, root) => {
    if (root < from || root >= to) return;
    const f = byRoot.find(root);
    if (f < 0 || next[f] >= starts[f + 1]) throw fail(`set root ${root} (read again)`);
    placed[next[f]++] = n;
  });
  for (let f = 0; f < count; f++) if (next[f] !== starts[f + 1]) throw fail(`set root ${byRoot.numberAt(f)} (read again)`);
  return { count, starts, members: placed };
}
