// Where an index keeps its template tokens (sketch/template-tokens.ts): in its mapping's `_meta`, under
// near_dup_templates.<digest>, so that whoever signs for the index later (similar, the proxy, annotate on
// another machine) finds the set that the params keyword's tpl=<digest> names, with the index itself and
// under the same privileges as its mapping. The hashes are written as base64 of their little-endian bytes:
// 10,000 of them take 53 KB (as a JSON array of numbers, about 110 KB).
import { UsageError } from '../errors.js';
import type { EngineClient } from '../engine/client.js';
import { ownValue } from '../own-keys.js';
import { type TemplateTokens, templateTokens } from '../sketch/template-tokens.js';

/** The `_meta` key of the template sets, by digest. */
export const TEMPLATES_META_KEY = 'near_dup_templates';

/** What a set was drawn for: the condenser its hashes are tokens of, and the sample size asked for. */
export interface TemplateDraw {
  condenser: string;
  sampleAsked: number;
}

/** One set as `_meta` holds it. */
export interface StoredTemplate {
  condenser?: string;
  sample_asked?: number;
  share: number;
  min_count: number;
  sample: number;
  /** How many hashes `hashes` holds (a check on the decoding). */
  count: number;
  /** The sorted hashes, 4 little-endian bytes each, base64. */
  hashes: string;
}

/** A template set as `_meta` holds it. */
export function storedTemplate(template: TemplateTokens, draw?: TemplateDraw): StoredTemplate {
  const bytes = Buffer.alloc(template.hashes.length * 4);
  for (let i = 0; i < template.hashes.length; i++) bytes.writeUInt32LE(template.hashes[i], i * 4);
  const drawn = draw ? { condenser: draw.condenser, sample_asked: draw.sampleAsked } : {};
  return { ...drawn, share: template.share, min_count: template.minCount, sample: template.sample, count: template.hashes.length, hashes: bytes.toString('base64') };
}

/** A set read back from `_meta`; undefined when what is there is not the set of that digest (damaged, or edited by hand). */
export function templateOfStored(digest: string, stored: unknown): TemplateTokens | undefined {
  if (typeof stored !== 'object' || stored === null) return undefined;
  const { share, min_count, sample, count, hashes } = stored as Partial<StoredTemplate>;
  if (typeof hashes !== 'string' || !Number.isSafeInteger(count) || (count as number) < 0 || typeof share !== 'number' || typeof min_count !== 'number' || typeof sample !== 'number') return undefined;
  const bytes = Buffer.from(hashes, 'base64');
  if (bytes.length !== (count as number) * 4) return undefined;
  const values = new Uint32Array(count as number);
  for (let i = 0; i < (count as number); i++) values[i] = bytes.readUInt32LE(i * 4);
  const template = templateTokens(values, { share, minCount: min_count, sample });
  return template.digest === digest ? template : undefined;
}

/**
 * Adds a template set to the `_meta` of every concrete index that `index` names, keeping what else their
 * `_meta` holds (an update of the mapping replaces `_meta` whole).
 */
export async function storeTemplate(client: EngineClient, index: string, template: TemplateTokens, draw?: TemplateDraw): Promise<void> {
  const mappings = await client.getMapping(index);
  for (const [name, { mappings: mapping }] of Object.entries(mappings)) {
    const meta = (mapping?._meta ?? {}) as Record<string, unknown>;
    const sets = (ownValue(meta, TEMPLATES_META_KEY) ?? {}) as Record<string, unknown>;
    const _meta = { ...meta, [TEMPLATES_META_KEY]: { ...sets, [template.digest]: storedTemplate(template, draw) } };
    await client.putMapping(name, { _meta });
  }
}

/**
 * The template set of `digest` that `index` keeps (the first of its concrete indices that has it).
 * @throws {UsageError} none of them has it, or what is there is damaged: naming the index and what to do.
 */
export async function loadTemplate(client: EngineClient, index: string, digest: string): Promise<TemplateTokens> {
  const mappings = await client.getMapping(index);
  let damaged: string | undefined;
  for (const [name, { mappings: mapping }] of Object.entries(mappings)) {
    const sets = ownValue((mapping?._meta ?? {}) as Record<string, unknown>, TEMPLATES_META_KEY) as Record<string, unknown> | undefined;
    const stored = sets && ownValue(sets, digest);
    if (stored === undefined) continue;
    const template = templateOfStored(digest, stored);
    if (template) return template;
    damaged ??= name;
  }
  if (damaged !== undefined) {
    throw new UsageError(`the template tokens ${digest} in the mapping of "${damaged}" (_meta.${TEMPLATES_META_KEY}) are not that set any more; sign the index again with annotate --force and a new template`);
  }
  throw new UsageError(`the signatures of "${index}" leave out the template tokens ${digest} (params tpl=${digest}), but no mapping of "${index}" keeps them (_meta.${TEMPLATES_META_KEY}); sign the index again with annotate --force`);
}

/**
 * A set `index` keeps that was drawn for the same condenser, share, minimum count and sample size (the
 * first found), so that every run and every process signing the index uses one set; undefined when none is.
 */
export async function findTemplate(client: EngineClient, index: string, draw: TemplateDraw & { share: number; minCount: number }): Promise<TemplateTokens | undefined> {
  const mappings = await client.getMapping(index);
  for (const { mappings: mapping } of Object.values(mappings)) {
    const sets = ownValue((mapping?._meta ?? {}) as Record<string, unknown>, TEMPLATES_META_KEY) as Record<string, unknown> | undefined;
    for (const [digest, stored] of Object.entries(sets ?? {})) {
      const s = stored as Partial<StoredTemplate> | null;
      if (s?.condenser !== draw.condenser || s.sample_asked !== draw.sampleAsked || s.share !== draw.share || s.min_count !== draw.minCount) continue;
      const template = templateOfStored(digest, stored);
      if (template) return template;
    }
  }
  return undefined;
}
