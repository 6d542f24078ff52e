// The near-dup fields of an index, under a configurable prefix: the mapping bodies built from the table of
// stored fields (stored/layout.ts; the JSON in mappings/, which users can also send by hand, is what these
// builders give for the default prefix, as a test checks), and checked against an index's existing mapping.
// Pure: no I/O.
import { UsageError } from '../errors.js';
import { ownValue } from '../own-keys.js';
import { DEFAULT_PREFIX, type FieldMapping, KEY_LIST_FIELDS, STORED, STORED_FIELDS, type StoredField, StoredLayout } from '../stored/layout.js';
import type { KeyLists } from '../stored/write.js';

export { DEFAULT_PREFIX, type FieldMapping };
/** Name of the index template; the component template is `<name>-fields`. */
export const DEFAULT_TEMPLATE_NAME = 'near-dup';
/**
 * The index template's priority unless `--template-priority` says otherwise (`init` says which templates outrank it).
 */
export const DEFAULT_TEMPLATE_PRIORITY = 100;

/** The fields under the prefix, name -> mapping (stored/layout.ts STORED). */
export const NEAR_DUP_FIELDS: Readonly<Record<string, FieldMapping>> = Object.freeze(Object.fromEntries(STORED_FIELDS.map((name) => [name, STORED[name].mapping])));

/** The segments of a prefix ("near_dup", or a dotted path such as "meta.near_dup"); throws UsageError. */
export function prefixPath(prefix: string): string[] {
  const segments = prefix.split('.');
  for (const segment of segments) {
    if (segment === '' || /\s/.test(segment) || segment.startsWith('_') || /[*#,"\\]/.test(segment)) {
      throw new UsageError(
        (o) => `${o('prefix')} "${prefix}" is not a usable field name: use letters, digits, _ or -, not starting with _, with . between object levels (e.g. near_dup)`,
      );
    }
  }
  return segments;
}

/** The mapping `properties` that put the given fields (all by default) under the prefix. */
export function prefixedProperties(prefix: string = DEFAULT_PREFIX, fieldNames?: readonly string[]): Record<string, unknown> {
  prefixPath(prefix);
  return new StoredLayout(prefix).mappingProperties(fieldNames);
}

/** PUT /<index>/_mapping body (mappings/put-mapping.json for the default prefix). */
export function putMappingBody(prefix: string = DEFAULT_PREFIX, fieldNames?: readonly string[]): { properties: Record<string, unknown> } {
  return { properties: prefixedProperties(prefix, fieldNames) };
}

/** PUT /<index> body for a new index that has only the near-dup fields mapped. */
export function createIndexBody(prefix: string = DEFAULT_PREFIX): { mappings: { properties: Record<string, unknown> } } {
  return { mappings: putMappingBody(prefix) };
}

/** The component template holding the near-dup fields, named after the index template that composes it. */
export function componentTemplateName(templateName: string = DEFAULT_TEMPLATE_NAME): string {
  return `${templateName}-fields`;
}

/** PUT /_component_template/<name> body (mappings/component-template.json for the default prefix). */
export function componentTemplateBody(prefix: string = DEFAULT_PREFIX): Record<string, unknown> {
  return {
    template: { mappings: putMappingBody(prefix) },
    _meta: {
      managed_by: 'near-dup',
      description: `near-duplicate signature fields (MinHash LSH band keys, SimHash) under the ${prefix} prefix`,
    },
  };
}

/** PUT /_index_template/<name> body (mappings/index-template.json for the defaults). */
export function indexTemplateBody(
  indexPatterns: readonly string[] = ['near-dup-*'],
  componentName: string = componentTemplateName(),
  priority: number = DEFAULT_TEMPLATE_PRIORITY,
): Record<string, unknown> {
  return {
    index_patterns: [...indexPatterns],
    composed_of: [componentName],
    priority,
    _meta: {
      managed_by: 'near-dup',
      description: `new indices matching index_patterns get the near_dup fields of the ${componentName} component template`,
    },
  };
}

/** A near-dup field the index maps otherwise than near-dup needs, so that `init` refuses it with both mappings said. */
export interface MappingConflict {
  /** Full dotted path of the field, e.g. "near_dup.bands". */
  field: string;
  /** What the index has: a type, possibly with the parameter that makes it unusable. */
  existing: string;
  /** What near-dup needs there. */
  wanted: string;
}

/** What an index's mapping lacks, has, and has wrongly of the near-dup fields: what `init` will add or refuse. */
export interface MappingPlan {
  /** Near-dup field names (without prefix) the index does not have yet. */
  missing: string[];
  /** Near-dup field names already mapped as needed. */
  present: string[];
  conflicts: MappingConflict[];
  /** How the index takes the SimHash blocks and the sample once the missing fields are added (see KeyLists). */
  keyLists: KeyLists;
}

type MappingNode = { type?: unknown; properties?: Record<string, MappingNode>; enabled?: unknown; index?: unknown; doc_values?: unknown; analyzer?: unknown };

// The key lists (stored/layout.ts KEY_LIST_FIELDS) are text split on white space; indices mapped before
// that have them as keyword, which reads the same terms when each is its own array element.

function typeOf(node: MappingNode): string {
  return typeof node.type === 'string' ? node.type : 'object';
}

/**
 * Compares an index's mapping (the `mappings` object of GET /<index>/_mapping) with the near-dup fields
 * under `prefix`: which are missing, which are there, and which are mapped in a way that cannot be
 * changed in place (another type, not indexed, no doc values where near-dup needs them, the prefix itself
 * not an object). Doc values near-dup does not need (older mappings of the band keys) are no conflict.
 */
export function planMapping(mappings: unknown, prefix: string = DEFAULT_PREFIX): MappingPlan {
  const path = prefixPath(prefix);
  const allFields = [...STORED_FIELDS];
  let properties: Record<string, MappingNode> | undefined = (mappings as MappingNode | undefined)?.properties;
  for (let i = 0; i < path.length; i++) {
    // Own properties only: "constructor" of a mapping without that field is Object, not a field.
    const node = properties === undefined ? undefined : (ownValue(properties, path[i]) as MappingNode | undefined);
    if (node === undefined) return { missing: allFields, present: [], conflicts: [], keyLists: 'joined' };
    const field = path.slice(0, i + 1).join('.');
    const type = typeOf(node);
    if (type !== 'object') return { missing: [], present: [], conflicts: [{ field, existing: type, wanted: 'object' }], keyLists: 'lists' };
    if (node.enabled === false) {
      return { missing: [], present: [], conflicts: [{ field, existing: 'object with enabled: false', wanted: 'object' }], keyLists: 'lists' };
    }
    properties = node.properties;
  }
  const plan: MappingPlan = { missing: [], present: [], conflicts: [], keyLists: 'joined' };
  for (const name of allFields) {
    const node = properties === undefined ? undefined : (ownValue(properties, name) as MappingNode | undefined);
    if (node === undefined) {
      plan.missing.push(name);
      continue;
    }
    const conflict = fieldConflict(name, node);
    if (conflict) plan.conflicts.push({ field: `${prefix}.${name}`, ...conflict });
    else plan.present.push(name);
    if (KEY_LIST_FIELDS.includes(name) && typeOf(node) !== 'text') plan.keyLists = 'lists';
  }
  return plan;
}

/** Why an existing field cannot hold what near-dup writes there, or undefined when it can. */
function fieldConflict(name: StoredField, node: MappingNode): { existing: string; wanted: string } | undefined {
  const wanted = NEAR_DUP_FIELDS[name];
  const type = typeOf(node);
  if (KEY_LIST_FIELDS.includes(name)) {
    if (type === 'keyword' && node.index !== false) return undefined; // the older layout: lists are written there
    if (type === 'text' && node.analyzer === wanted.analyzer && node.index !== false) return undefined;
    const what = `text with analyzer ${wanted.analyzer} (or keyword)`;
    return { existing: type === 'text' ? `text with analyzer ${typeof node.analyzer === 'string' ? node.analyzer : 'standard'}` : type, wanted: what };
  }
  if (type !== wanted.type) return { existing: type, wanted: wanted.type };
  if (wanted.index !== false && wanted.type !== 'binary' && node.index === false) return { existing: `${type} with index: false`, wanted: wanted.type };
  // Doc values are needed only where near-dup sorts, aggregates or reads them (params, content_hash, the
  // cluster fields). Where it maps a field without them (the band keys: terms queries read the inverted
  // index), an index mapped before with doc values works the same, at a few bytes more per document; the
  // engines refuse to change doc_values in place, so that is left as it is, and said nowhere.
  if (wanted.doc_values !== false && wanted.type !== 'binary' && node.doc_values === false) return { existing: `${type} with doc_values: false`, wanted: wanted.type };
  return undefined;
}

/** One line naming every conflicting field, both mappings, and the way out. */
export function describeConflicts(index: string, conflicts: readonly MappingConflict[]): string {
  const fields = conflicts.map((c) => `${c.field} is mapped as ${c.existing}, near-dup needs ${c.wanted}`).join('; ');
  return (
    `index "${index}" has a mapping near-dup cannot use: ${fields}. ` +
    `A field's mapping cannot be changed in place: choose another prefix with --prefix, ` +
    `or reindex into a new index created with \`near-dup init --index NEW_INDEX\``
  );
}
