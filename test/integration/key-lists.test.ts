// The SimHash blocks and the containment sample, written as the index maps them: one string of terms in an
// index of the current mapping (text split on white space), a list in one mapped before (keyword), lists
// for an alias over both. Every lookup finds the same documents either way, by the same terms.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { initIndex } from '../../src/indices/init.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { findSimilar } from '../../src/jobs/similar.js';
import { type RunningProxy, startProxy } from '../../src/proxy/server.js';
import { fixtureSample } from '../support/corpus.js';
import { indexDocuments, sourcesById } from '../support/documents.js';
import { forEachEngine } from './harness.js';

const sample = fixtureSample(8, { seed: 11 });
/** The largest family: its first version is the query, the others its near-duplicates. */
const family = [...new Set(sample.map((d) => d.family))].map((f) => sample.filter((d) => d.family === f)).sort((a, b) => b.length - a.length)[0];
/** With an exact copy of the query, which every lookup must find (SimHash distance 0). */
const docs = [...sample, { ...family[0], id: 'copy-of-the-query' }];

/** The mapping near-dup gave indices before the key lists became text. */
const OLDER_KEY_LISTS = { simhash: { type: 'keyword' }, simhash_blocks: { type: 'keyword' }, sample: { type: 'keyword', doc_values: false } };

type Form = 'string' | 'list';
const formOf = (value: unknown): Form | 'other' => (typeof value === 'string' ? 'string' : Array.isArray(value) ? 'list' : 'other');

/** How every document of `index` holds its two key lists. */
async function forms(client: Parameters<typeof sourcesById>[0], index: string): Promise<Set<string>> {
  const stored = await sourcesById(client, index);
  return new Set([...stored.values()].map((s) => `${formOf(s.near_dup?.simhash_blocks)}/${formOf(s.near_dup?.sample)}`));
}

forEachEngine('key lists written as the index maps them', (ctx) => {
  const current = ctx.index('keys-current');
  const older = ctx.index('keys-older');
  const alias = ctx.name('keys-both');
  let proxy: RunningProxy;

  beforeAll(async () => {
    expect(family.length).toBeGreaterThanOrEqual(3);
    await indexDocuments(ctx.client, current, docs.map((d) => ({ id: d.id, text: d.text })));
    await ctx.client.createIndex(older, { mappings: { properties: { text: { type: 'text' }, near_dup: { properties: OLDER_KEY_LISTS } } } });
    await indexDocuments(ctx.client, older, docs.map((d) => ({ id: d.id, text: d.text })));
    proxy = await startProxy({ upstream: { url: ctx.engine.url }, host: '127.0.0.1', port: 0, index: 'nd-test-keys-*', fields: ['text'], prefix: 'near_dup', signer: {}, maxChars: 1e7, onError: 'reject', threads: 1, maxUpstreamBytes: 16 << 20, warn: () => undefined });
  });

  afterAll(async () => {
    await proxy?.close();
  });

  it('annotate writes one string of terms where the index maps them as text, lists where it maps them as keyword', async () => {
    for (const index of [current, older]) {
      const summary = await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      expect(summary).toMatchObject({ annotated: docs.length, complete: true });
    }
    expect([...(await forms(ctx.client, current))]).toEqual(['string/string']);
    expect([...(await forms(ctx.client, older))]).toEqual(['list/list']);
    const mapping = (await ctx.client.getMapping(current))[current].mappings as any;
    expect(mapping.properties.near_dup.properties.sample).toMatchObject({ type: 'text', analyzer: 'whitespace' });
    expect((await ctx.client.getMapping(older))[older].mappings.properties.near_dup.properties.sample.type).toBe('keyword');
  });

  it('lookups by MinHash, by SimHash and by containment find the same documents in both indices', async () => {
    const query = family[0];
    for (const lookup of [{ method: 'minhash' as const }, { method: 'simhash' as const, maxDistance: 7 }, { measure: 'containment' as const }]) {
      const found = [];
      for (const index of [current, older]) {
        const result = await findSimilar(ctx.client, { index, id: query.id, minSimilarity: 0.3, limit: 100, ...lookup });
        found.push(result.hits.map((h) => h.id).sort());
      }
      expect(found[0], JSON.stringify(lookup)).toContain('copy-of-the-query');
      expect(found[1], JSON.stringify(lookup)).toEqual(found[0]);
    }
  });

  it('the proxy writes each index its own way, and lists to an alias over both', async () => {
    const bulk = (index: string, ids: string[]) =>
      fetch(`${proxy.url}/_bulk?refresh=true`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body: `${ids.map((id) => `${JSON.stringify({ index: { _index: index, _id: id } })}\n${JSON.stringify({ text: docs.find((d) => d.id === id)?.text })}\n`).join('')}`,
      }).then((r) => r.json() as Promise<{ errors: boolean }>);
    const ids = family.map((d) => d.id);
    for (const index of [current, older]) expect((await bulk(index, ids)).errors).toBe(false);
    expect([...(await forms(ctx.client, current))]).toEqual(['string/string']);
    expect([...(await forms(ctx.client, older))]).toEqual(['list/list']);
    // An alias over both: written as lists, which both mappings read.
    await ctx.client.request('POST', '/_aliases', { actions: [{ add: { index: current, alias, is_write_index: true } }, { add: { index: older, alias } }] });
    const plan = await initIndex(ctx.client, alias, 'near_dup');
    expect(plan.keyLists).toBe('lists');
    const extra = { id: 'via-alias', text: family[0].text };
    const response = await fetch(`${proxy.url}/${alias}/_doc/${extra.id}?refresh=true`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: extra.text }) });
    expect(response.status).toBeLessThan(300);
    const stored = await sourcesById(ctx.client, current);
    expect(formOf(stored.get(extra.id)?.near_dup?.sample)).toBe('list');
    const result = await findSimilar(ctx.client, { index: alias, text: family[1].text, measure: 'containment', minSimilarity: 0.3, limit: 100 });
    expect(result.hits.map((h) => h.id)).toContain(extra.id);
  });
});
