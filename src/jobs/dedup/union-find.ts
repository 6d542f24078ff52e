// Disjoint sets over document ids, with path halving and union by rank; the sets are kept by document
// number (doc-numbers.ts), in a typed array of parents and a byte of rank each (5 bytes a document: a
// hundred million documents keep their sets in 500 MB). A root of rank 0 has no other member.
import { type DocIds, DocNumbers, enlarged } from './doc-numbers.js';

export class UnionFind {
  private parent = new Int32Array(0);
  private rank = new Uint8Array(0);

  /** `expected`: documents to make room for at once (the arrays grow past it as needed). */
  constructor(
    readonly documents: DocIds = new DocNumbers(),
    expected = 0,
  ) {
    if (expected > 0) this.makeRoomFor(expected);
  }

  find(x: string): string {
    return this.documents.idOf(this.root(this.numbered(x)));
  }

  /** Members of x's set (1 for an id never joined); counted over every document, for tests and reports. */
  sizeOf(x: string): number {
    const root = this.root(this.numbered(x));
    if (this.rank[root] === 0) return 1;
    let size = 0;
    for (let n = 0; n < Math.min(this.documents.size, this.parent.length); n++) if (this.root(n) === root) size++;
    return size;
  }

  /** Whether document n is in a set of two or more. */
  joinedNumber(n: number): boolean {
    return this.rank[this.rootOf(n)] > 0;
  }

  /** Whether x is in a set of two or more (without numbering an id never met). */
  joined(x: string): boolean {
    const n = this.documents.find(x);
    return n !== undefined && n < this.parent.length && this.rank[this.root(n)] > 0;
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
    if (this.rank[ra] < this.rank[rb]) [ra, rb] = [rb, ra];
    this.parent[rb] = ra;
    // (A root of rank 0 that takes another member gets rank 1: rank 0 stays "alone".)
    if (this.rank[ra] === this.rank[rb]) this.rank[ra]++;
  }

  /** Every set of two or more members, by id. */
  groups(): string[][] {
    return this.families().map((family) => Array.from(family, (n) => this.documents.idOf(n)));
  }

  /** Every set of two or more members, by number (ascending), the sets in the order of their first member. */
  families(): Int32Array[] {
    const count = Math.min(this.documents.size, this.parent.length);
    const sizes = new Map<number, number>();
    for (let n = 0; n < count; n++) {
      const root = this.root(n);
      if (this.rank[root] > 0) sizes.set(root, (sizes.get(root) ?? 0) + 1);
    }
    const byRoot = new Map<number, { members: Int32Array; used: number }>();
    for (let n = 0; n < count; n++) {
      const root = this.root(n);
      const size = sizes.get(root);
      if (size === undefined) continue;
      let family = byRoot.get(root);
      if (!family) byRoot.set(root, (family = { members: new Int32Array(size), used: 0 }));
      family.members[family.used++] = n;
    }
    return Array.from(byRoot.values(), (family) => family.members);
  }

  /** x's number, with a set of its own if it had none (documents numbered elsewhere join lazily). */
  private numbered(x: string): number {
    const n = this.documents.numberOf(x);
    this.makeRoom(n);
    return n;
  }

  /** A set of its own for every document numbered up to n that has none yet. */
  private makeRoom(n: number): void {
    if (n >= this.parent.length) this.makeRoomFor(Math.max(n, this.documents.size - 1) * 1.5 + 1024);
  }

  /** Arrays of `length` (at least as long as now), each new document a set of its own. */
  private makeRoomFor(length: number): void {
    const from = this.parent.length;
    if (length <= from) return;
    this.parent = enlarged(this.parent, Math.ceil(length));
    const rank = new Uint8Array(this.parent.length);
    rank.set(this.rank);
    this.rank = rank;
    for (let k = from; k < this.parent.length; k++) this.parent[k] = k;
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
