// proxy --template-share on the real engines: a document written through the proxy to an index annotated
// with --template-share is signed with the set the index keeps (the same params, core= the same digest), found
// by `similar` by its text; an index that keeps no set is signed without, said once with the fix.
import { beforeAll, expect, it } from 'vitest';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { loadTemplate } from '../../src/indices/template-store.js';
import { findSimilar } from '../../src/jobs/similar.js';
import { type RunningProxy, startProxy } from '../../src/proxy/server.js';
import { createSigner, resolveSignerSettings } from '../../src/signature.js';
import { minhashValues } from '../../src/sketch/lean-minhash.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { templatedPages } from '../support/templated-pages.js';
import { forEachEngine } from './harness.js';

const DOCS = templatedPages(40);
const NEW_PAGE = templatedPages(1, 'n', 500)[0];

forEachEngine('proxy --template-share', (ctx) => {
  const index = ctx.index('tpl-proxy');
  const bare = ctx.index('tpl-proxy-bare');
  const warnings: string[] = [];
  let proxy: RunningProxy;
  let annotated: string;

  /** The proxy's options for this block's indices, to `url`. */
  const proxyOptions = (url: string, warn: (line: string) => void) => ({
    upstream: { url },
    host: '127.0.0.1',
    port: 0,
    index: `${index},${bare}`,
    fields: ['text'],
    prefix: 'near_dup',
    signer: {},
    template: { share: 0.05, sample: 1000 },
    maxChars: 10_000_000,
    onError: 'reject' as const,
    threads: 1,
    maxUpstreamBytes: 16 * 1024 * 1024,
    warn,
  });

  beforeAll(async () => {
    const lines = DOCS.flatMap((d) => [{ index: { _index: index, _id: d.id } }, { text: d.text }]);
    expect((await ctx.client.bulk(lines)).errors).toBe(false);
    await ctx.client.refresh(index);
    await annotateIndex(ctx.client, { index, fields: ['text'], template: { share: 0.05, sample: 1000 } });
    const stored = await ctx.client.search(index, { size: 1, _source: ['near_dup.params'] });
    annotated = (stored.hits.hits[0]._source as { near_dup: { params: string } }).near_dup.params;
    proxy = await startProxy(proxyOptions(ctx.engine.url, (line) => warnings.push(line)));
    ctx.cleanup(() => proxy.close());
  });

  async function put(path: string, body: string, type = 'application/json', through = proxy): Promise<number> {
    const answer = await fetch(`${through.url}${path}`, { method: path.endsWith('_bulk?refresh=true') ? 'POST' : 'PUT', headers: { 'content-type': type }, body });
    return answer.status;
  }

  it('signs a document and a bulk item with the set the index keeps, as annotate signed the index', async () => {
    expect(annotated).toBe(`${resolveSignerSettings().params};core=${annotated.split(';core=')[1]}`);
    expect(await put(`/${index}/_doc/${NEW_PAGE.id}?refresh=true`, JSON.stringify({ text: NEW_PAGE.text }))).toBe(201);
    const copy = { id: 'n500-copy', text: `${NEW_PAGE.text.replace('page500word3 ', 'altered ')}` };
    const bulk = `${JSON.stringify({ index: { _index: index, _id: copy.id } })}\n${JSON.stringify({ text: copy.text })}\n`;
    expect(await put('/_bulk?refresh=true', bulk, 'application/x-ndjson')).toBe(200);
    const template = await loadTemplate(ctx.client, index, annotated.split(';core=')[1]);
    const signer = createSigner({ template });
    for (const doc of [NEW_PAGE, copy]) {
      const source = (await ctx.client.request('GET', `/${index}/_source/${doc.id}`)) as { near_dup: { params: string; minhash: string } };
      expect(source.near_dup.params).toBe(annotated);
      expect(Array.from(minhashValues(source.near_dup.minhash))).toEqual(Array.from(signer(doc.text).minhash));
    }
    const similar = await findSimilar(ctx.client, { index, text: NEW_PAGE.text, minSimilarity: 0.5, method: 'minhash' });
    expect(similar.hits.map((h) => h.id).sort()).toEqual([copy.id, NEW_PAGE.id].sort());
    expect(warnings.filter((w) => w.includes(index) && !w.includes(bare))).toEqual([]);
  });

  it('signs the documents of an index that keeps no set without one, and says so once with the fix', async () => {
    await ctx.client.createIndex(bare);
    for (const [i, doc] of DOCS.slice(0, 3).entries()) expect(await put(`/${bare}/_doc/${i}?refresh=true`, JSON.stringify({ text: doc.text }))).toBe(201);
    const source = (await ctx.client.request('GET', `/${bare}/_source/0`)) as { near_dup: { params: string } };
    expect(source.near_dup.params).toBe(resolveSignerSettings().params);
    const said = warnings.filter((w) => w.includes(bare));
    expect(said).toEqual([
      `index "${bare}" keeps no template tokens for --template-share 0.05 (sample 1000, condenser ${resolveSignerSettings().condenser}): its documents are signed without; near-dup annotate --index ${bare} --field text --template-share 0.05 --template-sample 1000 --force draws one and signs the index again`,
    ]);
  });

  it('answers a write whose set could not be looked up with the engine\'s status, and looks it up again for the next', async () => {
    const relay = new FaultProxy(ctx.engine.url);
    const url = await relay.start();
    ctx.cleanup(() => relay.stop());
    // The store's first request is answered 429 (the cluster busy, or a client without credentials: 401).
    let refused = 0;
    relay.decide = (request) => (request.path.startsWith('/near-dup-templates/') && refused++ === 0 ? { status: 429 } : 'pass');
    const relayed = await startProxy(proxyOptions(url, () => undefined));
    ctx.cleanup(() => relayed.close());
    const page = templatedPages(1, 'r', 600)[0];
    const first = await fetch(`${relayed.url}/${index}/_doc/${page.id}?refresh=true`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: page.text }) });
    expect(first.status).toBe(429);
    expect(await first.text()).toContain(`template tokens of \\"${index}\\"`);
    expect(relay.injected.status429).toBe(1);
    // Nothing was written, and the next write (within the 30 s a set is taken as known) is signed with the set.
    expect(await put(`/${index}/_doc/${page.id}?refresh=true`, JSON.stringify({ text: page.text }), 'application/json', relayed)).toBe(201);
    const source = (await ctx.client.request('GET', `/${index}/_source/${page.id}`)) as { near_dup: { params: string } };
    expect(source.near_dup.params).toBe(annotated);
  });
});
