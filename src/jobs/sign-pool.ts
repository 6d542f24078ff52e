// Signing on every core: batches go to worker threads (piscina).
import os from 'node:os';
import { Piscina } from 'piscina';
import type { SignedLines } from './sign-lines.js';
import type { SignTask } from './sign-worker.js';

export interface SignPool {
  readonly threads: number;
  signLines(task: SignTask): Promise<SignedLines>;
  close(): Promise<void>;
}

export function createSignPool(threads = os.availableParallelism()): SignPool {
  const pool = new Piscina({
    filename: new URL('./sign-worker.js', import.meta.url).href,
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: 60_000,
  });
  return {
    threads,
    signLines: (task) => pool.run(task) as Promise<SignedLines>,
    close: () => pool.destroy(),
  };
}
