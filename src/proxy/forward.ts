// Raw HTTP to one cluster for the signing proxy: requests go upstream as the client sent them (its
// headers, its credentials), answers come back as streams. Only the Host header and the hop-by-hop
// headers a proxy must not pass on are changed. The proxy's own JSON requests go by `upstreamJson`.
// With AWS SigV4 (Amazon OpenSearch Service, Serverless) the proxy signs each request itself, over the
// bytes it sends (a body it rewrote included): a body is then gathered whole before it goes, and the
// client's own Authorization and x-amz-* headers are replaced by the proxy's signature. Not one
// engine/raw-request.ts request (read whole, timed, the connection's credentials): streams both ways over a
// keep-alive pool, with the clients' credentials; its TLS settings, signing and body reading are shared.
import http from 'node:http';
import https from 'node:https';
import { PassThrough, pipeline, type Readable, Transform, type Writable } from 'node:stream';
import type { AwsSigning } from '../engine/aws-sigv4.js';
import { tlsSettings } from '../engine/connection.js';
import { EngineResponseError } from '../engine/errors.js';
import { authHeaders, BodyTooLargeError, jsonOrText, readBody } from '../engine/raw-request.js';
import { redactCredentials } from '../engine/url.js';

export { BodyTooLargeError, readBody };

/** Headers that belong to one connection, not to the message (RFC 9110 7.6.1), and never cross a proxy. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade']);

/** How the proxy reaches the cluster: its URL, TLS trust, and SigV4 when the proxy signs. */
export interface UpstreamOptions {
  /** The cluster's URL, without credentials; a path prefix is kept. */
  url: string;
  /** PEM text of the CA(s) that signed the cluster's certificate (--ca-file, --ca-fingerprint). */
  ca?: string;
  insecure?: boolean;
  /** Sign every request with the proxy's own AWS credentials. */
  aws?: AwsSigning;
  /** Sockets kept open to the cluster (default 64). */
  maxSockets?: number;
  /** With SigV4, the largest body gathered to be signed (default 100 MB, the engines' own limit). */
  maxSignedBodyBytes?: number;
}

/** What the caller writes a body to (a ClientRequest, or with SigV4 the gathering of a body to sign). */
export type UpstreamRequest = Writable;

/** The cluster's answer as the proxy passes it on: its status and headers, the body as a stream. */
export interface UpstreamResponse {
  status: number;
  /** Header name/value pairs as the cluster sent them, minus hop-by-hop ones. */
  rawHeaders: string[];
  body: Readable;
}

/** The cluster could not be reached or did not answer; the client gets a 502. */
export class UpstreamError extends Error {
  override name = 'UpstreamError';
}

/** The client went away before its answer was written: whatever was reading its request stops. */
export class ClientGoneError extends Error {
  override name = 'ClientGoneError';
  constructor() {
    super('the client went away');
  }
}

/** Passes bytes on until more than `limit` have come, then fails with a BodyTooLargeError saying `what` was too large. */
export function byteLimit(limit: number, what: string): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > limit) done(new BodyTooLargeError(`${what} is larger than ${limit} bytes`));
      else done(null, chunk);
    },
  });
}

/** Raw name/value pairs without hop-by-hop headers and without the names in `drop` (lower case). */
export function passableHeaders(raw: readonly string[], drop: readonly string[] = []): string[] {
  const dropped = new Set([...HOP_BY_HOP, ...drop]);
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    if (!dropped.has(raw[i].toLowerCase())) out.push(raw[i], raw[i + 1]);
  }
  return out;
}

/** The value of a header in raw name/value pairs (`name` in lower case), or undefined. */
export function headerValue(raw: readonly string[], name: string): string | undefined {
  for (let i = 0; i < raw.length; i += 2) if (raw[i].toLowerCase() === name) return raw[i + 1];
  return undefined;
}

/** Writes an upstream answer to the client; a client gone midway destroys the answer, which frees its upstream socket. */
export function pipeAnswer(answer: UpstreamResponse, res: http.ServerResponse): void {
  res.writeHead(answer.status, answer.rawHeaders);
  pipeline(answer.body, res, () => {});
}

/** Runs `stop` if the client's connection closes before its answer was written whole. */
export function onClientGone(res: http.ServerResponse, stop: () => void): void {
  res.once('close', () => {
    if (!res.writableFinished) stop();
  });
}

/**
 * The cluster as the proxy reaches it: requests forwarded as streams over a keep-alive pool, signed with SigV4 when
 * asked.
 */
export class Upstream {
  readonly url: URL;
  private readonly agent: http.Agent;
  private readonly aws?: AwsSigning;
  private readonly maxSignedBodyBytes: number;

  constructor(options: UpstreamOptions) {
    this.url = new URL(options.url);
    this.aws = options.aws;
    this.maxSignedBodyBytes = options.maxSignedBodyBytes ?? 100 * 1024 * 1024;
    const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 64 };
    this.agent =
      this.url.protocol === 'https:'
        ? new https.Agent({ ...agentOptions, ...tlsSettings({ ca: options.ca, insecure: options.insecure ?? false }) })
        : new http.Agent(agentOptions);
  }

  /**
   * Sends a request upstream. `rawHeaders` are the client's (hop-by-hop ones, Host and Expect are replaced);
   * `body` is a stream or bytes; without one, the caller writes to `request` and ends it. The promise gives
   * the answer once its headers arrive.
   */
  send(method: string, pathAndQuery: string, rawHeaders: readonly string[], body?: Readable | Uint8Array): { request: UpstreamRequest; response: Promise<UpstreamResponse> } {
    if (this.aws) return this.sendSigned(method, pathAndQuery, rawHeaders, body);
    const headers = passableHeaders(rawHeaders, ['host', 'expect', ...(body instanceof Uint8Array ? ['content-length'] : [])]);
    const request = this.open(method, pathAndQuery, headers, body instanceof Uint8Array ? body : undefined);
    const response = this.answerOf(request);
    if (body instanceof Uint8Array) request.end(body);
    else if (body) body.pipe(request);
    return { request, response };
  }

  /** A request with Host (and Content-Length for bytes) set, to the cluster's path prefix. */
  private open(method: string, pathAndQuery: string, headers: string[], bytes: Uint8Array | undefined): http.ClientRequest {
    headers.push('host', this.url.host);
    if (bytes) headers.push('content-length', String(bytes.length));
    const transport = this.url.protocol === 'https:' ? https : http;
    const request = transport.request({
      protocol: this.url.protocol,
      hostname: this.url.hostname,
      port: this.url.port,
      method,
      path: this.basePath() + pathAndQuery,
      headers: headers as unknown as http.OutgoingHttpHeaders,
      agent: this.agent,
    });
    request.on('error', () => {}); // a later error (writing to a closed socket) is the answer's to report
    return request;
  }

  private basePath(): string {
    return this.url.pathname.replace(/\/+$/, '');
  }

  private answerOf(request: http.ClientRequest): Promise<UpstreamResponse> {
    const response = new Promise<UpstreamResponse>((resolve, reject) => {
      request.once('response', (res) => resolve({ status: res.statusCode ?? 502, rawHeaders: passableHeaders(res.rawHeaders), body: res }));
      request.once('error', (err) => reject(new UpstreamError(`cannot reach ${redactCredentials(this.url.origin)}: ${describeSocketError(err)}`)));
    });
    response.catch(() => {}); // observed by the caller; never an unhandled rejection meanwhile
    return response;
  }

  /** SigV4: the body gathered (what the caller writes, a stream, or bytes), signed, then sent whole. */
  private sendSigned(method: string, pathAndQuery: string, rawHeaders: readonly string[], body?: Readable | Uint8Array): { request: UpstreamRequest; response: Promise<UpstreamResponse> } {
    const gathering = new PassThrough();
    const bytes = body instanceof Uint8Array ? Promise.resolve(body) : readBody(gathering, this.maxSignedBodyBytes);
    const response = bytes.then(async (whole) => {
      const headers = passableHeaders(rawHeaders, ['host', 'expect', 'content-length', 'authorization']).filter((_, i, all) => !/^x-amz-/i.test(all[i - (i % 2)]));
      const signature = await authHeaders({ aws: this.aws }, method, this.url, this.basePath() + pathAndQuery, whole);
      for (const [name, value] of Object.entries(signature)) headers.push(name, value);
      const request = this.open(method, pathAndQuery, headers, whole);
      const answer = this.answerOf(request);
      request.end(whole);
      return answer;
    });
    response.catch(() => {});
    if (body instanceof Uint8Array) gathering.end();
    else if (body) body.pipe(gathering);
    return { request: gathering, response };
  }

  /** Sockets to the cluster: carrying a request now, and kept open idle for the next one. */
  sockets(): { in_use: number; idle: number } {
    const count = (table: NodeJS.ReadOnlyDict<unknown[]>) => Object.values(table).reduce((n, list) => n + (list?.length ?? 0), 0);
    return { in_use: count(this.agent.sockets), idle: count(this.agent.freeSockets) };
  }

  close(): void {
    this.agent.destroy();
  }
}

/** A JSON request upstream (with `headers`, a client's credentials or none); a refusal thrown as an EngineResponseError. */
export async function upstreamJson(upstream: Upstream, method: string, path: string, body?: unknown, headers: readonly string[] = []): Promise<unknown> {
  const bytes = body === undefined ? new Uint8Array(0) : Buffer.from(JSON.stringify(body));
  const answer = await upstream.send(method, path, [...headers, 'content-type', 'application/json', 'accept', 'application/json'], bytes).response;
  const parsed = jsonOrText((await readBody(answer.body)).toString('utf8'));
  if (answer.status < 300) return parsed;
  const error = (parsed as { error?: { type?: string; reason?: string } } | undefined)?.error;
  throw new EngineResponseError(answer.status, typeof error === 'object' ? error?.type : undefined, typeof error === 'object' ? error?.reason : undefined, method, path, upstream.url.origin, parsed);
}

function describeSocketError(err: Error & { code?: string }): string {
  if (err.code === 'ECONNREFUSED') return 'connection refused';
  if (err.code === 'ECONNRESET') return 'connection reset';
  if (err.code === 'ENOTFOUND') return 'host not found';
  return err.code ?? err.message;
}
