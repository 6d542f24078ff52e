// Where a document lives: the concrete index a search found it in (never the alias, pattern or data stream
// it was found through) and its custom routing, if it has one. Every write to a document the user indexed,
// and every read of one by id, goes to that place: an update sent to an alias over several indices, to a
// data stream, or without the routing the document was indexed with, is refused or lands on the wrong shard.

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

/**
 * Locations of many documents in little memory, by document number: the index names interned (a data
 * stream or an alias has a handful), and routing only for the documents that have one.
 */
export class LocationTable {
  private readonly names: string[] = [];
  private readonly numbers = new Map<string, number>();
  /** Each document's index, as its place among the names + 1 (0: none): 2 bytes a document while there are fewer than 65,535 names. */
  private indexOf: Uint16Array | Int32Array;
  private readonly routings = new Map<number, string>();

  /** `expected`: documents to make room for at once (it grows past that as needed). */
  constructor(expected = 0) {
    this.indexOf = new Uint16Array(expected);
  }

  set(n: number, location: DocLocation): void {
    let k = this.numbers.get(location.index);
    if (k === undefined) {
      k = this.names.length;
      this.names.push(location.index);
      this.numbers.set(location.index, k);
    }
    if (n >= this.indexOf.length || (k + 1 > 0xffff && this.indexOf instanceof Uint16Array)) {
      const wide = k + 1 > 0xffff || this.indexOf instanceof Int32Array;
      const length = Math.max(1024, n < this.indexOf.length ? this.indexOf.length : Math.ceil((n + 1) * 1.5));
      const larger = wide ? new Int32Array(length) : new Uint16Array(length);
      larger.set(this.indexOf);
      this.indexOf = larger;
    }
    this.indexOf[n] = k + 1;
    if (location.routing === undefined) this.routings.delete(n);
    else this.routings.set(n, location.routing);
  }

  get(n: number): DocLocation | undefined {
    const k = (n < this.indexOf.length ? this.indexOf[n] : 0) - 1;
    if (k < 0) return undefined;
    const routing = this.routings.get(n);
    return routing === undefined ? { index: this.names[k] } : { index: this.names[k], routing };
  }
}
