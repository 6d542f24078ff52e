// The explorer's side-by-side view shows the texts as their signatures saw them: web pages that differ in
// markup, entities, case and spacing, and in two words, are shown after the index's normalizer (the same
// code that signed them), with only those two words marked as differences; the stored fields are one click
// away; a document without a signature is shown as stored, saying so. Through the API and in Chromium
// (screenshots to test/output/explore/).
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningExplorer, startExplorer } from '../../src/explore/server.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { dedupIndex } from '../../src/jobs/dedup.js';
import { createSigner } from '../../src/signature.js';
import { inExplorerPage } from '../support/browser.js';
import { indexDocuments } from '../support/documents.js';
import { forEachEngine } from './harness.js';

const words = 'near duplicate detection finds documents that share most of their words even when their markup differs and a reviewer must see the words that were compared rather than the tags around them so the explorer shows each text after the normalizer that signed it'.split(' ');
const sentence = (ws: string[]) => ws.join(' ');
// The same words in two dresses: paragraphs, entities, capitals, runs of spaces and line breaks, and two words changed.
const original = `<html><body><h1>Near   Duplicate Detection</h1>\n<p>${sentence(words.slice(2, 20))}</p>\n\n<p>${sentence(words.slice(20))}</p></body></html>`;
const edited = `<div class="page">\n  <h2>NEAR DUPLICATE detection</h2><p>${sentence(words.slice(2, 20)).replace('reviewer', 'curator')}&nbsp;&amp;</p>\n<ul><li>${sentence(words.slice(20, 30))}</li>\n\n\n<li>${sentence(words.slice(30)).replace('signed', 'hashed')}</li></ul></div>`;
const docs = [
  { id: 'page-a', body: original },
  { id: 'page-b', body: edited },
];
const output = path.resolve(__dirname, '../output/explore');

forEachEngine('explore: texts as compared', (ctx) => {
  const index = ctx.index('explore-texts');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-explore-texts-'));
  const normalize = createSigner({}).normalize;
  let explorer: RunningExplorer;
  const api = async (p: string) => {
    const res = await fetch(explorer.url + p);
    const body = (await res.json()) as any;
    expect(res.status, `${p}: ${body.error}`).toBe(200);
    return body;
  };
  const side = (pair: any, kind: 'removed' | 'added') => pair.segments.filter((s: any) => s.kind === 'same' || s.kind === kind).map((s: any) => s.text).join('');
  const changed = (pair: any, kind: 'removed' | 'added') => pair.segments.filter((s: any) => s.kind === kind).map((s: any) => s.text.trim()).filter(Boolean);

  beforeAll(async () => {
    await indexDocuments(ctx.client, index, docs);
    await annotateIndex(ctx.client, { index, fields: ['body'], signer: {}, state: { checkpointFile: path.join(tmp, 'cp.json') }, output: { prefix: 'near_dup', errorsFile: path.join(tmp, 'e.jsonl') } });
    // A document indexed after annotate: no signature, so nothing says how it was (or would be) compared.
    await indexDocuments(ctx.client, index, [{ id: 'page-unsigned', body: edited }]);
    await dedupIndex(ctx.client, { index, state: { stateFile: path.join(tmp, 'dedup.json') }, output: { errorsFile: path.join(tmp, 'dedup-errors.jsonl') } });
    await ctx.client.refresh(index);
    explorer = await startExplorer(ctx.client, { index, fields: ['body'], prefix: 'near_dup', host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => explorer?.close());

  it('compares the texts after the normalizer they were signed with, marking only the words that differ', async () => {
    const pair = await api('/api/pair?a=page-a&b=page-b');
    expect([pair.view, pair.normalizer]).toEqual(['normalized', 'norm-html']);
    expect(side(pair, 'removed')).toBe(normalize(original));
    expect(side(pair, 'added')).toBe(normalize(edited));
    expect(changed(pair, 'removed')).toEqual(['reviewer', 'signed']);
    expect(changed(pair, 'added')).toEqual(['curator', 'hashed']);
    expect(JSON.stringify(pair.segments)).not.toMatch(/<|&|nbsp|\\n| {2}/);
  });

  it('shows the fields as stored on request, and a document without a signature as stored, saying why', async () => {
    const raw = await api('/api/pair?a=page-a&b=page-b&view=raw');
    expect(raw.view).toBe('raw');
    expect([side(raw, 'removed'), side(raw, 'added')]).toEqual([original, edited]);
    expect(changed(raw, 'removed').join(' ')).toContain('<h1>');
    const unsigned = await api('/api/pair?a=page-a&b=page-unsigned');
    expect(unsigned.view).toBe('raw');
    expect(unsigned.notes).toEqual([expect.stringMatching(/^page-unsigned is shown as stored: it has no near-dup signature/)]);
    expect([side(unsigned, 'removed'), side(unsigned, 'added')]).toEqual([original, edited]);
    const bad = await fetch(`${explorer.url}/api/pair?a=page-a&b=page-b&view=html`);
    expect([bad.status, ((await bad.json()) as any).error]).toEqual([400, 'view must be normalized or raw, got "html"']);
  });

  it('in Chromium: the texts as compared by default, the stored fields one click away', async (test) => {
    await inExplorerPage(test, explorer.url, { output, prefix: `${ctx.engine.flavour}-${ctx.engine.version}` }, async (page, { errors, shot }) => {
      const rows = page.locator('tr.member');
      await rows.nth(0).locator('input.pick').check();
      await rows.nth(1).locator('input.pick').check();
      await page.locator('#compare').click();
      await page.locator('#pair[data-view=normalized]').waitFor();
      const ids = await Promise.all([rows.nth(0).getAttribute('data-id'), rows.nth(1).getAttribute('data-id')]);
      const body = (id: string | null) => docs.find((d) => d.id === id)!.body;
      expect(await page.locator('.side.left').textContent()).toBe(normalize(body(ids[0])));
      expect(await page.locator('.side.right').textContent()).toBe(normalize(body(ids[1])));
      const marked = await page.locator('.side del, .side ins').allTextContents();
      expect(marked.map((t) => t.trim()).filter(Boolean).sort()).toEqual(['curator', 'hashed', 'reviewer', 'signed']);
      expect(await page.locator('#view-note').textContent()).toContain('norm-html');
      await page.screenshot({ path: shot('pair-as-compared'), fullPage: true });
      await page.locator('#view-raw').check();
      await page.locator('#pair[data-view=raw]').waitFor();
      expect(await page.locator('.side.left').textContent()).toBe(body(ids[0]));
      expect(await page.locator('.side.right').textContent()).toBe(body(ids[1]));
      await page.screenshot({ path: shot('pair-as-stored'), fullPage: true });
      await page.locator('#view-normalized').check();
      await page.locator('#pair[data-view=normalized]').waitFor();
      expect(await page.locator('.side.left').textContent()).toBe(normalize(body(ids[0])));
      expect(errors).toEqual([]);
    });
  }, 120_000);
});
