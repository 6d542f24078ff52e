// The threads that check a spilled pass's small buckets (bucket-check.worker.ts), beside the one that owns
// the clusters: as many as the machine has cores beyond that one. Each task is a group of buckets; the
// caller sends a band's groups ahead, a few per thread, and replays the answers in order.
import os from 'node:os';
import { Piscina } from 'piscina';
import { workerFile } from '../../../worker-file.js';
import type { CheckedBuckets } from './bucket-check.js';
import type { BucketCheckTask } from './bucket-check.worker.js';

/** Threads that check buckets by default: every core but the caller's (at least one). */
export function defaultCheckers(): number {
  return Math.max(1, os.availableParallelism() - 1);
}

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
