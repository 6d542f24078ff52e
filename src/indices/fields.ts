// What an index's mapping says about a document field before a job reads a million documents for it:
// mapped, certainly absent (no document can hold it), or unknown (a part of the mapping that does not
// map new fields, where any field may sit unmapped in the source).
import { ownValue } from '../own-keys.js';
import type { IndexMappings } from '../engine/client.js';

/** Whether a field is in an index's mapping; unknown when the mapping takes fields dynamically and so cannot tell. */
export type FieldPresence = 'mapped' | 'absent' | 'unknown';

interface Node {
  type?: string;
  dynamic?: boolean | string;
  enabled?: boolean;
  properties?: Record<string, Node>;
}

/** Field types that hold text a user would sign. */
const TEXT_TYPES = new Set(['text', 'keyword', 'match_only_text', 'wildcard', 'constant_keyword', 'search_as_you_type']);

/** Presence of a dotted field path in one index's mappings (`{ properties, dynamic }`). */
export function fieldPresence(mappings: Node | undefined, path: string): FieldPresence {
  const parts = path.split('.');
  let node: Node | undefined = mappings;
  let dynamic: boolean | string | undefined = mappings?.dynamic;
  for (let i = 0; i < parts.length; i++) {
    if (!node) return 'absent';
    if (node.enabled === false) return 'unknown'; // stored, never mapped: anything may be inside
    if (node.dynamic !== undefined) dynamic = node.dynamic;
    // A name with dots can be mapped as one property ("a.b") or nested ones. Own properties only: a
    // mapping read by JSON.parse may name a field "__proto__", and "constructor" of one without it is Object.
    const rest = parts.slice(i).join('.');
    const properties = node.properties ?? {};
    if (ownValue(properties, rest)) return 'mapped';
    const child = ownValue(properties, parts[i]) as Node | undefined;
    if (!child) return dynamic === false || dynamic === 'false' ? 'unknown' : 'absent';
    node = child;
  }
  return 'mapped';
}

/** The mapped fields of text types, as dotted paths, for "the index has these" hints. */
export function textFields(mappings: Node | undefined, prefix = ''): string[] {
  const out: string[] = [];
  for (const [name, child] of Object.entries(mappings?.properties ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    if (child.type && TEXT_TYPES.has(child.type)) out.push(path);
    if (child.properties) out.push(...textFields(child, path));
  }
  return out;
}

/** Every mapped field, as dotted paths (leaves and objects). */
export function mappedFields(mappings: Node | undefined, prefix = ''): string[] {
  const out: string[] = [];
  for (const [name, child] of Object.entries(mappings?.properties ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    out.push(path);
    if (child.properties) out.push(...mappedFields(child, path));
  }
  return out;
}

/** The fields that no index behind a name (alias, pattern) can hold; `unknown` counts as possible. */
export function absentFields(all: IndexMappings, fields: readonly string[]): string[] {
  return fields.filter((field) => Object.values(all).every((m) => fieldPresence(m.mappings as Node, field) === 'absent'));
}
