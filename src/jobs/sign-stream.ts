// `near-dup sign --jsonl`: JSON lines from a stream, signature lines to a stream, in input order, on
// every core. Memory stays bounded: at most 2 batches per thread are in flight, and reading pauses
// while the output cannot keep up.
import { once } from 'node:events';
import readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import type { SignerOptions } from '../signature.js';
import { createSignPool } from './sign-pool.js';
import type { LineFields, SignedLines } from './sign-lines.js';

export interface SignStreamOptions {
  signer: SignerOptions;
  fields: LineFields;
  threads?: number;
  /** A batch closes at this many documents or this many characters, whichever comes first. */
  batchDocs?: number;
  batchChars?: number;
}

export interface SignStreamSummary {
  documents: number;
  failed: number;
  empty: number;
  seconds: number;
}

export async function signStream(input: Readable, output: Writable, options: SignStreamOptions): Promise<SignStreamSummary> {
  const started = performance.now();
  const pool = createSignPool(options.threads);
  const batchDocs = options.batchDocs ?? 64;
  const batchChars = options.batchChars ?? 1 << 20;
  const pending: Promise<SignedLines>[] = [];
  const summary: SignStreamSummary = { documents: 0, failed: 0, empty: 0, seconds: 0 };

  const drainOne = async (): Promise<void> => {
    const result = await pending.shift()!;
    summary.failed += result.failed;
    summary.empty += result.empty;
    if (!output.write(result.out)) await once(output, 'drain');
  };

  let lines: string[] = [];
  let chars = 0;
  let lineNumber = 0;
  let firstLineNumber = 1;
  const submit = async (): Promise<void> => {
    if (lines.length === 0) return;
    pending.push(pool.signLines({ options: options.signer, fields: options.fields, lines, firstLineNumber }));
    lines = [];
    chars = 0;
    firstLineNumber = lineNumber + 1;
    while (pending.length >= pool.threads * 2) await drainOne();
  };

  try {
    const reader = readline.createInterface({ input, crlfDelay: Infinity });
    for await (const line of reader) {
      lineNumber++;
      if (line.trim() !== '') summary.documents++;
      lines.push(line);
      chars += line.length;
      if (lines.length >= batchDocs || chars >= batchChars) await submit();
    }
    await submit();
    while (pending.length > 0) await drainOne();
  } finally {
    await pool.close();
  }
  summary.seconds = (performance.now() - started) / 1000;
  return summary;
}
