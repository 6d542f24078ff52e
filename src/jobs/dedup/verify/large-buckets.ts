// A bucket too large to try every pair of: its members joined with few comparisons and no pair missed that
// would join two families (joinBucket), and a key held by more documents than one bucket verifies at once
// (boilerplate, a template, thousands of copies), verified a chunk at a time (LargeKeyJoin).
//
// joinBucket: members start in the families earlier buckets put them in. Two families are compared only until
// one pair passes (then they are one), pairs inside one never. The number of differing MinHash values is a
// distance (Hamming), so two members whose distances to a pivot differ by more than a passing pair may differ
// cannot pass: a few pivots, chosen far apart, prune most pairs of unrelated documents that share a key.
import { equalValues } from '../../../sketch/minhash.js';
import type { StoredSignature } from '../documents/signature-store.js';

/** Pivots per bucket: each costs one comparison per member, and prunes pairs the others do not. */
const PIVOTS = 4;

function hamming(a: ArrayLike<number>, b: ArrayLike<number>): number {
  return a.length - equalValues(a, b);
}

/**
 * Calls `tryPair(i, j)` (which verifies the pair and says whether it joined them) for pairs of members of two
 * families that may differ in at most `maxDistance` values, until every two families are joined or every
 * such pair between them was tried. `values`: all of one length; `labels[i]`: member i's family at the start.
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

/** Families of one large key carried from chunk to chunk, one representative each, at most. */
const MAX_REPRESENTATIVES = 200;

interface Member {
  n: number;
  signature: StoredSignature;
}

/** What a large key's join asks of the verifier (pair-verifier.ts, which imports this module): verify a chunk's members, and the families so far. */
export interface ChunkVerifier {
  verifyMembersOf(bucket: { numbers: ArrayLike<number>; signatures: readonly StoredSignature[] }, band?: number): void;
  readonly clusters: { rootOf(n: number): number; joinedNumber(n: number): boolean };
}

/**
 * The documents of one large key verified a chunk at a time, in the order given, each chunk with a
 * representative of every family found so far in the key: copies of any number join one family; two
 * documents of different chunks that match neither's representative are left to their other keys.
 */
export class LargeKeyJoin {
  private representatives: Member[] = [];
  private chunk: Member[] = [];
  private readonly maxRepresentatives: number;

  constructor(
    private readonly verifier: ChunkVerifier,
    private readonly band: number,
    private readonly chunkSize: number,
  ) {
    this.maxRepresentatives = Math.min(MAX_REPRESENTATIVES, Math.floor(chunkSize / 2));
  }

  /** Document number n (in the verifier's numbering), with its signature. */
  add(n: number, signature: StoredSignature): void {
    this.chunk.push({ n, signature });
    if (this.representatives.length + this.chunk.length >= this.chunkSize) this.verifyChunk();
  }

  /** Copies the signatures it holds: the buffers they are views of are about to be read into again. */
  detach(): void {
    const copy = (m: Member): Member => ({ n: m.n, signature: { values: m.signature.values.slice(), simhash: m.signature.simhash, bands: m.signature.bands.slice() } });
    this.representatives = this.representatives.map(copy);
    this.chunk = this.chunk.map(copy);
  }

  finish(): void {
    if (this.chunk.length > 0) this.verifyChunk();
  }

  private verifyChunk(): void {
    const members = [...this.representatives, ...this.chunk];
    this.verifier.verifyMembersOf({ numbers: members.map((m) => m.n), signatures: members.map((m) => m.signature) }, this.band);
    const clusters = this.verifier.clusters;
    const byCluster = new Map<number, Member>();
    for (const member of members) {
      const root = clusters.rootOf(member.n);
      if (!byCluster.has(root)) byCluster.set(root, member);
    }
    // Clusters before single documents (which may still match something later), each in the order met.
    const found = [...byCluster.values()];
    const joined = (m: Member) => clusters.joinedNumber(m.n);
    this.representatives = [...found.filter(joined), ...found.filter((m) => !joined(m))].slice(0, this.maxRepresentatives);
    this.chunk = [];
  }
}
