// How well clusters match a truth, by one notion of similarity: the exact Jaccard of two documents' token
// sets (word 4-shingles, for evaluate --truth-field and bench:quality alike). Two documents are a true pair
// when they have one source (the truth's label), or when their exact Jaccard is at least 0.9 (nearly
// identical texts of different sources, e.g. alias pages): sources joined by such a pair are united into one
// truth group, and a true pair is two documents of one group. From each document's cluster:
//  - pair precision: of the pairs of documents put in one cluster, the share in one truth group;
//  - recall: of the true pairs with exact J >= 0.7, the share put in one cluster;
//  - split: the truth groups with a pair at exact J >= 0.9 whose two documents end in different clusters;
//  - the largest cluster, with how many truth groups and sources it mixes.
// Pure: the sets come in made, the clusters as keys. Every pair at J >= t is found exactly without comparing
// all pairs, by prefix filtering (Chaudhuri et al. 2006; Bayardo et al., "Scaling up all pairs similarity
// search", WWW 2007): tokens ordered rarest first, two sets with J >= t share a token within the first
// |x| - ceil(t |x|) + 1 of each.
export const SAME_TEXT = 0.9;
/**
 * Recall counts the true pairs at this exact Jaccard or more: below it, a pair of one source is not a near-duplicate
 * to find.
 */
export const RECALL_FROM = 0.7;

/** A document's distinct tokens, ascending. */
export type TokenSet = Uint32Array | Int32Array;

/** Two documents (i < j) and their exact Jaccard. */
export type ScoredPair = [number, number, number];

/**
 * How rare each token is: an upper bound of the documents that hold it (a count that may be too high, never
 * too low, below 2^20). Prefixes are the rarest tokens (by count, then value); a token counted in one document
 * only is left out of the index (no other set can share it). Without it, tokens are ranks already, rarest first.
 */
export type DocumentFrequency = (token: number) => number;

const pairsOf = (n: number) => (n * (n - 1)) / 2;

/** Exact Jaccard of two ascending sets. */
export function jaccard(a: TokenSet, b: TokenSet): number {
  if (a.length === 0 || b.length === 0) return 0;
  let i = 0;
  let j = 0;
  let shared = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      shared++;
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return shared / (a.length + b.length - shared);
}

const TOKENS = 2 ** 32;

function prefixOf(set: TokenSet, length: number, df: DocumentFrequency | undefined): number[] {
  if (!df) return Array.from(set.subarray(0, length));
  // Rarest first, as one number each (count, then token: exact below 2^53) sorted natively: a comparator was most of the time.
  const keys = new Float64Array(set.length);
  for (let k = 0; k < set.length; k++) keys[k] = df(set[k]) * TOKENS + (set[k] >>> 0);
  keys.sort();
  const out: number[] = [];
  for (let k = 0; k < length; k++) if (keys[k] >= 2 * TOKENS) out.push(keys[k] % TOKENS);
  return out;
}

/** Every pair [i, j, J] of `members` (indices into sets) with exact J >= t, i < j, by prefix filtering. */
export function pairsAtLeast(sets: readonly TokenSet[], t: number, df?: DocumentFrequency, members?: readonly number[]): ScoredPair[] {
  const bySize = (members ?? sets.map((_, i) => i)).filter((i) => sets[i].length > 0).sort((a, b) => sets[a].length - sets[b].length || a - b);
  const index = new Map<number, number[]>();
  const out: ScoredPair[] = [];
  for (const x of bySize) {
    const set = sets[x];
    const prefix = prefixOf(set, set.length - Math.ceil(t * set.length) + 1, df);
    const seen = new Set<number>();
    for (const token of prefix) {
      for (const y of index.get(token) ?? []) {
        if (seen.has(y) || sets[y].length < t * set.length) continue;
        seen.add(y);
        const j = jaccard(set, sets[y]);
        if (j >= t) out.push(x < y ? [x, y, j] : [y, x, j]);
      }
    }
    for (const token of prefix) {
      const list = index.get(token);
      if (list) list.push(x);
      else index.set(token, [x]);
    }
  }
  return out;
}

/** The truth: each document's group (sources joined by pairs at SAME_TEXT), and the true pairs. */
export interface Truth {
  /** Each document's truth group (the smallest document number in it). */
  group: Int32Array;
  /** Each document's source, numbered (a document without one is its own). */
  source: Int32Array;
  groups: number;
  sources: number;
  /** Pairs of different sources at J >= 0.9: they unite their sources' groups. */
  crossSource: number;
  /** The true pairs with J >= 0.7 (what recall is of), and those with J >= 0.9 (what must not be split). */
  recallPairs: ScoredPair[];
  mustJoin: ScoredPair[];
  /** Truth groups that hold a pair at J >= 0.9. */
  groupsWithSameText: number;
}

/** Sources (a label per document; undefined: its own) as numbers. */
function numberedSources(labels: ReadonlyArray<string | undefined>): { source: Int32Array; sources: number } {
  const numbers = new Map<string, number>();
  let own = 0;
  const source = Int32Array.from(labels, (label) => {
    if (label === undefined) return -1 - own++;
    let n = numbers.get(label);
    if (n === undefined) numbers.set(label, (n = numbers.size));
    return n;
  });
  return { source, sources: numbers.size + own };
}

/** The truth of documents: their token sets (ascending) and each one's source label. */
export function truthOf(sets: readonly TokenSet[], labels: ReadonlyArray<string | undefined>, df?: DocumentFrequency): Truth {
  const { source, sources } = numberedSources(labels);
  const firstOf = new Map<number, number>();
  const parent = Array.from(source, (s, i) => {
    if (!firstOf.has(s)) firstOf.set(s, i);
    return firstOf.get(s) as number;
  });
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i])));
  let crossSource = 0;
  for (const [i, j] of pairsAtLeast(sets, SAME_TEXT, df)) {
    if (source[i] !== source[j]) crossSource++;
    const [a, b] = [root(i), root(j)];
    if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
  }
  const group = Int32Array.from(parent, (_, i) => root(i));
  const members = new Map<number, number[]>();
  for (const [i, g] of group.entries()) {
    const list = members.get(g);
    if (list) list.push(i);
    else members.set(g, [i]);
  }
  // Within each group only (its pairs at J >= 0.7 found by prefix filtering too, so a large source costs what its similar pairs cost).
  const recallPairs = [...members.values()].filter((list) => list.length > 1).flatMap((list) => pairsAtLeast(sets, RECALL_FROM, df, list));
  const mustJoin = recallPairs.filter(([, , j]) => j >= SAME_TEXT);
  const groupsWithSameText = new Set(mustJoin.map(([i]) => group[i])).size;
  return { group, source, groups: members.size, sources, crossSource, recallPairs, mustJoin, groupsWithSameText };
}

/** How well the clusters match the truth: pair precision, recall, groups split, and the largest cluster. */
export interface ClusterScores {
  /** Pair precision (null without a cluster), and the pairs behind it. */
  precision: number | null;
  clusterPairs: number;
  truePairsInClusters: number;
  /** Recall of the true pairs at J >= 0.7 (null without one), and the pairs behind it. */
  recall: number | null;
  recallPairs: number;
  recallFound: number;
  /** Truth groups with a J >= 0.9 pair split, of those that hold one. */
  split: number;
  splitOf: number;
  /** Clusters of two or more, and the documents in them. */
  clusters: number;
  clustered: number;
  /** The largest cluster (ties: the one that mixes more groups): its size, truth groups and sources. */
  largest: { key: string | null; size: number; groups: number; sources: number };
}

/** Cluster keys (one per document, undefined when alone) as cluster numbers, each alone document its own. */
function numberedClusters(keys: ReadonlyArray<string | undefined | null>): Int32Array {
  const numbers = new Map<string, number>();
  return Int32Array.from(keys, (k, i) => {
    if (k === undefined || k === null) return -1 - i;
    let n = numbers.get(k);
    if (n === undefined) numbers.set(k, (n = numbers.size));
    return n;
  });
}

const distinct = (list: readonly number[], of: Int32Array) => new Set(list.map((i) => of[i])).size;

/** The scores of one clustering: keys[i] is document i's cluster key. */
export function scoreClusters(keys: ReadonlyArray<string | undefined | null>, truth: Truth): ClusterScores {
  const cluster = numberedClusters(keys);
  const members = new Map<number, number[]>();
  for (const [i, c] of cluster.entries()) {
    const list = members.get(c);
    if (list) list.push(i);
    else members.set(c, [i]);
  }
  let clusterPairs = 0;
  let truePairs = 0;
  let clusters = 0;
  let clustered = 0;
  let largest: ClusterScores['largest'] = { key: null, size: 0, groups: 0, sources: 0 };
  for (const list of members.values()) {
    if (list.length < 2) continue;
    clusters++;
    clustered += list.length;
    clusterPairs += pairsOf(list.length);
    const byGroup = new Map<number, number>();
    for (const i of list) byGroup.set(truth.group[i], (byGroup.get(truth.group[i]) ?? 0) + 1);
    for (const n of byGroup.values()) truePairs += pairsOf(n);
    if (list.length > largest.size || (list.length === largest.size && byGroup.size > largest.groups)) {
      largest = { key: keys[list[0]] ?? null, size: list.length, groups: byGroup.size, sources: distinct(list, truth.source) };
    }
  }
  const found = truth.recallPairs.filter(([i, j]) => cluster[i] === cluster[j]).length;
  const split = new Set(truth.mustJoin.filter(([i, j]) => cluster[i] !== cluster[j]).map(([i]) => truth.group[i]));
  return {
    precision: clusterPairs ? truePairs / clusterPairs : null,
    clusterPairs,
    truePairsInClusters: truePairs,
    recall: truth.recallPairs.length ? found / truth.recallPairs.length : null,
    recallPairs: truth.recallPairs.length,
    recallFound: found,
    split: split.size,
    splitOf: truth.groupsWithSameText,
    clusters,
    clustered,
    largest,
  };
}
