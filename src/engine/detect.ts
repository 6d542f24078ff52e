// Which engine answers at a URL, and which version: asked of the cluster (GET /), never configured by hand,
// so that the right client major is chosen before any client exists.
import { UserError } from '../errors.js';
import type { ResolvedConnection } from './connection.js';
import { EngineConnectionError, EngineResponseError } from './errors.js';
import { type RawAnswer, rawRequest } from './raw-request.js';
import { joinUrl } from './url.js';

/** The two engines near-dup serves. */
export type Flavour = 'opensearch' | 'elasticsearch';

/** Which engine answers and what its version supports, asked once per connection. */
export interface EngineInfo {
  flavour: Flavour;
  /** The version number the cluster reports, e.g. "2.19.1". */
  version: string;
  major: number;
  minor: number;
  clusterName?: string;
  /** Amazon OpenSearch Serverless, which answers only part of the API (serverless.ts). */
  serverless?: boolean;
  /** The cluster URL without credentials. */
  url: string;
}

/**
 * One GET of `path` with the connection's credentials (or its SigV4 signature) and TLS settings (raw-request.ts):
 * used to identify the cluster before a client is chosen, and to probe for local clusters.
 */
export async function httpGet(connection: ResolvedConnection, path: string, timeoutMs = 10_000): Promise<RawAnswer> {
  return rawRequest(connection, 'GET', new URL(joinUrl(connection.url, path)), { headers: { accept: 'application/json' }, timeoutMs });
}

/**
 * Flavour and version from the body of GET / (and its headers). OpenSearch says
 * version.distribution = "opensearch" (even in its 7.10.2 compatibility mode); Elasticsearch has no
 * distribution and, from 7.14, an X-Elastic-Product header. Pure, for tests.
 */
export function parseRootInfo(body: unknown, headers: Record<string, unknown> = {}): Omit<EngineInfo, 'url'> | undefined {
  const root = body as { version?: { number?: unknown; distribution?: unknown }; cluster_name?: unknown; tagline?: unknown } | undefined;
  const number = root?.version?.number;
  if (typeof number !== 'string') return undefined;
  const distribution = root?.version?.distribution;
  const product = headers['x-elastic-product'];
  let flavour: Flavour;
  if (distribution === 'opensearch' || (typeof root?.tagline === 'string' && /opensearch/i.test(root.tagline))) flavour = 'opensearch';
  else if (distribution === undefined || product === 'Elasticsearch') flavour = 'elasticsearch';
  else return undefined;
  return { flavour, ...versionParts(number), clusterName: typeof root?.cluster_name === 'string' ? root.cluster_name : undefined };
}

/**
 * The same from GET /_nodes/_local (version of the answering node), for clusters that do not serve GET /
 * (Elasticsearch's integration-test distribution ships without the module that does). Only Elasticsearch
 * sends X-Elastic-Product; an OpenSearch node answers without it.
 */
export function parseNodesInfo(body: unknown, headers: Record<string, unknown> = {}): Omit<EngineInfo, 'url'> | undefined {
  const info = body as { cluster_name?: unknown; nodes?: Record<string, { version?: unknown; distribution?: unknown }> } | undefined;
  const node = info?.nodes ? Object.values(info.nodes)[0] : undefined;
  if (typeof node?.version !== 'string') return undefined;
  const flavour: Flavour = headers['x-elastic-product'] === 'Elasticsearch' ? 'elasticsearch' : 'opensearch';
  return { flavour, ...versionParts(node.version), clusterName: typeof info?.cluster_name === 'string' ? info.cluster_name : undefined };
}

function versionParts(version: string): { version: string; major: number; minor: number } {
  const [major = NaN, minor = 0] = version.split('.').map((p) => Number.parseInt(p, 10));
  return { version, major, minor: Number.isNaN(minor) ? 0 : minor };
}

function responseError(answer: RawAnswer, path: string, url: string): EngineResponseError {
  const error = (answer.body as { error?: { type?: string; reason?: string } | string } | undefined)?.error;
  const type = typeof error === 'object' ? error?.type : undefined;
  const aws = (answer.body as { message?: unknown } | undefined)?.message;
  const reason = typeof error === 'object' ? error?.reason : typeof error === 'string' ? error : typeof aws === 'string' ? aws : undefined;
  return new EngineResponseError(answer.statusCode, type, reason, 'GET', path, url, answer.body);
}

/**
 * Asks the cluster what it is, node after node until one answers. Throws EngineConnectionError (the last
 * node's) / EngineResponseError, or UserError for a non-engine.
 */
export async function detectEngine(connection: ResolvedConnection): Promise<EngineInfo> {
  if (connection.aws?.service === 'aoss') return serverlessInfo(connection.url);
  const ask = async (node: string) => ({ ...(await detectNode({ ...connection, url: node, nodes: [node] })), url: connection.url });
  const last = connection.nodes[connection.nodes.length - 1];
  for (const node of connection.nodes.slice(0, -1)) {
    try {
      return await ask(node);
    } catch (err) {
      if (!(err instanceof EngineConnectionError)) throw err;
    }
  }
  return ask(last);
}

/**
 * Amazon OpenSearch Serverless has no GET / (nor nodes info) to ask: a collection is OpenSearch 2.x, with point
 * in time but without scroll (serverless.ts says what else it lacks).
 */
export function serverlessInfo(url: string): EngineInfo {
  return { flavour: 'opensearch', version: '2 (Amazon OpenSearch Serverless)', major: 2, minor: 0, serverless: true, url };
}

async function detectNode(connection: ResolvedConnection): Promise<EngineInfo> {
  const root = await httpGet(connection, '/', Math.min(connection.requestTimeoutMs, 30_000));
  if (root.statusCode >= 200 && root.statusCode < 300) {
    const info = parseRootInfo(root.body, root.headers);
    if (info) return { ...info, url: connection.url };
    throw new UserError(`${connection.url} answered GET / but not as OpenSearch or Elasticsearch does; check --url`);
  }
  if (root.statusCode === 401 || root.statusCode === 403 || root.statusCode >= 500) throw responseError(root, '/', connection.url);
  const nodesPath = '/_nodes/_local?filter_path=cluster_name,nodes.*.version';
  const nodes = await httpGet(connection, nodesPath, Math.min(connection.requestTimeoutMs, 30_000));
  if (nodes.statusCode >= 200 && nodes.statusCode < 300) {
    const info = parseNodesInfo(nodes.body, nodes.headers);
    if (info) return { ...info, url: connection.url };
  }
  throw new UserError(
    `${connection.url} does not answer like OpenSearch or Elasticsearch (GET / gave ${root.statusCode}); check --url`,
  );
}
