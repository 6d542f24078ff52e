// Whether lookups may read the stored signatures from doc values: only where the MinHash field has them,
// in indices mapped by near-dup before the MinHash was stored once (in _source). Everywhere else they read
// the signatures from _source. Learnt once per index and process from the field's mapping, by the Jaccard
// and the containment lookups alike; a search the engine still refuses with 400 marks the index too.
import type { EngineClient } from '../engine/client.js';

const known = new Map<string, Promise<boolean>>();

/** True when every index behind `index` maps the MinHash field (`path`) with doc values. */
export function minhashDocValues(client: EngineClient, index: string, path: string): Promise<boolean> {
  let answer = known.get(index);
  if (!answer) {
    answer = readMapping(client, index, path);
    known.set(index, answer);
  }
  return answer;
}

/** Marks an index whose doc values could not be read after all: its lookups use _source from now on. */
export function withoutDocValues(index: string): void {
  known.set(index, Promise.resolve(false));
}

async function readMapping(client: EngineClient, index: string, path: string): Promise<boolean> {
  try {
    const mappings = await client.request<Record<string, { mappings?: Record<string, { mapping?: Record<string, { doc_values?: unknown }> }> }>>(
      'GET',
      `/${encodeURIComponent(index)}/_mapping/field/${encodeURIComponent(path)}`,
    );
    const leaf = path.split('.').pop() as string;
    const each = Object.values(mappings).map((m) => m.mappings?.[path]?.mapping?.[leaf]?.doc_values === true);
    return each.length > 0 && each.every(Boolean);
  } catch {
    return false;
  }
}
