// What went wrong talking to a cluster, in a form both flavours share, and as one line a user can act on.
import { UserError } from '../errors.js';
import { type PrivilegeRefusal, privilegeRefusal, whatToGrant } from './refusal.js';
import { redactCredentials, redactUrl } from './url.js';

/** The cluster answered with an error status. `statusCode` as the official clients name it. */
export class EngineResponseError extends Error {
  override name = 'ResponseError';
  constructor(
    readonly statusCode: number,
    /** The engine's error type, e.g. index_not_found_exception. */
    readonly type: string | undefined,
    readonly reason: string | undefined,
    readonly method: string,
    readonly path: string,
    /** The cluster URL, without credentials. */
    readonly url: string,
    readonly body: unknown,
  ) {
    super(`${method} ${path} on ${url}: ${statusCode}${type ? ` ${type}` : ''}${reason ? `: ${reason}` : ''}`);
  }

  /**
   * The privilege the engine says the user lacks, wherever in its answer it said so (the top-level error,
   * a root cause, a shard failure, a failed search's cause, a bulk item), or undefined.
   */
  get refusal(): PrivilegeRefusal | undefined {
    return privilegeRefusal(this.body);
  }

  /** The index an index_not_found_exception names, if any. */
  get index(): string | undefined {
    const error = (this.body as { error?: { index?: unknown; 'resource.id'?: unknown } } | undefined)?.error;
    const index = error?.index ?? error?.['resource.id'];
    return typeof index === 'string' ? index : undefined;
  }
}

/** The engine's answer behind an error: the error itself, or the cause of a one-line refusal made of it. */
export function engineAnswerOf(err: unknown): EngineResponseError | undefined {
  if (err instanceof EngineResponseError) return err;
  const cause = (err as { cause?: unknown } | undefined)?.cause;
  return cause instanceof EngineResponseError ? cause : undefined;
}

/** No HTTP answer: refused, unknown host, TLS failure, timeout, dropped connection. */
export class EngineConnectionError extends Error {
  override name: 'ConnectionError' | 'TimeoutError';
  constructor(
    message: string,
    /** A Node error code (ECONNREFUSED, DEPTH_ZERO_SELF_SIGNED_CERT, ...) when one is known. */
    readonly code: string | undefined,
    readonly url: string,
    options?: { cause?: unknown; timeout?: boolean },
  ) {
    super(redactCredentials(message), options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = options?.timeout || code === 'ETIMEDOUT' ? 'TimeoutError' : 'ConnectionError';
  }

  /** No answer in time (the request timed out), rather than none at all. */
  get timeout(): boolean {
    return this.name === 'TimeoutError';
  }
}

/** Thrown when a scroll lost more pages in a row than it may restart (engine/scan.ts): the cluster or the network is failing. */
export class ScanLostError extends Error {
  override name = 'ScanLostError';
}

const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_REVOKED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'HOSTNAME_MISMATCH',
]);

/** https:// to a server that speaks plain HTTP. */
const NOT_TLS_CODES = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'EPROTO', 'ERR_SSL_PACKET_LENGTH_TOO_LONG']);

/**
 * The Node error code behind an error from node:http(s), undici or either official client, which put it in
 * different places (code, cause.code, or only the message).
 */
export function errorCode(err: unknown): string | undefined {
  const e = err as { code?: unknown; cause?: { code?: unknown; cause?: { code?: unknown } }; message?: unknown } | undefined;
  for (const code of [e?.code, e?.cause?.code, e?.cause?.cause?.code]) {
    if (typeof code === 'string' && code !== '' && !code.startsWith('UND_ERR_SOCKET')) return code;
  }
  const message = typeof e?.message === 'string' ? e.message : '';
  const known = /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|EHOSTUNREACH|ENETUNREACH|EPIPE|EPROTO)\b/.exec(message);
  if (known) return known[1];
  if (/wrong version number|packet length too long/i.test(message)) return 'ERR_SSL_WRONG_VERSION_NUMBER';
  if (/self[- ]signed certificate in certificate chain/i.test(message)) return 'SELF_SIGNED_CERT_IN_CHAIN';
  if (/self[- ]signed certificate/i.test(message)) return 'DEPTH_ZERO_SELF_SIGNED_CERT';
  if (/unable to verify the first certificate/i.test(message)) return 'UNABLE_TO_VERIFY_LEAF_SIGNATURE';
  if (/unable to get local issuer certificate/i.test(message)) return 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY';
  if (/certificate has expired/i.test(message)) return 'CERT_HAS_EXPIRED';
  if (/Hostname\/IP does not match certificate/i.test(message)) return 'ERR_TLS_CERT_ALTNAME_INVALID';
  if (/socket hang up|other side closed/i.test(message)) return 'ECONNRESET';
  if (/timeout|timed out/i.test(message)) return 'ETIMEDOUT';
  return undefined;
}

/** What an error message may say of the operation that failed, so that the user is told what to do. */
export interface ErrorContext {
  /** The cluster URL (credentials are removed before it is shown). */
  url: string;
  /** The index the operation was about, for "does not exist" messages. */
  index?: string;
  /** Whether credentials were given, to tell "wrong credentials" from "needs credentials". */
  authGiven?: boolean;
  /** Whether TLS verification was switched off (then a TLS error is not about the CA). */
  insecure?: boolean;
}

const AUTH_HINT =
  'give --username and --password, --api-key or --bearer-token (or SEARCH_USERNAME and SEARCH_PASSWORD, SEARCH_API_KEY, SEARCH_BEARER_TOKEN)';

/**
 * One line for a failure to talk to the cluster: what happened, where, and what to do. Unreachable hosts,
 * refused credentials, TLS problems, missing indices and error answers become a UserError (printed
 * without a stack trace, exit code 1); anything else is returned as it was, a bug to be reported.
 */
export function describeConnectionError(err: unknown, context: ErrorContext): Error {
  const described = describeOnce(err, context);
  // The failure itself stays attached, so a caller can tell one that may pass (a 5xx, a timeout) from one that will not.
  return described instanceof UserError && described !== err ? new UserError(described.message, { cause: err }) : described;
}

/** Whether a failure (or the failure behind a one-line UserError) may pass if the request is made again later. */
export function mayPass(err: unknown): boolean {
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    if (e instanceof EngineResponseError && e.refusal) return false;
    if (e instanceof EngineResponseError) return e.statusCode >= 500 || (e.statusCode === 429 && e.type !== 'cluster_block_exception') || e.statusCode === 408;
    if (e instanceof EngineConnectionError) return !TLS_CODES.has(e.code ?? '') && !NOT_TLS_CODES.has(e.code ?? '');
    if (e instanceof ScanLostError) return true;
  }
  return false;
}

function describeOnce(err: unknown, context: ErrorContext): Error {
  if (err instanceof UserError) return err;
  const url = redactUrl(context.url);
  if (err instanceof EngineResponseError) return new UserError(describeResponse(err, { ...context, url }));
  const code = errorCode(err);
  const message = oneLine(err instanceof Error ? redactCredentials(err.message) : String(err));
  if (code === undefined && !(err instanceof EngineConnectionError)) return err instanceof Error ? err : new Error(message);
  const host = hostOf(url);
  switch (code) {
    case 'ECONNREFUSED':
      return new UserError(
        `cannot connect to ${url}: connection refused; check --url (or SEARCH_URL) and that the cluster is running ` +
          `(for a local one: docker compose up -d, or npm run engine:start)`,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new UserError(`cannot connect to ${url}: host "${host}" not found; check the host name in --url (or SEARCH_URL)`);
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return new UserError(`cannot connect to ${url}: host unreachable (${code}); check --url and the network between here and the cluster`);
    case 'ETIMEDOUT':
      return new UserError(`no answer from ${url} in time (timed out); check --url, firewalls, and that the cluster is not overloaded`);
    case 'ECONNRESET':
    case 'EPIPE':
      return new UserError(
        `${url} closed the connection without an answer (${code}); ` +
          (url.startsWith('http://') ? 'if the cluster uses HTTPS, give an https:// URL' : 'check that the URL and port are the cluster\'s HTTP endpoint'),
      );
  }
  if (code && NOT_TLS_CODES.has(code)) {
    return new UserError(`TLS handshake with ${url} failed (${code}): the server does not speak HTTPS on that port; try an http:// URL`);
  }
  if (code && (TLS_CODES.has(code) || /certificate/i.test(message))) {
    return new UserError(
      `TLS error talking to ${url}: ${message} (${code}); give the cluster's CA certificate with --ca-file (SEARCH_CA_FILE), ` +
        `or --insecure (SEARCH_INSECURE=true) to skip certificate checks on a network you trust`,
    );
  }
  return new UserError(`cannot talk to ${url}: ${message}${code ? ` (${code})` : ''}`);
}

function describeResponse(err: EngineResponseError, context: ErrorContext & { url: string }): string {
  const { url } = context;
  const what = `${err.statusCode}${err.type ? ` ${err.type}` : ''}${err.reason ? `: ${oneLine(redactCredentials(err.reason))}` : ''}`;
  if (err.statusCode === 401) {
    return context.authGiven
      ? `${url} refused the credentials given (401 Unauthorized); check them, or ${AUTH_HINT}`
      : `${url} requires authentication (401 Unauthorized); ${AUTH_HINT}`;
  }
  const refusal = err.refusal;
  if (refusal) return describeRefusal(refusal, { url, method: err.method, path: err.path, index: err.index ?? context.index });
  if (err.statusCode === 403) {
    return `${url} denied ${err.method} ${err.path} (${what}); the user needs the privilege for it, or use other credentials`;
  }
  if (err.type === 'index_not_found_exception' || (err.statusCode === 404 && context.index && err.type === undefined)) {
    const index = err.index ?? context.index ?? '?';
    // A pattern or a list names no index to create: say that nothing matched.
    if (context.index && /[*,]/.test(context.index)) return `no index matches "${context.index}" on ${url} (${index} does not exist); check the name or pattern given to --index`;
    return `index "${index}" does not exist on ${url}; check the name given to --index, or create it with \`near-dup init --index ${index}\``;
  }
  const fieldLimit = /Limit of total fields \[(\d+)\]/.exec(err.reason ?? '');
  if (fieldLimit) {
    const index = err.index ?? context.index ?? 'INDEX';
    return (
      `"${index}" may map at most ${fieldLimit[1]} fields (index.mapping.total_fields.limit) and the near-dup fields would pass it; ` +
      `raise the limit, e.g. PUT /${index}/_settings {"index.mapping.total_fields.limit": ${Number(fieldLimit[1]) + 25}} (${err.method} ${err.path} on ${url})`
    );
  }
  if (err.type === 'cluster_block_exception') return `${describeBlock(err.reason ?? '', err.index ?? context.index ?? '?')} (${err.method} ${err.path} on ${url})`;
  if (err.statusCode === 429) return `${url} is overloaded and rejected ${err.method} ${err.path} (${what}); retry later or lower the concurrency`;
  if (err.statusCode >= 500) return `${url} failed on ${err.method} ${err.path} (${what}); check the cluster's health and logs`;
  return `${url} rejected ${err.method} ${err.path} (${what})`;
}

/**
 * A refusal for want of a privilege, as one line: the privilege missing (as the engine named it), what to
 * grant, and the engine's own reason.
 */
export function describeRefusal(refusal: PrivilegeRefusal, where: { url: string; method: string; path: string; index?: string }): string {
  const index = where.index && !/[*,]/.test(where.index) ? where.index : undefined;
  const named = refusal.actions.length === 1 ? `the privilege ${refusal.actions[0]}` : `the privileges ${refusal.actions.join(', ')}`;
  return (
    `${where.url} denied ${where.method} ${where.path}: the user lacks ${named}; ${whatToGrant(refusal, index)}, or use other credentials ` +
    `(403 security_exception: ${oneLine(redactCredentials(refusal.reason))})`
  );
}

/** Error messages from OpenSSL and the clients can span lines; a UserError is one line. */
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/:\s*$/, '').trim();
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return url;
  }
}

/** The reason a block gives, as one line saying what it is and how it is lifted. */
export function describeBlock(block: string, index: string): string {
  if (/read_only_allow_delete|read-only-allow-delete|flood.stage|disk usage/i.test(block)) {
    return (
      `"${index}" is read-only because a node's disk passed the flood-stage watermark (index.blocks.read_only_allow_delete): it is a disk block, not load. ` +
      `Free disk space on the data nodes (the engine lifts the block once usage falls below the high watermark), or lift it by hand: ` +
      `PUT /${index}/_settings {"index.blocks.read_only_allow_delete": null}`
    );
  }
  if (/read_only|read-only/i.test(block)) return `"${index}" is read-only (index.blocks.read_only); lift it with PUT /${index}/_settings {"index.blocks.read_only": false} to write the near-dup fields`;
  if (/write/i.test(block)) return `"${index}" does not take writes (index.blocks.write); lift it with PUT /${index}/_settings {"index.blocks.write": false} to write the near-dup fields`;
  return `"${index}" is blocked (${block})`;
}
