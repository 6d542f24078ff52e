// `near-dup sign --jsonl`: JSON lines from a stream, signature lines to a stream, in input order, on
// every core. The main thread only cuts the input into batches of whole lines (as raw bytes, moved to
// the worker without a copy) and writes the workers' output in order; decoding, JSON and signing all
// happen in the workers. With one thread the batches are signed on the main thread instead: a worker
// would only add its start-up (a second isolate loading the same modules) and a hand-off per batch,
// and gain nothing on one core. Memory stays bounded: at most 2 batches per thread are in flight, and
// reading pauses while the output cannot keep up.
import { once } from 'node:events';
import os from 'node:os';
import type { Readable, Writable } from 'node:stream';
import type { SignerOptions } from '../signature.js';
import { lineBatches } from './line-batches.js';
import type { SignPool } from './sign-pool.js';
import type { LineFields, SignedBytes } from './sign-lines.js';

/** How `sign --jsonl` reads: the signer, the text and id fields, the threads, the batch size. */
export interface SignStreamOptions {
  signer: SignerOptions;
  fields: LineFields;
  threads?: number;
  /** A batch closes at the first line end after this many bytes. */
  batchBytes?: number;
}

/** What `sign --jsonl` did, for its summary. */
export interface SignStreamSummary {
  documents: number;
  failed: number;
  empty: number;
  /** Invalid UTF-8 sequences in the input, read as U+FFFD. */
  replaced: number;
  seconds: number;
}

/**
 * Signature lines for the JSON lines of a stream, in input order, on every core (the file header says how memory stays
 * bounded).
 */
export async function signStream(input: Readable, output: Writable, options: SignStreamOptions): Promise<SignStreamSummary> {
  const started = performance.now();
  const threads = options.threads ?? os.availableParallelism();
  const pool = threads === 1 ? await signerHere() : (await import('./sign-pool.js')).createSignPool(threads);
  const batchBytes = options.batchBytes ?? 256 * 1024;
  const pending: Promise<SignedBytes>[] = [];
  const summary: SignStreamSummary = { documents: 0, failed: 0, empty: 0, replaced: 0, seconds: 0 };

  const drainOne = async (): Promise<void> => {
    const result = await pending.shift()!;
    summary.documents += result.documents;
    summary.failed += result.failed;
    summary.empty += result.empty;
    summary.replaced += result.replaced;
    if (!output.write(result.out)) await once(output, 'drain');
  };

  try {
    for await (const { bytes, firstLineNumber } of lineBatches(input, batchBytes)) {
      pending.push(pool.signBytes({ options: options.signer, fields: options.fields, bytes, firstLineNumber }, [bytes.buffer as ArrayBuffer]));
      while (pending.length >= pool.threads * 2) await drainOne();
    }
    while (pending.length > 0) await drainOne();
  } catch (err) {
    for (const p of pending) p.catch(() => undefined); // cut short with the pool: the first error is the one to report
    throw err;
  } finally {
    await pool.close();
  }
  summary.seconds = (performance.now() - started) / 1000;
  return summary;
}

/** The pool's signBytes on this thread; imported only when used (the worker pool loads them itself). */
async function signerHere(): Promise<Pick<SignPool, 'threads' | 'signBytes' | 'close'>> {
  const [{ createSigner }, { signBytes }] = await Promise.all([import('../signature.js'), import('./sign-lines.js')]);
  let signer: ReturnType<typeof createSigner> | undefined;
  return {
    threads: 1,
    signBytes: async (task) => {
      signer ??= createSigner(task.options);
      return signBytes(signer, task.bytes, task.firstLineNumber, task.fields);
    },
    close: async () => undefined,
  };
}
