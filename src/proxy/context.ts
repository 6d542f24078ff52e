// What every request handler of the proxy shares: the cluster, the signing threads, the settings, the
// counters.
import type http from 'node:http';
import type PQueue from 'p-queue';
import type { InFlightLimit } from '../engine/in-flight.js';
import type { Upstream } from './forward.js';
import type { SignerOptions } from '../signature.js';
import type { SignPool } from '../signing/sign-pool.js';
import type { SignedSource, SignSourcesOptions } from '../signing/sign-sources.js';
import type { BodyTimeouts } from './body-clock.js';
import type { ByteBudget } from './byte-budget.js';
import type { ClientSlots } from './client-slots.js';
import type { IndexFieldsGuard } from './index-fields.js';
import type { IndexTemplates } from './index-templates.js';
import type { IndexMatcher } from './index-pattern.js';
import type { ProxyStats } from './stats.js';
import type { WriteTargets } from './targets.js';

/** What the proxy does with a document it cannot sign: refuse it (reject), or send it on unsigned (pass). */
export type OnError = 'reject' | 'pass';

/** What every request handler of the proxy shares. */
export interface ProxyContext {
  upstream: Upstream;
  pool: SignPool;
  matches: IndexMatcher;
  /** Where each write goes, and whether it is signed. */
  targets: WriteTargets;
  signer: SignerOptions;
  sources: SignSourcesOptions;
  onError: OnError;
  /** A client's bulk body goes upstream in parts of about this many bytes (signing makes documents larger). */
  maxUpstreamBytes: number;
  /** Limits on a request body, decompressed, and on one line of a bulk body. */
  maxBodyBytes: number;
  maxLineBytes: number;
  /** The writes being read and signed (bounded): the rest wait. */
  writes: PQueue;
  /** The room for large documents held at once. */
  budget: ByteBudget;
  /** A client connection idle this long is closed (stopped while the proxy holds the client back). */
  idleTimeoutMs: number;
  /** The write slots each client address may hold. */
  clientSlots: ClientSlots;
  /** How long the proxy waits for a body's bytes. */
  bodyTimeouts: BodyTimeouts;
  /** How many writes go upstream at once: chosen from the cluster, moved by its answers (the queue follows it). */
  inFlight: InFlightLimit;
  stats: ProxyStats;
  fields: IndexFieldsGuard;
  /** The signer options of each signed index (with the template set it keeps, under --template-share). */
  templates: IndexTemplates;
}

/** A JSON answer the proxy writes itself. */
export function sendJson(res: http.ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** An error answer in the engines' shape, so clients raise it as they raise the engine's own. */
export function sendError(res: http.ServerResponse, status: number, type: string, reason: string): void {
  sendJson(res, status, { error: { root_cause: [{ type, reason }], type, reason }, status });
}

/** What to send on for a document the signing threads saw (null: refused); counts it. Bulk items and single documents alike. */
export function forwardedBody(ctx: ProxyContext, outcome: SignedSource, original: Uint8Array): Uint8Array | null {
  const counts = ctx.stats.documents;
  if (outcome.outcome === 'signed' || outcome.outcome === 'cleared') {
    counts[outcome.outcome]++;
    return outcome.source;
  }
  if (outcome.outcome === 'untouched') {
    counts.untouched++;
    return outcome.source ?? original;
  }
  if (ctx.onError === 'pass') {
    counts.passed++;
    // Unsigned, and without any near-dup field its client put there: those are only ever near-dup's own.
    return outcome.source ?? original;
  }
  counts.rejected++;
  return null;
}
