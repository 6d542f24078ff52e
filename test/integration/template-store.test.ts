// Template tokens kept in an index's mapping (src/indices/template-store.ts) on the real engines: stored on
// every index an alias names, read back to the same set, what else `_meta` held kept, a set not there or
// edited named with what to do.
import { expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { loadTemplate, storeTemplate, TEMPLATES_META_KEY } from '../../src/indices/template-store.js';
import { templateTokens } from '../../src/sketch/template-tokens.js';
import { forEachEngine } from './harness.js';

const drawn = { share: 0.05, minCount: 3, sample: 10_000 };
const big = templateTokens(Array.from({ length: 10_000 }, (_, i) => Math.imul(i + 7, 0x9e3779b1) >>> 0), drawn);
const small = templateTokens([5, 6, 7], { ...drawn, share: 0.1 });

forEachEngine('template store', (ctx) => {
  it('keeps a set of 10,000 hashes on every index of an alias beside what _meta held, and reads it back', async () => {
    const a = ctx.index('tpl-a'), b = ctx.index('tpl-b'), alias = ctx.index('tpl-alias');
    await ctx.client.createIndex(a, { mappings: { _meta: { owner: 'team' }, properties: { text: { type: 'text' } } } });
    await ctx.client.createIndex(b);
    await ctx.client.request('POST', '/_aliases', { actions: [{ add: { index: a, alias } }, { add: { index: b, alias } }] });
    await storeTemplate(ctx.client, alias, big);
    await storeTemplate(ctx.client, alias, small);
    expect(await loadTemplate(ctx.client, alias, big.digest)).toEqual(big);
    expect(await loadTemplate(ctx.client, b, small.digest)).toEqual(small);
    const meta = (await ctx.client.getMapping(a))[a].mappings._meta;
    expect(meta.owner).toBe('team');
    expect(Object.keys(meta[TEMPLATES_META_KEY]).sort()).toEqual([big.digest, small.digest].sort());
  });

  it('says when the set is not there, or is not that set any more', async () => {
    const index = ctx.index('tpl-missing');
    await ctx.client.createIndex(index);
    const missing = loadTemplate(ctx.client, index, small.digest);
    await expect(missing).rejects.toThrow(UsageError);
    await expect(missing).rejects.toThrow(`no mapping of "${index}" keeps them`);
    await storeTemplate(ctx.client, index, small);
    const meta = (await ctx.client.getMapping(index))[index].mappings._meta;
    meta[TEMPLATES_META_KEY][small.digest].count = 2;
    await ctx.client.putMapping(index, { _meta: meta });
    await expect(loadTemplate(ctx.client, index, small.digest)).rejects.toThrow(`the template tokens ${small.digest} in the mapping of "${index}"`);
  });
});
