// Verifying candidate pairs: the estimated Jaccard of two stored MinHash signatures against the bar, and
// what a verified pair does (joins a cluster, counts for each document's best similarity, is reported).
// Which pairs of a bucket to try is decided here too: every pair of a small bucket, and in a large one
// only pairs not yet in one cluster (joinBucket); a pair that an earlier band already tried is skipped.
import { minhashJaccard } from '../../sketch/minhash.js';
import { hammingDistance } from '../../sketch/simhash.js';
import { joinBucket } from './bucket-join.js';
import { DocNumbers, withRoomFor } from './doc-numbers.js';
import type { StoredSignature } from './signature-store.js';
import { UnionFind } from './union-find.js';

export interface VerifiedPair {
  a: string;
  b: string;
  jaccard: number;
  hamming: number;
}

/** Buckets up to this size are verified pair by pair; in larger ones, only pairs not already joined. */
export const PAIRWISE_BUCKET = 32;
/** Best matches kept per document for --format text. */
const MAX_MATCHES = 10;

export type Signatures = ReadonlyMap<string, StoredSignature>;

export interface PairHooks {
  /** A pair verified in this run (to journal it). */
  onVerified?: (pair: VerifiedPair) => void;
  /** Every pair recorded, verified now or replayed (to report it). */
  onRecorded?: (pair: VerifiedPair) => void;
}

export class PairVerifier {
  readonly clusters: UnionFind;
  /** Each document's best verified similarity, by document number (0: in no verified pair). */
  private best = new Float64Array(0);
  /** Each document's best matches, when asked for (--format text). */
  readonly matches?: Map<string, Array<{ id: string; jaccard: number }>>;
  buckets = 0;
  candidatePairs = 0;
  verifiedPairs = 0;
  /**
   * The 32-bit hashes of the band keys held by more documents than one bucket verifies at once, by band:
   * such a key is verified a chunk at a time, which can leave a pair of its documents untried, so it does
   * not count as having decided them.
   */
  private readonly largeKeys = new Map<number, Set<number>>();

  private readonly hooks: PairHooks;

  /** `documents`: the numbering shared with the signature store (one of its own if not given). */
  constructor(
    private readonly minSimilarity: number,
    options: { collectMatches?: boolean; documents?: DocNumbers } & PairHooks = {},
  ) {
    if (options.collectMatches) this.matches = new Map();
    this.hooks = { onVerified: options.onVerified, onRecorded: options.onRecorded };
    this.clusters = new UnionFind(options.documents ?? new DocNumbers());
  }

  /** A document's best verified similarity; 0 when it is in no verified pair. */
  bestMatch(id: string): number {
    const n = this.clusters.documents.find(id);
    return n !== undefined && n < this.best.length ? this.best[n] : 0;
  }

  /** The documents in at least one verified pair. */
  *involved(): Generator<string> {
    const documents = this.clusters.documents;
    for (let n = 0; n < this.best.length && n < documents.size; n++) if (this.best[n] > 0) yield documents.idOf(n);
  }

  markLargeKey(band: number, hash: number): void {
    let hashes = this.largeKeys.get(band);
    if (!hashes) this.largeKeys.set(band, (hashes = new Set()));
    hashes.add(hash);
  }

  /** Verifies one pair; a verified pair is recorded and reported. */
  verify(x: string, y: string, signatures: Signatures): boolean {
    const a = signatures.get(x)!, b = signatures.get(y)!;
    this.candidatePairs++;
    const jaccard = minhashJaccard(a.values, b.values);
    if (jaccard < this.minSimilarity) return false;
    this.verifiedPairs++;
    const [p, q] = x < y ? [x, y] : [y, x];
    const pair = { a: p, b: q, jaccard, hamming: hammingDistance(a.simhash, b.simhash) };
    this.hooks.onVerified?.(pair);
    this.record(pair);
    return true;
  }

  /** A verified pair (found now, or replayed from an interrupted run) joins its documents. */
  record(pair: VerifiedPair): void {
    const { a, b, jaccard } = pair;
    this.hooks.onRecorded?.(pair);
    for (const [id, other] of [[a, b], [b, a]]) {
      const n = this.clusters.documents.numberOf(id);
      this.best = withRoomFor(this.best, n);
      this.best[n] = Math.max(this.best[n], jaccard);
      if (this.matches) {
        const list = this.matches.get(id) ?? [];
        list.push({ id: other, jaccard });
        list.sort((m, n) => n.jaccard - m.jaccard || (m.id < n.id ? -1 : 1));
        this.matches.set(id, list.slice(0, MAX_MATCHES));
      }
    }
    this.clusters.union(a, b);
  }

  /**
   * Whether an earlier bucket of two documents decided them: 'yes' when they share a band key before
   * `band` (that bucket tried them), 'large' when the only ones they share before it are large keys
   * (which may not have), 'no' when they share none.
   */
  decidedEarlier(x: string, y: string, band: number | undefined, signatures: Signatures): 'yes' | 'large' | 'no' {
    if (band === undefined) return 'no';
    const a = signatures.get(x)!.bands, b = signatures.get(y)!.bands;
    let shared: 'large' | 'no' = 'no';
    for (let j = 0; j < band && j < a.length && j < b.length; j++) {
      if (a[j] !== b[j]) continue;
      if (!this.largeKeys.get(j)?.has(a[j])) return 'yes';
      shared = 'large';
    }
    return shared;
  }

  /**
   * Verifies the documents of one bucket (of band `band`): every pair in a small bucket. In a large one,
   * pairs of documents not yet in one cluster, until their clusters join (joinBucket): a bucket of n
   * near-identical documents costs about n comparisons, and no pair that would join two clusters goes
   * unverified, whatever the order of the members. With `anchor`, only the pairs that include it.
   */
  verifyBucket(ids: readonly string[], signatures: Signatures, options: { anchor?: string; band?: number } = {}): void {
    this.buckets++;
    const present = ids.filter((id) => signatures.has(id));
    if (options.anchor !== undefined) {
      if (!signatures.has(options.anchor)) return;
      for (const id of present) if (id !== options.anchor) this.verify(options.anchor, id, signatures);
      return;
    }
    if (present.length <= PAIRWISE_BUCKET) this.verifyEveryPair(present, signatures, options.band);
    else this.joinLargeBucket(present, signatures, options.band);
  }

  private verifyEveryPair(ids: readonly string[], signatures: Signatures, band: number | undefined): void {
    for (let i = 0; i < ids.length; i++) {
      for (let j = i + 1; j < ids.length; j++) {
        // A pair that met in a large key is verified here unless that key already joined it (so that no
        // pair is reported twice).
        const decided = this.decidedEarlier(ids[i], ids[j], band, signatures);
        if (decided === 'no' || (decided === 'large' && this.clusters.find(ids[i]) !== this.clusters.find(ids[j]))) this.verify(ids[i], ids[j], signatures);
      }
    }
  }

  private joinLargeBucket(ids: readonly string[], signatures: Signatures, band: number | undefined): void {
    // Signatures of another length cannot be compared (minhashJaccard refuses them): left out.
    const length = signatures.get(ids[0])!.values.length;
    const members = ids.filter((id) => signatures.get(id)!.values.length === length);
    joinBucket(
      members.map((id) => signatures.get(id)!.values),
      members.map((id) => this.clusters.find(id)),
      this.maxDistance(length),
      (i, j) => this.decidedEarlier(members[i], members[j], band, signatures) !== 'yes' && this.verify(members[i], members[j], signatures),
    );
  }

  /** The most MinHash values out of `length` in which a pair that passes verification can differ. */
  private maxDistance(length: number): number {
    let d = 0;
    while (d < length && (length - d - 1) / length >= this.minSimilarity) d++;
    return d;
  }
}
