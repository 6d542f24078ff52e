// Disjoint sets over document ids, with path halving and union by size; the sets are kept by document
// number (doc-numbers.ts), in two typed arrays.
import { DocNumbers, withRoomFor } from './doc-numbers.js';

export class UnionFind {
  private parent = new Int32Array(0);
  private size = new Int32Array(0);

  constructor(readonly documents = new DocNumbers()) {}

  find(x: string): string {
    return this.documents.idOf(this.root(this.numbered(x)));
  }

  /** Members of x's set (1 for an id never joined). */
  sizeOf(x: string): number {
    return this.size[this.root(this.numbered(x))];
  }

  /** Whether x is in a set of two or more (without numbering an id never met). */
  joined(x: string): boolean {
    const n = this.documents.find(x);
    return n !== undefined && n < this.parent.length && this.size[this.root(n)] > 1;
  }

  union(a: string, b: string): void {
    this.unionNumbers(this.numbered(a), this.numbered(b));
  }

  /** The number of the root of document n's set (n in this.documents' numbering). */
  rootOf(n: number): number {
    this.makeRoom(n);
    return this.root(n);
  }

  /** Joins the sets of documents a and b, by number. */
  unionNumbers(a: number, b: number): void {
    this.makeRoom(Math.max(a, b));
    let ra = this.root(a), rb = this.root(b);
    if (ra === rb) return;
    if (this.size[ra] < this.size[rb]) [ra, rb] = [rb, ra];
    this.parent[rb] = ra;
    this.size[ra] += this.size[rb];
  }

  /** Every set of two or more members. */
  groups(): string[][] {
    const byRoot = new Map<number, string[]>();
    for (let n = 0; n < Math.min(this.documents.size, this.parent.length); n++) {
      const root = this.root(n);
      if (this.size[root] < 2) continue;
      let members = byRoot.get(root);
      if (!members) byRoot.set(root, (members = []));
      members.push(this.documents.idOf(n));
    }
    return [...byRoot.values()];
  }

  /** x's number, with a set of its own if it had none (documents numbered elsewhere join lazily). */
  private numbered(x: string): number {
    const n = this.documents.numberOf(x);
    this.makeRoom(n);
    return n;
  }

  /** A set of its own for every document numbered up to n that has none yet. */
  private makeRoom(n: number): void {
    if (n >= this.parent.length) {
      const from = this.parent.length;
      const last = Math.max(n, this.documents.size - 1);
      this.parent = withRoomFor(this.parent, last);
      this.size = withRoomFor(this.size, last);
      for (let k = from; k < this.parent.length; k++) {
        this.parent[k] = k;
        this.size[k] = 1;
      }
    }
  }

  private root(n: number): number {
    const parent = this.parent;
    while (parent[n] !== n) {
      parent[n] = parent[parent[n]];
      n = parent[n];
    }
    return n;
  }
}
