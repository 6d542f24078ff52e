// Template tokens kept for an index (src/indices/template-store.ts) on the real engines: kept in
// near-dup-templates for every index an alias names and read back to the same set, the index's `_meta` left
// as it was; a set not there or edited named with what to do; a set an earlier version kept in `_meta` still
// read; two stores at once (held by a relay until both have read what is there) both kept, and two draws of
// one request meeting at one set.
import { expect, it } from 'vitest';
import { connect } from '../../src/engine/client.js';
import { UsageError } from '../../src/errors.js';
import { findTemplate, loadTemplate, storedTemplate, storeTemplate, TEMPLATE_INDEX, TEMPLATES_META_KEY } from '../../src/indices/template-store.js';
import { templateTokens } from '../../src/sketch/template-tokens.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { forEachEngine } from './harness.js';

const drawn = { share: 0.05, minCount: 3, sample: 10_000 };
const big = templateTokens(Array.from({ length: 10_000 }, (_, i) => Math.imul(i + 7, 0x9e3779b1) >>> 0), drawn);
const small = templateTokens([5, 6, 7], { ...drawn, share: 0.1 });
const draw = (share: number) => ({ condenser: 'white-space::xxh3::256', sampleAsked: 1000, share, minCount: 3 });

/** Holds every write until a second one comes, then lets both go: two stores read before either writes. */
function pairWrites(proxy: FaultProxy): void {
  let waiting: Array<() => void> = [];
  proxy.decide = (request) => {
    const write = request.method === 'PUT' || (request.method === 'POST' && !/\/_(search|mget)$/.test(request.path));
    if (!write) return 'pass';
    const held = new Promise<void>((resolve) => waiting.push(resolve));
    if (waiting.length === 2) {
      for (const release of waiting) release();
      waiting = [];
    }
    return { holdUntil: held };
  };
}

forEachEngine('template store', (ctx) => {
  it('keeps a set of 10,000 hashes for every index of an alias, reads it back, and leaves _meta as it was', async () => {
    const a = ctx.index('tpl-a'), b = ctx.index('tpl-b'), alias = ctx.index('tpl-alias');
    await ctx.client.createIndex(a, { mappings: { _meta: { owner: 'team' }, properties: { text: { type: 'text' } } } });
    await ctx.client.createIndex(b);
    await ctx.client.request('POST', '/_aliases', { actions: [{ add: { index: a, alias } }, { add: { index: b, alias } }] });
    expect(await storeTemplate(ctx.client, alias, big)).toEqual(big);
    await storeTemplate(ctx.client, alias, small);
    expect(await loadTemplate(ctx.client, alias, big.digest)).toEqual(big);
    expect(await loadTemplate(ctx.client, b, small.digest)).toEqual(small);
    expect((await ctx.client.getMapping(a))[a].mappings._meta).toEqual({ owner: 'team' });
    const kept = await ctx.client.request('GET', `/${TEMPLATE_INDEX}/_settings`, undefined, { expand_wildcards: 'all' });
    expect(kept[TEMPLATE_INDEX].settings.index.hidden).toBe('true');
  });

  it('says when the set is not there, or is not that set any more', async () => {
    const index = ctx.index('tpl-missing');
    await ctx.client.createIndex(index);
    const missing = loadTemplate(ctx.client, index, small.digest);
    await expect(missing).rejects.toThrow(UsageError);
    await expect(missing).rejects.toThrow(`${TEMPLATE_INDEX} keeps no such set for "${index}"`);
    await storeTemplate(ctx.client, index, small);
    const [uuid] = await ctx.client.indexUuids(index);
    await ctx.client.request('POST', `/${TEMPLATE_INDEX}/_update/${uuid}.set-${small.digest}`, { doc: { count: 2 } }, { refresh: 'true' });
    await expect(loadTemplate(ctx.client, index, small.digest)).rejects.toThrow(`the template tokens ${small.digest} in ${TEMPLATE_INDEX} for "${index}" are not that set any more`);
  });

  it('still reads a set an earlier version kept in the mapping', async () => {
    const index = ctx.index('tpl-legacy');
    const stored = { ...storedTemplate(small, { condenser: 'white-space::xxh3::256', sampleAsked: 1000 }) };
    await ctx.client.createIndex(index, { mappings: { _meta: { [TEMPLATES_META_KEY]: { [small.digest]: stored } } } });
    expect(await loadTemplate(ctx.client, index, small.digest)).toEqual(small);
    expect(await findTemplate(ctx.client, index, draw(0.1))).toEqual(small);
    expect(await findTemplate(ctx.client, index, draw(0.05))).toBeUndefined();
  });

  it('keeps both sets of two stores at once, and gives two draws of one request the first one kept', async () => {
    const proxy = new FaultProxy(ctx.engine.url);
    const relayed = await connect({ ...ctx.connection, url: await proxy.start() });
    ctx.cleanup(async () => {
      await relayed.close();
      await proxy.stop();
    });
    const index = ctx.index('tpl-race');
    await ctx.client.createIndex(index, { mappings: { _meta: { owner: 'team' } } });
    pairWrites(proxy);
    const ofSmall = { condenser: 'white-space::xxh3::256', sampleAsked: 1000 };
    await Promise.all([storeTemplate(relayed, index, big, ofSmall), storeTemplate(relayed, index, small, ofSmall)]);
    expect(proxy.injected.held).toBeGreaterThanOrEqual(2);
    expect(await loadTemplate(ctx.client, index, big.digest)).toEqual(big);
    expect(await loadTemplate(ctx.client, index, small.digest)).toEqual(small);
    expect((await ctx.client.getMapping(index))[index].mappings._meta).toEqual({ owner: 'team' });
    // The same request drawn twice at once (another set each, as from documents that changed between): one kept, both given it.
    const other = templateTokens([8, 9, 10], small);
    const both = await Promise.all([storeTemplate(relayed, index, other, ofSmall), storeTemplate(relayed, index, templateTokens([11, 12], small), ofSmall)]);
    expect(both[0].digest).toBe(both[1].digest);
    expect(await findTemplate(ctx.client, index, draw(0.1))).toEqual(both[0]);
  });
});
