// near-dup init: give an index the near-dup fields (creating the index if there is none), and/or install
// the templates that give them to new indices. Idempotent; refuses, without writing anything, when the
// index maps a near-dup field in a way that cannot be changed in place.
import { UserError } from '../errors.js';
import type { KeyLists } from '../stored/write.js';
import { dataStreamsBehind } from './index-state.js';
import { composeIntoStreamTemplates, governedByStreamTemplate, type StreamTemplateResult, type TemplateAccess, templatesWinningOver } from './index-templates.js';
import { type EngineClient, EngineResponseError, type IndexMappings } from '../engine/client.js';
import {
  componentTemplateBody,
  componentTemplateName,
  createIndexBody,
  DEFAULT_TEMPLATE_PRIORITY,
  describeConflicts,
  indexTemplateBody,
  type MappingConflict,
  NEAR_DUP_FIELDS,
  planMapping,
  prefixPath,
  putMappingBody,
} from './mapping.js';

/** What `init` did to one index, for its report. */
export interface IndexInitResult {
  index: string;
  /** created: a new index; updated: fields added; unchanged: everything was already there. */
  action: 'created' | 'updated' | 'unchanged';
  /** Concrete indices behind the name (an alias or pattern may have several). */
  indices: string[];
  /** Full paths of the fields added (all of them for a new index). */
  added: string[];
  /** For data streams behind the name: the template each takes new backing indices from, now composed of the fields. */
  streamTemplates: StreamTemplateResult[];
  /** How documents written there carry the SimHash blocks and the sample: joined only when every index behind the name takes that. */
  keyLists: KeyLists;
}

/**
 * What initIndex needs of a cluster: EngineClient, or the signing proxy's requests made with each client's
 * own credentials. Failures are EngineResponseErrors (their `type` is how a missing or existing index is told).
 */
export type MappingAccess = Pick<EngineClient, 'url' | 'getMapping' | 'createIndex' | 'putMapping' | 'describe'> & TemplateAccess;

/** Adds the near-dup fields under `prefix` to an index, alias or pattern; creates a missing index. */
export async function initIndex(client: MappingAccess, index: string, prefix: string): Promise<IndexInitResult> {
  prefixPath(prefix); // a bad prefix is a usage error before anything is sent
  let mappings: IndexMappings;
  try {
    mappings = await client.getMapping(index);
  } catch (err) {
    if (!(err instanceof EngineResponseError && err.type === 'index_not_found_exception')) throw client.describe(err, index);
    mappings = {};
  }
  const indices = Object.keys(mappings).sort();
  if (indices.length === 0) {
    if (/[*,?]/.test(index)) throw new UserError(`no index matches "${index}" on ${client.url}; name one index to create it`);
    // A name a data stream template governs becomes a data stream at its first document: its template gets the fields.
    const streamTemplates = await streamToBe(client, index, prefix);
    if (streamTemplates) return { index, action: 'unchanged', indices: [], added: [], streamTemplates, keyLists: 'lists' };
    try {
      await client.createIndex(index, createIndexBody(prefix));
      return { index, action: 'created', indices: [index], added: Object.keys(NEAR_DUP_FIELDS).map((name) => `${prefix}.${name}`), streamTemplates: [], keyLists: 'joined' };
    } catch (err) {
      // Created by someone else in the meantime: fall through to the existing-index path.
      if (!(err instanceof EngineResponseError && err.type === 'resource_already_exists_exception')) throw client.describe(err, index);
      return initIndex(client, index, prefix);
    }
  }

  const conflicts: Array<MappingConflict & { index: string }> = [];
  const missingByIndex = new Map<string, string[]>();
  let keyLists: KeyLists = 'joined';
  for (const name of indices) {
    const plan = planMapping(mappings[name]?.mappings, prefix);
    if (plan.keyLists === 'lists') keyLists = 'lists';
    for (const conflict of plan.conflicts) conflicts.push({ ...conflict, index: name });
    if (plan.missing.length > 0) missingByIndex.set(name, plan.missing);
  }
  if (conflicts.length > 0) {
    const names = [...new Set(conflicts.map((c) => c.index))];
    const named = names.length === 1 ? names[0] : `${index} (${names.join(', ')})`;
    throw new UserError(describeConflicts(named, dedupeConflicts(conflicts)));
  }
  const added = new Set<string>();
  for (const [name, missing] of missingByIndex) {
    try {
      await client.putMapping(name, putMappingBody(prefix, missing));
    } catch (err) {
      throw client.describe(err, name);
    }
    for (const field of missing) added.add(`${prefix}.${field}`);
  }
  // A data stream's next backing index takes its mapping from the stream's template, not from these.
  let streamTemplates: StreamTemplateResult[];
  try {
    streamTemplates = await composeIntoStreamTemplates(client, await dataStreamsBehind(client, index), prefix);
  } catch (err) {
    throw client.describe(err, index);
  }
  return { index, action: added.size > 0 ? 'updated' : 'unchanged', indices, added: [...added].sort(), streamTemplates, keyLists };
}

/** For a name that a data stream template governs: that template, composed of the fields; else undefined. */
async function streamToBe(client: MappingAccess, name: string, prefix: string): Promise<StreamTemplateResult[] | undefined> {
  try {
    if (!(await governedByStreamTemplate(client, name))) return undefined;
    return await composeIntoStreamTemplates(client, [name], prefix);
  } catch (err) {
    throw client.describe(err, name);
  }
}

function dedupeConflicts(conflicts: MappingConflict[]): MappingConflict[] {
  const seen = new Map<string, MappingConflict>();
  for (const c of conflicts) seen.set(`${c.field}\u0000${c.existing}`, { field: c.field, existing: c.existing, wanted: c.wanted });
  return [...seen.values()];
}

/** What `init --template` made, and the templates that would outrank it. */
export interface TemplateInitResult {
  componentTemplate: string;
  indexTemplate?: string;
  indexPatterns: string[];
  /** Templates of higher priority that match some of the patterns: indices made there take their mapping, not ours. */
  outranked: Array<{ name: string; priority: number; pattern: string }>;
}

/**
 * Installs the component template `<name>-fields` with the near-dup fields, and, when patterns are given,
 * an index template `<name>` composed of it, so that new matching indices get the fields.
 */
export async function initTemplates(
  client: EngineClient,
  options: { name: string; prefix: string; indexPatterns: string[]; priority?: number },
): Promise<TemplateInitResult> {
  const componentName = componentTemplateName(options.name);
  try {
    await client.putComponentTemplate(componentName, componentTemplateBody(options.prefix));
    if (options.indexPatterns.length === 0) return { componentTemplate: componentName, indexPatterns: [], outranked: [] };
    const priority = options.priority ?? DEFAULT_TEMPLATE_PRIORITY;
    await client.putIndexTemplate(options.name, indexTemplateBody(options.indexPatterns, componentName, priority));
    const outranked = await templatesWinningOver(client, options.name, options.indexPatterns, priority);
    return { componentTemplate: componentName, indexTemplate: options.name, indexPatterns: options.indexPatterns, outranked };
  } catch (err) {
    throw client.describe(err);
  }
}
