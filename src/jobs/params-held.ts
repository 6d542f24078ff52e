// Which parameter sets the signatures of an index were made with (near_dup.params), with how many
// documents each: dedup clusters one of them, similar signs a text like them.
import { storedPath } from '../stored/layout.js';
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
