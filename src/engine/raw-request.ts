// One HTTP(S) request made without an official client: detection asks a cluster what it is before a client
// can be chosen (detect.ts), and dashboards talks to OpenSearch Dashboards or Kibana, which no client speaks
// to. TLS trust and credentials (or the SigV4 signature) come from the resolved connection, as the clients'
// do, and an answer is read whole up to a bound. The proxy streams both ways over a pool of its own
// (proxy/forward.ts) and takes the signing and the bounded reading from here.
import http from 'node:http';
import https from 'node:https';
import { UserError } from '../errors.js';
import { type ResolvedConnection, requestHeaders, tlsSettings } from './connection.js';
import { EngineConnectionError } from './errors.js';

/** An answer read whole: its status, its headers, and its body as JSON when it parses, else as text. */
export interface RawAnswer {
  statusCode: number;
  headers: http.IncomingHttpHeaders;
  body: unknown;
}

/** These requests read small JSON (a root, a status, a field list, an import's result): more is not one of them. */
export const MAX_RAW_ANSWER_BYTES = 32 * 1024 * 1024;

/**
 * Sends one request to `target` (a URL without credentials) and reads its answer whole. `timeoutMs`: nothing
 * sent or received for this long fails it (default: the connection's request timeout). No answer (refused,
 * TLS, timeout, dropped) is an EngineConnectionError naming `connection.url`; an answer past
 * MAX_RAW_ANSWER_BYTES, a UserError; neither names a credential. Redirects are not followed.
 */
export async function rawRequest(
  connection: Pick<ResolvedConnection, 'url' | 'auth' | 'aws' | 'ca' | 'clientCertificate' | 'insecure' | 'requestTimeoutMs'>,
  method: string,
  target: URL,
  { headers = {}, body, timeoutMs = connection.requestTimeoutMs }: { headers?: Record<string, string>; body?: Uint8Array; timeoutMs?: number } = {},
): Promise<RawAnswer> {
  const signed = await authHeaders(connection, method, target, target.pathname + target.search, body);
  const tls = target.protocol === 'https:';
  const unreached = (err: Error) =>
    err instanceof EngineConnectionError ? err : new EngineConnectionError(err.message, (err as NodeJS.ErrnoException).code, connection.url, { cause: err });
  return new Promise((resolve, reject) => {
    const options = { method, headers: { ...headers, ...(body ? { 'content-length': String(body.byteLength) } : {}), ...signed }, timeout: timeoutMs, ...(tls ? tlsSettings(connection) : {}) };
    const req = (tls ? https : http).request(target, options, (res) => {
      readBody(res, MAX_RAW_ANSWER_BYTES, undefined, `the answer of ${connection.url} to ${method} ${target.pathname}`).then(
        (bytes) => resolve({ statusCode: res.statusCode ?? 0, headers: res.headers, body: jsonOrText(bytes.toString('utf8')) }),
        (err: Error) => reject(err instanceof BodyTooLargeError ? new UserError(`${err.message}, more than near-dup reads as one answer; check --url`) : unreached(err)),
      );
    });
    req.on('timeout', () => req.destroy(new EngineConnectionError(`no answer within ${timeoutMs} ms`, 'ETIMEDOUT', connection.url, { timeout: true })));
    req.on('error', (err) => reject(unreached(err)));
    req.end(body);
  });
}

/**
 * The headers that authenticate one request to `origin`: its Authorization, or its SigV4 signature over
 * the method, path, query and body exactly as they are sent.
 */
export function authHeaders(connection: Pick<ResolvedConnection, 'auth' | 'aws'>, method: string, origin: { protocol: string; host: string }, pathAndQuery: string, body?: Uint8Array): Promise<Record<string, string>> {
  const [path, query = ''] = pathAndQuery.split(/\?(.*)/s, 2);
  return requestHeaders(connection, { method, protocol: origin.protocol, host: origin.host, path, query, body });
}

/** JSON when it parses, else the text (the caller decides what it expected). */
export function jsonOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** A body past its limit: a raw request never holds an answer of unbounded size. */
export class BodyTooLargeError extends Error {
  override name = 'BodyTooLargeError';
}

/**
 * A whole body (a request's or an answer's) as one buffer; past `limit` bytes, a BodyTooLargeError saying
 * `what` was too large. With `expected` (its Content-Length), the bytes are copied into one buffer of that
 * size as they come, never held as chunks and their join at once.
 */
export async function readBody(stream: AsyncIterable<Uint8Array>, limit = Number.POSITIVE_INFINITY, expected?: number, what = 'the request body'): Promise<Buffer> {
  let chunks: Buffer[] = [];
  let size = 0;
  let whole = expected !== undefined && expected <= limit ? Buffer.allocUnsafe(expected) : undefined;
  for await (const chunk of stream) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (size + bytes.length > limit) throw new BodyTooLargeError(`${what} is larger than ${limit} bytes`);
    if (whole && size + bytes.length > whole.length) {
      chunks = [whole.subarray(0, size)];
      whole = undefined;
    }
    if (whole) bytes.copy(whole, size);
    else chunks.push(bytes);
    size += bytes.length;
  }
  return whole ? whole.subarray(0, size) : Buffer.concat(chunks, size);
}
