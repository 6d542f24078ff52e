// near-dup proxy: an HTTP server any Elasticsearch or OpenSearch client can use in place of the cluster.
// Writes of documents to the indices of --index get the near-dup fields on the way; everything else goes
// to the cluster and back as it came, headers included (only Host and hop-by-hop headers change).
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { BodyTooLargeError, Upstream, UpstreamError } from '../engine/forward.js';
import { createSignPool } from '../signing/sign-pool.js';
import type { SourceKind } from '../signing/sign-sources.js';
import { resolveSignerSettings, type SignerOptions } from '../signature.js';
import { handleBulk } from './bulk.js';
import { REFUSAL_TYPE } from './bulk-response.js';
import { type OnError, type ProxyContext, sendError, sendJson } from './context.js';
import { handleDocument } from './document.js';
import { IndexFieldsGuard } from './index-fields.js';
import { indexMatcher } from './index-pattern.js';
import { ProxyStats } from './stats.js';

export interface ProxyOptions {
  /** The cluster, without credentials (each client's own go through). */
  upstream: { url: string; ca?: string; insecure?: boolean };
  host: string;
  port: number;
  /** Index names and patterns, comma-separated, as the engines read them. */
  index: string;
  fields: string[];
  prefix: string;
  signer: SignerOptions;
  maxChars: number;
  onError: OnError;
  threads?: number;
  maxUpstreamBytes: number;
  /** PEM texts, to serve HTTPS. */
  tls?: { cert: string; key: string };
  warn: (line: string) => void;
}

export interface RunningProxy {
  /** Where clients connect. */
  url: string;
  stats: ProxyStats;
  close(): Promise<void>;
}

export const STATS_PATH = '/_near_dup/stats';
/** The error type of what went wrong in the proxy itself (the cluster unreachable, a body too large). */
const PROXY_ERROR = 'near_dup_proxy_exception';

export async function startProxy(options: ProxyOptions): Promise<RunningProxy> {
  resolveSignerSettings(options.signer); // a bad spec is said before anything listens
  const upstream = new Upstream(options.upstream);
  const pool = createSignPool(options.threads);
  const stats = new ProxyStats();
  const fields = new IndexFieldsGuard(upstream, options.prefix, options.warn);
  const ctx: ProxyContext = {
    upstream,
    pool,
    matches: indexMatcher(options.index),
    signer: options.signer,
    sources: { fields: options.fields, prefix: options.prefix, maxChars: options.maxChars },
    onError: options.onError,
    maxUpstreamBytes: options.maxUpstreamBytes,
    stats,
    fields,
  };
  const listener = (req: http.IncomingMessage, res: http.ServerResponse) => {
    handle(ctx, req, res).catch((err: unknown) => failed(ctx, res, err));
  };
  const server = options.tls ? https.createServer({ cert: options.tls.cert, key: options.tls.key }, listener) : http.createServer(listener);
  server.keepAliveTimeout = 65_000;
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

/** What a request is, from its method and path (index names URL-decoded). */
export function routeOf(method: string, pathname: string): Route {
  let segments: string[];
  try {
    segments = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return { kind: 'pass' };
  }
  const write = method === 'PUT' || method === 'POST';
  if (method === 'GET' && pathname === STATS_PATH) return { kind: 'stats' };
  if (!write) return { kind: 'pass' };
  const [first, second, third] = segments;
  if (segments.length === 1 && first === '_bulk') return { kind: 'bulk' };
  if (first === undefined || first.startsWith('_')) return { kind: 'pass' };
  if (segments.length === 2 && second === '_bulk') return { kind: 'bulk', index: first };
  if (second === '_doc' && (segments.length === 3 || (segments.length === 2 && method === 'POST'))) return { kind: 'document', index: first, source: 'index' };
  if (segments.length === 3 && second === '_create') return { kind: 'document', index: first, source: 'index' };
  if (segments.length === 3 && second === '_update' && method === 'POST' && third !== undefined) return { kind: 'document', index: first, source: 'update' };
  return { kind: 'pass' };
}

async function handle(ctx: ProxyContext, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://proxy');
  const route = routeOf(req.method ?? 'GET', url.pathname);
  if (route.kind === 'stats') {
    sendJson(res, 200, { ...ctx.stats.snapshot(), indices_without_fields: ctx.fields.failures });
    return;
  }
  const body = route.kind === 'pass' || !signable(req) ? undefined : decodedBody(req);
  if (route.kind === 'bulk' && body) return handleBulk(ctx, req, body, res, route.index);
  if (route.kind === 'document' && body && ctx.matches(route.index)) return handleDocument(ctx, req, body, res, route.index, route.source);
  if (route.kind === 'document' && !body && ctx.matches(route.index) && ctx.onError === 'reject') {
    ctx.stats.documents.rejected++;
    return sendError(res, 400, REFUSAL_TYPE, `near-dup signs JSON documents; this one came as ${req.headers['content-type']} (${req.headers['content-encoding'] ?? 'not compressed'}); send it as application/json`);
  }
  if (route.kind === 'document') ctx.stats.documents[ctx.matches(route.index) ? 'passed' : 'other_indices']++;
  return passThrough(ctx, req, res);
}

const DECODERS: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};

/** JSON (or NDJSON) the proxy can read: not SMILE, CBOR or YAML, and not compressed in an unknown way. */
function encodingOf(req: http.IncomingMessage): string {
  return (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
}

function signable(req: http.IncomingMessage): boolean {
  const type = (req.headers['content-type'] ?? '').toLowerCase();
  if (/smile|cbor|yaml/.test(type)) return false;
  const encoding = encodingOf(req);
  return encoding === 'identity' || encoding in DECODERS;
}

function decodedBody(req: http.IncomingMessage): Readable {
  const decoder = DECODERS[encodingOf(req)];
  return decoder ? (req.pipe(decoder()) as unknown as Readable) : req;
}

async function passThrough(ctx: ProxyContext, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  ctx.stats.requests.passed_through++;
  const { request, response } = ctx.upstream.send(req.method ?? 'GET', req.url ?? '/', req.rawHeaders, req);
  res.once('close', () => {
    if (!res.writableFinished) request.destroy();
  });
  const answer = await response;
  res.writeHead(answer.status, answer.rawHeaders);
  answer.body.pipe(res);
}

function failed(ctx: ProxyContext, res: http.ServerResponse, err: unknown): void {
  ctx.stats.requests.failed++;
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof UpstreamError) sendError(res, 502, PROXY_ERROR, err.message);
  else if (err instanceof BodyTooLargeError) sendError(res, 413, PROXY_ERROR, err.message);
  else sendError(res, 500, PROXY_ERROR, `near-dup proxy: ${(err as Error).message}`);
}
