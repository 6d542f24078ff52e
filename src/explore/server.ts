// near-dup explore: a small web server for reviewers, on loopback unless told otherwise. Every answer is
// read from the engine when asked (nothing is copied or cached); the evaluate report's files are served
// from its folder when one is given.
//
// It reads the index with the operator's credentials, so it answers only requests addressed to it by a
// name it knows (the Host header: the listen host, loopback names, --allow-host), which keeps a page on
// another site from reading it through DNS rebinding; it is never framed; and it holds a bounded number of
// scrolls open on the cluster.
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import PQueue from 'p-queue';
import type { EngineClient } from '../engine/client.js';
import { UsageError, UserError } from '../errors.js';
import { REPORT_FILE } from '../jobs/evaluate.js';
import { comparedText, textView } from './compared-text.js';
import { clusterMembers, documentText, type ExploreSource, listClusters, MemberScrolls, similarTo } from './queries.js';
import { PAGE } from './page.js';
import { MAX_DIFF_CHARS, wordDiff } from './word-diff.js';

export interface ExploreOptions extends ExploreSource {
  host: string;
  port: number;
  /** The folder `near-dup evaluate --out` wrote. */
  reportDir?: string;
  /** Host names the page is also opened by (beyond the listen host and loopback names). */
  allowHosts?: string[];
}

export interface RunningExplorer {
  url: string;
  close(): Promise<void>;
}

const PLOT = /^\/report\/(similarity-histogram|precision-recall|s-curve|estimated-vs-exact)\.(svg|png)$/;

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

export async function startExplorer(client: EngineClient, options: ExploreOptions): Promise<RunningExplorer> {
  const scrolls = new MemberScrolls(client);
  // Member pages open scrolls on the cluster: a few at a time, however many requests come at once.
  const opening = new PQueue({ concurrency: 4 });
  const known = new Set([options.host, ...LOOPBACK_NAMES, ...(options.allowHosts ?? [])].map((h) => h.toLowerCase()));
  const server = http.createServer((req, res) => {
    const host = hostName(req.headers.host);
    if (host === undefined || !known.has(host)) {
      send(res, { status: 403, json: { error: `the explorer answers to ${[...known].join(', ')}; this request was addressed to ${JSON.stringify(req.headers.host ?? '')}. Open it by one of those names, or start it with --allow-host ${host ?? 'NAME'}` } });
      return;
    }
    route(client, { ...options, scrolls, opening }, req)
      .then((answer) => send(res, answer))
      .catch((err: Error) => send(res, { status: err instanceof UserError || err instanceof UsageError || err instanceof URIError ? 400 : 500, json: { error: err.message } }));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const { address, port, family } = server.address() as AddressInfo;
  return {
    url: `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

interface Answer {
  status?: number;
  json?: unknown;
  body?: string | Buffer;
  type?: string;
}

/** The host name of a Host header, without the port (and the brackets of an IPv6 address), lower case. */
export function hostName(header: string | undefined): string | undefined {
  if (!header) return undefined;
  const match = /^(?:\[([0-9a-fA-F:.]+)\]|([A-Za-z0-9.-]+))(?::\d+)?$/.exec(header.trim());
  return match ? (match[1] ?? match[2]).toLowerCase().replace(/\.$/, '') : undefined;
}

function number(params: URLSearchParams, name: string, fallback: number): number {
  const value = params.get(name);
  return value === null || value === '' ? fallback : Number(value);
}

async function route(client: EngineClient, options: ExploreOptions & { scrolls: MemberScrolls; opening: PQueue }, req: http.IncomingMessage): Promise<Answer> {
  if (req.method !== 'GET') return { status: 405, json: { error: 'the explorer only reads: GET' } };
  const url = new URL(req.url ?? '/', 'http://explore');
  const p = url.pathname;
  const q = url.searchParams;
  const page = { size: number(q, 'size', 25), after: q.get('after') ?? undefined };
  let m: RegExpExecArray | null;
  if (p === '/') return { body: PAGE, type: 'text/html; charset=utf-8' };
  if (p === '/api/info') return { json: { index: options.index, fields: options.fields, report: options.reportDir !== undefined } };
  if (p === '/api/clusters') return { json: await listClusters(client, options, { ...page, q: q.get('q') ?? undefined }) };
  if ((m = /^\/api\/clusters\/([^/]+)\/members$/.exec(p))) {
    const clusterId = decodeURIComponent(m[1]);
    return { json: await options.opening.add(() => clusterMembers(client, options, clusterId, { ...page, scrolls: options.scrolls })) };
  }
  if ((m = /^\/api\/documents\/([^/]+)$/.exec(p))) return { json: await documentText(client, options, decodeURIComponent(m[1])) };
  if ((m = /^\/api\/documents\/([^/]+)\/similar$/.exec(p))) return { json: await similarTo(client, options, decodeURIComponent(m[1])) };
  if (p === '/api/pair') return { json: await pair(client, options, q.get('a'), q.get('b'), q.get('view')) };
  if (p === '/api/report') return report(options.reportDir);
  if ((m = PLOT.exec(p)) && options.reportDir) {
    const body = await readFile(path.join(options.reportDir, `${m[1]}.${m[2]}`)).catch(() => undefined);
    return body ? { body, type: m[2] === 'svg' ? 'image/svg+xml' : 'image/png' } : { status: 404, json: { error: 'no such plot: run near-dup evaluate' } };
  }
  return { status: 404, json: { error: `no such page: ${p}` } };
}

/**
 * Two documents side by side, compared word by word: by default as their signatures saw them (each after
 * the normalizer of its stored params), or as stored (`view=raw`).
 */
async function pair(client: EngineClient, options: ExploreSource, a: string | null, b: string | null, viewName: string | null) {
  if (!a || !b) throw new UserError('give two documents: /api/pair?a=ID&b=ID');
  const view = textView(viewName);
  const [left, right] = await Promise.all([documentText(client, options, a), documentText(client, options, b)]);
  const sides = [left, right].map((doc) => ({ id: doc.id, ...comparedText(doc.text, doc.nearDup.params, view) }));
  // A side that could not be normalized is compared as stored on both sides: a normalized text against a
  // raw one would differ everywhere.
  const asStored = sides.filter((s) => s.asStored).map((s) => `${s.id} is shown as stored: ${s.asStored}`);
  const [l, r] = asStored.length ? [left.text, right.text] : sides.map((s) => s.text);
  const normalizers = [...new Set(sides.map((s) => s.normalizer).filter(Boolean))];
  return {
    a,
    b,
    view: asStored.length ? 'raw' : view,
    ...(view === 'normalized' && !asStored.length ? { normalizer: normalizers.join(' and ') } : {}),
    ...(asStored.length ? { notes: asStored } : {}),
    maxChars: MAX_DIFF_CHARS,
    ...wordDiff(l, r),
  };
}

async function report(dir: string | undefined): Promise<Answer> {
  if (!dir) return { status: 404, json: { error: 'no report: run near-dup evaluate --out DIR, then explore --report DIR' } };
  const text = await readFile(path.join(dir, REPORT_FILE), 'utf8').catch(() => undefined);
  if (text === undefined) return { status: 404, json: { error: `no ${REPORT_FILE} in ${dir}: run near-dup evaluate --out ${dir}` } };
  const parsed = JSON.parse(text) as Record<string, unknown>;
  return { json: { ...parsed, plots: ['similarity-histogram', 'precision-recall', 's-curve', 'estimated-vs-exact'] } };
}

function send(res: http.ServerResponse, answer: Answer): void {
  const body = answer.json !== undefined ? JSON.stringify(answer.json) : (answer.body ?? '');
  res.writeHead(answer.status ?? 200, {
    'content-type': answer.json !== undefined ? 'application/json; charset=utf-8' : (answer.type ?? 'text/plain'),
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
    // The page runs only its own script; document text never becomes markup.
    'content-security-policy': "default-src 'self'; script-src 'unsafe-inline' 'self'; style-src 'unsafe-inline' 'self'; img-src 'self'; frame-ancestors 'none'",
    'x-frame-options': 'DENY',
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
  });
  res.end(body);
}
