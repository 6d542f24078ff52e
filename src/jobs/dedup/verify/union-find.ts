// The families, as disjoint sets of documents with path halving and union by rank. Only a document that
// joined another has a row (doc-rows.ts: its parent's row and a byte of rank), so the sets cost 17 to 28
// bytes a document in a verified pair and nothing for the others. Given a disk (spillTo), the rows are
// written there by number and let go whenever they reach a set number, and a written document met again is
// read back (sets-on-disk.ts): the same sets, memory holding only the rows met since the last write.
import { type DocIds, DocNumbers, enlarged } from '../documents/doc-numbers.js';
import { DocRows, familiesOf } from './doc-rows.js';
import type { Families, SetsOnDisk } from './sets-on-disk.js';

export type { Families } from './sets-on-disk.js';

/** What is kept beside the rows (by row) by another owner: written before the rows are let go, then made anew. */
export interface RowColumns {
  /** `rows`: the rows about to be let go, in ascending numbers; `numbers`: their documents' numbers. */
  write(rows: Int32Array, numbers: Int32Array): void;
  /** Made anew for `length` rows, the rows let go. */
  clear(length: number): void;
}

/** The families as disjoint sets of documents, as the file header says. */
export class UnionFind {
  /** The documents that have joined another, each with a row. */
  readonly rows = new DocRows();
  /** By row: the parent's row. */
  private parent: Int32Array;
  /** By row: the rank (a root of rank 0 has no other member; a row's root has rank 1 or more). */
  private rank: Uint8Array;
  private readonly growers: Array<(length: number) => void> = [];
  /** Where the rows are written past `maxRows` rows, and who else writes what it keeps by row. */
  private spill?: { disk: SetsOnDisk; maxRows: number; columns: RowColumns[] };

  constructor(readonly documents: DocIds = new DocNumbers()) {
    this.parent = new Int32Array(this.rows.capacity);
    this.rank = new Uint8Array(this.rows.capacity);
    this.rows.onGrow = (length) => {
      this.parent = enlarged(this.parent, length);
      this.rank = enlarged(this.rank, length);
      for (const grow of this.growers) grow(length);
    };
  }

  /**
   * From now on, whenever the rows reach `maxRows` (at least 1) before a union, they are written to `disk` (with
   * `columns`, kept by row by another owner) and let go.
   */
  spillTo(disk: SetsOnDisk, maxRows: number, columns?: RowColumns): void {
    this.spill = { disk, maxRows: Math.max(1, maxRows), columns: columns ? [columns] : [] };
  }

  /** The disk the rows were written to, once they were (undefined while every row is in memory). */
  get written(): SetsOnDisk | undefined {
    return this.spill && this.spill.disk.size > 0 ? this.spill.disk : undefined;
  }

  /** Calls `grow` with the new length whenever the rows outgrow their arrays (for columns kept by row). */
  onRowsGrow(grow: (length: number) => void): void {
    this.growers.push(grow);
  }

  find(x: string): string {
    const n = this.documents.numberOf(x);
    return this.documents.idOf(this.rootOf(n));
  }

  /** Members of x's set (1 for an id never joined); from every family, for tests and reports (families() may write the rows). */
  sizeOf(x: string): number {
    const n = this.documents.find(x);
    if (n === undefined || !this.joinedNumber(n)) return 1;
    for (const family of this.families()) if (family.includes(n)) return family.length;
    return 1;
  }

  /** Whether document n is in a set of two or more. */
  joinedNumber(n: number): boolean {
    return this.rows.find(n) >= 0 || (this.spill?.disk.has(n) ?? false);
  }

  /** Whether x is in a set of two or more (without numbering an id never met). */
  joined(x: string): boolean {
    const n = this.documents.find(x);
    return n !== undefined && this.joinedNumber(n);
  }

  union(a: string, b: string): void {
    this.unionNumbers(this.documents.numberOf(a), this.documents.numberOf(b));
  }

  /** The number of the root of document n's set (n in this.documents' numbering; n itself when it joined none). */
  rootOf(n: number): number {
    const now = this.rootNow(n);
    if (now >= 0) return now;
    if (!this.spill?.disk.has(n)) return n;
    // A written document without a row: its root as written, or where that root's set has gone since (a
    // set joined since has a row for its root). No row is made for a question.
    const root = this.spill.disk.rootOf(n);
    const moved = this.rootNow(root);
    return moved < 0 ? root : moved;
  }

  /** The number of the root of document n's row, -1 when it has none. */
  private rootNow(n: number): number {
    const row = this.rows.find(n);
    return row < 0 ? -1 : this.rows.numberAt(this.root(row));
  }

  /** Joins the sets of documents a and b, by number. */
  unionNumbers(a: number, b: number): void {
    if (a === b) return;
    this.makeRoom();
    this.link(this.root(this.rowOf(a)), this.root(this.rowOf(b)));
  }

  /** Every row written to the disk given by spillTo, and let go (nothing without one). */
  writeRows(): void {
    const spill = this.spill;
    if (!spill || this.rows.size === 0) return;
    const rows = this.rows.ascending();
    const numbers = Int32Array.from(rows, (row) => this.rows.numberAt(row));
    for (const columns of spill.columns) columns.write(rows, numbers);
    spill.disk.writeSets({
      numbers,
      rootAt: (k) => this.rows.numberAt(this.root(rows[k])),
      rootNow: (n) => this.rootNow(n),
    });
    this.rows.clear();
    this.parent = new Int32Array(this.rows.capacity);
    this.rank = new Uint8Array(this.rows.capacity);
    for (const columns of spill.columns) columns.clear(this.rows.capacity);
  }

  /** The rows written and let go when they have reached the number given (before a row is added). */
  private makeRoom(): void {
    if (this.spill && this.rows.size >= this.spill.maxRows) this.writeRows();
  }

  /** Joins two roots' sets, by rank. */
  private link(ra: number, rb: number): void {
    if (ra === rb) return;
    if (this.rank[ra] < this.rank[rb]) [ra, rb] = [rb, ra];
    this.parent[rb] = ra;
    // (A root of rank 0 that takes another member gets rank 1: rank 0 stays "alone".)
    if (this.rank[ra] === this.rank[rb]) this.rank[ra]++;
  }

  /** Every set of two or more members, by id. */
  groups(): string[][] {
    return Array.from(this.families(), (family) => Array.from(family, (n) => this.documents.idOf(n)));
  }

  /**
   * Every set of two or more members, by number (ascending), in the order of their first member; once rows were
   * written, every row is written and the sets come from the disk a range of roots at a time.
   */
  families(): Families {
    const disk = this.written;
    if (disk) {
      this.writeRows();
      return disk.families(this.spill?.maxRows);
    }
    const ascending = this.rows.ascending();
    const rootsOf = (visit: (n: number, root: number) => void) => {
      for (const row of ascending) visit(this.rows.numberAt(row), this.rows.numberAt(this.root(row)));
    };
    const { count, starts, members } = familiesOf(rootsOf, 0, Number.POSITIVE_INFINITY, (what) => new Error(`the sets in memory hold a ${what}`));
    return {
      count,
      *[Symbol.iterator]() {
        for (let f = 0; f < count; f++) yield members.subarray(starts[f], starts[f + 1]);
      },
    };
  }

  /** Document n's row, a set of its own if it had none. */
  private rowOf(n: number): number {
    const before = this.rows.size;
    const row = this.rows.rowOf(n);
    if (this.rows.size > before) {
      this.parent[row] = row;
      this.rank[row] = 0;
      // A document written to disk joins its set again under a row of its root, which stays the root (so
      // that a set's root is the same number before and after its rows are let go). The ranks begin again
      // after a write: they only keep the trees shallow, and which root a union keeps matters to no one (the
      // roots are compared, never shown, and no result depends on the families' order).
      const root = this.spill?.disk.has(n) ? this.spill.disk.rootOf(n) : n;
      if (root !== n) {
        const top = this.root(this.rowOf(root));
        this.parent[row] = top;
        this.rank[top] = Math.max(this.rank[top], 1);
      }
    }
    return row;
  }

  private root(row: number): number {
    const parent = this.parent;
    while (parent[row] !== row) {
      parent[row] = parent[parent[row]];
      row = parent[row];
    }
    return row;
  }
}
