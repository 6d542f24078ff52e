// near-dup explore: a small web server for reviewers, on loopback unless told otherwise. Every answer is
// read from the engine when asked (nothing is copied or cached); the evaluate report's files are served
// from its folder when one is given.
//
// It reads the index with the operator's credentials, so it answers only requests addressed to it by a
// name it knows (the Host header: the listen host, loopback names, --allow-host), which keeps a page on
// another site from reading it through DNS rebinding; it is never framed; and it holds a bounded number of
// scrolls open on the cluster.
//
// Every parameter is checked before the cluster is asked (params.ts): a malformed one is answered 400 with
// its name and what to give. No answer holds the cluster's address: an error of the engine is told by its
// type and reason (400 when the request the parameters made was refused, 502 when the cluster failed or
// did not answer), the details left for the operator's terminal (onError).
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import PQueue from 'p-queue';
import type { EngineClient } from '../engine/client.js';
import { EngineConnectionError, EngineResponseError, errorCode } from '../engine/errors.js';
import { UsageError, UserError } from '../errors.js';
import { REPORT_FILE } from '../jobs/evaluate.js';
import { comparedText, TEXT_VIEWS, type TextView, textView } from './compared-text.js';
import { clusterMembers, documentText, type ExploreSource, listClusters, MemberScrolls, similarTo } from './queries.js';
import { PAGE } from './page.js';
import { idInPath, idParam, listPosition, membersPosition, pageSize, ParamError, queryParams, searchText, shown } from './params.js';
import { MAX_DIFF_CHARS, wordDiff } from './word-diff.js';

/** What `near-dup explore` serves: the index, where to listen, and the evaluation report to show beside it. */
export interface ExploreOptions extends ExploreSource {
  host: string;
  port: number;
  /** The folder `near-dup evaluate --out` wrote. */
  reportDir?: string;
  /** Host names the page is also opened by (beyond the listen host and loopback names). */
  allowHosts?: string[];
  /** Told of every failure answered 5xx, whole (the page is told less: nothing of the cluster's address). */
  onError?: (err: unknown) => void;
}

/** The explorer as started: where it listens, and how to stop it. */
export interface RunningExplorer {
  url: string;
  close(): Promise<void>;
}

const PLOT = /^\/report\/(similarity-histogram|precision-recall|s-curve|estimated-vs-exact)\.(svg|png)$/;

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/** Serves the explorer's page and its API on `host:port`, reading from the engine when asked. */
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
      .catch((err: unknown) => {
        const answer = failureAnswer(err, client.url, parametersOf(req.url));
        if ((answer.status ?? 500) >= 500) options.onError?.(err);
        send(res, answer);
      });
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

async function route(client: EngineClient, options: ExploreOptions & { scrolls: MemberScrolls; opening: PQueue }, req: http.IncomingMessage): Promise<Answer> {
  if (req.method !== 'GET') return { status: 405, json: { error: 'the explorer only reads: GET' } };
  const url = new URL(req.url ?? '/', 'http://explore');
  const p = url.pathname;
  // Each API's parameters: known, given once, checked (params.ts), before the cluster is asked anything.
  const params = (...allowed: string[]) => queryParams(url.searchParams, allowed);
  let m: RegExpExecArray | null;
  if (p === '/') return { body: PAGE, type: 'text/html; charset=utf-8' };
  if (p === '/api/info') {
    params();
    return { json: { index: options.index, fields: options.fields, report: options.reportDir !== undefined } };
  }
  if (p === '/api/clusters') {
    const q = params('size', 'after', 'q');
    const asked = { size: pageSize(q.get('size')), after: listPosition(q.get('after')), q: searchText(q.get('q')) };
    return { json: await listClusters(client, options, asked) };
  }
  if ((m = /^\/api\/clusters\/([^/]+)\/members$/.exec(p))) {
    const clusterId = idInPath('cluster id', m[1]);
    const q = params('size', 'after');
    const asked = { size: pageSize(q.get('size')), after: membersPosition(q.get('after')), scrolls: options.scrolls };
    return { json: await options.opening.add(() => clusterMembers(client, options, clusterId, asked)) };
  }
  if ((m = /^\/api\/documents\/([^/]+)$/.exec(p))) {
    const id = idInPath('id', m[1]);
    params();
    return { json: await documentText(client, options, id) };
  }
  if ((m = /^\/api\/documents\/([^/]+)\/similar$/.exec(p))) {
    const id = idInPath('id', m[1]);
    params();
    return { json: await similarTo(client, options, id) };
  }
  if (p === '/api/pair') {
    const q = params('a', 'b', 'view');
    return { json: await pair(client, options, idParam('a', q.get('a')), idParam('b', q.get('b')), viewParam(q.get('view'))) };
  }
  if (p === '/api/report') {
    params();
    return report(options.reportDir);
  }
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
async function pair(client: EngineClient, options: ExploreSource, a: string, b: string, view: TextView) {
  // A side that names no document is said by its parameter.
  const side = (name: 'a' | 'b', id: string) =>
    documentText(client, options, id).catch((err: unknown) => {
      throw err instanceof ParamError && err.parameter === 'id' ? new ParamError(name, `${name}: ${err.message}`, err.status) : err;
    });
  const [left, right] = await Promise.all([side('a', a), side('b', b)]);
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

/** `view`: normalized (the default) or raw. */
function viewParam(value: string | undefined): TextView {
  try {
    return textView(value ?? null);
  } catch {
    throw new ParamError('view', `view must be ${TEXT_VIEWS.join(' or ')}, got ${shown(value ?? '')}`);
  }
}

/**
 * The answer to a failure, without the cluster's address: a parameter's own 4xx; a request the engine
 * refused as malformed, 400 (the parameters made it); the cluster failing, refusing the explorer or not
 * answering, 502 (503 overloaded, 504 timed out); anything else 500. Nothing of the engine's message is
 * passed on but its error type and reason, with any address taken out.
 */
export function failureAnswer(err: unknown, clusterUrl: string, parameters: string[] = []): Answer {
  if (err instanceof ParamError) return { status: err.status, json: { error: err.message, parameter: err.parameter } };
  const cause = engineCause(err);
  if (cause instanceof EngineResponseError) {
    const what = `${cause.statusCode}${cause.type ? ` ${cause.type}` : ''}${cause.reason ? `: ${withoutAddress(cause.reason, clusterUrl)}` : ''}`;
    if (cause.statusCode === 429) return { status: 503, json: { error: `the cluster is overloaded (${what}); try again in a moment` } };
    if (cause.statusCode === 401 || cause.statusCode === 403) return { status: 502, json: { error: `the cluster refused the explorer's request (${what}): the credentials explore was started with lack a privilege` } };
    if (cause.type === 'index_not_found_exception') return { status: 502, json: { error: `the index is not on the cluster (${what}): start explore again with an index that exists` } };
    if (cause.statusCode >= 400 && cause.statusCode < 500 && cause.statusCode !== 404 && cause.statusCode !== 408) {
      const named = parameters.length ? parameters.join(', ') : 'the parameters';
      return { status: 400, json: { error: `the cluster refused the request made from ${named} (${what}); check ${parameters.length > 1 ? 'them' : 'it'}`, ...(parameters.length ? { parameter: parameters.join(',') } : {}) } };
    }
    return { status: 502, json: { error: `the cluster failed to answer (${what}); see the cluster's health and logs` } };
  }
  if (cause !== undefined) {
    // No answer from the cluster: a network failure.
    const code = errorCode(cause);
    const timeout = cause.timeout || code === 'ETIMEDOUT';
    return { status: timeout ? 504 : 502, json: { error: `the cluster did not answer${code ? ` (${code})` : ''}: check that it is running and reachable from where explore runs` } };
  }
  if (err instanceof UserError || err instanceof UsageError) return { status: 400, json: { error: withoutAddress(err.message, clusterUrl) } };
  return { status: 500, json: { error: `the explorer failed unexpectedly (${withoutAddress(err instanceof Error ? err.message : String(err), clusterUrl)}); the terminal where explore runs has the details` } };
}

/** The engine's error or the network's failure behind an error (a UserError keeps it as its cause); undefined for any other. */
function engineCause(err: unknown): EngineResponseError | EngineConnectionError | undefined {
  for (let e: unknown = err, depth = 0; e && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof EngineResponseError || e instanceof EngineConnectionError) return e;
  }
  return undefined;
}

/** The parameters a request gave (its query's names, and the id in its path), to name them in an answer. */
function parametersOf(requestUrl: string | undefined): string[] {
  const url = new URL(requestUrl ?? '/', 'http://explore');
  const inPath = /^\/api\/clusters\/[^/]+\/members$/.test(url.pathname) ? ['cluster id'] : /^\/api\/documents\/[^/]+/.test(url.pathname) ? ['id'] : [];
  return [...new Set([...inPath, ...url.searchParams.keys()])];
}

/**
 * Text with the cluster's address taken out: its URL, its host (with or without the port), and any IP
 * address with a port (an engine's reason may name a node's transport address).
 */
export function withoutAddress(text: string, clusterUrl: string): string {
  let out = text;
  const names = new Set<string>([clusterUrl, clusterUrl.replace(/\/+$/, '')]);
  try {
    const u = new URL(clusterUrl);
    for (const name of [u.origin, u.host, u.hostname, u.hostname.replace(/^\[|\]$/g, '')]) if (name) names.add(name);
  } catch {
    // not a URL: its text alone is taken out
  }
  for (const name of [...names].sort((x, y) => y.length - x.length)) {
    const escapedName = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`(?<![A-Za-z0-9_-])${escapedName}(?::\\d+)?(?![A-Za-z0-9_-])`, 'g'), 'the cluster');
  }
  return out
    .replace(/\b(?:\d{1,3}\.){3}\d{1,3}:\d{1,5}\b/g, 'an address')
    .replace(/\[[0-9A-Fa-f:.]+\]:\d{1,5}\b/g, 'an address');
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
