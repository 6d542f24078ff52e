// The clusters a dedup run cut, kept compact until they are written: each member as its document number
// and its similarity to the canonical (cluster-members.ts: in memory, or in a file of the spill when the run
// spills its ids), and each cluster's canonical and family by number (24 bytes a cluster in all); a cluster
// is made whole (its members' ids read from the numbering) only as it is handed out. A hundred million
// documents with a seventh of them in clusters would otherwise hold fourteen million ids and a Map entry
// each, several gigabytes, from the cut to the end of the write-back.
import { type DocIds, enlarged } from './doc-numbers.js';
import { type ClusterMembers, MembersInMemory } from './cluster-members.js';

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

/** Members read at once when every cluster is gone through in the order cut. */
const READ_MEMBERS = 1 << 16;

export class ClusterList implements Iterable<DedupCluster> {
  /** Where each cluster's members start (and, after the last, where they end). */
  private starts = new Float64Array(1025);
  private count = 0;
  /** Each cluster's canonical, by number and as an index among its members; its family, by number. */
  private canonicals = new Int32Array(1024);
  private canonicalAt = new Int32Array(1024);
  private families = new Int32Array(1024);
  /** The clusters in the order they are handed out (largest first, then by id); undefined until sorted. */
  private order?: Int32Array;

  constructor(
    private readonly documents: DocIds,
    private readonly members: ClusterMembers = new MembersInMemory(),
  ) {}

  get length(): number {
    return this.count;
  }

  /** Members in every cluster. */
  get memberCount(): number {
    return this.starts[this.count];
  }

  /** A cluster as the cut made it, `numberOf` giving each member's number. */
  add(cluster: DedupCluster, numberOf: (id: string) => number): void {
    if (this.count + 1 >= this.starts.length) {
      const length = Math.ceil((this.count + 2) * 1.5);
      this.starts = enlarged(this.starts, length);
      this.canonicals = enlarged(this.canonicals, length);
      this.canonicalAt = enlarged(this.canonicalAt, length);
      this.families = enlarged(this.families, length);
    }
    const c = this.count++;
    this.members.append(
      cluster.members.map(numberOf),
      cluster.members.map((id) => cluster.similarity.get(id) ?? 1),
    );
    this.starts[c + 1] = this.members.length;
    this.canonicals[c] = numberOf(cluster.canonical);
    this.canonicalAt[c] = cluster.members.indexOf(cluster.canonical);
    this.families[c] = numberOf(cluster.family);
    this.order = undefined;
  }

  /** The members of the i-th cluster in the hand-out order. */
  sizeAt(i: number): number {
    return this.size(this.sorted()[i]);
  }

  /** The i-th cluster in the hand-out order (largest first, then by id), made whole. */
  at(i: number): DedupCluster {
    const c = this.sorted()[i];
    const { numbers, similarities } = this.members.read(this.starts[c], this.starts[c + 1]);
    const members = this.documents.idsOf(numbers);
    const canonical = members[this.canonicalAt[c]];
    const similarity = new Map(members.map((id, k) => [id, similarities[k]]));
    const family = this.families[c] === this.canonicals[c] ? canonical : this.documents.idOf(this.families[c]);
    return { id: canonical, canonical, members, similarity, family, numbers };
  }

  *[Symbol.iterator](): Iterator<DedupCluster> {
    for (let i = 0; i < this.length; i++) yield this.at(i);
  }

  /** Every duplicate's similarity to its canonical (the canonicals' own left out), in the order cut. */
  *duplicateSimilarities(): Generator<number> {
    for (let first = 0; first < this.count; ) {
      let end = first + 1;
      while (end < this.count && this.starts[end + 1] - this.starts[first] <= READ_MEMBERS) end++;
      const { similarities } = this.members.read(this.starts[first], this.starts[end]);
      for (let c = first; c < end; c++) {
        const from = this.starts[c] - this.starts[first];
        for (let k = 0; k < this.size(c); k++) if (k !== this.canonicalAt[c]) yield similarities[from + k];
      }
      first = end;
    }
  }

  /** The least and the median similarity of the duplicates to their canonicals, and how many are below the bar. */
  spread(bar: number): { min: number | null; median: number | null; belowMinSimilarity: number } {
    // Counted by value: a MinHash estimate takes one of a few hundred values, however many duplicates there are.
    const counts = new Map<number, number>();
    let total = 0;
    for (const s of this.duplicateSimilarities()) {
      counts.set(s, (counts.get(s) ?? 0) + 1);
      total++;
    }
    const values = Float64Array.from(counts.keys()).sort();
    let [belowMinSimilarity, seen] = [0, 0];
    let median: number | null = null;
    for (const s of values) {
      if (s < bar) belowMinSimilarity += counts.get(s)!;
      seen += counts.get(s)!;
      // (The value at place total / 2, rounded down, of them all sorted.)
      if (median === null && seen > Math.floor(total / 2)) median = s;
    }
    return { min: total === 0 ? null : values[0], median, belowMinSimilarity };
  }

  private size(c: number): number {
    return this.starts[c + 1] - this.starts[c];
  }

  /** Largest first; clusters of one size by their canonical's id (the ids of a size read together, in ascending numbers). */
  private sorted(): Int32Array {
    if (this.order) return this.order;
    const order = Int32Array.from({ length: this.count }, (_, c) => c).sort((a, b) => this.size(b) - this.size(a) || this.canonicals[a] - this.canonicals[b]);
    for (let i = 0; i < order.length; ) {
      let j = i + 1;
      while (j < order.length && this.size(order[j]) === this.size(order[i])) j++;
      if (j - i > 1) this.byCanonicalId(order.subarray(i, j));
      i = j;
    }
    this.order = order;
    return order;
  }

  /** Clusters given in ascending canonical numbers, put in the order of their canonicals' ids. */
  private byCanonicalId(clusters: Int32Array): void {
    const ids = this.documents.idsOf(clusters.map((c) => this.canonicals[c]));
    const places = Int32Array.from(ids, (_, k) => k).sort((a, b) => (ids[a] < ids[b] ? -1 : ids[a] > ids[b] ? 1 : 0));
    clusters.set(places.map((k) => clusters[k]));
  }
}
