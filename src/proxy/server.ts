// near-dup proxy: an HTTP server any Elasticsearch or OpenSearch client can use in place of the cluster.
// Writes of documents to the indices of --index get the near-dup fields on the way; everything else goes
// to the cluster and back as it came, headers included (only Host and hop-by-hop headers change).
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import PQueue from 'p-queue';
import type { AwsSigning } from '../engine/aws-sigv4.js';
import { InFlightLimit } from '../engine/in-flight.js';
import { planInFlight } from '../engine/in-flight-plan.js';
import { BodyTooLargeError, onClientGone, pipeAnswer, Upstream, UpstreamError, upstreamJson } from './forward.js';
import { LineTooLongError } from '../signing/line-batches.js';
import { createSignPool } from '../signing/sign-pool.js';
import type { SourceKind } from '../signing/sign-sources.js';
import { resolveSignerSettings, type SignerOptions } from '../signature.js';
import { handleBulk } from './bulk.js';
import { type BodyTimeoutError, watchBody } from './body-clock.js';
import { ClientSlots } from './client-slots.js';
import { REFUSAL_TYPE } from './bulk-response.js';
import { type OnError, type ProxyContext, sendError, sendJson } from './context.js';
import { PROXY_ERROR, ProxyRefusal } from './refusal.js';
import { handleDocument } from './document.js';
import { IndexFieldsGuard } from './index-fields.js';
import { IndexTemplates } from './index-templates.js';
import { DEFAULT_TEMPLATE_REQUEST, type TemplateRequest } from '../indices/template-store.js';
import { indexMatcher } from './index-pattern.js';
import { decodeSegment, type QueryParam, queryParams, rawPath, withFirstSegment } from './raw-path.js';
import { bodyFormat, codingRefusal, DEFAULT_MAX_BODY_BYTES, declaredTooLarge, decodedBody, plainLength, transferCodingRefusal } from './request-body.js';
import { BudgetMeter, LARGE_BYTES } from './budget-meter.js';
import { ByteBudget, type Lease } from './byte-budget.js';
import { ProxyStats } from './stats.js';
import { type Target, WriteTargets } from './targets.js';

/** What `near-dup proxy` serves, and the limits it holds every client to. */
export interface ProxyOptions {
  /** The cluster, without credentials (each client's own go through; with AWS SigV4 the proxy signs). */
  upstream: { url: string; ca?: string; insecure?: boolean; aws?: AwsSigning };
  host: string;
  port: number;
  /** Index names and patterns, comma-separated, as the engines read them. */
  index: string;
  fields: string[];
  prefix: string;
  signer: SignerOptions;
  /**
   * Sign each index with the template tokens it keeps for this draw (annotate's and ingest's `template`), when
   * it keeps them. Default DEFAULT_TEMPLATE_REQUEST (what annotate and ingest draw by default); `false`: none.
   */
  template?: TemplateRequest | false;
  maxChars: number;
  onError: OnError;
  threads?: number;
  maxUpstreamBytes: number;
  /** Limit on a request body, decompressed (default: the engines' own 100 MB). */
  maxBodyBytes?: number;
  /** Limit on one line of a bulk body (default: the body's limit). */
  maxLineBytes?: number;
  /** Writes (bulk, documents) read and signed at once; more wait their turn, unread (default 16): memory is bounded by this many bodies. */
  maxConcurrentWrites?: number;
  /** A client connection with nothing sent or read for this long is closed, its upstream request aborted (default 120 s). */
  idleTimeoutMs?: number;
  /** The time spent waiting for a request's body, in all, past which it is answered 408 (default 60 s; the time the proxy holds the client back does not count). */
  bodyTimeoutMs?: number;
  /** The longest wait for the next byte of a body, past which it is answered 408 (default 30 s). */
  bodyIdleTimeoutMs?: number;
  /** Write slots one client address may hold at once (default: half the write slots, at least 1). */
  maxWritesPerClient?: number;
  /** The room for large documents and bulk lines (over 1 MB) held at once, to be signed (default: maxBodyBytes, one body of the largest size). */
  maxBufferedBytes?: number;
  /** PEM texts, to serve HTTPS. */
  tls?: { cert: string; key: string };
  warn: (line: string) => void;
}

/** The proxy as started: where clients connect, its counters, and how to stop it. */
export interface RunningProxy {
  /** Where clients connect. */
  url: string;
  stats: ProxyStats;
  close(): Promise<void>;
}

/** Where the proxy serves its counters (no index name can start with `_`, so it hides none). */
export const STATS_PATH = '/_near_dup/stats';
const DEFAULT_IDLE_TIMEOUT_MS = 120_000;
const DEFAULT_CONCURRENT_WRITES = 16;
/** How long a request's body may take in all, unless `--body-timeout` says otherwise. */
export const DEFAULT_BODY_TIMEOUT_MS = 60_000;
/** The longest wait for one byte of a body, unless `--body-idle-timeout` says otherwise. */
export const DEFAULT_BODY_IDLE_TIMEOUT_MS = 30_000;

/** Starts the signing proxy: the signer checked before anything listens, then the server in front of the cluster. */
export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  resolveSignerSettings(options.signer); // a bad spec is said before anything listens
  const upstream = new Upstream(options.upstream);
  const pool = createSignPool(options.threads);
  const stats = new ProxyStats();
  const fields = new IndexFieldsGuard(upstream, options.prefix, options.warn);
  const plan = await planInFlight({ request: async <T>(method: string, path: string) => (await upstreamJson(upstream, method, path)) as T }, undefined, options.maxConcurrentWrites, {
    option: '--max-concurrent-writes',
    fallback: DEFAULT_CONCURRENT_WRITES,
  });
  const writes = new PQueue({ concurrency: plan.limit });
  const matches = indexMatcher(options.index);
  const ctx: ProxyContext = {
    upstream,
    pool,
    matches,
    targets: new WriteTargets(upstream, matches, options.warn),
    signer: options.signer,
    sources: { fields: options.fields, prefix: options.prefix, maxChars: options.maxChars },
    onError: options.onError,
    maxUpstreamBytes: options.maxUpstreamBytes,
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxLineBytes: options.maxLineBytes ?? options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    writes,
    budget: new ByteBudget(options.maxBufferedBytes ?? options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES),
    idleTimeoutMs: options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS,
    clientSlots: new ClientSlots(options.maxWritesPerClient ?? Math.max(1, Math.ceil(plan.limit / 2))),
    bodyTimeouts: { totalMs: options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS, idleMs: options.bodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_TIMEOUT_MS },
    inFlight: new InFlightLimit(plan, (limit) => {
      writes.concurrency = limit;
    }),
    stats,
    fields,
    templates: new IndexTemplates(upstream, options.signer, options.template === false ? undefined : (options.template ?? DEFAULT_TEMPLATE_REQUEST), options.fields, options.warn),
  };
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(ctx, req, res).catch((err: unknown) => failed(ctx, req, res, err));
  };
  const server = options.tls ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, listener) : http.createServer(listener);
  server.keepAliveTimeout = 65_000;
  // A client that stops sending its body, or stops reading its answer, is cut off after this long idle:
  // its upstream request (one of a bounded pool of sockets to the cluster) is then aborted.
  server.timeout = ctx.idleTimeoutMs;
  // Bodies are timed by the body clock (body-clock.ts), which stops while the proxy holds a client back;
  // Node's own limit on a whole request (5 minutes, waiting for a write slot included) would cut those.
  // headersTimeout still bounds the head.
  server.requestTimeout = 0;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `${options.tls ? 'https' : 'http'}://${host}:${address.port}`,
    stats,
    close: async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      upstream.close();
      await pool.close();
    },
  };
}

type Route = { kind: 'stats' } | { kind: 'bulk'; index?: string } | { kind: 'document'; index: string; source: SourceKind } | { kind: 'pass' };

/**
 * What a request is, from its method and its path as sent (not normalized: `.` and `..` are names to the
 * engines), each segment percent-decoded as the engines decode it. A path the engines cannot decode (a
 * `%` without two hex digits) is refused by them: it passes.
 */
export function routeOf(method: string, pathname: string): Route {
  const decoded = pathname.split('/').filter(Boolean).map((segment) => decodeSegment(segment));
  if (decoded.some((segment) => segment === undefined)) return { kind: 'pass' };
  const segments = decoded as string[];
  const write = method === 'PUT' || method === 'POST';
  if (method === 'GET' && pathname === STATS_PATH) return { kind: 'stats' };
  if (!write) return { kind: 'pass' };
  const [first, second, third] = segments;
  if (segments.length === 1 && first === '_bulk') return { kind: 'bulk' };
  // /{index}/_bulk whatever its first segment: the engines take `/_doc/_bulk` or `/_all/_bulk` as a bulk
  // whose default index is no name, and write every item that names its own index.
  if (segments.length === 2 && second === '_bulk') return { kind: 'bulk', index: first };
  if (first === undefined || first.startsWith('_')) return { kind: 'pass' };
  if (second === '_doc' && (segments.length === 3 || (segments.length === 2 && method === 'POST'))) return { kind: 'document', index: first, source: 'index' };
  if (segments.length === 3 && second === '_create') return { kind: 'document', index: first, source: 'index' };
  if (segments.length === 3 && second === '_update' && method === 'POST' && third !== undefined) return { kind: 'document', index: first, source: 'update' };
  return typedRoute(method, segments);
}

/** The typed forms Elasticsearch 7 still takes: /{index}/{type}[/{id}[/_create|/_update]]. */
function typedRoute(method: string, [index, type, id, action, ...rest]: string[]): Route {
  if (type === undefined || type.startsWith('_') || rest.length > 0) return { kind: 'pass' };
  if (id === undefined) return method === 'POST' ? { kind: 'document', index, source: 'index' } : { kind: 'pass' };
  if (action === undefined || action === '_create') return { kind: 'document', index, source: 'index' };
  if (action === '_update' && method === 'POST') return { kind: 'document', index, source: 'update' };
  return { kind: 'pass' };
}

async function handle(ctx: ProxyContext, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const target = req.url ?? '/';
  const route = routeOf(req.method ?? 'GET', rawPath(target));
  if (route.kind === 'stats') {
    sendJson(res, 200, {
      ...ctx.stats.snapshot(),
      indices_without_fields: ctx.fields.failures,
      target_lookups: { made: ctx.targets.lookups, failed: ctx.targets.failedLookups },
      upstream_sockets: ctx.upstream.sockets(),
      upstream_writes: ctx.inFlight.describe(),
      buffered: { limit_bytes: ctx.budget.total, held_bytes: ctx.budget.held, peak_bytes: ctx.budget.peak, waiting: ctx.budget.waiting },
    });
    return;
  }
  const transfer = transferCodingRefusal(req);
  if (transfer) throw transfer;
  if (route.kind === 'pass') return passThrough(ctx, req, res);
  // The engines refuse a query string they cannot decode, before reading the body.
  const params = queryParams(target);
  if (params === undefined) return passThrough(ctx, req, res);
  let document: Target | undefined;
  if (route.kind === 'document') {
    document = await ctx.targets.decide(route.index, req.rawHeaders);
    if (document.kind === 'other') {
      ctx.stats.documents.other_indices++;
      return passThrough(ctx, req, res, document.rewritten ? withFirstSegment(target, document.index) : target);
    }
  }
  // Whatever --on-error says: a coding the engine does not know either is indexed as it is, unsigned.
  const coding = codingRefusal(req);
  if (coding) throw Object.assign(coding, { appliedItems: 0 });
  if (document?.kind === 'undecided' && ctx.onError === 'pass') {
    ctx.stats.documents.passed++;
    return passThrough(ctx, req, res);
  }
  const format = bodyFormat(req);
  // A bulk may write anywhere, whatever its path says: its items name their indices.
  if (!format.readable) return unreadable(ctx, req, res, route.kind, true, format.why);
  const declared = declaredTooLarge(req, ctx.maxBodyBytes);
  if (declared) throw Object.assign(declared, { appliedItems: 0 });
  // A few writes at a time are read and signed, a few per client address; the others wait unread (their
  // clients held back by TCP, and their connections' idle timeout stopped meanwhile: the proxy holds them).
  req.socket.setTimeout(0);
  return ctx.clientSlots.run(req.socket.remoteAddress ?? '', () => ctx.writes.add(() => write(ctx, req, res, route, params, document)));
}

/** A write in its slot: room taken for a large document, its body read (timed), signed and sent on. */
async function write(ctx: ProxyContext, req: http.IncomingMessage, res: http.ServerResponse, route: Route & { kind: 'bulk' | 'document' }, params: QueryParam[], document: Target | undefined): Promise<void> {
  if (res.destroyed) return;
  const lease = ctx.budget.lease();
  const { socket } = req; // a request whose body failed has let go of its socket
  try {
    const length = plainLength(req);
    // A document whose size is known waits for its room before it is read; others take it as they are read.
    if (route.kind === 'document' && length !== undefined && length > LARGE_BYTES) {
      await lease.take(length).catch((err: Error) => Promise.reject(Object.assign(err, { appliedItems: 0 })));
      if (res.destroyed) return; // the client left while it waited
    }
    socket.setTimeout(ctx.idleTimeoutMs);
    const decoded = decodedBody(req, ctx.maxBodyBytes);
    watchBody(req, ctx.bodyTimeouts, (err) => decoded.destroy(err));
    if (route.kind === 'bulk') {
      const meter = metered(decoded, lease, true);
      return await handleBulk(ctx, req, meter, res, route.index, params, () => meter.releaseEnded());
    }
    const body = lease.held > 0 ? decoded : metered(decoded, lease, false);
    const target = req.url ?? '/';
    const decided = document as Target;
    const forwardTarget = decided.kind === 'signed' && decided.rewritten ? withFirstSegment(target, decided.index) : target;
    return await handleDocument(ctx, req, body, res, decided, route.source, forwardTarget);
  } finally {
    socket.setTimeout(ctx.idleTimeoutMs);
    lease.close();
  }
}

function metered(body: Readable, lease: Lease, lines: boolean): BudgetMeter {
  const meter = new BudgetMeter(lease, lines);
  return pipeline(body, meter, () => {});
}

/**
 * A write the proxy cannot read (SMILE, CBOR, YAML): passed on unread and counted with
 * --on-error pass; refused with --on-error reject when it may reach a signed index.
 */
function unreadable(ctx: ProxyContext, req: http.IncomingMessage, res: http.ServerResponse, kind: 'bulk' | 'document', targeted: boolean, why: string): Promise<void> | undefined {
  if (ctx.onError === 'pass' || !targeted) {
    ctx.stats.requests.unread++;
    if (kind === 'document') ctx.stats.documents.passed++;
    return passThrough(ctx, req, res);
  }
  ctx.stats.requests.refused++;
  if (kind === 'document') ctx.stats.documents.rejected++;
  const as = kind === 'bulk' ? 'application/x-ndjson' : 'application/json';
  refuse(req, res, 415, REFUSAL_TYPE, `near-dup signs JSON and NDJSON bodies; this one came with ${why}: send it as ${as}, or run the proxy with --on-error pass to let it through unsigned`);
  return undefined;
}

/** Answers an error before the body was read, and closes the connection rather than read what is left of it. */
function refuse(req: http.IncomingMessage, res: http.ServerResponse, status: number, type: string, reason: string, retryAfter?: number): void {
  res.setHeader('connection', 'close');
  if (retryAfter !== undefined) res.setHeader('retry-after', String(retryAfter));
  sendError(res, status, type, reason);
  res.once('finish', () => req.destroy());
}

/** Sends a request on as it came (to `target`, the same path but for a resolved index name). */
async function passThrough(ctx: ProxyContext, req: http.IncomingMessage, res: http.ServerResponse, target = req.url ?? '/'): Promise<void> {
  ctx.stats.requests.passed_through++;
  const { request, response } = ctx.upstream.send(req.method ?? 'GET', target, req.rawHeaders, req);
  onClientGone(res, () => request.destroy());
  let late: BodyTimeoutError | undefined;
  const stopWatching = watchBody(req, ctx.bodyTimeouts, (err) => {
    late = err;
    request.destroy(err);
  });
  const answer = await response.catch((err: unknown) => Promise.reject(late ?? withCodingHint(req, err)));
  stopWatching();
  pipeAnswer(answer, res);
}

/** A cluster that drops the connection over a body in a coding it does not take (OpenSearch and zstd) is not "unreachable" alone. */
function withCodingHint(req: http.IncomingMessage, err: unknown): unknown {
  const coding = req.headers['content-encoding'];
  if (!(err instanceof UpstreamError) || coding === undefined) return err;
  return new UpstreamError(`${err.message} (the request came with Content-Encoding ${JSON.stringify(coding)}, which the cluster may not take)`);
}

function failed(ctx: ProxyContext, req: http.IncomingMessage, res: http.ServerResponse, err: unknown): void {
  if (res.headersSent || res.destroyed) {
    ctx.stats.requests.failed++;
    res.destroy();
    return;
  }
  if (err instanceof BodyTooLargeError || err instanceof LineTooLongError) {
    ctx.stats.requests.refused++;
    const setting = err instanceof LineTooLongError ? '--max-line-mb' : '--max-body-mb';
    refuse(req, res, 413, PROXY_ERROR, `near-dup proxy: ${err.message}${appliedNote(err)}; send smaller requests, or raise ${setting} (and the cluster's http.max_content_length)`);
    return;
  }
  if (err instanceof ProxyRefusal) {
    ctx.stats.requests.refused++;
    refuse(req, res, err.status, err.type, `${err.message}${appliedNote(err)}`, err.retryAfter);
    return;
  }
  ctx.stats.requests.failed++;
  if (err instanceof UpstreamError) sendError(res, 502, PROXY_ERROR, `${err.message}${appliedNote(err)}`);
  else sendError(res, 500, PROXY_ERROR, `near-dup proxy: ${(err as Error).message}${appliedNote(err as Error)}`);
}

/** What a bulk stopped midway had already applied (it went upstream in parts); nothing for other requests. */
function appliedNote(err: Error): string {
  const applied = (err as { appliedItems?: number }).appliedItems;
  if (applied === undefined) return '';
  return applied > 0 ? `; the first ${applied} items had gone to the cluster in earlier parts and were applied, the rest were not` : '; nothing was applied';
}
