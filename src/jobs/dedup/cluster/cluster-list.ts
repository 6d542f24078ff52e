// The clusters a dedup run cut, kept compact until they are written: each as a record of its members'
// document numbers and similarities to the canonical (cluster-members.ts: in memory, or in a file of the
// spill when the run spills its ids), made whole (its members' ids read from the numbering) only as it is
// handed out, in the order cut. Memory holds the counts of clusters by size and nothing a cluster: a
// hundred million documents with a seventh of them in clusters would otherwise hold fourteen million ids and
// a Map entry each, several gigabytes, from the cut to the end of the write-back. The largest clusters (the
// summary's) are picked in one pass over the records.
import type { DocIds } from '../documents/doc-numbers.js';
import { recordFile } from '../spill/record-file.js';
import type { SpillFolder } from '../spill/spill-folder.js';
import { ClusterLog, type ClusterRecord } from './cluster-members.js';

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
  /** Where the list keeps it (ClusterList.at). */
  place?: number;
}

/** Canonicals whose ids are read at once while the largest clusters are picked. */
const PICK_CHUNK = 1 << 16;

/**
 * The clusters a run cut, as compact records until each is handed out whole in the order cut (the file header says why
 * not as objects).
 */
export class ClusterList implements Iterable<DedupCluster> {
  private count = 0;
  private members = 0;
  /** Clusters by size. */
  private readonly sizes = new Map<number, number>();

  private readonly log: ClusterLog;

  /** `spill`: where the records go when the run spills its ids (else memory). */
  constructor(
    private readonly documents: DocIds,
    spill?: SpillFolder,
  ) {
    this.log = new ClusterLog(recordFile('clusters.bin', spill), () => documents.size);
  }

  get length(): number {
    return this.count;
  }

  /** Members in every cluster. */
  get memberCount(): number {
    return this.members;
  }

  /** The members of the largest cluster (0: none). */
  get largestSize(): number {
    let largest = 0;
    for (const size of this.sizes.keys()) largest = Math.max(largest, size);
    return largest;
  }

  /** A cluster as the cut made it, `numberOf` giving each member's number. */
  add(cluster: DedupCluster, numberOf: (id: string) => number): void {
    const numbers = Int32Array.from(cluster.members, (id) => wholeNumber(numberOf(id), id));
    const canonicalAt = cluster.members.indexOf(cluster.canonical);
    if (canonicalAt < 0) throw new Error(`cluster ${cluster.canonical}: its canonical is not among its members`);
    const similarities = Float64Array.from(cluster.members, (id) => cluster.similarity.get(id) ?? 1);
    this.log.append({ canonicalAt, family: wholeNumber(numberOf(cluster.family), cluster.family), numbers, similarities });
    this.count++;
    this.members += numbers.length;
    this.sizes.set(numbers.length, (this.sizes.get(numbers.length) ?? 0) + 1);
  }

  /** The cluster kept at `place` (a DedupCluster's), made whole. */
  at(place: number): DedupCluster {
    return this.whole(this.log.at(place));
  }

  /** Every cluster in the order cut, each made whole as it is handed out. */
  *[Symbol.iterator](): Iterator<DedupCluster> {
    for (const record of this.log.records()) yield this.whole(record);
  }

  /**
   * The k largest clusters, then by their canonical's id: those larger than the k-th's size all, and of its
   * size those with the smallest canonical ids, found in one pass with their ids read a chunk at a time.
   */
  top(k: number): DedupCluster[] {
    const edge = this.edgeSize(k);
    const larger: Canonical[] = [];
    let atEdge: Array<{ place: number; id: string }> = [];
    let pending: Canonical[] = [];
    const settle = () => {
      atEdge = smallestById([...atEdge, ...this.named(pending)], Math.max(0, k - larger.length));
      pending = [];
    };
    for (const record of this.log.records()) {
      const size = record.numbers.length;
      const canonical = { place: record.place, n: record.numbers[record.canonicalAt] };
      if (size > edge) larger.push(canonical);
      else if (size === edge) pending.push(canonical);
      if (pending.length >= PICK_CHUNK) settle();
    }
    settle();
    const picked = [...this.named(larger), ...atEdge].map(({ place }) => this.at(place));
    return picked.sort((a, b) => b.members.length - a.members.length || compareIds(a.canonical, b.canonical)).slice(0, k);
  }

  /** Every duplicate's similarity to its canonical (the canonicals' own left out), in the order cut. */
  *duplicateSimilarities(): Generator<number> {
    for (const { similarities, canonicalAt } of this.log.records()) {
      for (let k = 0; k < similarities.length; k++) if (k !== canonicalAt) yield similarities[k];
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
    let belowMinSimilarity = 0;
    let seen = 0;
    let median: number | null = null;
    for (const s of values) {
      if (s < bar) belowMinSimilarity += counts.get(s)!;
      seen += counts.get(s)!;
      // (The value at place total / 2, rounded down, of them all sorted.)
      if (median === null && seen > Math.floor(total / 2)) median = s;
    }
    return { min: total === 0 ? null : values[0], median, belowMinSimilarity };
  }

  /** The size of the k-th largest cluster (the smallest size when there are k or fewer). */
  private edgeSize(k: number): number {
    const sizes = [...this.sizes.keys()].sort((a, b) => b - a);
    let above = 0;
    for (const size of sizes) {
      above += this.sizes.get(size)!;
      if (above >= k) return size;
    }
    return sizes.length > 0 ? sizes[sizes.length - 1] : 0;
  }

  /** These clusters' places with their canonicals' ids (read in ascending numbers). */
  private named(canonicals: readonly Canonical[]): Array<{ place: number; id: string }> {
    const byNumber = [...canonicals].sort((a, b) => a.n - b.n);
    const ids = this.documents.idsOf(Int32Array.from(byNumber, (c) => c.n));
    return byNumber.map((c, i) => ({ place: c.place, id: ids[i] }));
  }

  private whole(record: ClusterRecord): DedupCluster {
    const { numbers, similarities, canonicalAt, family, place } = record;
    const members = this.documents.idsOf(numbers);
    const canonical = members[canonicalAt];
    const similarity = new Map(members.map((id, k) => [id, similarities[k]]));
    return { id: canonical, canonical, members, similarity, family: family === numbers[canonicalAt] ? canonical : this.documents.idOf(family), numbers, place };
  }
}

/** A cluster's place and its canonical's number. */
interface Canonical {
  place: number;
  n: number;
}

/** The k with the smallest ids. */
function smallestById<T extends { id: string }>(items: T[], k: number): T[] {
  return items.sort((a, b) => compareIds(a.id, b.id)).slice(0, k);
}

function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function wholeNumber(n: number, id: string): number {
  if (!Number.isInteger(n) || n < 0) throw new Error(`cluster member ${id} has no number in the run's numbering`);
  return n;
}
