// Where a document lives: the concrete index a search found it in (never the alias, pattern or data stream
// it was found through) and its custom routing, if it has one. Every write to a document the user indexed,
// and every read of one by id, goes to that place: an update sent to an alias over several indices, to a
// data stream, or without the routing the document was indexed with, is refused or lands on the wrong shard.

/**
 * Where a document lives (its concrete index, and routing when it has one), so that a write reaches it and not a copy
 * made elsewhere.
 */
export interface DocLocation {
  index: string;
  routing?: string;
}

/** The location a search hit or a get answer reports. */
export function locationOf(hit: { _index: string; _routing?: unknown }): DocLocation {
  return typeof hit._routing === 'string' ? { index: hit._index, routing: hit._routing } : { index: hit._index };
}

/** The action line's metadata for document `id` at `location` (plus any guards, e.g. if_seq_no). */
export function actionMeta(id: string, location: DocLocation, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { _index: location.index, _id: id, ...(location.routing === undefined ? {} : { routing: location.routing }), ...extra };
}
