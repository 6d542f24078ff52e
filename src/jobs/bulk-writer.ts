// Bulk writing with back-pressure, the way the Elasticsearch client's bulk helper does it: operations
// are grouped into requests bounded by bytes and count, a bounded number of requests is in flight
// (p-queue), callers wait when the queue is full, whole requests are retried with exponential backoff
// and jitter on 429/502/503/504 and timeouts, and every item of every response is read: items
// rejected with 429 are retried, other failures are reported one by one, never silently dropped.
import PQueue from 'p-queue';
import { performance } from 'node:perf_hooks';
import type { BulkResponseBody, BulkResponseItem } from '../engine/client.js';
import { EngineResponseError } from '../engine/errors.js';
import { privilegeRefusal } from '../engine/refusal.js';
import type { InFlightLimit } from '../engine/in-flight.js';
import { backoffDelay, type RetryCause, type RetryLog, retryCause, sleep, statusOf } from '../engine/retry.js';

/** One bulk operation: its action line and optional body line, pre-serialized. */
export interface BulkOperation {
  id: string;
  action: Record<string, unknown>;
  /** The source or partial document; a string is taken as JSON already serialized. */
  body?: Record<string, unknown> | string;
  /** Anything the caller wants back with the item's result. */
  context?: unknown;
}

/** Sends one NDJSON bulk body; throws on a transport or HTTP error (with statusCode when there is one). */
export type BulkSend = (ndjson: string) => Promise<BulkResponseBody>;

/** How a bulk writer sends and bounds its requests; every bound has a default the jobs share. */
export interface BulkWriterOptions {
  send: BulkSend;
  /** Flush a request when its body reaches this many bytes (default 5 MB). */
  maxBytes?: number;
  /** ... or this many operations (default 1000). */
  maxOperations?: number;
  /** Requests in flight at once (default 2), when no `inFlight` limit is given. */
  concurrency?: number;
  /** A limit that moves with the engine's answers (chosen from the cluster): the writer reports each answer to it. */
  inFlight?: InFlightLimit;
  /** Attempts per request and per 429-rejected item before giving up (default 6). */
  maxAttempts?: number;
  /** First backoff in ms, doubled on each retry, with full jitter (default 200). */
  backoffMs?: number;
  onSuccess?: (op: BulkOperation, result: BulkResponseItem) => void;
  /**
   * An item that failed for good. `resent`: the item went out again after a request whose answer never
   * came (timeout, dropped connection, gateway error), so the engine may have done it the first time:
   * a 409 then usually means "already done", which the caller can check.
   */
  onFailure?: (op: BulkOperation, reason: string, status: number | undefined, resent: boolean, result?: BulkResponseItem) => void;
  /**
   * Called once, before the first request is sent (and not at all when nothing is written): the checks a
   * job makes only when it is about to change something (blocks, privileges, its mapping, its checkpoint).
   * If it throws, nothing is sent and every later add() and flush() throws the same.
   */
  beforeFirstSend?: () => Promise<void>;
  /** Called before each retry, for progress output. */
  onRetry?: (attempt: number, reason: string, delayMs: number) => void;
  /** Where retries are tallied by cause (the client's log, so a job reports them all in one place). */
  retries?: RetryLog;
  sleep?: (ms: number) => Promise<void>;
}


function operationLines(op: BulkOperation): string {
  const body = op.body === undefined ? '' : (typeof op.body === 'string' ? op.body : JSON.stringify(op.body)) + '\n';
  return JSON.stringify(op.action) + '\n' + body;
}

/** A whole request refused for what is in it (400, 413), not for who sent it or where: worth splitting. */
function refusedAsAWhole(err: unknown): boolean {
  const status = statusOf(err);
  return status === 400 || status === 413;
}

/** An index block answers 429 too (a disk past the flood-stage watermark), but asking again soon will not lift it. */
function isBlock(error: BulkResponseItem['error']): boolean {
  return typeof error === 'object' && error?.type === 'cluster_block_exception';
}

function reasonOf(error: BulkResponseItem['error']): string {
  if (!error) return 'unknown error';
  if (typeof error === 'string') return error;
  return [error.type, error.reason].filter(Boolean).join(': ') || 'unknown error';
}

/** What a bulk writer did, for the job's summary. */
export interface BulkStats {
  requests: number;
  succeeded: number;
  failed: number;
  retries: number;
  /** Operations sent again after a request whose answer never came (the engine may have done them). */
  resent: number;
}

/** A bulk request's size by default: at most 5 MB and 1,000 operations (as the Elasticsearch client's bulk helper flushes at 5 MB). */
export const BULK_DEFAULTS = { maxBytes: 5 * 1024 * 1024, maxOperations: 1000 } as const;

/**
 * Writes operations in bulk requests bounded by bytes and count, a bounded number in flight, retrying what may succeed
 * and reporting each item that fails (the file header says how).
 */
export class BulkWriter {
  private readonly queue: PQueue;
  private readonly maxBytes: number;
  private readonly maxOperations: number;
  private readonly maxAttempts: number;
  private readonly backoffMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private batch: BulkOperation[] = [];
  private batchLines: string[] = [];
  private batchBytes = 0;
  private fatal: unknown;
  private firstSend: Promise<void> | undefined;
  readonly stats: BulkStats = { requests: 0, succeeded: 0, failed: 0, retries: 0, resent: 0 };

  constructor(private readonly options: BulkWriterOptions) {
    this.queue = new PQueue({ concurrency: options.inFlight?.current ?? options.concurrency ?? 2 });
    this.maxBytes = options.maxBytes ?? BULK_DEFAULTS.maxBytes;
    this.maxOperations = options.maxOperations ?? BULK_DEFAULTS.maxOperations;
    this.maxAttempts = options.maxAttempts ?? 6;
    this.backoffMs = options.backoffMs ?? 200;
    this.sleep = options.sleep ?? sleep;
  }

  /** Queues an operation; waits while the queue is full. Throws if a request failed for good. */
  async add(op: BulkOperation): Promise<void> {
    if (this.fatal) throw this.fatal;
    const lines = operationLines(op);
    const bytes = Buffer.byteLength(lines);
    if (this.batch.length > 0 && this.batchBytes + bytes > this.maxBytes) await this.flushBatch();
    this.batch.push(op);
    this.batchLines.push(lines);
    this.batchBytes += bytes;
    if (this.batch.length >= this.maxOperations || this.batchBytes >= this.maxBytes) await this.flushBatch();
  }

  /** Sends what is buffered and waits for every request in flight. */
  async flush(): Promise<void> {
    await this.flushBatch();
    await this.queue.onIdle();
    if (this.fatal) throw this.fatal;
  }

  /** Whether a request was sent (or is on its way): whether the engine may have changed anything. */
  get sentAny(): boolean {
    return this.stats.requests > 0 || this.queue.size + this.queue.pending > 0;
  }

  private async flushBatch(): Promise<void> {
    if (this.batch.length === 0) return;
    if (this.options.beforeFirstSend) {
      this.firstSend ??= this.options.beforeFirstSend();
      try {
        await this.firstSend;
      } catch (err) {
        this.fatal ??= err;
        throw this.fatal;
      }
    }
    if (this.fatal) throw this.fatal;
    const ops = this.batch;
    const body = this.batchLines.join('');
    this.batch = [];
    this.batchLines = [];
    this.batchBytes = 0;
    // Back-pressure: hold the caller while as many requests as allowed are already running or waiting.
    await this.queue.onSizeLessThan(1);
    void this.queue.add(() => this.send(ops, body)).catch((err) => {
      this.fatal ??= err;
    });
  }

  private async send(ops: BulkOperation[], body: string): Promise<void> {
    let pending = ops;
    let pendingBody = body;
    // Set once an answer is lost: from then on, the engine may already have done any of these items.
    let resent = false;
    for (let attempt = 1; ; attempt++) {
      let response: BulkResponseBody;
      try {
        this.stats.requests++;
        const started = performance.now();
        response = await this.options.send(pendingBody);
        this.answered(performance.now() - started, pendingBody.length);
      } catch (err) {
        const cause = retryCause(err);
        if (cause === 'status429') this.busy();
        if (cause === undefined && refusedAsAWhole(err)) return this.sendApart(pending, err, resent);
        if (cause === undefined) throw err;
        if (attempt >= this.maxAttempts) {
          for (const op of pending) this.fail(op, `gave up after ${attempt} attempts: ${(err as Error).message}`, statusOf(err), resent);
          return;
        }
        if (cause !== 'status429') {
          resent = true;
          this.stats.resent += pending.length;
        }
        await this.backoff(attempt, cause, `request failed (${statusOf(err) ?? (err as Error).message})`);
        continue;
      }
      const retry = this.readItems(pending, response, attempt, resent);
      if (retry.length === 0) return;
      this.busy();
      pending = retry;
      pendingBody = retry.map(operationLines).join('');
      await this.backoff(attempt, 'status429', `${retry.length} operations rejected with 429`);
    }
  }

  /**
   * A request the engine refused as a whole (one id too long, one line it cannot parse, a body too large):
   * sent again in halves, down to single operations, so that only the guilty ones fail, each by itself.
   */
  private async sendApart(ops: BulkOperation[], err: unknown, resent: boolean): Promise<void> {
    if (ops.length === 1) {
      this.fail(ops[0], `refused by the engine: ${(err as Error).message}`, statusOf(err), resent);
      return;
    }
    const half = Math.ceil(ops.length / 2);
    for (const part of [ops.slice(0, half), ops.slice(half)]) await this.send(part, part.map(operationLines).join(''));
  }

  /** Reads every item of a response; returns the operations rejected with 429, to be sent again. */
  private readItems(pending: BulkOperation[], response: BulkResponseBody, attempt: number, resent: boolean): BulkOperation[] {
    const retry: BulkOperation[] = [];
    response.items.forEach((item, i) => {
      const op = pending[i];
      const result = Object.values(item)[0];
      if (!op || !result) return;
      if (result.status >= 200 && result.status < 300) {
        this.stats.succeeded++;
        this.options.onSuccess?.(op, result);
      } else if (result.status === 429 && attempt < this.maxAttempts && !isBlock(result.error)) {
        retry.push(op);
      } else if (result.status === 403 && privilegeRefusal(result.error)) {
        // A missing privilege refuses every item alike: the job stops at the first, naming it, rather than
        // failing a million documents one by one. The item is listed like any failure.
        this.fail(op, reasonOf(result.error), result.status, resent);
        const error = typeof result.error === 'object' ? result.error : undefined;
        this.fatal ??= new EngineResponseError(403, error?.type, error?.reason, 'POST', '/_bulk', '', { error: result.error });
      } else {
        this.fail(op, reasonOf(result.error), result.status, resent, result);
      }
    });
    for (const op of pending.slice(response.items.length)) this.fail(op, 'no result for this operation in the bulk response', undefined, resent);
    return retry;
  }

  /** An answer's time, for the in-flight limit; the queue follows the limit. */
  private answered(ms: number, bytes: number): void {
    const limit = this.options.inFlight;
    if (!limit) return;
    limit.answered(ms, bytes);
    this.queue.concurrency = limit.current;
  }

  private busy(): void {
    const limit = this.options.inFlight;
    if (!limit) return;
    limit.busy();
    this.queue.concurrency = limit.current;
  }

  private fail(op: BulkOperation, reason: string, status: number | undefined, resent: boolean, result?: BulkResponseItem): void {
    this.stats.failed++;
    this.options.onFailure?.(op, reason, status, resent, result);
  }

  private async backoff(attempt: number, cause: RetryCause, reason: string): Promise<void> {
    this.stats.retries++;
    const delay = backoffDelay(attempt, this.backoffMs);
    this.options.retries?.record(cause, delay);
    this.options.onRetry?.(attempt, reason, delay);
    await this.sleep(delay);
  }
}
