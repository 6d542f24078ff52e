// A refusal for want of a privilege, found in an engine's answer wherever the engine put it: the top-level
// error (a request refused as a whole), its root causes, a shard failure (a refresh refused at shard level
// answers 403 with nothing but `_shards.failures`), a failed search's `caused_by` (a more_like_this that may
// not read term vectors), a bulk item or an _mget document. Pure: no I/O.

/** What the engine said was refused, and what it says would grant it. */
export interface PrivilegeRefusal {
  /** The action names the engine says the user lacks (OpenSearch: "no permissions for [a, b]"; Elasticsearch: "action [a] is unauthorized"). */
  actions: string[];
  /** Elasticsearch names the privileges that grant the action ("this action is granted by the index privileges [write,all]"). */
  grantedBy?: { level: 'cluster' | 'index'; privileges: string[] };
  /** The engine's own reason, as it gave it. */
  reason: string;
}

const MAX_DEPTH = 8;

/** The first privilege refusal anywhere in an engine's answer (or a part of one), or undefined. */
export function privilegeRefusal(body: unknown): PrivilegeRefusal | undefined {
  return find(body, 0);
}

function find(value: unknown, depth: number): PrivilegeRefusal | undefined {
  if (depth > MAX_DEPTH || value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (const item of value.slice(0, 50)) {
      const found = find(item, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  const record = value as Record<string, unknown>;
  if (record.type === 'security_exception' && typeof record.reason === 'string') {
    const parsed = parseReason(record.reason);
    if (parsed) return parsed;
  }
  for (const key of ['error', 'root_cause', 'caused_by', 'failed_shards', 'failures', '_shards', 'reason', 'responses', 'items', 'docs']) {
    if (!(key in record)) continue;
    const found = find(record[key], depth + 1);
    if (found) return found;
  }
  return undefined;
}

/** The actions a security_exception's reason names; undefined for a refusal that names none (a 403 of another kind). */
export function parseReason(reason: string): PrivilegeRefusal | undefined {
  // OpenSearch: "no permissions for [indices:admin/refresh[s]] and User [name=u, ...]": bracketed names may hold brackets.
  const openSearch = /no permissions for \[((?:[^[\]]|\[[^\]]*\])*)\]/.exec(reason);
  if (openSearch) {
    const actions = openSearch[1].split(/,\s*/).map((a) => a.trim()).filter(Boolean);
    if (actions.length > 0) return { actions, reason };
  }
  // Elasticsearch: "action [indices:data/write/bulk[s]] is unauthorized for user [u] ... this action is granted by the index privileges [create_doc,write,all]".
  const elastic = /action \[((?:[^[\]]|\[[^\]]*\])+)\] is unauthorized/.exec(reason);
  if (elastic) {
    const granted = /granted by the (cluster|index) privileges \[([^\]]*)\]/.exec(reason);
    const grantedBy = granted ? { level: granted[1] as 'cluster' | 'index', privileges: granted[2].split(',').map((p) => p.trim()).filter(Boolean) } : undefined;
    return { actions: [elastic[1]], grantedBy, reason };
  }
  return undefined;
}

/**
 * Actions that the OpenSearch security plugin checks at cluster level (cluster_permissions of a role),
 * though their names start with indices:. Every other indices: action is checked per index.
 */
const CLUSTER_LEVEL_INDEX_ACTIONS = [
  /^indices:data\/write\/bulk$/,
  /^indices:data\/read\/scroll(\/clear)?$/,
  /^indices:data\/read\/mget$/,
  /^indices:data\/read\/msearch$/,
  /^indices:data\/read\/mtv$/,
  /^indices:admin\/(index_)?template\//,
  /^indices:admin\/aliases\/get$/,
];

/**
 * Whether OpenSearch checks an action at cluster level, so that a refusal names the role's cluster_permissions rather
 * than its index_permissions.
 */
export function isClusterLevel(action: string): boolean {
  return !action.startsWith('indices:') || CLUSTER_LEVEL_INDEX_ACTIONS.some((pattern) => pattern.test(action));
}

/**
 * What to grant, as one clause: the Elasticsearch privileges the engine named, or where each OpenSearch
 * action goes in a role (cluster_permissions, or index_permissions for the index).
 */
export function whatToGrant(refusal: PrivilegeRefusal, index?: string): string {
  if (refusal.grantedBy) {
    const [first, ...others] = refusal.grantedBy.privileges;
    return `grant the user's role the ${refusal.grantedBy.level} privilege "${first ?? '?'}"${others.length ? ` (or one of ${others.join(', ')})` : ''}`;
  }
  const cluster = refusal.actions.filter(isClusterLevel);
  const perIndex = refusal.actions.filter((a) => !isClusterLevel(a));
  const parts: string[] = [];
  if (cluster.length > 0) parts.push(`${cluster.join(', ')} to its cluster_permissions`);
  if (perIndex.length > 0) parts.push(`${perIndex.join(', ')} to its index_permissions${index ? ` for "${index}"` : ''}`);
  return `add ${parts.join(' and ')} in the user's role`;
}
