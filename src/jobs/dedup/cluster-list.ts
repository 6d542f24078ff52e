// The clusters a dedup run cut, kept compact until they are written: each member as its document number
// and its similarity to the canonical, in flat typed arrays (12 bytes a member), and each cluster's
// canonical and family by id; a cluster is made whole (its members' ids read from the numbering) only as it
// is handed out. A hundred million documents with a third of them in clusters would otherwise hold thirty
// million ids and a Map entry each, several gigabytes, from the cut to the end of the write-back.
import { type DocIds, enlarged } from './doc-numbers.js';

/** A cluster as dedup writes it: its canonical, its members by id and each one's similarity to the canonical. */
export interface DedupCluster {
  /** The canonical's id. */
  id: string;
  canonical: string;
  /** Sorted by id. */
  members: string[];
  /** Each duplicate's estimated Jaccard to the canonical (the canonical's own is 1). */
  similarity: Map<string, number>;
  /** The family it was cut from, named by the family's first member in the --canonical order. */
  family: string;
  /** Each member's number in the run's numbering, beside `members` (when the list knows them). */
  numbers?: Int32Array;
}

export class ClusterList implements Iterable<DedupCluster> {
  private members = new Int32Array(1024);
  private similarities = new Float64Array(1024);
  /** Where each cluster's members start (and, after the last, where they end). */
  private starts: number[] = [0];
  private canonicals: string[] = [];
  /** Each cluster's canonical, as an index among its members. */
  private canonicalAt: number[] = [];
  private families: string[] = [];
  /** The clusters in the order they are handed out (largest first, then by id); undefined until sorted. */
  private order?: Int32Array;

  constructor(private readonly documents: DocIds) {}

  get length(): number {
    return this.canonicals.length;
  }

  /** Members in every cluster. */
  get memberCount(): number {
    return this.starts[this.starts.length - 1];
  }

  /** A cluster as the cut made it, `numberOf` giving each member's number. */
  add(cluster: DedupCluster, numberOf: (id: string) => number): void {
    const start = this.memberCount;
    const end = start + cluster.members.length;
    if (end > this.members.length) {
      this.members = enlarged(this.members, Math.ceil(end * 1.5));
      this.similarities = enlarged(this.similarities, Math.ceil(end * 1.5));
    }
    cluster.members.forEach((id, k) => {
      this.members[start + k] = numberOf(id);
      this.similarities[start + k] = cluster.similarity.get(id) ?? 1;
    });
    this.starts.push(end);
    this.canonicals.push(cluster.canonical);
    this.canonicalAt.push(cluster.members.indexOf(cluster.canonical));
    this.families.push(cluster.family);
    this.order = undefined;
  }

  /** The members of the i-th cluster in the hand-out order. */
  sizeAt(i: number): number {
    const c = this.sorted()[i];
    return this.starts[c + 1] - this.starts[c];
  }

  /** The i-th cluster in the hand-out order (largest first, then by id), made whole. */
  at(i: number): DedupCluster {
    const c = this.sorted()[i];
    const start = this.starts[c];
    const numbers = this.members.subarray(start, this.starts[c + 1]);
    const members = this.documents.idsOf(numbers);
    const similarity = new Map(members.map((id, k) => [id, this.similarities[start + k]]));
    return { id: this.canonicals[c], canonical: this.canonicals[c], members, similarity, family: this.families[c], numbers: numbers.slice() };
  }

  *[Symbol.iterator](): Iterator<DedupCluster> {
    for (let i = 0; i < this.length; i++) yield this.at(i);
  }

  /** Every duplicate's similarity to its canonical (the canonicals' own left out). */
  *duplicateSimilarities(): Generator<number> {
    for (let c = 0; c < this.length; c++) {
      for (let k = this.starts[c]; k < this.starts[c + 1]; k++) if (k - this.starts[c] !== this.canonicalAt[c]) yield this.similarities[k];
    }
  }

  private sorted(): Int32Array {
    if (!this.order) {
      const size = (c: number) => this.starts[c + 1] - this.starts[c];
      const order = Int32Array.from({ length: this.length }, (_, c) => c);
      order.sort((a, b) => size(b) - size(a) || (this.canonicals[a] < this.canonicals[b] ? -1 : this.canonicals[a] > this.canonicals[b] ? 1 : 0));
      this.order = order;
    }
    return this.order;
  }
}
