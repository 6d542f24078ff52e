// Small buckets checked apart from the verifier's state, so that threads beside the one that owns the
// clusters can do the comparing: every pair of a bucket of at most PAIRWISE_BUCKET members is tried as
// PairVerifier.verifyEveryPair tries it (in the same order), and what it needs of the clusters is left to
// the replay (PairVerifier.applyChecked). A pair is either
//  - decided by an earlier band ('yes': a bucket of that band tried it): dropped;
//  - met before only in large keys ('large'): kept whatever its similarity, since whether it is tried at
//    all depends on whether the clusters have joined its documents by then;
//  - new ('no'): kept when it reaches the bar, else only counted (a candidate that failed).
// The threads that check a spilled pass's small buckets (BucketChecker; the thread's code in
// bucket-check.worker.ts) run beside the one that owns the clusters, as many as the machine has cores beyond
// that one. Each task is a group of buckets; the caller sends a band's groups ahead, a few per thread, and
// replays the answers in order.
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

/**
 * What checking a run of buckets hands back: the pairs the replay needs with their similarities, and the count that
 * failed the bar.
 */
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
  /** How the signatures are compared (the verifier's), as plain data; by the share of equal values when not said. */
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

/** What a checking thread is asked: a group of buckets, read from the spill's records file. */
export interface BucketCheckTask extends BucketsToCheck {
  /** The spill's records file, and the layout of its records. */
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
