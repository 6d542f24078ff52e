// The proxy's writes to a data stream (a stream takes only `create`): every form a client writes one with
// (PUT _doc/{id}?op_type=create, PUT _create/{id}, POST _doc with and without op_type=create, _bulk create,
// _bulk index with op_type create) is signed and stored in the backing index; an `index` the stream refuses
// and a create whose id is taken come back as the engine gives them, and are not counted as signed.
import { expect, it } from 'vitest';
import { startProxy } from '../../src/proxy/server.js';
import { dataStream, forEachEngine } from './harness.js';

forEachEngine('proxy writes to a data stream', (ctx) => {
  it('every create form is signed and stored; the refused ones come back as the engine answers them', async () => {
    const stream = await dataStream(ctx, 'proxy-stream', { priority: 700 });
    const proxy = await startProxy({ upstream: { url: ctx.engine.url }, host: '127.0.0.1', port: 0, index: `${stream}*`, fields: ['text'], prefix: 'near_dup', signer: {}, maxChars: 10_000_000, onError: 'pass', threads: 1, maxUpstreamBytes: 16 * 1024 * 1024, warn: () => undefined });
    try {
      const doc = (text: string) => JSON.stringify({ '@timestamp': '2026-01-01T00:00:00Z', text });
      const send = async (method: string, target: string, body: string, type = 'application/json') => {
        const answer = await fetch(`${proxy.url}${target}`, { method, headers: { 'content-type': type }, body });
        return { status: answer.status, json: (await answer.json()) as any };
      };
      const created = [
        await send('PUT', `/${stream}/_doc/a1?op_type=create`, doc('alpha bravo charlie one')),
        await send('PUT', `/${stream}/_create/a2`, doc('alpha bravo charlie two')),
        await send('POST', `/${stream}/_doc`, doc('alpha bravo charlie three')),
        await send('POST', `/${stream}/_doc?op_type=create`, doc('alpha bravo charlie four')),
      ];
      for (const answer of created) expect(answer.status, JSON.stringify(answer.json)).toBe(201);
      for (const answer of created) expect(answer.json._index).toMatch(/^\.ds-/);
      const overwrite = await send('PUT', `/${stream}/_doc/a1`, doc('alpha bravo charlie changed'));
      expect(overwrite.status).toBe(400);
      expect(JSON.stringify(overwrite.json)).toContain('only write ops with an op_type of create are allowed in data streams');
      const lines = [
        { create: { _index: stream, _id: 'b1' } },
        doc('delta echo foxtrot one'),
        { index: { _index: stream, _id: 'b2', op_type: 'create' } },
        doc('delta echo foxtrot two'),
        { create: { _index: stream, _id: 'a2' } },
        doc('delta echo foxtrot taken'),
      ];
      const bulk = await send('POST', '/_bulk?refresh=true', `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`, 'application/x-ndjson');
      expect(bulk.json.items.map((i: any) => (Object.values(i)[0] as any).status)).toEqual([201, 201, 409]);
      await ctx.client.refresh(stream);
      const hits = (await ctx.client.search(stream, { size: 100, query: { match_all: {} } })).hits.hits;
      expect(hits).toHaveLength(6);
      for (const hit of hits) expect((hit._source as any).near_dup?.params, hit._id).toEqual(expect.any(String));
      expect(hits.find((h) => h._id === 'a2')?._source).toMatchObject({ text: 'alpha bravo charlie two' });
      const stats = (await (await fetch(`${proxy.url}/_near_dup/stats`)).json()) as any;
      expect(stats.documents.signed).toBe(6);
    } finally {
      await proxy.close();
    }
  });
});
