// A client's request body as the proxy reads it: whether it can be read at all (JSON or NDJSON, plain or
// compressed in a way the engines also take), and a stream of its decoded bytes that stops at the size
// limit and fails as soon as the client goes away, so nothing waits on a body that will never end.
import type http from 'node:http';
import { pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { BodyTooLargeError, byteLimit } from './forward.js';
import { PROXY_ERROR, ProxyRefusal } from './refusal.js';
import { REFUSAL_TYPE } from './bulk-response.js';

/** The engines' own default limit on a request body (http.max_content_length: 100mb). */
export const DEFAULT_MAX_BODY_BYTES = 100 * 1024 * 1024;

// The codings the engines decode (Netty's HttpContentDecompressor: gzip, x-gzip, deflate, x-deflate), and br.
const DECODERS: Record<string, () => NodeJS.ReadWriteStream> = {
  gzip: () => zlib.createGunzip(),
  'x-gzip': () => zlib.createGunzip(),
  deflate: () => zlib.createInflate(),
  'x-deflate': () => zlib.createInflate(),
  br: () => zlib.createBrotliDecompress(),
};
const TAKEN = `identity, ${Object.keys(DECODERS).slice(0, -1).join(', ')} and ${Object.keys(DECODERS).at(-1)}`;

/** Readable, or why not (for the message). */
export type BodyFormat = { readable: true } | { readable: false; why: string };

/**
 * JSON or NDJSON by the media type itself (`type/subtype`, parameters aside): application/json,
 * application/x-ndjson and the vendor forms (`application/vnd.elasticsearch+json; compatible-with=8`). No
 * Content-Type is read as JSON too (the engines refuse such a write themselves). SMILE, CBOR, YAML and
 * anything else are not readable. (A coding is checked before: codingRefusal.)
 */
export function bodyFormat(req: http.IncomingMessage): BodyFormat {
  const type = req.headers['content-type'];
  if (type !== undefined && !isJsonMediaType(type)) return { readable: false, why: `Content-Type ${JSON.stringify(type)}` };
  return { readable: true };
}

/**
 * Why a write's Content-Encoding cannot be taken (undefined: it can): one the proxy cannot undo, or more
 * than one. Such a write is refused whatever --on-error says: sent on, the engines index a body in a coding
 * they do not know as it is (a plain body under "bogus" lands unsigned), or drop the connection (zstd).
 */
export function codingRefusal(req: http.IncomingMessage): ProxyRefusal | undefined {
  const codings = codingsOf(req);
  if (codings.length === 0 || (codings.length === 1 && codings[0] in DECODERS)) return undefined;
  return new ProxyRefusal(
    415,
    REFUSAL_TYPE,
    `near-dup cannot read a body sent with Content-Encoding ${JSON.stringify(req.headers['content-encoding'])}, so it cannot sign it: it takes ${TAKEN}; send the request in one of those`,
  );
}

/**
 * A transfer coding other than chunked (`Transfer-Encoding: gzip, chunked`), for any request: Node undoes
 * only chunked, and the header is hop-by-hop, so the body would go on with a coding nobody undoes (the
 * engines would read the gzip bytes as the body). RFC 9112 6.1: 501.
 */
export function transferCodingRefusal(req: http.IncomingMessage): ProxyRefusal | undefined {
  const header = req.headers['transfer-encoding'];
  if (header === undefined) return undefined;
  const codings = header.toLowerCase().split(',').map((c) => c.trim()).filter((c) => c !== '' && c !== 'chunked' && c !== 'identity');
  if (codings.length === 0) return undefined;
  return new ProxyRefusal(501, PROXY_ERROR, `near-dup proxy: Transfer-Encoding ${JSON.stringify(header)} is not taken (only chunked is); send the body chunked or with Content-Length, compressed with Content-Encoding (${TAKEN})`);
}

/**
 * Whether a Content-Type is JSON or NDJSON (`application/json`, `application/x-ndjson`, `+json` suffixes), the bodies
 * the proxy can read.
 */
export function isJsonMediaType(header: string): boolean {
  const essence = header.split(';')[0].trim().toLowerCase();
  const match = /^application\/(?:[a-z0-9.!#$&^_-]+\+)?([a-z0-9.-]+)$/.exec(essence);
  return match !== null && ['json', 'x-ndjson', 'ndjson'].includes(match[1]);
}

function codingsOf(req: http.IncomingMessage): string[] {
  const header = req.headers['content-encoding'] ?? '';
  return header
    .toLowerCase()
    .split(',')
    .map((c) => c.trim())
    .filter((c) => c !== '' && c !== 'identity');
}

/** The body's size as it will be read, when the client says it (Content-Length, no coding). */
export function plainLength(req: http.IncomingMessage): number | undefined {
  const length = Number(req.headers['content-length']);
  return codingsOf(req).length === 0 && Number.isSafeInteger(length) && length >= 0 && req.headers['content-length'] !== undefined ? length : undefined;
}

/** A body whose Content-Length already says it is over the limit (only for bodies sent as they are). */
export function declaredTooLarge(req: http.IncomingMessage, limit: number): BodyTooLargeError | undefined {
  const length = Number(req.headers['content-length']);
  if (codingsOf(req).length > 0 || !(length > limit)) return undefined;
  return new BodyTooLargeError(`the request body (Content-Length ${length}) is larger than ${limit} bytes`);
}

/**
 * The decoded body. Past `limit` decoded bytes it fails with a BodyTooLargeError; if the client goes away
 * (or its compressed bytes are damaged) it fails too, and everything reading it stops.
 */
export function decodedBody(req: http.IncomingMessage, limit: number): Readable {
  const codings = codingsOf(req);
  const what = codings.length > 0 ? `the request body, decompressed,` : 'the request body';
  const limited = byteLimit(limit, what);
  if (codings.length === 0) return pipeline(req, limited, () => {});
  const decoder = DECODERS[codings[0]]();
  // Bytes that are not what Content-Encoding says (a plain body sent as gzip, a cut or damaged stream) are
  // the client's mistake: a 400 naming the coding, never the proxy's 500. Listened to before pipeline()
  // listens, so the reader of the body fails with this error rather than zlib's own.
  decoder.once('error', (err: Error) => limited.destroy(new BodyEncodingError(codings[0], err)));
  return pipeline(req, decoder, limited, () => {});
}

/** A request body that does not decode as its Content-Encoding says. */
export class BodyEncodingError extends ProxyRefusal {
  constructor(coding: string, cause: Error) {
    super(
      400,
      REFUSAL_TYPE,
      `the request body is not what its Content-Encoding "${coding}" says: it does not decompress (${cause.message}); send it compressed with ${coding}, or without Content-Encoding`,
    );
  }
}
