// Cluster URLs: normalized for the clients, and never shown with their credentials.
import { UsageError } from '../errors.js';

/** A cluster URL taken apart: the URL shown and sent to, and the credentials it carried. */
export interface ParsedClusterUrl {
  /** The URL without credentials, without a trailing slash: what clients get and messages show. */
  url: string;
  /** Credentials written into the URL as user:password@, decoded; moved into the auth options. */
  username?: string;
  password?: string;
}

/**
 * Parses --url / SEARCH_URL. "localhost:9200" means http://localhost:9200; a path (a proxy prefix) is kept;
 * credentials in the URL are taken out so that nothing downstream can print them.
 */
export function parseClusterUrl(raw: string): ParsedClusterUrl {
  const text = raw.trim();
  // "http:/host" would read as the host "http" with the path "/host" once http:// is put before it.
  if (/^https?:(?!\/\/)/i.test(text)) throw new UsageError(`--url "${redactCredentials(text)}" is not a URL: "${text.slice(0, text.indexOf(':') + 1)}" must be followed by "//", as in http://localhost:9200`);
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    // A password holding # ? / unencoded cuts the URL short (https://user:pa#ss@host reads as host "user",
    // port "pa"): said as such, not as "https://host is not a URL" (the redacted text looks fine).
    const port = portProblem(withScheme);
    if (!port && withScheme.slice(withScheme.indexOf('://') + 3).includes('@')) throw unreadableCredentials(text);
    throw new UsageError(`--url "${redactCredentials(text)}" is not a URL${port}; give one like http://localhost:9200`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--url "${redactUrl(text)}" must start with http:// or https://`);
  }
  if (url.search || url.hash) {
    throw new UsageError(`--url "${redactUrl(text)}" must not have a query string or fragment`);
  }
  // A password holding / ? # unencoded makes the URL parser take part of it for the host or the path.
  const afterScheme = withScheme.slice(withScheme.indexOf('://') + 3);
  if (!url.username && afterScheme.includes('@')) throw unreadableCredentials(text);
  if (url.port === '0') throw new UsageError(`--url "${redactUrl(text)}" is not a URL: port 0 is no port to connect to; give one from 1 to 65535`);
  if (RAW_PERCENT.test(url.pathname)) {
    throw new UsageError(`--url "${redactUrl(text)}" has a "%" in its path that is not followed by two hexadecimal digits: write a "%" there as %25`);
  }
  const username = decodedCredential(url.username, 'user name', '--username (or SEARCH_USERNAME)', text);
  const password = decodedCredential(url.password, 'password', '--password (or SEARCH_PASSWORD)', text);
  url.username = '';
  url.password = '';
  return { url: url.toString().replace(/\/+$/, ''), username, password };
}

/** A "%" that does not start a percent-encoded byte (%XX). */
const RAW_PERCENT = /%(?![0-9a-f]{2})/i;

/**
 * A user name or password of the URL, percent-decoded. One that cannot be decoded (a raw "%", or bytes
 * that are not UTF-8) is said in one line, without its value, with both ways out.
 */
function decodedCredential(encoded: string, what: string, option: string, text: string): string | undefined {
  if (!encoded) return undefined;
  try {
    return decodeURIComponent(encoded);
  } catch {
    const problem = RAW_PERCENT.test(encoded)
      ? `holds a "%" that is not followed by two hexadecimal digits: write each "%" of it as %25`
      : 'holds percent-encoded bytes that are not UTF-8: write each character as its UTF-8 bytes (é as %C3%A9)';
    throw new UsageError(`--url "${redactCredentials(text)}": its ${what} ${problem}, or give the ${what} with ${option} instead`);
  }
}

/** Why a URL that does not parse has no port a client can use, when that is why (": port 99999 is above 65535"). */
function portProblem(withScheme: string): string {
  const authority = /^[^:]+:\/\/([^/?#]*)/.exec(withScheme)?.[1] ?? '';
  const port = /:(\d+)$/.exec(authority.slice(authority.lastIndexOf('@') + 1))?.[1];
  return port !== undefined && Number(port) > 65535 ? `: port ${port} is above 65535` : '';
}

function unreadableCredentials(text: string): UsageError {
  return new UsageError(
    `--url "${redactCredentials(text)}" has an "@" that cannot be read as user:password@host (a password with / ? # must be percent-encoded, e.g. # as %23); give the credentials with --username and --password (or SEARCH_USERNAME and SEARCH_PASSWORD) instead`,
  );
}

/** The URL with any user:password@ removed, for messages. Accepts text that is not a valid URL. */
export function redactUrl(url: string): string {
  return redactCredentials(url);
}

/**
 * Removes credentials from a piece of text (error messages, log lines, errors files, engine answers that
 * echo a request): user:password@ in URLs, with or without a scheme, up to the last @ of the URL (a
 * password may hold / ? #), the value of Authorization headers, tokens after an auth scheme (Basic, Bearer,
 * ApiKey, Negotiate, Digest, Token, any case), and values of keys named token, api_key, password, secret.
 */
export function redactCredentials(text: string): string {
  return text
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)[^\s"'<>]*@/gi, '$1')
    .replace(/(^|[\s"'(=,[])[^\s"'(=,[@/:]+:[^\s"'@]*@(?=[a-z0-9.[-])/gi, '$1')
    .replace(/(authorization["']?\s*[:=,]\s*\[?\s*["']?)[^"'\]\n,}]*/gi, '$1[redacted]')
    .replace(/\b(Basic|Bearer|ApiKey|Negotiate|Digest|Token)\s+[A-Za-z0-9+/=._~-]{8,}/gi, '$1 [redacted]')
    .replace(/\b((?:access_|api_|auth_|id_|refresh_)?token|api_?key|password|secret)(["']?\s*[:=]\s*["']?)[^\s"'&,}]+/gi, '$1$2[redacted]');
}

/** `text` with every occurrence of `secret` (an Authorization value a client sent, say) taken out, any case, then redacted as above. */
export function redactSecret(text: string, secret: string | undefined): string {
  if (!secret || secret.length < 4) return redactCredentials(text);
  const escaped = secret.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const token = secret.replace(/^\S+\s+/, '').replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return redactCredentials(text.replace(new RegExp(escaped, 'gi'), '[redacted]').replace(new RegExp(token, 'gi'), '[redacted]'));
}

/** Joins a base URL (which may carry a path prefix) and an API path. */
export function joinUrl(base: string, path: string): string {
  return base.replace(/\/+$/, '') + (path.startsWith('/') ? path : `/${path}`);
}
