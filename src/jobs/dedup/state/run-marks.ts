// Where a dedup run's view of the index begins and ends, so that the next incremental run misses no document
// signed before this one and written while it ran (annotated_at is stamped at signing, not when the write
// lands). The engine numbers each primary shard's writes (`_seq_no`), so marks are kept per shard of each
// concrete index. open: the global checkpoints noted, the index refreshed, a point in time kept. settle,
// after the write-back: the marks taken again; writes between the two whose signature differs from the one
// read in the point in time lower the time mark below their annotated_at (the run's own writes do not).
import type { EngineClient, SearchHit, SearchResponse } from '../../../engine/client.js';
import { storedPath, type StoredField } from '../../../stored/layout.js';
import { valueAt } from '../../../annotation.js';
import { forCount, plural } from '../../../plural.js';

/** One concrete index: its uuid and each primary shard's mark (its global checkpoint), by shard number. */
export interface ShardMarks {
  index: string;
  uuid: string;
  shards: number[];
}

/** Documents read a request, by the searches of one shard and the lookups in the point in time. */
const PAGE = 1000;
/** A point in time is kept this long after each use; the run touches it more often than that. */
const PIT_KEEP_ALIVE = '10m';
const PIT_TOUCH_MS = 4 * 60_000;

/**
 * One sequence number of each primary shard, per concrete index: its global checkpoint (every write up to it
 * is on every copy, so a refresh after makes it visible wherever a search goes) or its highest number given.
 */
async function shardNumbers(client: EngineClient, index: string, which: 'global_checkpoint' | 'max_seq_no'): Promise<ShardMarks[] | { problem: string }> {
  if (client.info.serverless) return { problem: 'Serverless gives no sequence numbers' };
  type Copy = { routing: { primary: boolean }; seq_no?: Record<string, number> };
  let stats: { indices?: Record<string, { uuid: string; shards: Record<string, Copy[]> }> };
  try {
    stats = await client.request('GET', `/${encodeURIComponent(index)}/_stats/docs`, undefined, {
      level: 'shards',
      filter_path: `indices.*.uuid,indices.*.shards.*.routing.primary,indices.*.shards.*.seq_no.${which}`,
    });
  } catch (err) {
    return { problem: `the shards' sequence numbers could not be read (${(err as Error).message})` };
  }
  const marks: ShardMarks[] = [];
  for (const [name, entry] of Object.entries(stats.indices ?? {})) {
    const shards: number[] = [];
    for (const [number, copies] of Object.entries(entry.shards)) shards[Number(number)] = copies.find((c) => c.routing.primary)?.seq_no?.[which] ?? -1;
    marks.push({ index: name, uuid: entry.uuid, shards: Array.from(shards, (m) => m ?? -1) });
  }
  return marks.sort((a, b) => (a.index < b.index ? -1 : 1));
}

/**
 * The documents matching `query` written above the marks, shard by shard (a search of one shard, in the order
 * of its sequence numbers), a page at a time. A shard whose highest number given is not above its mark has
 * none (one request of `index`'s stats spares a search of every shard when little was written).
 */
export async function* writtenAbove(client: EngineClient, index: string, marks: readonly ShardMarks[], query: Record<string, unknown>, source: string[]): AsyncGenerator<SearchHit[]> {
  const highest = await shardNumbers(client, index, 'max_seq_no');
  const top = new Map(Array.isArray(highest) ? highest.map((m) => [m.uuid, m.shards]) : []);
  for (const { index: concrete, uuid, shards } of marks) {
    for (const [shard, mark] of shards.entries()) {
      if ((top.get(uuid)?.[shard] ?? Number.POSITIVE_INFINITY) <= mark) continue;
      yield* shardWrittenAbove(client, concrete, shard, mark, query, source);
    }
  }
}

/** The documents of one shard matching `query` written above `mark`, in the order of their sequence numbers. */
async function* shardWrittenAbove(client: EngineClient, index: string, shard: number, mark: number, query: Record<string, unknown>, source: string[]): AsyncGenerator<SearchHit[]> {
  let after: unknown[] | undefined;
  for (;;) {
    const body = {
      size: PAGE,
      query: { bool: { filter: [query, { range: { _seq_no: { gt: mark } } }] } },
      sort: [{ _seq_no: 'asc' }],
      _source: source,
      ...(after ? { search_after: after } : {}),
    };
    const hits = (await client.search(index, body, { preference: `_shards:${shard}` })).hits.hits;
    if (hits.length > 0) yield hits;
    if (hits.length < PAGE) return;
    after = hits[hits.length - 1].sort;
  }
}

/** What the state keeps of a complete run for the next one. */
export interface Settled {
  /** The marks at the end of the run (none where the engine gives none: the next run goes by time alone). */
  marks?: ShardMarks[];
  /** Documents annotated after this are new to the next run. */
  since: string;
  /** Documents written while the run went on whose signature it did not read. */
  late: number;
  /** What the run should say about it. */
  note?: string;
}

/** A run's view of the index: the shard marks where it began, kept in a point in time while the run goes on. */
export class RunView {
  private touching?: NodeJS.Timeout;

  private constructor(
    private readonly client: EngineClient,
    private readonly index: string,
    /** The marks where the view began, or why there are none. */
    private readonly marks: ShardMarks[] | { problem: string },
    private pit: { id: string } | { problem: string },
  ) {}

  /** Notes the marks, makes every write up to them visible, and keeps the view in a point in time. */
  static async open(client: EngineClient, index: string): Promise<RunView> {
    const marks = await shardNumbers(client, index, 'global_checkpoint');
    await client.refresh(index);
    const view = new RunView(client, index, marks, Array.isArray(marks) ? await openPointInTime(client, index) : marks);
    view.keepAlive();
    return view;
  }

  /**
   * After a complete write-back: the marks for the next run, and the time mark, lowered below the annotated_at
   * of any document written meanwhile whose signature this run did not read. `startedAt`: the run's start,
   * the time mark when none was.
   */
  async settle(scope: Record<string, unknown>, prefix: string, startedAt: string): Promise<Settled> {
    if (!Array.isArray(this.marks)) {
      return { since: startedAt, late: 0, note: `${this.marks.problem}: the next run reads what was annotated after this run started, and may miss a document signed before and written after that` };
    }
    const marks = await shardNumbers(this.client, this.index, 'global_checkpoint');
    await this.client.refresh(this.index);
    const f = (name: StoredField) => storedPath(prefix, name);
    const fields = [f('annotated_at'), f('content_hash'), f('params')];
    const signedBefore = { bool: { filter: [scope, { range: { [f('annotated_at')]: { lte: startedAt } } }] } };
    let earliest = Date.parse(startedAt);
    let late = 0;
    for await (const page of writtenAbove(this.client, this.index, this.marks, signedBefore, fields)) {
      const read = await this.readInView(page.map((h) => h._id), fields);
      for (const hit of page) {
        const before = read?.get(`${hit._index}\u0000${hit._id}`);
        if (before !== undefined && fields.every((field) => valueAt(before, field) === valueAt(hit._source ?? {}, field))) continue;
        late++;
        const at = Date.parse(String(valueAt(hit._source ?? {}, f('annotated_at'))));
        if (at <= earliest) earliest = at - 1;
      }
    }
    const notes = [
      'problem' in this.pit && late > 0 ? `${this.pit.problem}: the ${plural(late, 'document')} written while this run went on ${forCount(late, 'is', 'are')} read again by the next run` : undefined,
      // (Then the next run goes by time alone, from the earliest signature it must read again.)
      Array.isArray(marks) ? undefined : `${marks.problem}: the next run may miss a document signed before this run and written after it`,
    ].filter((n) => n !== undefined);
    return { marks: Array.isArray(marks) ? marks : undefined, since: new Date(earliest).toISOString(), late, note: notes.join('; ') || undefined };
  }

  /** Stops keeping the point in time (best effort: it ends by itself after its keep-alive). */
  async close(): Promise<void> {
    clearInterval(this.touching);
    if ('id' in this.pit) await closePointInTime(this.client, this.pit.id);
  }

  /** These documents as the run read them (by index and id), or undefined without a point in time (then every one counts as changed). */
  private async readInView(ids: string[], fields: string[]): Promise<Map<string, Record<string, unknown>> | undefined> {
    if (!('id' in this.pit)) return undefined;
    // (An id may be in several indices of an alias: room for a few of each.)
    const answer = await this.searchInView(this.pit.id, { size: ids.length * 4, query: { ids: { values: ids } }, _source: fields });
    return new Map(answer.hits.hits.map((h) => [`${h._index}\u0000${h._id}`, h._source ?? {}]));
  }

  /** A search in the point in time: each use keeps it alive, and the engine may answer with its id changed. */
  private async searchInView(id: string, body: Record<string, unknown>): Promise<SearchResponse> {
    const answer = await this.client.search(undefined, { ...body, pit: { id, keep_alive: PIT_KEEP_ALIVE } });
    if (answer.pit_id) this.pit = { id: answer.pit_id };
    return answer;
  }

  /** A point in time ends unless used: touched every few minutes while the run goes on (not keeping the process alive). */
  private keepAlive(): void {
    if (!('id' in this.pit)) return;
    this.touching = setInterval(() => {
      if ('id' in this.pit) this.searchInView(this.pit.id, { size: 0 }).catch(() => undefined);
    }, PIT_TOUCH_MS);
    this.touching.unref();
  }
}

/** A point in time of the index (each engine's own API), or why there is none. */
async function openPointInTime(client: EngineClient, index: string): Promise<{ id: string } | { problem: string }> {
  const path = encodeURIComponent(index);
  try {
    if (client.pointInTime === 'elasticsearch') return { id: (await client.request('POST', `/${path}/_pit`, undefined, { keep_alive: PIT_KEEP_ALIVE })).id };
    if (client.pointInTime === 'opensearch') return { id: (await client.request('POST', `/${path}/_search/point_in_time`, undefined, { keep_alive: PIT_KEEP_ALIVE })).pit_id };
    return { problem: 'the engine has no point in time to keep what this run read' };
  } catch (err) {
    return { problem: `no point in time could be opened to keep what this run read (${(err as Error).message})` };
  }
}

async function closePointInTime(client: EngineClient, id: string): Promise<void> {
  const request = client.pointInTime === 'elasticsearch' ? client.request('DELETE', '/_pit', { id }) : client.request('DELETE', '/_search/point_in_time', { pit_id: [id] });
  await request.catch(() => undefined);
}
