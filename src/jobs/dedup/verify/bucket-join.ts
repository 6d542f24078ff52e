// Joining the members of one large LSH bucket into clusters with few comparisons, and without missing a
// pair that would join two clusters.
//
// Members start in the clusters earlier buckets put them in. Two clusters are compared only until one pair
// passes (then they are one), and pairs inside one cluster never. Pairs that cannot pass are not compared:
// the number of differing MinHash values is a distance (Hamming), so two members whose distances to a
// pivot differ by more than a passing pair may differ cannot pass. A few pivots, chosen far apart, prune
// most pairs of unrelated documents that share a key by chance or by boilerplate.
import { equalValues } from '../../../sketch/minhash.js';

/** Pivots per bucket: each costs one comparison per member, and prunes pairs the others do not. */
const PIVOTS = 4;

function hamming(a: ArrayLike<number>, b: ArrayLike<number>): number {
  return a.length - equalValues(a, b);
}

/**
 * Calls `tryPair(i, j)` for pairs of members of different clusters whose MinHash values differ in at most
 * `maxDistance` positions (as far as the triangle inequality can tell), until every two clusters are joined or every such pair
 * between them has been tried; `tryPair` verifies the pair and returns whether it joined them.
 * `values` must all have the same length; `labels[i]` is member i's cluster at the start (equal labels:
 * already joined).
 */
export function joinBucket(values: ReadonlyArray<ArrayLike<number>>, labels: readonly unknown[], maxDistance: number, tryPair: (i: number, j: number) => boolean): void {
  const n = values.length;
  const byLabel = new Map<unknown, number[]>();
  labels.forEach((label, i) => {
    const members = byLabel.get(label);
    if (members) members.push(i);
    else byLabel.set(label, [i]);
  });
  const groups = [...byLabel.values()];
  if (groups.length < 2) return; // joined already (the usual case after a document's first bands)
  const alive = groups.map(() => true);

  // Distances to pivots chosen farthest-first (each next pivot is the member farthest from all before
  // it), computed when first needed (a bucket whose members are all joined needs none).
  let distances: Int32Array[] | undefined;
  const pivotDistances = (): Int32Array[] => {
    const found: Int32Array[] = [];
    const nearest = new Int32Array(n).fill(0x7fffffff);
    for (let pivot = 0; found.length < Math.min(PIVOTS, n); ) {
      const d = new Int32Array(n);
      let farthest = 0;
      for (let i = 0; i < n; i++) {
        d[i] = hamming(values[i], values[pivot]);
        if (d[i] < nearest[i]) nearest[i] = d[i];
        if (nearest[i] > nearest[farthest]) farthest = i;
      }
      found.push(d);
      if (nearest[farthest] === 0) break; // every member equals a pivot: more pivots prune nothing
      pivot = farthest;
    }
    return found;
  };
  /** Whether members i and j may differ in at most `limit` values, by their distances to the pivots. */
  const mayPass = (i: number, j: number, limit = maxDistance): boolean => {
    for (const d of (distances ??= pivotDistances())) if (Math.abs(d[i] - d[j]) > limit) return false;
    return true;
  };

  // Each cluster keeps its first member as its centre, and every member's distance to it (its radius):
  // a member x of A and y of B differ in at least d(centre A, centre B) - r(x) - r(y) values, so two
  // clusters far apart are told apart with one comparison of their centres, not |A| x |B|.
  const radius = new Int32Array(n);
  const widest = groups.map((members) => {
    let widest = 0;
    for (let k = 1; k < members.length; k++) widest = Math.max(widest, (radius[members[k]] = hamming(values[members[k]], values[members[0]])));
    return widest;
  });
  /** Whether a pair of `pending` (members of cluster a, the farthest `reach` from its centre) and cluster b passes. */
  const linked = (pending: readonly number[], reach: number, a: number, b: number): boolean => {
    const centreA = groups[a][0], centreB = groups[b][0];
    // The pivots first (a few subtractions), then the centres (one comparison).
    if (!mayPass(centreA, centreB, maxDistance + reach + widest[b])) return false;
    const apart = hamming(values[centreA], values[centreB]);
    if (apart - reach - widest[b] > maxDistance) return false;
    for (const x of pending) {
      if (apart - radius[x] - widest[b] > maxDistance) continue;
      for (const y of groups[b]) {
        if (apart - radius[x] - radius[y] <= maxDistance && mayPass(x, y) && tryPair(x, y)) return true;
      }
    }
    return false;
  };

  // Each cluster in turn is compared with every later one, and once more with the members it took in, so
  // that when it is done, no pair between it and a later cluster is left untried.
  for (let a = 0; a < groups.length; a++) {
    if (!alive[a]) continue;
    let pending = groups[a];
    while (pending.length > 0) {
      let reach = 0;
      for (const x of pending) reach = Math.max(reach, radius[x]);
      const taken: number[] = [];
      for (let b = a + 1; b < groups.length; b++) {
        if (!alive[b] || !linked(pending, reach, a, b)) continue;
        alive[b] = false;
        for (const y of groups[b]) widest[a] = Math.max(widest[a], (radius[y] = hamming(values[y], values[groups[a][0]])));
        taken.push(...groups[b]);
      }
      groups[a] = groups[a].concat(taken);
      pending = taken;
    }
  }
}
