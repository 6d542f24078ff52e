// sign --for-index on the real engines: a text signed as an index annotated with --template-share signs
// (its params, core= included, and its MinHash with the set); --template-share asks for the set of a draw;
// without an index, --template-share is refused in one line naming what is needed.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { minhashValues } from '../../src/sketch/lean-minhash.js';
import { runCli, runCliJson as cli } from '../support/documents.js';
import { templatedPages } from '../support/templated-pages.js';
import { forEachEngine } from './harness.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-template-sign-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const DOCS = templatedPages(40);

it('refuses --template-share without an index to sign for, in one line', async () => {
  const run = await runCli(['sign', '--template-share', '0.05'], {}).done;
  expect(run.code).toBe(2);
  expect(run.stderr.trim().split('\n')).toEqual([expect.stringContaining('sign --template-share needs the index that keeps the template tokens: give --for-index INDEX (and --url)')]);
});

forEachEngine('sign --for-index', (ctx) => {
  const index = ctx.index('tpl-sign');
  let stored: { params: string; minhash: string; core: string };
  const page = path.join(tmp, 'page.txt');

  beforeAll(async () => {
    const lines = DOCS.flatMap((d) => [{ index: { _index: index, _id: d.id } }, { text: d.text }]);
    expect((await ctx.client.bulk(lines)).errors).toBe(false);
    await ctx.client.refresh(index);
    await annotateIndex(ctx.client, { index, fields: ['text'], template: { share: 0.05, sample: 1000 } });
    stored = ((await ctx.client.request('GET', `/${index}/_source/p3`)) as { near_dup: { params: string; minhash: string; core: string } }).near_dup;
    writeFileSync(page, DOCS[3].text);
  });

  it("signs a text as the index's params say, with the template tokens it keeps", async () => {
    expect(stored.params).toMatch(/;core=[0-9a-f]{12}$/);
    const run = await cli(['sign', '--for-index', index, '--url', ctx.engine.url, '--file', page]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ params: stored.params, minhash: Array.from(minhashValues(stored.minhash)), core: stored.core });
    // The core way keeps the MinHash of every token (datasketch's); what the set adds is the core field.
    const plain = await cli(['sign', '--file', page]);
    expect(plain.json.minhash).toEqual(run.json.minhash);
    expect(plain.json.core).toBeUndefined();
    expect(typeof run.json.core).toBe('string');
  });

  it('signs with the set of a draw, and says when the index keeps none for it', async () => {
    const run = await cli(['sign', '--for-index', index, '--url', ctx.engine.url, '--template-share', '0.05', '--template-sample', '1000', '--file', page]);
    expect(run.json).toMatchObject({ params: stored.params, minhash: Array.from(minhashValues(stored.minhash)) });
    const none = await cli(['sign', '--for-index', index, '--url', ctx.engine.url, '--template-share', '0.2', '--file', page]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(`"${index}" keeps no template tokens for a template share of 0.2 (sample 10000`);
  });
});
