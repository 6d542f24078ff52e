// Disjoint sets over string ids, with path halving and union by size.

export class UnionFind {
  private readonly parent = new Map<string, string>();
  private readonly size = new Map<string, number>();

  find(x: string): string {
    if (!this.parent.has(x)) {
      this.parent.set(x, x);
      this.size.set(x, 1);
      return x;
    }
    let root = x;
    while (this.parent.get(root) !== root) {
      const grand = this.parent.get(this.parent.get(root)!)!;
      this.parent.set(root, grand);
      root = grand;
    }
    return root;
  }

  /** Members of x's set (1 for an id never joined). */
  sizeOf(x: string): number {
    return this.size.get(this.find(x))!;
  }

  union(a: string, b: string): void {
    let ra = this.find(a), rb = this.find(b);
    if (ra === rb) return;
    if (this.size.get(ra)! < this.size.get(rb)!) [ra, rb] = [rb, ra];
    this.parent.set(rb, ra);
    this.size.set(ra, this.size.get(ra)! + this.size.get(rb)!);
  }

  /** Every set of two or more members. */
  groups(): string[][] {
    const byRoot = new Map<string, string[]>();
    for (const x of this.parent.keys()) {
      const root = this.find(x);
      let members = byRoot.get(root);
      if (!members) byRoot.set(root, (members = []));
      members.push(x);
    }
    return [...byRoot.values()].filter((g) => g.length > 1);
  }
}
