// When a request to a cluster is worth sending again, how long to wait first, and a tally of every retry
// by cause, so that a job can say what the network cost it. Only requests that can be sent twice without
// harm are retried blindly (searches, counts, gets, mapping reads); a scroll page or a bulk request is
// not: their callers know how to recover (scan.ts restarts from a known position, the bulk writer reads
// every item).
import { EngineConnectionError } from './errors.js';

/** Why a request failed in a way that may pass: overload, a sick node or gateway, a timeout, a dropped connection. */
export type RetryCause = 'status429' | 'status5xx' | 'timeout' | 'connection';

const RETRYABLE_5XX = new Set([502, 503, 504]);
const CONNECTION_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'EPIPE', 'UND_ERR_SOCKET', 'ECONNABORTED', 'EHOSTUNREACH', 'ENETUNREACH']);

/** The HTTP status of an error from either client or a raw request, wherever it keeps it. */
export function statusOf(err: unknown): number | undefined {
  const e = err as { statusCode?: number; meta?: { statusCode?: number }; status?: number } | undefined;
  return e?.statusCode ?? e?.meta?.statusCode ?? e?.status;
}

/** The cause of a failure worth retrying, or undefined for one that will fail again (a 400, a missing index). */
export function retryCause(err: unknown): RetryCause | undefined {
  const status = statusOf(err);
  if (status === 429) return 'status429';
  if (status !== undefined && RETRYABLE_5XX.has(status)) return 'status5xx';
  if (status !== undefined) return undefined;
  if (err instanceof EngineConnectionError) return err.timeout ? 'timeout' : 'connection';
  // Anything else by name and code: the bulk writer and the scans take any send function, whose failures
  // may be the official clients' errors (classes of several packages), undici's or Node's (an AbortError is
  // a DOMException), none of which instanceof can name here.
  const e = err as { name?: string; code?: string } | undefined;
  if (e?.name === 'TimeoutError' || e?.code === 'ETIMEDOUT' || e?.code === 'UND_ERR_CONNECT_TIMEOUT') return 'timeout';
  if (['ConnectionError', 'NoLivingConnectionsError', 'AbortError'].includes(e?.name ?? '') || CONNECTION_CODES.has(e?.code ?? '')) return 'connection';
  return undefined;
}

/** Exponential backoff with full jitter: a random wait up to base * 2^(attempt - 1), capped. */
export function backoffDelay(attempt: number, baseMs: number, capMs = 30_000): number {
  return Math.round(Math.random() * Math.min(capMs, baseMs * 2 ** (attempt - 1)));
}

/** How many retries a run made, by cause, for its summary. */
export type RetryCounts = Record<RetryCause, number>;

/** Retries by cause and the time spent waiting before them; one per client, shared by every job step. */
export class RetryLog {
  readonly counts: RetryCounts = { status429: 0, status5xx: 0, timeout: 0, connection: 0 };
  waitedMs = 0;

  record(cause: RetryCause, waitedMs: number): void {
    this.counts[cause]++;
    this.waitedMs += waitedMs;
  }

  /** What happened since `since` (a snapshot taken with `snapshot()`), for a job's summary. */
  since(since: RetrySnapshot): RetrySnapshot {
    const now = this.snapshot();
    return {
      status429: now.status429 - since.status429,
      status5xx: now.status5xx - since.status5xx,
      timeout: now.timeout - since.timeout,
      connection: now.connection - since.connection,
      waitedSeconds: Math.round((now.waitedSeconds - since.waitedSeconds) * 1000) / 1000,
    };
  }

  snapshot(): RetrySnapshot {
    return { ...this.counts, waitedSeconds: this.waitedMs / 1000 };
  }
}

/** A job's retries: how many of each cause, and the seconds spent waiting before them. */
export interface RetrySnapshot extends RetryCounts {
  waitedSeconds: number;
}

/** A pause of `ms` milliseconds, for backoff between retries. */
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
