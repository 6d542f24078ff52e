// What near-dup-templates keeps for an index, read as a test reads it (src/indices/template-store.ts).
import type { EngineClient } from '../../src/engine/client.js';
import { TEMPLATE_INDEX } from '../../src/indices/template-store.js';

/** The digests of the sets near-dup-templates keeps for `index` (none when it is not there). */
export async function keptDigests(client: EngineClient, index: string): Promise<string[]> {
  const uuids = await client.indexUuids(index);
  const found = await client.request('POST', `/${TEMPLATE_INDEX}/_search`, { size: 100, query: { terms: { uuid: uuids } } }).catch(() => ({ hits: { hits: [] } }));
  return (found.hits.hits as Array<{ _source: { digest: string } }>).map((h) => h._source.digest);
}
