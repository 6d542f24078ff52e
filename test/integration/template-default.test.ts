// The template tokens annotate and ingest draw when not told (DEFAULT_TEMPLATE_REQUEST), on the real engines:
// an index of 2,000 documents or more is signed with a set drawn from it (params core=, the set kept); a
// smaller one without, said in the summary with the command that draws one later; --template-share 0 signs
// without and says nothing; ingest draws from its input the same way.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { DEFAULT_TEMPLATE_REQUEST, keptDraw, TEMPLATE_INDEX } from '../../src/indices/template-store.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { followRecords, indexDocuments, runCli } from '../support/documents.js';
import { keptDigests } from '../support/templates-kept.js';
import { forEachEngine } from './harness.js';

const AT_LEAST = DEFAULT_TEMPLATE_REQUEST.atLeast as number;
// Pages of one template (30 shared words) with 20 words of their own.
const TEMPLATE = Array.from({ length: 30 }, (_, i) => `shared${i}`).join(' ');
const page = (n: number) => ({ id: `d${n}`, text: `${TEMPLATE} ${Array.from({ length: 20 }, (_, i) => `own${n}x${i}`).join(' ')}` });
const pages = (count: number) => Array.from({ length: count }, (_, n) => page(n));

forEachEngine('template tokens by default', (ctx) => {
  const large = ctx.index('default-large');
  const small = ctx.index('default-small');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-template-default-'));
  const state = (name: string) => ({ checkpointFile: path.join(tmp, `${name}.json`) });

  beforeAll(async () => {
    await indexDocuments(ctx.client, large, pages(AT_LEAST));
    await indexDocuments(ctx.client, small, pages(AT_LEAST - 1));
  }, 120_000);

  it('an index of 2,000 documents is signed with a set drawn from it, kept with the index', async () => {
    const summary = await annotateIndex(ctx.client, { index: large, fields: ['text'], state: state('large') });
    expect(summary).toMatchObject({ annotated: AT_LEAST, failed: 0, complete: true, notes: [] });
    const digests = await keptDigests(ctx.client, large);
    expect(digests).toHaveLength(1);
    expect(summary.params).toContain(`;core=${digests[0]}`);
  });

  it('one document fewer: signed without, and the summary says why and what draws one later', async () => {
    const run = await runCli(['annotate', '--url', ctx.engine.url, '--index', small, '--field', 'text'], { cwd: tmp }).done;
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary.params).not.toContain('core=');
    expect(summary.notes).toEqual([`signed without template tokens: "${small}" has ${AT_LEAST - 1} documents, fewer than the ${AT_LEAST.toLocaleString('en-US')} they are drawn from by default (annotate --force draws them once it has more)`]);
    expect(run.stderr).toContain(summary.notes[0]);
    expect(await keptDigests(ctx.client, small)).toEqual([]);
  });

  it('--template-share 0 signs without, and says nothing of it', async () => {
    const run = await runCli(['annotate', '--url', ctx.engine.url, '--index', large, '--field', 'text', '--template-share', '0', '--force'], { cwd: tmp }).done;
    expect(run.code, run.stderr).toBe(0);
    const summary = JSON.parse(run.stdout);
    expect(summary).toMatchObject({ annotated: AT_LEAST, notes: [] });
    expect(summary.params).not.toContain('core=');
    expect(run.stderr).not.toContain('template');
  });

  it('ingest draws from its input as annotate does: 2,000 lines signed with a set, fewer without and said', async () => {
    const file = path.join(tmp, 'pages.ndjson');
    writeFileSync(file, `${pages(AT_LEAST).map((d) => JSON.stringify(d)).join('\n')}\n`);
    const drawn = await runCli(['ingest', '--url', ctx.engine.url, '--index', ctx.index('default-ingest'), '--field', 'text', '--id-field', 'id', '--file', file], { cwd: tmp }).done;
    expect(drawn.code, drawn.stderr).toBe(0);
    expect(JSON.parse(drawn.stdout).params).toMatch(/;core=[0-9a-f]{12}$/);
    writeFileSync(file, `${pages(10).map((d) => JSON.stringify(d)).join('\n')}\n`);
    const few = ctx.index('default-ingest-few');
    const plain = await runCli(['ingest', '--url', ctx.engine.url, '--index', few, '--field', 'text', '--id-field', 'id', '--file', file], { cwd: tmp }).done;
    expect(plain.code, plain.stderr).toBe(0);
    expect(JSON.parse(plain.stdout)).toMatchObject({ indexed: 10 });
    expect(JSON.parse(plain.stdout).params).not.toContain('core=');
    const note = `signed without template tokens: "${few}" has 10 documents, fewer than the ${AT_LEAST.toLocaleString('en-US')} they are drawn from by default (annotate --force draws them once it has more)`;
    expect(JSON.parse(plain.stdout).notes).toEqual([note]);
    expect(plain.stderr).toContain(`blank lines skipped); ${note}\n`);
  });

  it("annotate --follow keeps its first pass's choice: an index that grows past 2,000 is not signed in part with a set drawn from what came", async () => {
    const index = ctx.index('default-follow');
    await indexDocuments(ctx.client, index, pages(10));
    const cwd = mkdtempSync(path.join(tmp, 'follow-'));
    const run = runCli(['annotate', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--follow', '--interval', '300ms'], { cwd });
    const { records: passes } = followRecords(run.child);
    const until = async (n: number) => {
      const t0 = Date.now();
      while (passes.length < n && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 50));
    };
    await until(1);
    // Then more than a default draw's worth of new pages, all in one pass.
    await indexDocuments(ctx.client, index, pages(AT_LEAST + 10).slice(10).map((d) => ({ ...d, id: `late-${d.id}` })));
    const seen = passes.length;
    await until(seen + 2);
    run.child.kill('SIGINT');
    expect((await run.done).code).toBe(0);
    expect(passes.reduce((sum, p) => sum + p.annotated, 0)).toBe(AT_LEAST + 10);
    const core = await ctx.client.count(index, { wildcard: { 'near_dup.params': { value: '*core=*' } } });
    expect(core).toBe(0);
    expect(await keptDigests(ctx.client, index)).toEqual([]);
  }, 120_000);

  it("evaluate's re-signing command reads a set's draw from the store: a damaged or another index's record gives none", async () => {
    const [digest] = await keptDigests(ctx.client, large);
    expect(await keptDraw(ctx.client, large, digest)).toEqual({ share: DEFAULT_TEMPLATE_REQUEST.share, sampleAsked: 10_000 });
    const [uuid] = await ctx.client.indexUuids(small);
    const put = (id: string, doc: Record<string, unknown>) => ctx.client.request('PUT', `/${TEMPLATE_INDEX}/_doc/${id}?refresh=true`, { index: small, uuid, digest: 'abcdefabcdef', ...doc });
    await put('damaged-share', { share: '0.005', sample_asked: 10_000 });
    expect(await keptDraw(ctx.client, small, 'abcdefabcdef')).toBeUndefined(); // a share that is not a number
    await put('damaged-share', { share: 7, sample_asked: 10_000 });
    expect(await keptDraw(ctx.client, small, 'abcdefabcdef')).toBeUndefined(); // nor one that is a share
    await put('damaged-share', { share: 0.01, sample_asked: -3 });
    expect(await keptDraw(ctx.client, small, 'abcdefabcdef')).toEqual({ share: 0.01 }); // a sample that is not one is left out
    expect(await keptDraw(ctx.client, large, 'abcdefabcdef')).toBeUndefined(); // kept for another index
  });
});
