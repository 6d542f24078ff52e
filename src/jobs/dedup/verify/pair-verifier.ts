// The verify stage: which pairs of a bucket to try (every pair of a small bucket, in a large one only pairs
// not yet in one cluster, never one an earlier band tried), the estimated Jaccard of their stored MinHash
// signatures against the bar, and what a verified pair does: joins a family, counts for each document's best
// match, is journaled and reported.
import { hammingDistance } from '../../../sketch/simhash.js';
import { type CheckedBuckets, decidedBefore, LARGE, PAIR_INTS } from './bucket-check.js';
import { joinBucket } from './large-buckets.js';
import { type Comparing, comparerOf } from './comparing.js';
import { type DocIds, DocNumbers } from '../documents/doc-numbers.js';
import { BestMatches } from './best-matches.js';
import { SetsOnDisk } from './sets-on-disk.js';
import type { StoredSignature } from '../documents/signature-store.js';
import type { SpillFolder } from '../spill/spill-folder.js';
import { UnionFind } from './union-find.js';
import { ascendingOnce, placeIn } from '../scan/spill-records.js';

/** A verified pair by its documents' ids, with its estimated Jaccard and the Hamming distance of their SimHashes. */
export interface VerifiedPair {
  a: string;
  b: string;
  jaccard: number;
  hamming: number;
}

/** A verified pair by the numbers of its documents (their ids are read only when asked for). */
export interface NumberedPair {
  na: number;
  nb: number;
  jaccard: number;
  hamming: number;
}

/** Buckets up to this size are verified pair by pair; in larger ones, only pairs not already joined. */
export const PAIRWISE_BUCKET = 32;
/** Best matches kept per document for --format text. */
const MAX_MATCHES = 10;

/** The signatures of the documents to verify, by id (for the callers that go by id rather than number). */
export type Signatures = ReadonlyMap<string, StoredSignature>;

/** Where the rows of the documents in a verified pair go past `maxRows` of them (sets-on-disk.ts). */
export interface SpillRows {
  folder: SpillFolder;
  maxRows: number;
}

/** The members of one bucket, side by side: their numbers in the verifier's numbering, their signatures. */
export interface BucketMembers {
  numbers: ArrayLike<number>;
  signatures: readonly StoredSignature[];
}

/** Who hears of a pair: the journal of those verified in this run, the report of every pair recorded. */
export interface PairHooks {
  /** A pair verified in this run (to journal it), by numbers. */
  onVerified?: (pair: NumberedPair) => void;
  /** Every pair recorded, verified now or replayed (to report it), by ids. */
  onRecorded?: (pair: VerifiedPair) => void;
}

/** A verifier made for a pass, that hands every pair it verifies to `onVerified` (the pass's journal) when given. */
export type VerifierFor = (onVerified?: (pair: NumberedPair) => void) => PairVerifier;

/** The verify stage's state, as the file header says. */
export class PairVerifier {
  /** The stage's output: the families the verified pairs make, and each document's best match. */
  readonly clusters: UnionFind;
  readonly best: BestMatches;
  /** Each document's best matches, when asked for (--format text). */
  readonly matches?: Map<string, Array<{ id: string; jaccard: number }>>;
  buckets = 0;
  candidatePairs = 0;
  verifiedPairs = 0;
  /** By band, the hashes of its large keys: verified a chunk at a time, such a key may leave a pair untried. */
  private readonly largeKeys = new Map<number, Set<number>>();

  private readonly hooks: PairHooks;
  /** How two signatures are compared (comparing.ts): known with the width, else by the share of equal values. */
  readonly comparing?: Comparing;
  private readonly compare: (x: Uint32Array, y: Uint32Array) => number;

  /**
   * `documents`: the numbering shared with the signature store (else its own); `width`: the signatures' number
   * of MinHash values, when all have it (at most 65,535); `core`: whether they carry core words (`;core=`).
   */
  constructor(
    readonly minSimilarity: number,
    options: { collectMatches?: boolean; documents?: DocIds; width?: number; core?: boolean; spill?: SpillRows } & PairHooks = {},
  ) {
    const { width, core } = options;
    const known = width !== undefined && Number.isInteger(width) && width > 0 && width < 65_536;
    if (core && !known) throw new RangeError(`signatures with core words are compared knowing their number of values, got width ${width}`);
    if (known) this.comparing = { numPerm: width, core: core === true };
    this.compare = comparerOf(this.comparing);
    if (options.collectMatches) this.matches = new Map();
    this.hooks = { onVerified: options.onVerified, onRecorded: options.onRecorded };
    this.clusters = new UnionFind(options.documents ?? new DocNumbers());
    // (The rule's similarities are not counts of equal values over the width: kept as numbers.)
    this.best = new BestMatches(this.clusters, known && !core ? width : undefined);
    // Past `maxRows` documents in a verified pair, the sets and best matches are written by number into the folder.
    if (options.spill) {
      const disk = new SetsOnDisk(options.spill.folder);
      this.clusters.spillTo(disk, options.spill.maxRows, this.best.columnsOn(disk));
    }
  }

  /** Document n's best verified similarity (0: none). */
  bestOf(n: number | undefined): number {
    return this.best.of(n).similarity;
  }

  /** The document n has its best verified similarity with (the smallest id on a tie), if any. */
  partnerOf(n: number | undefined): string | undefined {
    return this.best.of(n).partner;
  }

  /** bestOf by id. */
  bestMatch(id: string): number {
    return this.bestOf(this.best.numberOf(id));
  }

  /** partnerOf by id. */
  bestPartner(id: string): string | undefined {
    return this.partnerOf(this.best.numberOf(id));
  }

  /** The documents in at least one verified pair. */
  *involved(): Generator<string> {
    const documents = this.clusters.documents;
    for (const n of this.involvedNumbers()) yield documents.idOf(n);
  }

  /** The numbers of the documents in at least one verified pair, ascending (once rows were written, from the disk, every row written first). */
  *involvedNumbers(): Generator<number> {
    const disk = this.clusters.written;
    if (disk) {
      this.clusters.writeRows();
      yield* disk.involved();
      return;
    }
    // (Taken before the first is handed out: a pair recorded meanwhile may write the rows and let them go.)
    const rows = this.clusters.rows;
    const numbers = rows.ascending();
    let kept = 0;
    for (const row of numbers) if (this.best.has(row)) numbers[kept++] = rows.numberAt(row);
    yield* numbers.subarray(0, kept);
  }

  markLargeKey(band: number, hash: number): void {
    let hashes = this.largeKeys.get(band);
    if (!hashes) this.largeKeys.set(band, (hashes = new Set()));
    hashes.add(hash);
  }

  /** Verifies one pair; a verified pair is recorded and reported. */
  verify(x: string, y: string, signatures: Signatures): boolean {
    return this.verifyMembers(this.members([x, y], signatures), 0, 1);
  }

  /** A verified pair (found now, or replayed from an interrupted run) joins its documents. */
  record(pair: VerifiedPair): void {
    const documents = this.clusters.documents;
    this.recordNumbered({ na: documents.numberOf(pair.a), nb: documents.numberOf(pair.b), jaccard: pair.jaccard, hamming: pair.hamming }, pair);
  }

  /** A pair verified elsewhere (checked by the final step of a split run), by its numbers, with its ids as they are known. */
  recordChecked(pair: NumberedPair, named: VerifiedPair): void {
    this.recordNumbered(pair, named);
  }

  /** A pair by the ids of its documents, the smaller first. */
  named(pair: NumberedPair): VerifiedPair {
    const documents = this.clusters.documents;
    return namedPair(pair, documents.idOf(pair.na), documents.idOf(pair.nb));
  }

  /** Whether an earlier bucket of two documents decided them (decidedBefore in bucket-check.ts), by id. */
  decidedEarlier(x: string, y: string, band: number | undefined, signatures: Signatures): 'yes' | 'large' | 'no' {
    return decidedBefore(signatures.get(x)!.bands, signatures.get(y)!.bands, band, this.largeKeysOf);
  }

  /**
   * Verifies the documents of one bucket (of band `band`): every pair of a small one; in a large one, pairs of
   * two families until they join (joinBucket: about n comparisons for n near-copies, no pair missed that would
   * join two). With `anchor`, only the pairs that include it.
   */
  verifyBucket(ids: readonly string[], signatures: Signatures, options: { anchor?: string; band?: number } = {}): void {
    const { anchor } = options;
    if (anchor === undefined) {
      this.verifyMembersOf(this.members(ids, signatures), options.band);
      return;
    }
    this.buckets++;
    if (!signatures.has(anchor)) return;
    const bucket = this.members([anchor, ...ids.filter((id) => id !== anchor)], signatures);
    for (let k = 1; k < bucket.numbers.length; k++) this.verifyMembers(bucket, 0, k);
  }

  /** verifyBucket for members already numbered in this verifier's numbering (the pass that holds every signature). */
  verifyMembersOf(bucket: BucketMembers, band?: number): void {
    this.buckets++;
    if (bucket.numbers.length <= PAIRWISE_BUCKET) this.verifyEveryPair(bucket, band);
    else this.joinLargeBucket(bucket, band);
  }

  /** The members of `ids` that have a signature, numbered. */
  private members(ids: readonly string[], signatures: Signatures): BucketMembers {
    const present = ids.filter((id) => signatures.has(id));
    const documents = this.clusters.documents;
    return { numbers: present.map((id) => documents.numberOf(id)), signatures: present.map((id) => signatures.get(id)!) };
  }

  /** Verifies members i and j of a bucket; a verified pair is recorded and reported. */
  private verifyMembers(bucket: BucketMembers, i: number, j: number): boolean {
    const a = bucket.signatures[i], b = bucket.signatures[j];
    if (bucket.numbers[i] === bucket.numbers[j]) return false; // (one document met twice: no pair)
    this.candidatePairs++;
    const jaccard = this.compare(a.values, b.values);
    if (jaccard < this.minSimilarity) return false;
    this.accept({ na: bucket.numbers[i], nb: bucket.numbers[j], jaccard, hamming: hammingDistance(a.simhash, b.simhash) });
    return true;
  }

  /** A pair that reached the bar here: counted, reported to be journaled, recorded. */
  private accept(pair: NumberedPair): void {
    this.verifiedPairs++;
    this.hooks.onVerified?.(pair);
    this.recordNumbered(pair);
  }

  /** Records a pair (its ids read only when a report or the matches need them). */
  private recordNumbered(pair: NumberedPair, named?: VerifiedPair): void {
    const { na, nb, jaccard } = pair;
    // A document is no pair with itself: one met twice in a bucket (one _id in two indices of an alias is
    // numbered once) is not tried; a journal that holds such a pair is damaged.
    if (na === nb) return;
    if (this.hooks.onRecorded || this.matches) named ??= this.named(pair);
    if (named) this.hooks.onRecorded?.(named);
    this.clusters.unionNumbers(na, nb);
    this.best.offer(na, nb, jaccard);
    if (this.matches && named) {
      const { a, b } = named;
      for (const [id, other] of [[a, b], [b, a]]) {
        const list = this.matches.get(id) ?? [];
        list.push({ id: other, jaccard });
        list.sort((m, n) => n.jaccard - m.jaccard || (m.id < n.id ? -1 : 1));
        this.matches.set(id, list.slice(0, MAX_MATCHES));
      }
    }
  }

  /** The large keys marked in a band. */
  readonly largeKeysOf = (band: number): ReadonlySet<number> | undefined => this.largeKeys.get(band);

  /**
   * A small bucket checked on another thread (bucket-check.ts), replayed as verifyEveryPair would verify it: its
   * kept pairs [from, to) in order, one met before only in large keys tried only while its documents are in two
   * families. `numbers`: the bucket's members.
   */
  applyChecked(numbers: ArrayLike<number>, { pairs, similarities }: CheckedBuckets, from: number, to: number): void {
    this.buckets++;
    for (let p = from; p < to; p += PAIR_INTS) {
      const na = numbers[pairs[p + 1]], nb = numbers[pairs[p + 2]], flags = pairs[p + 3];
      if (na === nb || (flags & LARGE && this.clusters.rootOf(na) === this.clusters.rootOf(nb))) continue;
      this.candidatePairs++;
      const jaccard = similarities[p / PAIR_INTS];
      if (jaccard >= this.minSimilarity) this.accept({ na, nb, jaccard, hamming: flags & (LARGE - 1) });
    }
  }

  /** New pairs that another thread found below the bar (candidates that failed). */
  countRejected(pairs: number): void {
    this.candidatePairs += pairs;
  }

  private verifyEveryPair(bucket: BucketMembers, band: number | undefined): void {
    const { numbers, signatures } = bucket;
    for (let i = 0; i < numbers.length; i++) {
      for (let j = i + 1; j < numbers.length; j++) {
        // (A pair met in a large key is verified here unless it was joined already: no pair reported twice.)
        const decided = decidedBefore(signatures[i].bands, signatures[j].bands, band, this.largeKeysOf);
        if (decided === 'no' || (decided === 'large' && this.clusters.rootOf(numbers[i]) !== this.clusters.rootOf(numbers[j]))) this.verifyMembers(bucket, i, j);
      }
    }
  }

  private joinLargeBucket(bucket: BucketMembers, band: number | undefined): void {
    // Signatures of another length cannot be compared (the comparers refuse them): left out.
    const { numbers, signatures } = bucket;
    const length = signatures[0].values.length;
    const members: number[] = [];
    for (let k = 0; k < signatures.length; k++) if (signatures[k].values.length === length) members.push(k);
    joinBucket(
      members.map((k) => signatures[k].values),
      members.map((k) => this.clusters.rootOf(numbers[k])),
      this.maxDistance(length),
      (i, j) => decidedBefore(signatures[members[i]].bands, signatures[members[j]].bands, band, this.largeKeysOf) !== 'yes' && this.verifyMembers(bucket, members[i], members[j]),
    );
  }

  /**
   * The most MinHash values out of `length` in which a pair that passes verification can differ. Any number
   * under the core rule: a pair with small cores is as similar as its cores, however many values differ.
   */
  private maxDistance(length: number): number {
    if (this.comparing?.core) return length;
    let d = 0;
    while (d < length && (length - d - 1) / length >= this.minSimilarity) d++;
    return d;
  }
}

/** The pair with these ids for its numbers, the smaller id first. */
export function namedPair(pair: NumberedPair, x: string, y: string): VerifiedPair {
  const { jaccard, hamming } = pair;
  return x < y ? { a: x, b: y, jaccard, hamming } : { a: y, b: x, jaccard, hamming };
}

/** Pairs by the ids of their documents, each id read once, in ascending numbers (the cheap order for ids on disk). */
export function namedPairs(pairs: readonly NumberedPair[], documents: DocIds): VerifiedPair[] {
  const numbers = new Uint32Array(2 * pairs.length);
  pairs.forEach((p, i) => {
    numbers[2 * i] = p.na;
    numbers[2 * i + 1] = p.nb;
  });
  const sorted = ascendingOnce(numbers);
  const ids = documents.idsOf(sorted);
  const idOf = (n: number) => ids[placeIn(sorted, n)];
  return pairs.map((p) => namedPair(p, idOf(p.na), idOf(p.nb)));
}
