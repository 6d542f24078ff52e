// near-dup ingest: NDJSON documents indexed already annotated, with the bulk writer's back-pressure,
// retries and per-document error reporting.
//
// Every document goes out with an id (its --id-field, or one near-dup chooses, like the engine's own),
// so a bulk request whose answer was lost can be sent again without doubling anything: an `index` with
// the user's id writes the same document twice, a `create` with ours answers 409 the second time, which
// then means "done by the lost request". The engine is asked, a thousand ids at a time, whether it holds
// every document reported indexed.
import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { DEFAULT_MAX_CHARS, valueAt } from '../annotation.js';
import { type EngineClient, EngineResponseError } from '../engine/client.js';
import { requireWritable } from '../indices/index-state.js';
import { onlyRefusals } from '../engine/privileges.js';
import type { RetrySnapshot } from '../engine/retry.js';
import { type BulkOptions, checkBulkOptions, requireWholeNumbers, UsageError } from '../errors.js';
import { resolveSignerSettings, type SignerOptions } from '../signature.js';
import { type BulkOperation, BulkWriter } from './bulk-writer.js';
import { ErrorsFile } from './errors-file.js';
import type { IngestResult } from '../signing/ingest-lines.js';
import { InFlightLimit } from '../engine/in-flight.js';
import { planInFlight } from '../engine/in-flight-plan.js';
import { initIndex } from '../indices/init.js';
import { lineBatches } from '../signing/line-batches.js';
import { createSignPool } from '../signing/sign-pool.js';

export interface IngestOptions {
  index: string;
  fields: string[];
  prefix: string;
  signer: SignerOptions;
  /** Field whose value becomes the document _id (absent: near-dup chooses a random one). */
  idField?: string;
  errorsFile?: string;
  maxChars?: number;
  threads?: number;
  bulk?: BulkOptions;
  onProgress?: (p: { seen: number; indexed: number; failed: number; elapsedSeconds: number }) => void;
}

export interface IngestSummary {
  index: string;
  params: string;
  /** Lines holding a document (blank lines not counted). */
  seen: number;
  indexed: number;
  failed: number;
  empty: number;
  cut: number;
  /** Blank lines, skipped. */
  blank: number;
  /** Documents sent again after a request whose answer was lost (none doubled). */
  resent: number;
  /** Documents the engine confirmed it holds at the end, of those reported indexed. */
  confirmed: number;
  retries: RetrySnapshot;
  seconds: number;
  /** Bulk requests kept in flight, and what chose that number (see engine/in-flight-plan.ts). */
  inFlight: string;
  errorsFile?: string;
}

/** The job's options, checked here once for the CLI and the library alike. */
export function checkIngestOptions(options: IngestOptions): void {
  if (options.fields.length === 0) throw new UsageError((o) => `name at least one text field with ${o('fields')}`);
  requireWholeNumbers([['maxChars', options.maxChars, 1], ['threads', options.threads, 1]]);
  checkBulkOptions(options.bulk);
}

/** Lines of the first batch looked at for --field: enough to tell a misspelt field from sparse ones. */
const FIELD_CHECK_LINES = 1000;

/**
 * Refuses --field when not one of the first documents (JSON objects among the first lines) has any of the
 * fields, naming the fields they have: a misspelt field, caught before the index is created. Lines that are
 * not JSON objects are left to the signing, which reports each.
 */
export function checkFieldsPresent(bytes: Uint8Array, fields: readonly string[], index: string): void {
  const seen = new Map<string, number>();
  let documents = 0;
  const lines = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').split('\n', FIELD_CHECK_LINES);
  for (const line of lines) {
    if (line.trim() === '') continue;
    let doc: unknown;
    try {
      doc = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) continue;
    documents++;
    if (fields.some((f) => valueAt(doc, f) !== undefined)) return;
    for (const key of Object.keys(doc)) seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  if (documents === 0) return;
  const theirs = [...seen.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k]) => JSON.stringify(k)).join(', ');
  throw new UsageError(
    (o) =>
      `none of the first ${documents} documents has ${fields.length > 1 ? 'any of the fields' : 'the field'} ${fields.map((f) => `"${f}"`).join(', ')}; ` +
      `their fields are ${theirs}: give one of those with ${o('fields')} (nothing was written to "${index}")`,
  );
}

/** An id like the engines' own: 20 URL-safe characters, 120 random bits. */
function newId(): string {
  return randomBytes(15).toString('base64url');
}

/** Ids asked of the engine at once when checking that every indexed document is there. */
const CHECK_CHUNK = 1000;

/**
 * Indexes NDJSON documents from a stream, each signed on the way in (what `near-dup ingest` does): the index
 * is created with the near-dup fields if it is missing, each line becomes a document with its `near_dup`
 * object, and the engine is asked at the end whether every document written is there.
 *
 * @param client near-dup's client, from `connect()`.
 * @param input a readable stream of JSON lines (a file, standard input, an HTTP body).
 * @param options `index`; `fields` (at least one; several are joined); `prefix` (DEFAULT_PREFIX); `signer`
 *   (createSigner's options); `idField` (default: a random id); `errorsFile` (default
 *   near-dup-errors-INDEX.jsonl); `maxChars` (default DEFAULT_MAX_CHARS, 10,000,000: longer texts are cut); `threads` (default:
 *   every core); `bulk` (BulkOptions); `onProgress`.
 * @returns the counts; lines that could not be signed or written are counted as failed and listed in the errors file.
 * @throws {UsageError} an option out of range, or `fields` that none of the first documents holds (before anything is written); the message names the option key.
 * @throws {UserError} an engine that refuses or cannot be reached, an index that cannot take the fields.
 */
export async function ingestStream(client: EngineClient, input: Readable, options: IngestOptions): Promise<IngestSummary> {
  checkIngestOptions(options);
  const started = performance.now();
  const retriesAtStart = client.retries.snapshot();
  const settings = resolveSignerSettings(options.signer);
  // The first batch is read before the index is made: --field that none of its documents has is refused
  // there, rather than an index created and every line failed.
  const batches = lineBatches(input, 256 * 1024)[Symbol.asyncIterator]();
  const first = await batches.next();
  if (!first.done) checkFieldsPresent(first.value.bytes, options.fields, options.index);
  // Whether this user may write here, asked before anything is changed (of an index that exists: a new one
  // is asked right after it is made, before any document goes in).
  const mayWrite = async () => {
    await requireWritable(client, options.index, { action: 'index', refresh: true });
    // The check of what was indexed reads with _mget: refused there, every document would be written and then failed.
    await onlyRefusals(async () => void (await client.existingIds(options.index, [`near-dup-privilege-check-${newId()}`])));
  };
  // A name that is not there yet (a data stream is made by its first document) is asked nothing: the first
  // bulk request's refusal then stops the job.
  const mayWriteIfThere = async () => {
    try {
      await mayWrite();
      return true;
    } catch (err) {
      if (err instanceof EngineResponseError && err.type === 'index_not_found_exception') return false;
      throw client.explain(err, options.index);
    }
  };
  const checked = await mayWriteIfThere();
  const { keyLists } = await initIndex(client, options.index, options.prefix);
  if (!checked) await mayWriteIfThere();
  const counts = { seen: 0, indexed: 0, failed: 0, empty: 0, cut: 0, blank: 0 };
  const indexedIds: string[] = [];
  const errors = ErrorsFile.forIndex(options.index, options.errorsFile);
  let confirmed = 0;
  let confirming = Promise.resolve();
  // Documents reported indexed are checked with the engine a thousand at a time, as they come.
  const confirm = (ids: string[]) =>
    (confirming = confirming.then(async () => {
      const found = await client.existingIds(options.index, ids);
      confirmed += found.size;
      for (const id of ids) {
        if (found.has(id)) continue;
        counts.indexed--;
        counts.failed++;
        errors.add({ id, reason: 'reported indexed, but the engine does not have it; ingest this document again' });
      }
    }));
  const succeeded = (op: BulkOperation) => {
    counts.indexed++;
    indexedIds.push(op.id);
    if (indexedIds.length >= CHECK_CHUNK) void confirm(indexedIds.splice(0)).catch(() => undefined);
  };
  const inFlight = new InFlightLimit(await planInFlight(client, options.index, options.bulk?.concurrency));
  const writer = new BulkWriter({
    send: (ndjson) => client.bulkNdjson(ndjson),
    ...options.bulk,
    inFlight,
    retries: client.retries,
    onSuccess: succeeded,
    onFailure: (op, reason, status, resent) => {
      // Our own id, refused as existing after a lost answer: the lost request created it.
      if (status === 409 && resent && 'create' in op.action) return succeeded(op);
      counts.failed++;
      errors.add({ id: op.id, line: op.context, status, reason });
    },
  });
  const pool = createSignPool(options.threads);
  const ingest = { fields: options.fields, prefix: options.prefix, idField: options.idField, maxChars: options.maxChars ?? DEFAULT_MAX_CHARS, keyLists };
  const pending: Promise<IngestResult[]>[] = [];
  let lastProgress = 0;

  const handle = async (result: IngestResult) => {
    if ('blank' in result) {
      counts.blank++;
      return;
    }
    counts.seen++;
    if ('error' in result) {
      counts.failed++;
      errors.add({ id: result.id, line: result.line, reason: result.error });
      return;
    }
    if (result.empty) counts.empty++;
    if (result.cut > 0) counts.cut++;
    const id = result.id ?? newId();
    const action = result.id === undefined ? { create: { _index: options.index, _id: id } } : { index: { _index: options.index, _id: id } };
    await writer.add({ id, action, body: result.json, context: result.line });
  };
  const drainOne = async () => {
    for (const result of await pending.shift()!) await handle(result);
    const now = performance.now();
    if (now - lastProgress > 1000) {
      lastProgress = now;
      options.onProgress?.({ seen: counts.seen, indexed: counts.indexed, failed: counts.failed, elapsedSeconds: (now - started) / 1000 });
    }
  };

  try {
    for (let next = first; !next.done; next = await batches.next()) {
      const { bytes, firstLineNumber } = next.value;
      pending.push(pool.ingest({ options: options.signer, ingest, bytes, firstLineNumber }, [bytes.buffer as ArrayBuffer]));
      while (pending.length >= pool.threads * 2) await drainOne();
    }
    while (pending.length > 0) await drainOne();
    await writer.flush();
    await confirm(indexedIds.splice(0));
    if (counts.indexed > 0) await client.refresh(options.index);
  } catch (err) {
    for (const p of pending) p.catch(() => undefined); // cut short with the pool: the first error is the one to report
    throw client.explain(err, options.index);
  } finally {
    await pool.close();
    await errors.close();
  }
  return {
    index: options.index,
    params: settings.params,
    ...counts,
    resent: writer.stats.resent,
    confirmed,
    retries: client.retries.since(retriesAtStart),
    inFlight: inFlight.describe(),
    seconds: (performance.now() - started) / 1000,
    errorsFile: errors.count > 0 ? errors.file : undefined,
  };
}
