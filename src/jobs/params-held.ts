// Which parameter sets the signatures of an index were made with (near_dup.params), with how many
// documents each: dedup clusters one of them, similar signs a text like them.
import { storedPath } from '../stored/layout.js';
import { paramsShape } from '../stored/read.js';
import type { EngineClient } from '../engine/client.js';
import { UserError } from '../errors.js';

/** The parameter sets held, most documents first (at most 50); an index with none is refused with the fix. */
export async function paramsHeld(client: EngineClient, index: string, prefix: string): Promise<Array<{ key: string; doc_count: number }>> {
  const response = await client.search(index, { size: 0, aggs: { params: { terms: { field: storedPath(prefix, 'params'), size: 50 } } } });
  const held: Array<{ key: string; doc_count: number }> = response.aggregations?.params?.buckets ?? [];
  if (held.length === 0) {
    throw new UserError(`no document of "${index}" has near-dup fields under "${prefix}"; run near-dup annotate --index ${index} --field FIELD first`);
  }
  return held;
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
