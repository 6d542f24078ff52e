// The answer to a client's _bulk when the proxy sent it upstream in parts, or answered some items itself:
// the engine's items in the client's order, with each refused document answered in its place as the engine
// answers a document it refuses (status 400 and a reason).
export interface RefusedItem {
  position: number;
  verb: string;
  index?: string;
  id?: string;
  reason: string;
}

export interface BulkAnswer {
  took?: number;
  ingest_took?: number;
  errors?: boolean;
  items?: Array<Record<string, unknown>>;
  [key: string]: unknown;
}

export const REFUSAL_TYPE = 'near_dup_signing_exception';

export function refusalItem(refused: RefusedItem): Record<string, unknown> {
  return {
    [refused.verb]: {
      _index: refused.index ?? null,
      _id: refused.id ?? null,
      status: 400,
      error: { type: REFUSAL_TYPE, reason: refused.reason },
    },
  };
}

/** A part the engine refused as a whole, as the answer of its items (and of those never sent after it): each with the part's status and error. */
export function notAppliedAnswer(status: number, text: string, items: ReadonlyArray<{ verb: string; index?: string; id?: string }>): BulkAnswer {
  const error = engineError(text) ?? { type: 'near_dup_upstream_exception', reason: `the cluster answered ${status}: ${text.slice(0, 200)}` };
  return {
    took: 0,
    errors: true,
    items: items.map((item) => ({ [item.verb]: { _index: item.index ?? null, _id: item.id ?? null, status, error } })),
  };
}

/** The error object of an engine's error answer (type and reason, without the root causes), if it is one. */
function engineError(text: string): Record<string, unknown> | undefined {
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    if (typeof error !== 'object' || error === null) return undefined;
    const { root_cause: _, ...rest } = error as Record<string, unknown>;
    return rest;
  } catch {
    return undefined;
  }
}

/** The engine's answers to the parts, joined, with the refused items put back where they were. */
export function mergeBulkAnswers(parts: readonly BulkAnswer[], refused: readonly RefusedItem[]): BulkAnswer {
  const forwarded = parts.flatMap((part) => part.items ?? []);
  const items: Array<Record<string, unknown>> = [];
  let next = 0;
  for (const r of [...refused].sort((a, b) => a.position - b.position)) {
    while (items.length < r.position && next < forwarded.length) items.push(forwarded[next++]);
    items.push(refusalItem(r));
  }
  while (next < forwarded.length) items.push(forwarded[next++]);
  const merged: BulkAnswer = {
    ...parts[parts.length - 1],
    took: parts.reduce((sum, p) => sum + (p.took ?? 0), 0),
    errors: refused.length > 0 || parts.some((p) => p.errors === true),
    items,
  };
  if (parts.some((p) => p.ingest_took !== undefined)) merged.ingest_took = parts.reduce((sum, p) => sum + (p.ingest_took ?? 0), 0);
  return merged;
}

// filter_path, as the engines read it: comma-separated paths, `*` within a name, `**` for any depth, a
// leading `-` to leave a path out. Arrays are walked through. Used when the proxy writes the answer itself.
type Path = string[];

export function applyFilterPath(value: unknown, filterPath: string): unknown {
  const filters = filterPath.split(',').map((f) => f.trim()).filter(Boolean);
  const includes = filters.filter((f) => !f.startsWith('-')).map((f) => f.split('.'));
  const excludes = filters.filter((f) => f.startsWith('-')).map((f) => f.slice(1).split('.'));
  const kept = includes.length > 0 ? keep(value, includes) : value;
  return excludes.length > 0 && kept !== undefined ? drop(kept, excludes) : kept;
}

function nameMatches(pattern: string, name: string): boolean {
  if (!pattern.includes('*')) return pattern === name;
  return new RegExp(`^${pattern.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`).test(name);
}

/** What is left of each path below `key`. */
function descend(paths: readonly Path[], key: string): Path[] {
  const next: Path[] = [];
  for (const path of paths) {
    if (path[0] === '**') {
      next.push(path); // ** may go on matching deeper
      if (path.length === 1) next.push([]);
      else if (nameMatches(path[1], key)) next.push(path.slice(2));
    } else if (nameMatches(path[0], key)) next.push(path.slice(1));
  }
  return next;
}

function keep(value: unknown, paths: readonly Path[]): unknown {
  if (paths.some((p) => p.length === 0)) return value;
  if (Array.isArray(value)) {
    const out = value.map((v) => keep(v, paths)).filter((v) => v !== undefined);
    return out.length > 0 ? out : undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const next = descend(paths, key);
    if (next.length === 0) continue;
    const kept = keep(v, next);
    if (kept !== undefined) out[key] = kept;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function drop(value: unknown, paths: readonly Path[]): unknown {
  if (paths.some((p) => p.length === 0)) return undefined;
  if (Array.isArray(value)) return value.map((v) => drop(v, paths)).filter((v) => v !== undefined);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const next = descend(paths, key);
    const left = next.length === 0 ? v : drop(v, next);
    if (left !== undefined) out[key] = left;
  }
  return out;
}
