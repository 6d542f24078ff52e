// near-dup ingest: NDJSON documents indexed already annotated, with the bulk writer's back-pressure,
// retries and per-document error reporting.
import type { Readable } from 'node:stream';
import { DEFAULT_MAX_CHARS } from '../annotation.js';
import type { EngineClient } from '../engine/client.js';
import { resolveSignerSettings, type SignerOptions } from '../signature.js';
import { BulkWriter } from './bulk-writer.js';
import { ErrorsFile } from './errors-file.js';
import type { IngestResult } from './ingest-lines.js';
import { initIndex } from './init.js';
import { lineBatches } from './line-batches.js';
import { createSignPool } from './sign-pool.js';

export interface IngestOptions {
  index: string;
  fields: string[];
  prefix: string;
  signer: SignerOptions;
  /** Field whose value becomes the document _id (absent: the engine picks one). */
  idField?: string;
  errorsFile?: string;
  maxChars?: number;
  threads?: number;
  bulk?: { maxBytes?: number; maxOperations?: number; concurrency?: number };
  onProgress?: (p: { seen: number; indexed: number; failed: number; elapsedSeconds: number }) => void;
}

export interface IngestSummary {
  index: string;
  params: string;
  seen: number;
  indexed: number;
  failed: number;
  empty: number;
  cut: number;
  seconds: number;
  errorsFile?: string;
}

export async function ingestStream(client: EngineClient, input: Readable, options: IngestOptions): Promise<IngestSummary> {
  const started = performance.now();
  const settings = resolveSignerSettings(options.signer);
  await initIndex(client, options.index, options.prefix);
  const counts = { seen: 0, indexed: 0, failed: 0, empty: 0, cut: 0 };
  const errors = new ErrorsFile(options.errorsFile ?? `near-dup-errors-${options.index.replace(/[^A-Za-z0-9._-]/g, '_')}.jsonl`);
  const writer = new BulkWriter({
    send: (ndjson) => client.bulkNdjson(ndjson),
    ...options.bulk,
    onSuccess: () => counts.indexed++,
    onFailure: (op, reason, status) => {
      counts.failed++;
      errors.add({ id: op.id || undefined, line: op.context, status, reason });
    },
  });
  const pool = createSignPool(options.threads);
  const ingest = { fields: options.fields, prefix: options.prefix, idField: options.idField, maxChars: options.maxChars ?? DEFAULT_MAX_CHARS };
  const pending: Promise<IngestResult[]>[] = [];
  let lastProgress = 0;

  const drainOne = async () => {
    for (const result of await pending.shift()!) {
      counts.seen++;
      if ('error' in result) {
        counts.failed++;
        errors.add({ id: result.id, line: result.line, reason: result.error });
        continue;
      }
      if (result.empty) counts.empty++;
      if (result.cut > 0) counts.cut++;
      const action = result.id === undefined ? { _index: options.index } : { _index: options.index, _id: result.id };
      await writer.add({ id: result.id ?? '', action: { index: action }, body: result.json, context: result.line });
    }
    const now = performance.now();
    if (now - lastProgress > 1000) {
      lastProgress = now;
      options.onProgress?.({ seen: counts.seen, indexed: counts.indexed, failed: counts.failed, elapsedSeconds: (now - started) / 1000 });
    }
  };

  try {
    for await (const { bytes, firstLineNumber } of lineBatches(input, 256 * 1024)) {
      pending.push(pool.ingest({ options: options.signer, ingest, bytes, firstLineNumber }, [bytes.buffer as ArrayBuffer]));
      while (pending.length >= pool.threads * 2) await drainOne();
    }
    while (pending.length > 0) await drainOne();
    await writer.flush();
    if (counts.indexed > 0) await client.refresh(options.index);
  } catch (err) {
    for (const p of pending) p.catch(() => undefined); // cut short with the pool: the first error is the one to report
    throw err;
  } finally {
    await pool.close();
    await errors.close();
  }
  return {
    index: options.index,
    params: settings.params,
    ...counts,
    seconds: (performance.now() - started) / 1000,
    errorsFile: errors.count > 0 ? errors.file : undefined,
  };
}
