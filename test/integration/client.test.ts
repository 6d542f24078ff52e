// The engine client against real engines: detection, documents, bulk item results, point in time,
// scroll, and errors that become one clear line.
import { beforeAll, expect, it } from 'vitest';
import { EngineResponseError } from '../../src/engine/client.js';
import { UserError } from '../../src/errors.js';
import { countMatching, scanIndex } from '../../src/engine/scan.js';
import { forEachEngine } from './harness.js';

forEachEngine('engine client', (ctx) => {
  const index = ctx.index('client');

  beforeAll(async () => {
    await ctx.client.createIndex(index, {
      settings: { number_of_shards: 2, number_of_replicas: 0 },
      mappings: { properties: { n: { type: 'integer' }, tag: { type: 'keyword' } } },
    });
    const lines = Array.from({ length: 25 }, (_, i) => [{ index: { _index: index, _id: `doc-${i}` } }, { n: i, tag: i % 2 ? 'odd' : 'even' }]).flat();
    expect((await ctx.client.bulk(lines, { refresh: 'true' })).errors).toBe(false);
  });

  it('detects flavour and version from the cluster', () => {
    expect(ctx.client.info.flavour).toBe(ctx.engine.flavour);
    expect(ctx.client.info.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(ctx.client.info.major).toBeGreaterThanOrEqual(ctx.engine.flavour === 'opensearch' ? 1 : 7);
  });

  it('scans with a point in time exactly where the engine has one (OpenSearch 2.4+, Elasticsearch 7.10+)', async () => {
    // Ask the engine itself, not a version table: open a point in time the way each flavour does.
    const path = ctx.engine.flavour === 'opensearch' ? `/${index}/_search/point_in_time` : `/${index}/_pit`;
    const opened = await ctx.client.request('POST', path, undefined, { keep_alive: '1m' }).then(
      () => true,
      () => false,
    );
    expect(ctx.client.pointInTime).toBe(opened ? ctx.engine.flavour : false);
  });

  it('reports bulk results item by item', async () => {
    const result = await ctx.client.bulk(
      [
        { index: { _index: index, _id: 'ok' } },
        { n: 1 },
        { index: { _index: index, _id: 'bad' } },
        { n: 'not a number' },
        { update: { _index: index, _id: 'missing' } },
        { doc: { n: 2 } },
        { delete: { _index: index, _id: 'ok' } },
      ],
      { refresh: 'true' },
    );
    expect(result.errors).toBe(true);
    expect(result.items.map((i) => [i.action, i.id, i.status])).toEqual([
      ['index', 'ok', 201],
      ['index', 'bad', 400],
      ['update', 'missing', 404],
      ['delete', 'ok', 200],
    ]);
    expect(result.items[1].error?.type).toMatch(/parsing_exception/);
    expect(result.items[2].error?.type).toBe('document_missing_exception');
    expect(result.items[0].error).toBeUndefined();
  });

  it('gets, counts and searches with the same JSON on both engines', async () => {
    expect((await ctx.client.get<{ n: number }>(index, 'doc-3'))?._source).toEqual({ n: 3, tag: 'odd' });
    expect(await ctx.client.get(index, 'no-such-id')).toBeUndefined();
    expect(await ctx.client.count(index)).toBe(25);
    expect(await ctx.client.count(index, { term: { tag: 'even' } })).toBe(13);
    const response = await ctx.client.search<{ n: number }>(index, {
      size: 3,
      query: { range: { n: { gte: 10 } } },
      sort: [{ n: 'asc' }],
      aggs: { tags: { terms: { field: 'tag', min_doc_count: 2 } } },
    });
    expect(response.hits.hits.map((h) => h._source?.n)).toEqual([10, 11, 12]);
    expect(response.hits.total).toEqual({ value: 15, relation: 'eq' });
    expect(response.aggregations?.tags.buckets.map((b: { key: string; doc_count: number }) => [b.key, b.doc_count])).toEqual([
      ['even', 8],
      ['odd', 7],
    ]);
  });

  it('scans every document once, page by page (point in time on Elasticsearch, scroll elsewhere), and in slices', async () => {
    const read = async (slice?: { id: number; max: number }) => {
      const ids: string[] = [];
      for await (const page of scanIndex(ctx.client, { index, pageSize: 10, sourceIncludes: [], slice, pointInTime: ctx.client.pointInTime })) ids.push(...page.map((h) => h._id));
      return ids;
    };
    const all = await read();
    expect(all).toHaveLength(25);
    expect(new Set(all).size).toBe(25);
    const parts = [...(await read({ id: 0, max: 2 })), ...(await read({ id: 1, max: 2 }))];
    expect(parts.sort()).toEqual([...all].sort());
  });

  it('counts the documents of one slice exactly (the count API has no slices)', async () => {
    const query = { match_all: {} };
    const counts = await Promise.all([0, 1, 2].map((id) => countMatching(ctx.client, { index, query, slice: { id, max: 3 } })));
    expect(counts.reduce((a, b) => a + b, 0)).toBe(25);
    expect(await countMatching(ctx.client, { index, query })).toBe(25);
  });

  it('turns a missing index into one line that says what to do', async () => {
    const missing = ctx.index('does-not-exist');
    const error = await ctx.client.search(missing, { query: { match_all: {} } }).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(EngineResponseError);
    expect((error as EngineResponseError).statusCode).toBe(404);
    const described = ctx.client.describe(error, missing);
    expect(described).toBeInstanceOf(UserError);
    expect(described.message).toBe(
      `index "${missing}" does not exist on ${ctx.engine.url}; check the name given to --index, or create it with \`near-dup init --index ${missing}\``,
    );
    expect(await ctx.client.indexExists(missing)).toBe(false);
    expect(await ctx.client.indexExists(index)).toBe(true);
    await ctx.client.deleteIndex(missing); // missing is fine
  });
});
