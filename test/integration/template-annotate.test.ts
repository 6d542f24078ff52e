// annotate --template-share on the real engines: pages of one template (a long shared section, a few lines
// of their own, some pages edited copies of others) signed without the template's tokens in the MinHash;
// the set drawn from the documents, kept with the index and named by the params; `similar` signs a text
// with it; a second run finds the same set and leaves every document as it is.
import { beforeAll, expect, it } from 'vitest';
import { loadTemplate } from '../../src/indices/template-store.js';
import { keptDigests } from '../support/templates-kept.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { findSimilar } from '../../src/jobs/similar.js';
import { createSigner, resolveSignerSettings } from '../../src/signature.js';
import { minhashValues } from '../../src/sketch/lean-minhash.js';
import { exactJaccardOf } from '../support/jaccard.js';
import { forEachEngine } from './harness.js';

// The shared section: 60 words every page has (the template), then 25 of the page's own.
const TEMPLATE = Array.from({ length: 60 }, (_, i) => `common${i}`).join(' ');
const own = (page: number) => Array.from({ length: 25 }, (_, i) => `page${page}word${i}`).join(' ');
const DOCS = [
  ...Array.from({ length: 40 }, (_, page) => ({ id: `p${page}`, text: `${TEMPLATE} ${own(page)}` })),
  // Copies of pages 0-4 with two of their own words changed.
  ...Array.from({ length: 5 }, (_, page) => ({ id: `p${page}-edit`, text: `${TEMPLATE} ${own(page).replace(`page${page}word3 `, `changed${page} `).replace(`page${page}word9 `, `edited${page} `)}` })),
];

forEachEngine('annotate --template-share', (ctx) => {
  const index = ctx.index('templated');
  let summary: Awaited<ReturnType<typeof annotateIndex>>;

  beforeAll(async () => {
    const lines = DOCS.flatMap((d) => [{ index: { _index: index, _id: d.id } }, { text: d.text }]);
    expect((await ctx.client.bulk(lines)).errors).toBe(false);
    await ctx.client.refresh(index);
    summary = await annotateIndex(ctx.client, { index, fields: ['text'], template: { share: 0.05, sample: 1000 } });
  });

  it('keeps the tokens of the shared section as the set, names it in every params, and signs without them', async () => {
    expect(summary).toMatchObject({ annotated: DOCS.length, failed: 0, complete: true });
    const plain = createSigner();
    const expected = new Set(plain.tokenHashes(TEMPLATE));
    const digest = await keptDigests(ctx.client, index);
    expect(digest).toHaveLength(1);
    const template = await loadTemplate(ctx.client, index, digest[0]);
    expect(new Set(template.hashes)).toEqual(expected);
    expect(template).toMatchObject({ share: 0.05, minCount: 3, sample: DOCS.length });
    const signer = createSigner({ template });
    const found = await ctx.client.search(index, { size: 100, _source: ['text', 'near_dup.params', 'near_dup.minhash'] });
    expect(found.hits.hits).toHaveLength(DOCS.length);
    for (const hit of found.hits.hits) {
      const source = hit._source as { text: string; near_dup: { params: string; minhash: string } };
      expect(source.near_dup.params).toBe(`${resolveSignerSettings().params};core=${digest[0]}`);
      expect(Array.from(minhashValues(source.near_dup.minhash))).toEqual(Array.from(signer(source.text).minhash));
    }
  });

  it('lets similar sign a text with the set: a page finds itself and its edit, not the other pages of its template', async () => {
    const bar = 0.5;
    const result = await findSimilar(ctx.client, { index, text: DOCS[2].text, minSimilarity: bar, method: 'minhash' });
    expect(result.hits.map((h) => h.id).sort()).toEqual(['p2', 'p2-edit']);
    expect(result.hits[0]).toMatchObject({ id: 'p2', jaccard: 1 });
    // Without the template, every page of it is near every other: above the bar over the tokens (0.533 in
    // word 4-shingles: 57 shared of 107), and a hit at it (jaccard >= minSimilarity) by the MinHash.
    const plain = createSigner();
    const exact = exactJaccardOf(plain, DOCS);
    for (const x of DOCS) for (const y of DOCS) if (x.id < y.id && !x.id.endsWith('-edit') && !y.id.endsWith('-edit')) expect(exact(x.id, y.id), `${x.id} ~ ${y.id}`).toBeGreaterThan(bar);
    const a = plain(DOCS[2].text).minhash, b = plain(DOCS[7].text).minhash;
    expect(a.filter((v, i) => v === b[i]).length / a.length).toBeGreaterThanOrEqual(bar);
  });

  it('finds the same set on a second run, and leaves every document as it is', async () => {
    const again = await annotateIndex(ctx.client, { index, fields: ['text'], template: { share: 0.05, sample: 1000 } });
    expect(again).toMatchObject({ annotated: 0, unchanged: DOCS.length, complete: true });
    expect(await keptDigests(ctx.client, index)).toHaveLength(1);
  });

  it('keeps nothing in a dry run', async () => {
    const dry = ctx.index('templated-dry');
    const lines = DOCS.slice(0, 10).flatMap((d) => [{ index: { _index: dry, _id: d.id } }, { text: d.text }]);
    expect((await ctx.client.bulk(lines)).errors).toBe(false);
    await ctx.client.refresh(dry);
    const result = await annotateIndex(ctx.client, { index: dry, fields: ['text'], template: { share: 0.05 }, output: { dryRun: true } });
    expect(result).toMatchObject({ annotated: 10, failed: 0 });
    expect(await keptDigests(ctx.client, dry)).toEqual([]);
  });
});
