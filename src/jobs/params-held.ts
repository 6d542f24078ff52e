// Which parameter sets the signatures of an index were made with (near_dup.params), with how many
// documents each: dedup clusters one of them, similar signs a text like them. A params value that is not a
// parameter set at all (garbage written by hand or by another program) is damage: it costs its document,
// counted and named, never a second parameter set that makes dedup refuse the whole index.
import { storedPath } from '../stored/layout.js';
import { isParameterSet, PARAMETER_SET_REGEXP, paramsShape } from '../stored/params.js';
import type { EngineClient } from '../engine/client.js';
import { UserError } from '../errors.js';
import { valueAt } from '../annotation.js';

/** Documents with a damaged params value named (the rest counted), by default. */
export const MAX_DAMAGED_PARAMS_NAMED = 1000;

/** The documents whose params value is not a parameter set: how many, and the first of them with why. */
export interface ParamsDamage {
  count: number;
  documents: Array<{ id: string; index: string; reason: string }>;
}

/** The query for documents whose params value is not a parameter set (the engine's regexp is anchored). */
export function damagedParamsQuery(prefix: string): Record<string, unknown> {
  const field = storedPath(prefix, 'params');
  return { bool: { filter: [{ exists: { field } }], must_not: [{ regexp: { [field]: { value: PARAMETER_SET_REGEXP } } }] } };
}

/** The parameter sets held, most documents first (at most 50); an index with none is refused with the fix. */
export async function paramsHeld(client: EngineClient, index: string, prefix: string): Promise<Array<{ key: string; doc_count: number }>> {
  const response = await client.search(index, { size: 0, aggs: { params: { terms: { field: storedPath(prefix, 'params'), size: 50 } } } });
  const buckets: Array<{ key: unknown; doc_count: number }> = response.aggregations?.params?.buckets ?? [];
  const held = buckets.filter((b): b is { key: string; doc_count: number } => isParameterSet(b.key));
  if (held.length === 0) {
    const damaged = buckets.reduce((n, b) => n + b.doc_count, 0);
    throw new UserError(
      damaged > 0
        ? `no document of "${index}" has a usable near-dup signature under "${prefix}": the ${damaged} with a ${prefix}.params value hold something that is not a parameter set; ` +
            `sign them again with near-dup annotate --index ${index} --field FIELD --force`
        : `no document of "${index}" has near-dup fields under "${prefix}"; run near-dup annotate --index ${index} --field FIELD first`,
    );
  }
  return held;
}

/** The documents whose params value is not a parameter set: counted, and the first `limit` named with the value they hold. */
export async function damagedParams(client: EngineClient, index: string, prefix: string, limit = MAX_DAMAGED_PARAMS_NAMED): Promise<ParamsDamage> {
  const query = damagedParamsQuery(prefix);
  const count = await client.count(index, query);
  if (count === 0) return { count: 0, documents: [] };
  const field = storedPath(prefix, 'params');
  const found = await client.search(index, { size: Math.min(limit, count), track_total_hits: false, _source: [field], query });
  const documents = found.hits.hits.map((h) => ({ id: h._id, index: h._index, reason: `${field} holds ${shown(valueAt(h._source, field))}, which is not a parameter set` }));
  return { count, documents };
}

/**
 * Which signatures to compare: the parameter set asked for, or the one the index holds (refused when it
 * holds several: never a silent mix). Documents whose params value is not a parameter set are not a set of
 * their own: they come back as damage, for the job to count and name.
 */
export async function chooseParams(
  client: EngineClient,
  index: string,
  prefix: string,
  asked: string | undefined,
): Promise<{ params: string; excludedParams: number; damagedParams: ParamsDamage }> {
  const held = await paramsHeld(client, index, prefix);
  if (!asked && held.length > 1) {
    const list = held.map((b) => `"${b.key}": ${b.doc_count} docs`).join('; ');
    throw new UserError((o) => `"${index}" holds signatures made with ${held.length} different parameter sets (${list}); choose one with ${o('params')}, or annotate again with one set of options`);
  }
  const params = asked ?? held[0].key;
  const damaged = await damagedParams(client, index, prefix);
  return { params, excludedParams: held.filter((b) => b.key !== params).reduce((n, b) => n + b.doc_count, 0), damagedParams: damaged };
}

/** A stored value as a message quotes it: short. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}...` : text;
}

/**
 * One line when the index holds signatures of near-dup's first layout (band keys and sample terms in hex,
 * before 2026-11-25), with the command that brings them to the current one; undefined otherwise, or when
 * the index cannot be asked (the command itself will say why).
 */
export async function olderLayoutNote(client: EngineClient, index: string, prefix: string, field = 'FIELD'): Promise<string | undefined> {
  let held: Array<{ key: string; doc_count: number }>;
  try {
    held = await paramsHeld(client, index, prefix);
  } catch {
    return undefined;
  }
  const older = held.filter((b) => paramsShape(b.key)?.keys === 1).reduce((n, b) => n + b.doc_count, 0);
  if (older === 0) return undefined;
  return (
    `"${index}" holds ${older} signatures of near-dup's first layout (band keys and sample terms in hex, up to 2 KB more per document than the current one); ` +
    `near-dup annotate --index ${index} --field ${field} brings them to the current layout, rewriting only the near-dup fields (resumable). They are read as they are meanwhile`
  );
}
