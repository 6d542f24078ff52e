// Signing on every core: batches go to worker threads (piscina).
import os from 'node:os';
import { Piscina } from 'piscina';
import { workerFile } from '../worker-file.js';
import type { AnnotateResult } from './annotate-batch.js';
import type { SignedBytes } from './sign-lines.js';
import type { IngestResult } from './ingest-lines.js';
import type { SignedSource } from './sign-sources.js';
import type { AnnotateTask, IngestTask, SignTask, SourcesTask } from './sign-worker.js';

/** The signing threads, one kind of task a method: `sign --jsonl`, annotate, ingest and the proxy. */
export interface SignPool {
  readonly threads: number;
  /** Signs a batch of JSON lines; the buffers in `transfer` are moved to the worker, not copied. */
  signBytes(task: Omit<SignTask, 'kind'>, transfer?: ArrayBuffer[]): Promise<SignedBytes>;
  annotate(task: Omit<AnnotateTask, 'kind'>): Promise<AnnotateResult[]>;
  /** Annotates a batch of NDJSON lines; the buffers in `transfer` are moved to the worker, not copied. */
  ingest(task: Omit<IngestTask, 'kind'>, transfer?: ArrayBuffer[]): Promise<IngestResult[]>;
  /** Signs document sources and update bodies (the proxy); the buffer in `transfer` is moved, not copied. */
  signSources(task: Omit<SourcesTask, 'kind'>, transfer?: ArrayBuffer[]): Promise<SignedSource[]>;
  close(): Promise<void>;
}

/** Signing threads, one a core unless told (piscina). */
export function createSignPool(threads = os.availableParallelism()): SignPool {
  const pool = new Piscina({
    filename: workerFile('./sign-worker.js', import.meta.url),
    minThreads: threads,
    maxThreads: threads,
    idleTimeout: 60_000,
  });
  return {
    threads,
    signBytes: (task, transfer) => pool.run({ kind: 'bytes', ...task }, { transferList: transfer }) as Promise<SignedBytes>,
    annotate: (task) => pool.run({ kind: 'annotate', ...task }) as Promise<AnnotateResult[]>,
    ingest: (task, transfer) => pool.run({ kind: 'ingest', ...task }, { transferList: transfer }) as Promise<IngestResult[]>,
    signSources: (task, transfer) => pool.run({ kind: 'sources', ...task }, { transferList: transfer }) as Promise<SignedSource[]>,
    close: () => pool.destroy(),
  };
}
