// Rows for the documents that have something to keep, found by document number (doc-numbers.ts): what dedup
// keeps about a document's cluster and best match concerns only the documents in a verified pair, a few in
// a hundred where most documents are unique, so it is kept in rows given out as such documents are met
// rather than in arrays as long as the index. A row is found through an open-addressing table of row + 1
// keyed by the mixed number (at most half full): 12 to 20 bytes a row with the table and the row's number,
// where an array by document number costs its bytes for every document of the index (so rows cost more
// once about a third of the documents or more have a near-duplicate).
import { enlarged, mixed } from '../documents/doc-numbers.js';

/**
 * Rows given out to the documents in a verified pair, found by document number, so that what dedup keeps about them
 * costs nothing for the many documents with no near-duplicate (the file header says when it pays).
 */
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
    const row = this.table[this.placeOf(n)] - 1;
    return row;
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
