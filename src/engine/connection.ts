// How to reach a cluster: URL, one kind of credentials, TLS trust. The same options for every command,
// both flavours and every client major, and for every request near-dup makes: the official clients take
// their settings from here (client.ts), and so do the requests made without a client (raw-request.ts, for
// detection and dashboards; proxy/forward.ts), through tlsSettings and requestHeaders below.
import { type AwsOptions, type AwsSigning, awsSigning, signatureHeaders, type RequestToSign } from './aws-sigv4.js';
import { decodeCloudId } from './cloud-id.js';
import { caFromFingerprint, type ClientCertificate, normalizeFingerprint, readClientCertificate, readPemFile } from './tls-trust.js';
import { UsageError } from '../errors.js';
import { parseClusterUrl, redactUrl } from './url.js';

/** How to reach a cluster, as the command line's connection options give it (one place for every job). */
export interface ConnectionOptions {
  /**
   * Cluster URL, or the URLs of several nodes of one cluster separated by commas (requests go round them,
   * and a node that stops answering is left out until it answers again); may carry user:password@ (moved
   * into the credentials).
   */
  url?: string;
  /** An Elastic Cloud id instead of --url (the deployment's Elasticsearch URL is in it). */
  cloudId?: string;
  username?: string;
  password?: string;
  /** An Elasticsearch API key: the encoded form, or "id:key". */
  apiKey?: string;
  bearerToken?: string;
  /** PEM file with the CA certificate(s) the cluster's certificate is signed by. */
  caFile?: string;
  /** SHA-256 fingerprint of the CA certificate (in the chain the cluster presents) to trust. */
  caFingerprint?: string;
  /** PEM files of a client certificate and its key, for mutual TLS. */
  clientCert?: string;
  clientKey?: string;
  /** Sign every request with AWS SigV4 (Amazon OpenSearch Service, Serverless). */
  aws?: AwsOptions;
  /** Skip TLS certificate verification. */
  insecure?: boolean;
  /** Where the one warning a connection may give goes (--insecure); default stderr. */
  warn?: (line: string) => void;
  /** Per-request timeout (default 60 s). */
  requestTimeoutMs?: number;
  /** Retries of a request that is safe to send again, after a timeout, a dropped connection, 429 or 502/503/504 (default 5). */
  maxRetries?: number;
}

/** The credentials sent with each request: one kind per connection. */
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
  /** PEM text of the CA file, and of the CA the fingerprint named. */
  ca?: string;
  /** The fingerprint given (upper-case hex pairs), for the Elasticsearch client's own check of each connection. */
  caFingerprint?: string;
  clientCertificate?: ClientCertificate;
  /** The Elastic Cloud id the URL came from (the Elasticsearch client takes it as `cloud`). */
  cloudId?: string;
  /** AWS SigV4 signing; `aws.service === 'aoss'` is Serverless. */
  aws?: AwsSigning;
  insecure: boolean;
  requestTimeoutMs: number;
  maxRetries: number;
}

/** How long one request may take unless the connection options say otherwise. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 60_000;

/**
 * Connection options checked and loaded into one value: the node URLs clean, credentials from the URL or the options,
 * the CA (file or fingerprint) and client certificate read, SigV4 resolved; bad input is refused in one line before
 * any request to the cluster.
 */
export async function resolveConnection(options: ConnectionOptions): Promise<ResolvedConnection> {
  const parsed = parseNodeUrls(urlOf(options));
  const auth = credentialsOf(options, parsed);
  const https = parsed.nodes.some((node) => node.startsWith('https:'));
  const allHttps = parsed.nodes.every((node) => node.startsWith('https:'));
  if ((options.clientCert || options.clientKey) && !allHttps) {
    throw new UsageError(`--client-cert and --client-key apply to https:// URLs, and --url ${redactUrl(parsed.nodes.join(','))} is not: give the cluster's https:// URL`);
  }
  const clientCertificate = await readClientCertificate(options.clientCert, options.clientKey);
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const caFingerprint = options.caFingerprint ? normalizeFingerprint(options.caFingerprint) : undefined;
  const cas = [options.caFile ? await readPemFile(options.caFile, '--ca-file (SEARCH_CA_FILE)', 'CERTIFICATE', 'CA file') : undefined];
  if (caFingerprint) cas.push(await caFromFingerprint(parsed.nodes[0], caFingerprint, clientCertificate, Math.min(requestTimeoutMs, 30_000)));
  const insecure = options.insecure ?? false;
  if (insecure && https) sayInsecureOnce(parsed.nodes.join(','), options.warn);
  return {
    url: parsed.nodes.join(','),
    nodes: parsed.nodes,
    auth,
    ca: cas.filter((c) => c !== undefined).join('\n') || undefined,
    caFingerprint,
    clientCertificate,
    cloudId: options.cloudId,
    aws: options.aws ? await awsSigning(options.aws, parsed.nodes[0]) : undefined,
    insecure,
    requestTimeoutMs,
    maxRetries: options.maxRetries ?? 5,
  };
}

/** --url, or the Elasticsearch URL of --cloud-id; never both. */
function urlOf(options: ConnectionOptions): string {
  if (options.cloudId !== undefined && options.cloudId.trim() !== '') {
    if (options.url !== undefined && options.url.trim() !== '') throw new UsageError('give --url or --cloud-id (SEARCH_URL or SEARCH_CLOUD_ID), not both');
    if (options.aws) throw new UsageError('--cloud-id names an Elastic Cloud deployment, which AWS SigV4 (--aws-*) does not sign for: give one or the other');
    return decodeCloudId(options.cloudId).elasticsearch;
  }
  if (options.url === undefined || options.url.trim() === '') throw new UsageError('--url is empty; give one like http://localhost:9200');
  return options.url;
}

/** The one kind of credentials given (options, or user:password@ in the URL), or none. */
function credentialsOf(options: ConnectionOptions, parsed: { username?: string; password?: string }): Auth | undefined {
  const username = options.username ?? parsed.username;
  const password = options.password ?? (options.username === undefined ? parsed.password : undefined);
  const kinds = [
    username !== undefined || password !== undefined ? '--username/--password' : undefined,
    options.apiKey ? '--api-key' : undefined,
    options.bearerToken ? '--bearer-token' : undefined,
    options.aws ? 'AWS SigV4 (--aws-*)' : undefined,
  ].filter((k): k is string => k !== undefined);
  if (kinds.length > 1) {
    throw new UsageError(`give one kind of credentials, not ${kinds.join(' and ')} (check the SEARCH_* environment variables too)`);
  }
  if (username !== undefined || password !== undefined) {
    if (!username) throw new UsageError('--password (SEARCH_PASSWORD) needs --username (SEARCH_USERNAME)');
    if (password === undefined) throw new UsageError(`--username (SEARCH_USERNAME) needs --password (SEARCH_PASSWORD)`);
    return { kind: 'basic', username, password };
  }
  if (options.apiKey) return { kind: 'apiKey', apiKey: encodeApiKey(options.apiKey) };
  if (options.bearerToken) return { kind: 'bearer', token: options.bearerToken };
  return undefined;
}

/** Where --insecure was said: stderr (once per process), or each command's own warning sink (once per sink). */
let insecureSaidOnStderr = false;
const insecureSaidTo = new WeakSet<(line: string) => void>();

/** --insecure is said once, whatever number of connections a process (or a command's sink) makes. */
function sayInsecureOnce(url: string, warn: ((line: string) => void) | undefined): void {
  if (warn ? insecureSaidTo.has(warn) : insecureSaidOnStderr) return;
  if (warn) insecureSaidTo.add(warn);
  else insecureSaidOnStderr = true;
  const line = `--insecure: the TLS certificate of ${redactUrl(url)} is not checked`;
  if (warn) warn(line);
  else process.stderr.write(`near-dup: ${line}\n`);
}

/** TLS settings for node:https requests and agents: the CA(s) trusted, the client certificate, whether to verify. */
export function tlsSettings(connection: Pick<ResolvedConnection, 'ca' | 'clientCertificate' | 'insecure'>): { ca?: string; cert?: string; key?: string; rejectUnauthorized: boolean } {
  return { ca: connection.ca, cert: connection.clientCertificate?.cert, key: connection.clientCertificate?.key, rejectUnauthorized: !connection.insecure };
}

/**
 * The headers that authenticate one request made without a client: Authorization for basic, API key and
 * bearer credentials; with AWS SigV4, the signature of this very request (method, path, query, body).
 */
export async function requestHeaders(connection: Pick<ResolvedConnection, 'auth' | 'aws'>, request: RequestToSign): Promise<Record<string, string>> {
  if (connection.aws) return signatureHeaders(connection.aws, request);
  const authorization = authorizationHeader(connection.auth);
  return authorization ? { authorization } : {};
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
