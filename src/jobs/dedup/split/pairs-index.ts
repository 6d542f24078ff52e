// The pairs index (--pairs-index NAME), where the shares of a split dedup write their pairs and progress, in
// the cluster they all reach; only this code reads or writes it. It is near-dup's own (a strict mapping that
// indexes only what a share is found by; an index of the name near-dup did not make is refused untouched).
// Refresh is off while shares write (their documents are read by id, in real time); the final step restores it.
import type { EngineClient } from '../../../engine/client.js';
import { EngineResponseError } from '../../../engine/errors.js';
import { scanIndex } from '../../../engine/scan.js';
import { UserError } from '../../../errors.js';
import { type BulkOperation, BulkWriter } from '../../bulk-writer.js';
import { forCount, plural } from '../../../plural.js';
import { pageId, type SharePlan } from './plan.js';

/** What `_meta` says of an index near-dup made for pairs. */
const META = { near_dup: 'pairs', version: 1 };

/** Pages read by id in one request. */
const PAGES_PER_READ = 20;

/** A page a share's marker lists: its id, band and place in the band (the band's last or not), and its _source. */
export interface ListedPage {
  id: string;
  band: number;
  page: number;
  last: boolean;
  source: unknown;
}

/** The settings and mapping of a new pairs index. */
export function pairsIndexBody(): Record<string, unknown> {
  return {
    settings: { index: { number_of_shards: 1, refresh_interval: '-1' } },
    mappings: {
      dynamic: 'strict',
      _meta: META,
      properties: {
        kind: { type: 'keyword' },
        run: { type: 'keyword' },
        index: { type: 'keyword' },
        share: { type: 'integer' },
        shares: { type: 'integer', index: false },
        band: { type: 'integer' },
        page: { type: 'integer', index: false },
        count: { type: 'integer', index: false },
        identity: { type: 'object', enabled: false },
        progress: { type: 'object', enabled: false },
        pairs: { type: 'object', enabled: false },
      },
    },
  };
}

/** The pairs index of a split run, opened (made if none, refused if not near-dup's). */
export class PairsIndex {
  private constructor(
    private readonly client: EngineClient,
    readonly name: string,
  ) {}

  /** The pairs index, made if there is none (two shares may make it at once), refused if it is not near-dup's. */
  static async open(client: EngineClient, name: string): Promise<PairsIndex> {
    if (!(await client.indexExists(name))) {
      try {
        await client.createIndex(name, pairsIndexBody());
      } catch (err) {
        // Another share made it between the two requests: checked below like any existing one.
        if (!(err instanceof EngineResponseError && /already_exists/.test(err.type ?? ''))) throw err;
      }
    }
    await PairsIndex.requireOurs(client, name);
    const pairs = new PairsIndex(client, name);
    await pairs.setRefresh('-1');
    return pairs;
  }

  /** An existing pairs index, for the final step (which makes none). */
  static async existing(client: EngineClient, name: string): Promise<PairsIndex> {
    if (!(await client.indexExists(name))) {
      throw new UserError(`--pairs-index "${name}" does not exist: no share has run; run each share first (near-dup dedup --index INDEX --share K/N --pairs-index ${name})`);
    }
    await PairsIndex.requireOurs(client, name);
    return new PairsIndex(client, name);
  }

  private static async requireOurs(client: EngineClient, name: string): Promise<void> {
    const mappings = await client.getMapping(name);
    const concrete = Object.keys(mappings);
    const meta = concrete.length === 1 ? (mappings[concrete[0]].mappings?._meta as Record<string, unknown> | undefined) : undefined;
    if (concrete.length !== 1 || meta?.near_dup !== META.near_dup) {
      throw new UserError(
        `--pairs-index "${name}" is ${concrete.length === 1 ? 'an index' : `${concrete.length} indices`} that near-dup did not make for pairs (no _meta near_dup: pairs in its mapping); give the name of a new index (nothing was written to "${name}")`,
      );
    }
  }

  /** A document's _source by id, read in real time (no refresh needed); undefined when there is none. */
  async source(id: string): Promise<unknown> {
    return (await this.client.get(this.name, id))?._source;
  }

  /** Writes a document whole under its id (the same id overwrites). */
  async put(id: string, document: Record<string, unknown>): Promise<void> {
    await this.client.request('PUT', `/${encodeURIComponent(this.name)}/_doc/${encodeURIComponent(id)}`, document);
  }

  /** Writes documents whole, in bulk; a document the engine did not take fails the call, named. */
  async putAll(documents: ReadonlyArray<{ id: string; document: Record<string, unknown> }>): Promise<void> {
    const operations = documents.map(({ id, document }) => ({ id, action: { index: { _index: this.name, _id: id } }, body: document }));
    await this.bulk(operations, (count) => `${plural(count, 'document')} ${forCount(count, 'was', 'were')} not written to the pairs index "${this.name}"`);
  }

  /** The pages a share's marker lists (`pagesPerBand`), read by id in order, a few per request (`source` undefined: none). */
  async *pages(run: string, share: SharePlan, pagesPerBand: readonly number[]): AsyncGenerator<ListedPage> {
    const listed = pagesPerBand.flatMap((count, band) => Array.from({ length: count }, (_, page) => ({ band, page, last: page === count - 1, id: pageId(run, share, band, page) })));
    for (let i = 0; i < listed.length; i += PAGES_PER_READ) {
      const batch = listed.slice(i, i + PAGES_PER_READ);
      const found = await this.client.mget(batch.map(({ id }) => ({ id, location: { index: this.name } })), true);
      const byId = new Map(found.map((d) => [d._id, d._source]));
      for (const page of batch) yield { ...page, source: byId.get(page.id) };
    }
  }

  /**
   * Deletes a share's pages from `fromBand` on (left by an attempt that was killed): found by a scan, deleted
   * by id in bulk (delete-by-query lives in a module not every cluster has).
   */
  async deletePages(run: string, share: number, fromBand: number): Promise<void> {
    await this.client.refresh(this.name);
    const ids: string[] = [];
    const pages = scanIndex(this.client, { index: this.name, query: this.pagesQuery(run, share, fromBand), sourceIncludes: [], pageSize: 1000, pointInTime: this.client.pointInTime });
    for await (const page of pages) for (const hit of page) ids.push(hit._id);
    if (ids.length === 0) return;
    const operations = ids.map((id) => ({ id, action: { delete: { _index: this.name, _id: id } } }));
    await this.bulk(operations, (count) => `${plural(count, 'page')} left by an earlier attempt could not be deleted from "${this.name}"`);
  }

  /** Pages of a share the engine holds, counted after a refresh. */
  async countPages(run: string, share: number): Promise<number> {
    await this.client.refresh(this.name);
    return this.client.count(this.name, this.pagesQuery(run, share, 0));
  }

  /** Deletes a share's marker (a share whose pairs failed their checks does its work again). */
  async deleteMarker(id: string): Promise<void> {
    await this.client.request('DELETE', `/${encodeURIComponent(this.name)}/_doc/${encodeURIComponent(id)}`, undefined, { refresh: 'true' }).catch((err) => {
      if (!(err instanceof EngineResponseError && err.statusCode === 404)) throw err;
    });
  }

  /** The markers of shares of `index` the pairs index holds (any run), after a refresh: raw, untrusted. */
  async markersOf(index: string): Promise<unknown[]> {
    await this.client.refresh(this.name);
    const response = await this.client.search(this.name, { size: 100, query: { bool: { filter: [{ term: { kind: 'share' } }, { term: { index } }] } } });
    return response.hits.hits.map((h) => h._source);
  }

  /** Sets refresh_interval ('-1' while shares write; null: the engine's default again). */
  async setRefresh(value: '-1' | null): Promise<void> {
    await this.client.request('PUT', `/${encodeURIComponent(this.name)}/_settings`, { index: { refresh_interval: value } });
  }

  /** Operations sent in bulk; when any fails for good, a refusal: how many (`failed`), the first, and the way out. */
  private async bulk(operations: BulkOperation[], failed: (count: number) => string): Promise<void> {
    const failures: string[] = [];
    const writer = new BulkWriter({
      send: (ndjson) => this.client.bulkNdjson(ndjson),
      maxOperations: 50,
      concurrency: 2,
      retries: this.client.retries,
      // (A page deleted that is gone already is what was asked for.)
      onFailure: (op, reason, status) => (status === 404 && 'delete' in op.action ? undefined : failures.push(`${op.id}: ${reason}`)),
    });
    for (const operation of operations) await writer.add(operation);
    await writer.flush();
    if (failures.length > 0) throw new UserError(`${failed(failures.length)} (first: ${failures[0]}); run the same command again`);
  }

  private pagesQuery(run: string, share: number, fromBand: number): Record<string, unknown> {
    return { bool: { filter: [{ term: { kind: 'pairs' } }, { term: { run } }, { term: { share } }, { range: { band: { gte: fromBand } } }] } };
  }
}
