// near-dup explore on an index that is not ready to explore, on real engines: never annotated, or annotated
// but never deduplicated. The list of clusters answers 200 (not a 400 blaming a parameter) with the step
// that is missing and the exact command that makes it, and the page shows them.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type RunningExplorer, startExplorer } from '../../src/explore/server.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { dedupIndex } from '../../src/jobs/dedup.js';
import { chromiumPath } from '../support/browser.js';
import { fixtureSample } from '../support/corpus.js';
import { indexDocuments } from '../support/documents.js';
import { forEachEngine } from './harness.js';

const docs = fixtureSample(4, { seed: 7 });

forEachEngine('explore, a step missing', (ctx) => {
  const plain = ctx.index('explore-plain');
  const annotated = ctx.index('explore-annotated');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-explore-next-'));
  const explorers: RunningExplorer[] = [];
  const explore = async (index: string) => {
    const explorer = await startExplorer(ctx.client, { index, fields: ['text'], prefix: 'near_dup', host: '127.0.0.1', port: 0 });
    explorers.push(explorer);
    return explorer;
  };
  const clusters = async (explorer: RunningExplorer) => {
    const res = await fetch(`${explorer.url}/api/clusters?size=2`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    await indexDocuments(ctx.client, plain, docs);
    await indexDocuments(ctx.client, annotated, docs);
    await annotateIndex(ctx.client, { index: annotated, fields: ['text'], signer: {}, state: { checkpointFile: path.join(tmp, 'cp.json') }, output: { prefix: 'near_dup', errorsFile: path.join(tmp, 'e.jsonl') } });
    await ctx.client.refresh(annotated);
  });
  afterAll(async () => {
    for (const e of explorers) await e.close();
  });

  it('an index never annotated: the list says annotate is missing and the command, not a 400 on size', async () => {
    const answer = await clusters(await explore(plain));
    expect(answer).toEqual({ status: 200, body: { clusters: [], total: 0, missing: 'annotate', command: `near-dup annotate --index ${plain} --field text`, why: expect.stringContaining('no document') } });
  });

  it('an index annotated, never deduplicated: the list says dedup is missing and the command', async () => {
    const answer = await clusters(await explore(annotated));
    expect(answer).toEqual({ status: 200, body: { clusters: [], total: 0, missing: 'dedup', command: `near-dup dedup --index ${annotated}`, why: expect.stringContaining('cluster') } });
  });

  it('once deduplicated, the list has its clusters and says nothing is missing', async () => {
    const index = ctx.index('explore-deduplicated');
    await indexDocuments(ctx.client, index, docs);
    await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, state: { checkpointFile: path.join(tmp, 'cp2.json') }, output: { prefix: 'near_dup', errorsFile: path.join(tmp, 'e2.jsonl') } });
    await dedupIndex(ctx.client, { index, state: { stateFile: path.join(tmp, 'dedup.json') }, output: { errorsFile: path.join(tmp, 'dedup-errors.jsonl') } });
    await ctx.client.refresh(index);
    const answer = await clusters(await explore(index));
    expect(answer.status).toBe(200);
    expect((answer.body.clusters as unknown[]).length).toBeGreaterThan(0);
    expect(answer.body.missing).toBeUndefined();
    expect(answer.body.command).toBeUndefined();
  });

  it('the page shows the missing step and its command', async (test) => {
    const browserPath = await chromiumPath();
    if (!browserPath.path) {
      if (process.env.CI === 'true') throw new Error(`no browser under CI=true: ${browserPath.missing}`);
      test.skip();
      return;
    }
    const browser = await chromium.launch({ executablePath: browserPath.path, args: ['--no-sandbox', '--disable-gpu'] });
    try {
      const page = await browser.newPage();
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      for (const [index, command] of [
        [plain, `near-dup annotate --index ${plain} --field text`],
        [annotated, `near-dup dedup --index ${annotated}`],
      ]) {
        await page.goto((await explore(index)).url);
        const note = page.locator('#next-step');
        await note.waitFor();
        expect(await note.locator('code').textContent()).toBe(command);
        expect(await page.locator('#error').isHidden()).toBe(true);
      }
      expect(errors).toEqual([]);
    } finally {
      await browser.close();
    }
  }, 60_000);
});
