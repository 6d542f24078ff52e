// Each document's best verified match, written back as max_similarity and best_match: the highest
// similarity of its pairs, and the document it has it with (the smallest id on a tie). Kept by the
// union-find's rows, and written with them to its disk past --max-cached-members (sets-on-disk.ts).
import { enlarged } from '../documents/doc-numbers.js';
import type { SetsOnDisk } from './sets-on-disk.js';
import type { RowColumns, UnionFind } from './union-find.js';

/** Each document's best verified match, as the file header says. */
export class BestMatches {
  /** By row: the best similarity, as a count of equal values out of `width` while they are such counts (2 bytes), else the number. */
  private best: Float64Array | Uint16Array;
  /** By row: the number + 1 of the document it has that similarity with. */
  private partner: Int32Array;

  /** `width`: the signatures' number of values, when the similarities are counts of equal values over it. */
  constructor(
    private readonly sets: UnionFind,
    private width?: number,
  ) {
    this.best = width ? new Uint16Array(sets.rows.capacity) : new Float64Array(sets.rows.capacity);
    this.partner = new Int32Array(sets.rows.capacity);
    sets.onRowsGrow((length) => {
      this.best = enlarged(this.best, length);
      this.partner = enlarged(this.partner, length);
    });
  }

  /** Document n's best similarity (0: none, or n undefined: a document never met) and the id of its partner, if any. */
  of(n: number | undefined): { similarity: number; partner?: string } {
    if (n === undefined) return { similarity: 0 };
    const { similarity, partner } = this.bestOf(n);
    return { similarity, partner: partner >= 0 ? this.sets.documents.idOf(partner) : undefined };
  }

  /** A document's number, if it was met. */
  numberOf(id: string): number | undefined {
    return this.sets.documents.find(id);
  }

  /** Whether the document of a row is in a verified pair. */
  has(row: number): boolean {
    return this.best[row] > 0;
  }

  /** Documents na and nb (each with a row: they have just joined) verified at `similarity`: each the other's best match when better. */
  offer(na: number, nb: number, similarity: number): void {
    // (A width that does not fit a pair's similarity, k/width for some k, keeps the similarities as numbers.)
    if (this.width && Math.round(similarity * this.width) / this.width !== similarity) this.keepNumbers();
    const value = this.best instanceof Uint16Array ? Math.round(similarity * (this.width as number)) : similarity;
    this.offerTo(na, nb, value);
    this.offerTo(nb, na, value);
  }

  /** What the union-find writes with its rows to `disk` before it lets them go (union-find.ts RowColumns). */
  columnsOn(disk: SetsOnDisk): RowColumns {
    return {
      write: (rows, numbers) =>
        disk.writeBest({
          numbers,
          similarityAt: (k) => this.similarityAt(rows[k]),
          partnerAt: (k) => this.partner[rows[k]] - 1,
          better: (similarity, partner, than, thanPartner) => this.better(similarity, partner, than, thanPartner),
        }),
      clear: (length) => {
        this.best = this.width ? new Uint16Array(length) : new Float64Array(length);
        this.partner = new Int32Array(length);
      },
    };
  }

  /** Document n's best similarity and the number of its partner (-1: none), from its row and from the disk. */
  private bestOf(n: number): { similarity: number; partner: number } {
    const row = this.sets.rows.find(n);
    const here = row < 0 ? { similarity: 0, partner: -1 } : { similarity: this.similarityAt(row), partner: this.partner[row] - 1 };
    const disk = this.sets.written;
    if (!disk?.has(n)) return here;
    const there = disk.bestOf(n);
    return row < 0 || this.better(there.similarity, there.partner, here.similarity, here.partner) ? there : here;
  }

  /** A row's best similarity, as a number. */
  private similarityAt(row: number): number {
    return this.width ? this.best[row] / this.width : this.best[row];
  }

  /** Whether a match (similarity, partner number; -1: none) is better than another: nearer, or as near with a smaller id (read only on a tie). */
  private better(similarity: number, partner: number, than: number, thanPartner: number): boolean {
    if (similarity !== than) return similarity > than;
    const documents = this.sets.documents;
    return partner >= 0 && thanPartner >= 0 && partner !== thanPartner && documents.idOf(partner) < documents.idOf(thanPartner);
  }

  /** Document `other` at `value` (as `best` holds it) becomes n's best match when better, whatever the pairs' order. */
  private offerTo(n: number, other: number, value: number): void {
    const row = this.sets.rows.find(n);
    if (this.better(value, other, this.best[row], this.partner[row] - 1)) {
      this.best[row] = value;
      this.partner[row] = other + 1;
    }
  }

  /** The best similarities from now on as numbers (a pair's similarity was not a count over the width). */
  private keepNumbers(): void {
    if (!(this.best instanceof Uint16Array) || !this.width) return;
    const width = this.width;
    this.best = Float64Array.from(this.best, (count) => count / width);
    this.width = undefined;
  }
}
