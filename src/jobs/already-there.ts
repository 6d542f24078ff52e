// A `create` the engine refused with 409 means a document with that id is there already: in a data stream,
// from an earlier run of the same file (a stream takes only `create`, never an overwrite), or ours, written
// by a request whose answer was lost. Whether that is "already there" or a different document lost is told
// by the stored document: the same line (every field but the near-dup object, whose annotated_at differs
// from run to run) is already there; anything else is not the user's line, and fails.
import { isDeepStrictEqual } from 'node:util';
import type { EngineClient } from '../engine/client.js';

/** A line refused as existing: its id, the concrete index the engine named, and the JSON sent. */
export interface Refused {
  id: string;
  index: string;
  json: string;
}

/** same: the stored document is this line; different: another document has its id; missing: none has (deleted since). */
export type StoredAs = 'same' | 'different' | 'missing';

/** How each refused line compares with the document the engine holds at its id, in order. */
export async function compareWithStored(client: Pick<EngineClient, 'mget'>, refused: readonly Refused[], prefix: string): Promise<StoredAs[]> {
  const found = await client.mget(refused.map((r) => ({ id: r.id, location: { index: r.index } })), true);
  const stored = new Map(found.map((d) => [`${d._index}\u0000${d._id}`, d._source]));
  return refused.map((r) => {
    const source = stored.get(`${r.index}\u0000${r.id}`);
    if (source === undefined) return 'missing';
    return isDeepStrictEqual(withoutPrefix(source, prefix), withoutPrefix(JSON.parse(r.json), prefix)) ? 'same' : 'different';
  });
}

/** A document without the near-dup object, whether written as nested objects or as one dotted key. */
function withoutPrefix(source: unknown, prefix: string): unknown {
  if (typeof source !== 'object' || source === null) return source;
  const copy: Record<string, unknown> = { ...(source as Record<string, unknown>) };
  delete copy[prefix];
  const [head, ...rest] = prefix.split('.');
  if (rest.length > 0 && head in copy) copy[head] = withoutPrefix(copy[head], rest.join('.'));
  return copy;
}
