// How to reach a cluster: URL, one kind of credentials, TLS trust. The same options for every command,
// both flavours and every client major.
import { readFile } from 'node:fs/promises';
import { UsageError, UserError } from '../errors.js';
import { parseClusterUrl } from './url.js';

export interface ConnectionOptions {
  /**
   * Cluster URL, or the URLs of several nodes of one cluster separated by commas (requests go round them,
   * and a node that stops answering is left out until it answers again); may carry user:password@ (moved
   * into the credentials).
   */
  url: string;
  username?: string;
  password?: string;
  /** An Elasticsearch API key: the encoded form, or "id:key". */
  apiKey?: string;
  bearerToken?: string;
  /** PEM file with the CA certificate(s) the cluster's certificate is signed by. */
  caFile?: string;
  /** Skip TLS certificate verification. */
  insecure?: boolean;
  /** Per-request timeout (default 60 s). */
  requestTimeoutMs?: number;
  /** Retries of a request that is safe to send again, after a timeout, a dropped connection, 429 or 502/503/504 (default 5). */
  maxRetries?: number;
}

export type Auth =
  | { kind: 'basic'; username: string; password: string }
  | { kind: 'apiKey'; apiKey: string }
  | { kind: 'bearer'; token: string };

/** Connection options checked and loaded: credentials in one place, the CA read, the URL clean. */
export interface ResolvedConnection {
  /** Without credentials; safe to print (the nodes joined by commas). */
  url: string;
  /** Each node's URL, without credentials. */
  nodes: string[];
  auth?: Auth;
  /** PEM text of the CA file. */
  ca?: string;
  insecure: boolean;
  requestTimeoutMs: number;
  maxRetries: number;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

export async function resolveConnection(options: ConnectionOptions): Promise<ResolvedConnection> {
  const parsed = parseNodeUrls(options.url);
  const username = options.username ?? parsed.username;
  const password = options.password ?? (options.username === undefined ? parsed.password : undefined);
  const kinds = [
    username !== undefined || password !== undefined ? '--username/--password' : undefined,
    options.apiKey ? '--api-key' : undefined,
    options.bearerToken ? '--bearer-token' : undefined,
  ].filter((k): k is string => k !== undefined);
  if (kinds.length > 1) {
    throw new UsageError(`give one kind of credentials, not ${kinds.join(' and ')} (check the SEARCH_* environment variables too)`);
  }
  let auth: Auth | undefined;
  if (username !== undefined || password !== undefined) {
    if (!username) throw new UsageError('--password (SEARCH_PASSWORD) needs --username (SEARCH_USERNAME)');
    if (password === undefined) throw new UsageError(`--username (SEARCH_USERNAME) needs --password (SEARCH_PASSWORD)`);
    auth = { kind: 'basic', username, password };
  } else if (options.apiKey) {
    auth = { kind: 'apiKey', apiKey: encodeApiKey(options.apiKey) };
  } else if (options.bearerToken) {
    auth = { kind: 'bearer', token: options.bearerToken };
  }
  let ca: string | undefined;
  if (options.caFile) {
    try {
      ca = await readFile(options.caFile, 'utf8');
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new UserError(
        `cannot read the CA file ${options.caFile} given to --ca-file (SEARCH_CA_FILE): ${code === 'ENOENT' ? 'no such file' : code ?? String(err)}`,
      );
    }
    if (!ca.includes('-----BEGIN CERTIFICATE-----')) {
      throw new UserError(`the CA file ${options.caFile} given to --ca-file holds no PEM certificate (-----BEGIN CERTIFICATE-----)`);
    }
  }
  return {
    url: parsed.nodes.join(','),
    nodes: parsed.nodes,
    auth,
    ca,
    insecure: options.insecure ?? false,
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    maxRetries: options.maxRetries ?? 5,
  };
}

/** One URL or several, comma-separated, of the nodes of one cluster; credentials, if any, the same in each. */
function parseNodeUrls(raw: string): { nodes: string[]; username?: string; password?: string } {
  const parts = raw
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '')
    .map(parseClusterUrl);
  if (parts.length === 0) throw new UsageError('--url is empty; give one like http://localhost:9200');
  const withCredentials = parts.filter((p) => p.username !== undefined || p.password !== undefined);
  const [first] = withCredentials;
  if (withCredentials.some((p) => p.username !== first.username || p.password !== first.password)) {
    throw new UsageError('the node URLs of --url carry different credentials; give them once, with --username and --password');
  }
  return { nodes: [...new Set(parts.map((p) => p.url))], username: first?.username, password: first?.password };
}

/** "id:key" becomes base64("id:key"), the form the Authorization: ApiKey header carries. */
export function encodeApiKey(apiKey: string): string {
  return apiKey.includes(':') ? Buffer.from(apiKey, 'utf8').toString('base64') : apiKey;
}

/** The Authorization header for the credentials, for requests made without a client. */
export function authorizationHeader(auth: Auth | undefined): string | undefined {
  if (!auth) return undefined;
  switch (auth.kind) {
    case 'basic':
      return `Basic ${Buffer.from(`${auth.username}:${auth.password}`, 'utf8').toString('base64')}`;
    case 'apiKey':
      return `ApiKey ${auth.apiKey}`;
    case 'bearer':
      return `Bearer ${auth.token}`;
  }
}
