// Issue 48, on real engines: the proxy's limits against clients that would take it over. Slow writers
// holding every write slot (a byte a second), large documents all at once (memory), and bodies in a coding
// the proxy cannot read, which the engine would index unsigned or fail on. What must hold: a slow client
// is answered 408 and its slot freed within the body timeouts, and one address cannot take every slot;
// the bodies held at once stay within --max-buffered-mb (a request past it waits, or is answered 413 or
// 429 naming the setting); and a write the proxy signs is never sent on in a coding it could not read.
import zlib from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ProxyOptions, type RunningProxy, startProxy } from '../../src/proxy/server.js';
import { rawRequest } from '../support/raw-request.js';
import { type EngineContext, forEachEngine } from './harness.js';

const ND = { 'content-type': 'application/x-ndjson' };
const JSON_TYPE = { 'content-type': 'application/json' };
const ndjson = (lines: unknown[]) => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;

/** The ids of the documents of `index`, and those without the near-dup fields. */
async function stored(ctx: EngineContext, index: string): Promise<{ ids: string[]; unsigned: string[] }> {
  await ctx.client.request('POST', `/${index}/_refresh`).catch(() => undefined);
  const found = await ctx.client.request<any>('POST', `/${index}/_search`, { size: 100, query: { match_all: {} } }, { ignore_unavailable: true, allow_no_indices: true });
  const hits = found.hits.hits as Array<{ _id: string; _source: Record<string, unknown> }>;
  return { ids: hits.map((h) => h._id).sort(), unsigned: hits.filter((h) => h._source.near_dup === undefined).map((h) => h._id).sort() };
}

forEachEngine('proxy limits: codings', (ctx) => {
  const index = ctx.index('codings');
  let proxy: RunningProxy;

  /** Signs "text" of `index`; --on-error pass, the default, which sends on what it cannot sign. */
  const options = (extra: Partial<ProxyOptions> = {}): ProxyOptions => ({
    upstream: { url: ctx.engine.url },
    host: '127.0.0.1',
    port: 0,
    index,
    fields: ['text'],
    prefix: 'near_dup',
    signer: {},
    maxChars: 1e7,
    threads: 1,
    warn: () => undefined,
    onError: 'pass',
    maxUpstreamBytes: 16 * 1024 * 1024,
    ...extra,
  });

  beforeAll(async () => {
    proxy = await startProxy(options());
    await ctx.client.request('PUT', `/${index}`, {});
    // A document for the update path to change.
    expect((await rawRequest(proxy.url, 'PUT', `/${index}/_doc/u?refresh=true`, JSON_TYPE, JSON.stringify({ text: 'a document the update path changes' }))).status).toBe(201);
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it('a write in a coding the proxy cannot decode is refused (415 naming those it takes), on every path it signs, with --on-error pass too; nothing lands unsigned', async () => {
    const writes = (id: string) => [
      ['POST', '/_bulk', ND, ndjson([{ index: { _index: index, _id: `${id}-bulk` } }, { text: 'a bulk item' }])],
      ['POST', `/${index}/_bulk`, ND, ndjson([{ create: { _id: `${id}-pathbulk` } }, { text: 'a bulk item under its index' }])],
      ['PUT', `/${index}/_doc/${id}-doc`, JSON_TYPE, JSON.stringify({ text: 'a document' })],
      ['PUT', `/${index}/_create/${id}-create`, JSON_TYPE, JSON.stringify({ text: 'a created document' })],
      ['POST', `/${index}/_update/u`, JSON_TYPE, JSON.stringify({ doc: { text: `an update in ${id}` } })],
    ] as const;
    for (const coding of ['bogus', 'zstd', 'compress', 'gzip, gzip']) {
      const id = coding.replace(/\W+/g, '');
      for (const [method, path, type, body] of writes(id)) {
        const answer = await rawRequest(proxy.url, method, path, { ...type, 'content-encoding': coding }, body);
        expect([coding, method, path, answer.status, answer.json.error?.reason]).toEqual([
          coding,
          method,
          path,
          415,
          expect.stringMatching(/Content-Encoding .* takes identity, gzip, x-gzip, deflate, x-deflate and br/),
        ]);
      }
    }
    const { ids, unsigned } = await stored(ctx, index);
    expect(ids).toEqual(['u']);
    expect(unsigned).toEqual([]);
    const doc = await ctx.client.request<any>('GET', `/${index}/_doc/u`);
    expect(doc._source.text).toBe('a document the update path changes');
  });

  it('x-deflate, which the engines decode, is decoded and signed (it went on unsigned)', async () => {
    const body = zlib.deflateSync(ndjson([{ index: { _index: index, _id: 'xdeflate' } }, { text: 'a bulk item sent with x-deflate' }]));
    const answer = await rawRequest(proxy.url, 'POST', '/_bulk?refresh=true', { ...ND, 'content-encoding': 'x-deflate' }, body);
    expect([answer.status, answer.json.errors]).toEqual([200, false]);
    const doc = await ctx.client.request<any>('GET', `/${index}/_doc/xdeflate`);
    expect(doc._source.near_dup).toBeDefined();
  });

  it('a transfer coding other than chunked is refused on any path: passed on, it would be dropped with the hop-by-hop headers', async () => {
    const bulk = ndjson([{ index: { _index: index, _id: 'te' } }, { text: 'a bulk item sent with a transfer coding' }]);
    for (const [method, path, body] of [
      ['POST', '/_bulk', zlib.gzipSync(bulk)],
      ['POST', `/${index}/_search`, zlib.gzipSync(JSON.stringify({ query: { match_all: {} } }))],
    ] as const) {
      const answer = await rawRequest(proxy.url, method, path, { ...ND, 'transfer-encoding': 'gzip, chunked' }, body);
      expect([path, answer.status, answer.json.error?.reason]).toEqual([path, 501, expect.stringMatching(/Transfer-Encoding "gzip, chunked"/)]);
    }
    expect((await stored(ctx, index)).ids).not.toContain('te');
  });

  it('a request the proxy only passes on keeps its coding, and a cluster that drops the connection over it is said', async () => {
    const gz = await rawRequest(proxy.url, 'POST', `/${index}/_search`, { ...JSON_TYPE, 'content-encoding': 'gzip' }, zlib.gzipSync(JSON.stringify({ query: { ids: { values: ['u'] } } })));
    expect([gz.status, gz.json.hits?.hits?.length]).toEqual([200, 1]);
    const zstd = await rawRequest(proxy.url, 'POST', `/${index}/_search`, { ...JSON_TYPE, 'content-encoding': 'zstd' }, JSON.stringify({ query: { match_all: {} } }));
    // Elasticsearch ignores a coding it does not know; OpenSearch drops the connection.
    if (zstd.status === 502) expect(zstd.json.error.reason).toMatch(/Content-Encoding "zstd"/);
    else expect(zstd.status).toBe(200);
  });
});
