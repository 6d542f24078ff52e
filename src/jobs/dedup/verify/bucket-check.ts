// Small buckets checked apart from the verifier's state, on threads beside the one that owns the families
// (BucketChecker, a core each beyond that one's): every pair of a bucket of at most PAIRWISE_BUCKET members
// tried as PairVerifier.verifyEveryPair tries it, what it needs of the families left to the replay
// (PairVerifier.applyChecked). A pair decided by an earlier band is dropped; one met before only in large
// keys is kept whatever its similarity (whether it is tried depends on the families at the replay); a new
// one is kept when it reaches the bar, else only counted.
import os from 'node:os';
import { Piscina } from 'piscina';
import { hammingDistance } from '../../../sketch/simhash.js';
import { workerFile } from '../../../worker-file.js';
import type { StoredSignature } from '../documents/signature-store.js';
import type { RecordLayout } from '../scan/spill-records.js';
import { type Comparing, comparerOf } from './comparing.js';

/** Ints a kept pair takes in CheckedBuckets.pairs: bucket, i, j, flags (hamming distance | LARGE). */
export const PAIR_INTS = 4;
/** The flag of a pair met before only in large keys. */
export const LARGE = 1 << 8;

/** What checking a run of buckets hands back: the pairs the replay needs, and the count that failed the bar. */
export interface CheckedBuckets {
  /** The pairs kept, PAIR_INTS ints each, bucket by bucket in order, each bucket's in the order tried. */
  pairs: Int32Array;
  /** The similarity of each kept pair, in the order of `pairs` (the verifier's comparer's, to the bit). */
  similarities: Float64Array;
  /** New pairs below the bar (candidates that failed). */
  rejected: number;
}

/** The large keys of each band before the one checked, as sets of key hashes (signed 32-bit). */
export type LargeKeysBefore = (band: number) => ReadonlySet<number> | undefined;

/**
 * Whether an earlier band decided two documents: 'yes' when they share a band key before `band` (that
 * bucket tried them), 'large' when the only ones they share before it are large keys (which may not have),
 * 'no' when they share none.
 */
export function decidedBefore(a: Int32Array, b: Int32Array, band: number | undefined, largeKeys: LargeKeysBefore): 'yes' | 'large' | 'no' {
  if (band === undefined) return 'no';
  let shared: 'large' | 'no' = 'no';
  for (let j = 0; j < band && j < a.length && j < b.length; j++) {
    if (a[j] !== b[j]) continue;
    if (!largeKeys(j)?.has(a[j])) return 'yes';
    shared = 'large';
  }
  return shared;
}

/** A run of small buckets of one band to check, as plain data (it crosses to the checking threads). */
export interface BucketsToCheck {
  band: number;
  minSimilarity: number;
  /** The slots of the buckets, one after the other: bucket k is order[bounds[k], bounds[k + 1]). */
  order: Uint32Array;
  bounds: Uint32Array;
  /** How the signatures are compared (the verifier's); by the share of equal values when not said. */
  comparing?: Comparing;
}

/** Checks every pair of each bucket (all of one width), keeping what the replay needs. */
export function checkBuckets(buckets: BucketsToCheck, signatureOf: (slot: number) => StoredSignature, largeKeys: LargeKeysBefore): CheckedBuckets {
  const { band, minSimilarity, order, bounds } = buckets;
  const compare = comparerOf(buckets.comparing);
  const kept: number[] = [];
  const similarities: number[] = [];
  let rejected = 0;
  for (let k = 0; k + 1 < bounds.length; k++) {
    const members = Array.from(order.subarray(bounds[k], bounds[k + 1]), signatureOf);
    for (let i = 0; i < members.length; i++) {
      for (let j = i + 1; j < members.length; j++) {
        const [a, b] = [members[i], members[j]];
        const decided = decidedBefore(a.bands, b.bands, band, largeKeys);
        if (decided === 'yes') continue;
        const similarity = compare(a.values, b.values);
        if (decided === 'no' && similarity < minSimilarity) rejected++;
        else {
          kept.push(k, i, j, hammingDistance(a.simhash, b.simhash) | (decided === 'large' ? LARGE : 0));
          similarities.push(similarity);
        }
      }
    }
  }
  return { pairs: Int32Array.from(kept), similarities: Float64Array.from(similarities), rejected };
}

/** What a checking thread is asked: a group of buckets, read from a records file of the spill. */
export interface BucketCheckTask extends BucketsToCheck {
  file: string;
  layout: RecordLayout;
  /** The large keys of each band before `band` (signed 32-bit hashes). */
  largeKeys: Int32Array[];
}

/** Threads that check buckets by default: every core but the caller's (at least one). */
export function defaultCheckers(): number {
  return Math.max(1, os.availableParallelism() - 1);
}

/** The threads that check small buckets beside this one (their code: bucket-check.worker.ts). */
export class BucketChecker {
  private readonly pool: Piscina;

  constructor(readonly threads: number = defaultCheckers()) {
    this.pool = new Piscina({ filename: workerFile('./bucket-check.worker.js', import.meta.url), minThreads: threads, maxThreads: threads });
  }

  /** Groups of buckets worth sending ahead of the one replayed (enough to keep every thread busy). */
  get ahead(): number {
    return 2 * this.threads;
  }

  check(task: BucketCheckTask): Promise<CheckedBuckets> {
    return this.pool.run(task) as Promise<CheckedBuckets>;
  }

  async close(): Promise<void> {
    await this.pool.destroy();
  }
}
