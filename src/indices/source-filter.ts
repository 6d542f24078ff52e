// Whether an index keeps the whole of each document in `_source`. A partial update (the only way near-dup
// writes to a document it did not index) is done by the engine as "read _source, merge, index again": a
// field that `_source` leaves out (includes / excludes in the mapping) is indexed again without its value,
// and silently stops being searchable; with `_source` disabled there is nothing to read or merge. So such
// an index is refused before anything is written, naming what would be lost and the ways that lose nothing.
import { UserError } from '../errors.js';
import type { IndexMappings } from '../engine/client.js';

interface SourceMapping {
  enabled?: boolean;
  mode?: string;
  includes?: string[];
  excludes?: string[];
}

interface Node {
  type?: string;
  properties?: Record<string, Node>;
}

/** What one concrete index's `_source` keeps. */
export interface SourceKeeping {
  index: string;
  /** `_source` is disabled: no text can be read, no document updated. */
  disabled: boolean;
  includes: string[];
  excludes: string[];
  /** Mapped fields (dotted paths) whose values `_source` does not keep. */
  dropped: string[];
}

/** The `_source` mapping of each concrete index that does not keep whole documents; [] when all do. */
export function partialSources(mappings: IndexMappings): SourceKeeping[] {
  const out: SourceKeeping[] = [];
  for (const [index, { mappings: m }] of Object.entries(mappings).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const source = (m?._source ?? {}) as SourceMapping;
    const disabled = source.enabled === false || source.mode === 'disabled';
    const includes = strings(source.includes);
    const excludes = strings(source.excludes);
    if (!disabled && includes.length === 0 && excludes.length === 0) continue;
    const dropped = leafFields(m as Node).filter((field) => disabled || !keptInSource(field, includes, excludes));
    out.push({ index, disabled, includes, excludes, dropped });
  }
  return out;
}

/** Whether `_source` filtering with these patterns keeps the value of a field (the engines' rule). */
export function keptInSource(field: string, includes: readonly string[], excludes: readonly string[]): boolean {
  // A pattern that names an object covers everything under it; `*` matches any run of characters.
  const covered = (patterns: readonly string[]) => pathAndParents(field).some((path) => patterns.some((p) => wildcardMatch(p, path)));
  if (includes.length > 0 && !covered(includes)) return false;
  return !covered(excludes);
}

/**
 * Refuses an index (or any index behind an alias, pattern or data stream) whose `_source` does not keep
 * whole documents: the text fields cannot be read, or a partial update would cost fields their index.
 */
export function requireWholeSource(name: string, mappings: IndexMappings, textFields: readonly string[]): void {
  const partial = partialSources(mappings);
  if (partial.length === 0) return;
  const where = (k: SourceKeeping) => (k.index === name ? `"${name}"` : `"${k.index}" (behind "${name}")`);
  const disabled = partial.find((k) => k.disabled);
  if (disabled) {
    throw new UserError(
      `${where(disabled)} keeps no _source (the mapping disables it): near-dup can read no text from it and no document can be updated in place. ` +
        `${WAYS_OUT}`,
    );
  }
  const hidden = partial.flatMap((k) => textFields.filter((f) => !keptInSource(f, k.includes, k.excludes)).map((f) => ({ k, f })));
  if (hidden.length > 0) {
    const { k } = hidden[0];
    throw new UserError(
      `the text field ${[...new Set(hidden.map((h) => `"${h.f}"`))].join(', ')} of ${where(k)} is not kept in _source (${patterns(k)}), ` +
        `so near-dup cannot read it: no document there can be signed. ${WAYS_OUT}`,
    );
  }
  const k = partial[0];
  const lost = [...new Set(partial.flatMap((p) => p.dropped))];
  const fields = lost.length > 0 ? `the field${lost.length > 1 ? 's' : ''} ${list(lost)}` : `any field matching ${patterns(k)}`;
  throw new UserError(
    `${where(k)} keeps only part of each document in _source (${patterns(k)}); the engine does a partial update by indexing ` +
      `the document again from its _source, so ${fields} would lose ${lost.length === 1 ? 'its' : 'their'} indexed values in every document near-dup writes to. ` +
      `near-dup will not do that. ${WAYS_OUT}`,
  );
}

const WAYS_OUT =
  'Ways that lose nothing: index the documents again from where they come from into an index that keeps the whole _source ' +
  '(near-dup init --index NEW gives it the near-dup fields), or sign them as they are indexed (near-dup proxy, near-dup ingest, ' +
  "or the library's annotateDocuments); see the README, \"Index shapes\".";

function patterns(k: SourceKeeping): string {
  const parts: string[] = [];
  if (k.includes.length > 0) parts.push(`includes ${k.includes.join(', ')}`);
  if (k.excludes.length > 0) parts.push(`excludes ${k.excludes.join(', ')}`);
  return `_source ${parts.join('; ')}`;
}

function list(fields: readonly string[]): string {
  const shown = fields.slice(0, 10).map((f) => `"${f}"`).join(', ');
  return fields.length > 10 ? `${shown} and ${fields.length - 10} more` : shown;
}

function strings(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** "a.b.c" -> ["a", "a.b", "a.b.c"]. */
function pathAndParents(field: string): string[] {
  const parts = field.split('.');
  return parts.map((_, i) => parts.slice(0, i + 1).join('.'));
}

/** The engines' simple wildcard match: `*` is any run of characters (dots included), everything else literal. */
export function wildcardMatch(pattern: string, value: string): boolean {
  const pieces = pattern.split('*');
  if (pieces.length === 1) return pattern === value;
  if (!value.startsWith(pieces[0])) return false;
  let at = pieces[0].length;
  for (let i = 1; i < pieces.length - 1; i++) {
    const found = value.indexOf(pieces[i], at);
    if (found < 0) return false;
    at = found + pieces[i].length;
  }
  const last = pieces[pieces.length - 1];
  return value.length - last.length >= at && value.endsWith(last);
}

/** Mapped leaf fields (not objects), as dotted paths. */
function leafFields(node: Node | undefined, prefix = ''): string[] {
  const out: string[] = [];
  for (const [name, child] of Object.entries(node?.properties ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    if (child.properties && (child.type === undefined || child.type === 'object' || child.type === 'nested')) out.push(...leafFields(child, path));
    else out.push(path);
  }
  return out;
}
