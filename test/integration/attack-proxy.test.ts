// Issue 37, item 7, on real engines: requests a hostile client sends the proxy. The engines route
// `/{anything}/_bulk` as a bulk even when its first segment is no index name (`/_doc/_bulk`, `/_all/_bulk`)
// and write every item that names its own index: with --on-error reject, such items must be signed like any
// other. An action line nested deeper than the engines' JSON reader takes is an unreadable line (400 with
// reject), not a failure of the proxy (500).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rawRequest } from '../support/raw-request.js';
import { type RunningProxy, startProxy } from '../../src/proxy/server.js';
import { forEachEngine } from './harness.js';

const ND = { 'content-type': 'application/x-ndjson' };

const send = rawRequest;

forEachEngine('proxy under attack', (ctx) => {
  const signed = `nd-attack-${ctx.name('bulk').slice('nd-test-'.length)}`;
  let proxy: RunningProxy;

  beforeAll(async () => {
    proxy = await startProxy({ upstream: { url: ctx.engine.url }, host: '127.0.0.1', port: 0, index: 'nd-attack-*', fields: ['text'], prefix: 'near_dup', signer: {}, maxChars: 1e7, threads: 1, warn: () => undefined, onError: 'reject', maxUpstreamBytes: 16 * 1024 * 1024 });
  });
  afterAll(async () => {
    await proxy?.close();
    await ctx.client.request('DELETE', `/${signed}`).catch(() => undefined);
  });

  it('a bulk under a first segment that is no index name has its items signed', async () => {
    for (const [i, first] of ['_doc', '_all', '_anything'].entries()) {
      const body = `${JSON.stringify({ index: { _index: signed, _id: `b${i}` } })}\n${JSON.stringify({ text: `a document written through /${first}/_bulk` })}\n`;
      const answer = await send(proxy.url, 'POST', `/${first}/_bulk?refresh=true`, ND, body);
      expect([answer.status, answer.json.items?.[0]?.index?.status], first).toEqual([200, 201]);
    }
    const found = await ctx.client.request<any>('POST', `/${signed}/_search`, { size: 10, query: { match_all: {} } });
    const hits = found.hits.hits as Array<{ _id: string; _source: Record<string, unknown> }>;
    expect(hits.map((h) => h._id).sort()).toEqual(['b0', 'b1', 'b2']);
    expect(hits.filter((h) => h._source.near_dup === undefined).map((h) => h._id)).toEqual([]);
  });

  it('an action line nested too deep is refused as unreadable, not failed', async () => {
    const deep = `{"index":{"_index":"${signed}","_id":"n1","_source":{"a":${'['.repeat(30_000)}${']'.repeat(30_000)}}}}\n{"text":"nested"}\n`;
    const answer = await send(proxy.url, 'POST', '/_bulk', ND, deep);
    expect(answer.status).toBe(400);
    expect(answer.json.error.reason).toMatch(/cannot read the bulk action on line 1/);
  });
});
