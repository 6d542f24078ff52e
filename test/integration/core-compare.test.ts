// Dedup, similar and the explorer compare `;core=` signatures by the core rule (sketch/core-similarity.ts),
// on both engines, with documents whose near-dup fields are made by hand (test/support/core-signatures.ts):
// pages of one template whose whole texts are above the bar end apart, an edited copy ends with its
// original, a document without its core field is left out as damaged, `--pairs` holds the rule's
// similarities, and the same texts signed plain are one family, cut apart by the family's own template.
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { clusterMembers, MemberScrolls } from '../../src/explore/queries.js';
import { initIndex } from '../../src/indices/init.js';
import { findSimilar } from '../../src/jobs/similar.js';
import { coreSimilarity, withCore } from '../../src/sketch/core-similarity.js';
import { minhashJaccard } from '../../src/sketch/minhash.js';
import { createSigner } from '../../src/signature.js';
import { nearDupFields } from '../../src/stored/write.js';
import { coreFields, coreSignature, templateOf } from '../support/core-signatures.js';
import { runCliJson as cli } from '../support/documents.js';
import { forEachEngine } from './harness.js';

const signer = createSigner();
// 200 words every page has, then 25 of the page's own: two pages are at a whole-text Jaccard of 0.8, above
// the bar of 0.7, and their own words have nothing in common. Pages 0 and 1 have a copy with 2 words changed.
const TEMPLATE = Array.from({ length: 200 }, (_, i) => `shared${i}`).join(' ');
const own = (page: number) => Array.from({ length: 25 }, (_, i) => `page${page}word${i}`);
const pages = Array.from({ length: 6 }, (_, p) => ({ id: `p${p}`, text: `${TEMPLATE} ${own(p).join(' ')}` }));
const copies = [0, 1].map((p) => ({ id: `p${p}-edit`, text: `${TEMPLATE} ${own(p).slice(2).join(' ')} edited${p}a edited${p}b` }));
const docs = [...pages, ...copies];
const template = templateOf(signer, TEMPLATE);
const BAR = '0.7';
const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-core-'));

const valuesOf = (id: string) => {
  const { values, extension } = coreSignature(signer, docs.find((d) => d.id === id)!.text, template);
  return withCore(values, extension);
};
const rule = (a: string, b: string) => coreSimilarity(valuesOf(a), valuesOf(b), 128);

forEachEngine('core signatures compared by the core rule', (ctx) => {
  const core = ctx.index('core');
  const plain = ctx.index('plain');

  async function write(index: string, fields: (text: string) => Record<string, unknown>, extra: Array<{ id: string; near_dup: Record<string, unknown> }> = []) {
    await initIndex(ctx.client, index, 'near_dup');
    const lines = [...docs.map((d) => ({ id: d.id, near_dup: fields(d.text), text: d.text })), ...extra].flatMap(({ id, ...source }) => [{ index: { _index: index, _id: id } }, source]);
    expect((await ctx.client.bulk(lines, { refresh: 'true' })).errors).toBe(false);
  }

  async function clustersOf(index: string): Promise<string[][]> {
    const found = await ctx.client.search(index, { size: 100, _source: ['near_dup.cluster_id'] });
    const byCluster = new Map<string, string[]>();
    for (const h of found.hits.hits) {
      const cluster = (h._source as { near_dup?: { cluster_id?: string } }).near_dup?.cluster_id;
      if (cluster) byCluster.set(cluster, [...(byCluster.get(cluster) ?? []), h._id].sort());
    }
    return [...byCluster.values()].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  }

  beforeAll(async () => {
    // The whole texts of two pages are above the bar by their values; the rule keeps them apart.
    expect(minhashJaccard(valuesOf('p0').subarray(0, 128), valuesOf('p1').subarray(0, 128))).toBeGreaterThanOrEqual(Number(BAR));
    expect(rule('p0', 'p1')).toBeLessThan(Number(BAR));
    const { core: _, ...withoutCore } = coreFields(signer, `${TEMPLATE} lost words of a page whose core field is missing here`, template);
    await write(core, (text) => coreFields(signer, text, template), [{ id: 'no-core', near_dup: withoutCore }]);
    await write(plain, (text) => nearDupFields(signer(text), signer.settings) as unknown as Record<string, unknown>);
  });

  it('dedup puts each copy with its original and the pages of one template apart; --pairs holds the rule\'s similarities', async () => {
    const pairsFile = path.join(tmp, `${core}.jsonl`);
    const run = await cli(['dedup', '--url', ctx.engine.url, '--index', core, '--min-similarity', BAR, '--pairs', pairsFile]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ damaged: 1, clusters: 2, complete: true });
    expect(run.stderr).toMatch(/1 documents? with a damaged stored signature left out/);
    expect(readFileSync(run.json.errorsFile, 'utf8')).toMatch(/"no-core".*no core/);
    expect(await clustersOf(core)).toEqual([['p0', 'p0-edit'], ['p1', 'p1-edit']]);
    const pairs = readFileSync(pairsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(pairs.map((p) => [p.a, p.b].sort().join(' ')).sort()).toEqual(['p0 p0-edit', 'p1 p1-edit']);
    for (const p of pairs) expect(p.jaccard).toBe(rule(p.a, p.b));
    // Spilled to disk, the small buckets are checked on other threads (the comparer rebuilt there): the same.
    const spilledPairs = path.join(tmp, `${core}-spilled.jsonl`);
    const spilled = await cli(['dedup', '--url', ctx.engine.url, '--index', core, '--min-similarity', BAR, '--max-cached-signatures', '2', '--full', '--pairs', spilledPairs]);
    expect(spilled.code, spilled.stderr).toBe(0);
    expect(spilled.json).toMatchObject({ damaged: 1, clusters: 2, complete: true });
    expect(await clustersOf(core)).toEqual([['p0', 'p0-edit'], ['p1', 'p1-edit']]);
    expect(readFileSync(spilledPairs, 'utf8').trim().split('\n').map((l) => JSON.parse(l).jaccard).sort()).toEqual(pairs.map((p) => p.jaccard).sort());
  });

  it('the same texts signed plain join the pages in one family, as the share of equal values does; the family\'s own template then cuts them as the rule does', async () => {
    const whole = await cli(['dedup', '--url', ctx.engine.url, '--index', plain, '--min-similarity', BAR, '--clusters', 'components']);
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.json).toMatchObject({ damaged: 0, complete: true });
    expect(await clustersOf(plain)).toEqual([docs.map((d) => d.id).sort()]);
    // Eight members, the 200 shared words held by all: left out, a page with a copy is near its copy only (a
    // page without one has no words the family repeats to be judged by, and is compared whole).
    const run = await cli(['dedup', '--url', ctx.engine.url, '--index', plain, '--min-similarity', BAR, '--full']);
    expect(run.code, run.stderr).toBe(0);
    const clusters = await clustersOf(plain);
    const clusterOf = (id: string) => clusters.findIndex((c) => c.includes(id));
    expect(clusterOf('p0')).not.toBe(clusterOf('p1'));
    expect([clusterOf('p0-edit'), clusterOf('p1-edit')]).toEqual([clusterOf('p0'), clusterOf('p1')]);
  });

  it('similar finds the copy by the rule, not the other pages; containment still gives the whole texts\' Jaccard', async () => {
    const found = await findSimilar(ctx.client, { index: core, id: 'p0', minSimilarity: Number(BAR), limit: 10 });
    expect(found.hits.map((h) => [h.id, h.jaccard])).toEqual([['p0-edit', rule('p0', 'p0-edit')]]);
    expect(found.damaged).toBe(1);
    expect(found.damagedDocuments?.[0]).toMatchObject({ id: 'no-core', reason: 'no core' });
    const below = await findSimilar(ctx.client, { index: core, id: 'p0', minSimilarity: 0, limit: 10 });
    expect(below.hits.find((h) => h.id === 'p1')?.jaccard).toBe(rule('p0', 'p1'));
    const contained = await findSimilar(ctx.client, { index: core, id: 'p0', measure: 'containment', minSimilarity: 0.5, limit: 10 });
    const sibling = contained.hits.find((h) => h.id === 'p1');
    expect(sibling?.jaccard).toBe(minhashJaccard(valuesOf('p0').subarray(0, 128), valuesOf('p1').subarray(0, 128)));
  });

  it('evaluate measures the pairs of an index signed with a template set it does not have (the exact sets are of every token)', async () => {
    const run = await cli(['evaluate', '--url', ctx.engine.url, '--index', core, '--field', 'text', '--out', path.join(tmp, `${core}-evaluate`)]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/sign with that set/);
  });

  it('the explorer measures a member against its canonical by the rule', async () => {
    const [cluster] = (await ctx.client.search(core, { size: 1, _source: ['near_dup.cluster_id'], query: { ids: { values: ['p0'] } } })).hits.hits;
    const clusterId = (cluster._source as { near_dup: { cluster_id: string } }).near_dup.cluster_id;
    const { members } = await clusterMembers(ctx.client, { index: core, prefix: 'near_dup', fields: ['text'] } as never, clusterId, { size: 10, scrolls: new MemberScrolls(ctx.client) });
    const copy = members.find((m) => !m.canonical);
    expect(copy?.similarity).toBe(Math.round(rule('p0', 'p0-edit') * 1000) / 1000);
  });
});
