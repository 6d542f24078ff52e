// annotate --follow on a real engine: documents indexed while it runs are annotated within two intervals,
// a document whose text changes (by a partial update or by indexing it again) gets the new text's
// signature, one whose other fields change keeps its own, and SIGINT stops it cleanly with its checkpoint.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { expect, it } from 'vitest';
import { createSigner } from '../../src/signature.js';
import { fixtureSample } from '../support/corpus.js';
import { expectedSignatures, followRecords, indexDocuments, runCli, signatureFields } from '../support/documents.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { forEachEngine } from './harness.js';

const signer = createSigner();
const docs = fixtureSample(8, { seed: 21 });
const [first, later] = [docs.slice(0, 10), docs.slice(10)];
const expected = expectedSignatures(signer, docs);
const INTERVAL_MS = 2000;

forEachEngine('annotate --follow', (ctx) => {
  it('annotates new and changed documents within two intervals, and stops cleanly on SIGINT', async () => {
    expect(later.length).toBeGreaterThan(3);
    const index = ctx.index('follow');
    await indexDocuments(ctx.client, index, first);
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'near-dup-follow-'));
    const run = runCli(['annotate', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--follow', '--interval', `${INTERVAL_MS}ms`], { cwd });
    const { records: passes, unfinished } = followRecords(run.child);
    const near = async (id: string) => (await ctx.client.request('GET', `/${index}/_doc/${encodeURIComponent(id)}`) as any)._source?.near_dup;
    /** Waits until every id holds the wanted signature; the time it took, ms. */
    const signedWithin = async (wanted: Array<[string, unknown]>) => {
      const t0 = Date.now();
      for (;;) {
        const current = await Promise.all(wanted.map(async ([id]) => signatureFields(await near(id))));
        if (current.every((c, i) => isDeepStrictEqual(c, wanted[i][1]))) return Date.now() - t0;
        if (Date.now() - t0 > 6 * INTERVAL_MS) throw new Error(`not signed after ${Date.now() - t0} ms; passes: ${JSON.stringify(passes.map((p) => [p.pass, p.whole, p.annotated, p.unchanged]))}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    await signedWithin(first.map((d) => [d.id, expected.get(d.id)]));

    // New documents while it runs.
    await indexDocuments(ctx.client, index, later);
    expect(await signedWithin(later.map((d) => [d.id, expected.get(d.id)]))).toBeLessThanOrEqual(2 * INTERVAL_MS);

    // A text changed by a partial update, another by indexing the document again, a third field changed.
    const [a, b, c] = first;
    const other = later[0];
    await ctx.client.request('POST', `/${index}/_update/${encodeURIComponent(a.id)}`, { doc: { text: other.text } }, { refresh: 'true' });
    await ctx.client.request('PUT', `/${index}/_doc/${encodeURIComponent(b.id)}`, { ...b, text: later[1].text }, { refresh: 'true' });
    await ctx.client.request('POST', `/${index}/_update/${encodeURIComponent(c.id)}`, { doc: { date: '2030-01-01T00:00:00.000Z' } }, { refresh: 'true' });
    const took = await signedWithin([
      [a.id, expected.get(other.id)],
      [b.id, expected.get(later[1].id)],
      [c.id, expected.get(c.id)],
    ]);
    expect(took).toBeLessThanOrEqual(2 * INTERVAL_MS);

    // Quiet: a pass over nothing new writes nothing.
    const before = passes.length;
    const quietSince = Date.now();
    while (passes.length < before + 2) {
      // A follower that stopped passing fails here with what it said, not as a timeout of the whole test.
      if (Date.now() - quietSince > 6 * INTERVAL_MS) throw new Error(`no pass for ${Date.now() - quietSince} ms; ${passes.length} passes, the last: ${JSON.stringify(passes.at(-1))}; unfinished stderr: ${unfinished().slice(-300)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(passes[passes.length - 1]).toMatchObject({ annotated: 0, failed: 0, complete: true });
    expect(passes.slice(1).every((p) => p.whole === false)).toBe(true);

    run.child.kill('SIGINT');
    const done = await run.done;
    expect(done.code, done.stderr).toBe(0);
    const totals = JSON.parse(done.stdout.trim().split('\n').pop() as string);
    expect(totals).toMatchObject({ index, follow: true, failed: 0 });
    expect(totals.annotated).toBe(docs.length + 2);
    expect(done.stderr).toMatch(/stopped following/);
    expect(existsSync(path.join(cwd, '.near-dup', `annotate-${index}.json`))).toBe(true);
  }, 120_000);

  it('a pass that fails (the cluster answers 500 to everything for a while) is said, and the next pass catches up', async () => {
    const index = ctx.index('follow-faults');
    await indexDocuments(ctx.client, index, first);
    const faults = new FaultProxy(ctx.engine.url);
    const url = await faults.start();
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'near-dup-follow-faults-'));
    const run = runCli(['annotate', '--url', url, '--index', index, '--field', 'text', '--follow', '--interval', '500ms'], { cwd });
    let stderr = '';
    run.child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    const until = async (what: () => boolean | Promise<boolean>, label: string) => {
      const t0 = Date.now();
      while (!(await what())) {
        if (Date.now() - t0 > 30_000) throw new Error(`${label}: not after 30 s; stderr: ${stderr.slice(-600)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const signed = async (ids: string[]) => (await ctx.client.count(index, { bool: { filter: [{ ids: { values: ids } }, { exists: { field: 'near_dup.params' } }] } })) === ids.length;
    try {
      await until(() => signed(first.map((d) => d.id)), 'the first pass');
      faults.decide = () => ({ status: 500 });
      await until(() => /pass \d+ failed \(.*500.*\); trying again at the next pass/.test(stderr), 'a failed pass said on stderr');
      await indexDocuments(ctx.client, index, later); // written while the passes fail
      faults.decide = () => 'pass';
      await until(() => signed(later.map((d) => d.id)), 'the documents written meanwhile');
      expect(run.child.exitCode).toBeNull(); // still following
    } finally {
      run.child.kill('SIGINT');
      await run.done;
      await faults.stop();
    }
  }, 120_000);

  it('a follower started while the cluster fails goes on: its first pass fails, is said, and a later one signs everything', async () => {
    const index = ctx.index('follow-first-fails');
    await indexDocuments(ctx.client, index, first);
    const faults = new FaultProxy(ctx.engine.url);
    const url = await faults.start();
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'near-dup-follow-first-'));
    faults.decide = (request) => (request.path.includes('_count') || request.path.includes('_search') ? { status: 500 } : 'pass');
    const run = runCli(['annotate', '--url', url, '--index', index, '--field', 'text', '--follow', '--interval', '300ms'], { cwd });
    let stderr = '';
    run.child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
    try {
      const t0 = Date.now();
      while (!/pass 1 failed \(.*500.*\); trying again at the next pass/.test(stderr)) {
        if (Date.now() - t0 > 30_000 || run.child.exitCode !== null) throw new Error(`no failed first pass said: ${stderr.slice(-600)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      faults.decide = () => 'pass';
      while ((await ctx.client.count(index, { exists: { field: 'near_dup.params' } })) < first.length) {
        if (Date.now() - t0 > 60_000) throw new Error(`not signed after the cluster came back: ${stderr.slice(-600)}`);
        await new Promise((r) => setTimeout(r, 200));
        await ctx.client.refresh(index);
      }
      expect(run.child.exitCode).toBeNull();
    } finally {
      run.child.kill('SIGINT');
      await run.done;
      await faults.stop();
    }
  }, 120_000);

  it('marks ahead of the index (a file from elsewhere, or edited) are said, and the index is read whole', async () => {
    const index = ctx.index('follow-ahead');
    await indexDocuments(ctx.client, index, first);
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'near-dup-follow-ahead-'));
    const once = async () => {
      const run = runCli(['annotate', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--follow', '--interval', '300ms'], { cwd });
      let stderr = '';
      run.child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
      const { records: passes } = followRecords(run.child);
      while (passes.length < 1) await new Promise((r) => setTimeout(r, 50));
      run.child.kill('SIGINT');
      await run.done;
      return { passes, stderr };
    };
    await once();
    const file = path.join(cwd, '.near-dup', `follow-${index}.json`);
    const saved = JSON.parse(readFileSync(file, 'utf8'));
    saved.marks[0][1].seqNo = 1_000_000;
    writeFileSync(file, JSON.stringify(saved));
    await indexDocuments(ctx.client, index, later);
    const ahead = await once();
    expect(ahead.stderr).toMatch(/is ahead of the index .* is read whole/);
    expect(ahead.passes[0]).toMatchObject({ annotated: later.length });
    writeFileSync(file, '{"identity": {"index": "half a fi');
    const garbled = await once();
    expect(garbled.stderr).toMatch(/the marks in .* are not readable .*the first pass reads the whole job/);
    expect(garbled.passes[0]).toMatchObject({ whole: true });
  }, 120_000);

  it('started again, it goes on from the marks of the last complete pass instead of reading the whole index', async () => {
    const index = ctx.index('follow-restart');
    await indexDocuments(ctx.client, index, first);
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'near-dup-follow-restart-'));
    const follow = async (untilPasses: number, between?: () => Promise<void>) => {
      const run = runCli(['annotate', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--follow', '--interval', '300ms'], { cwd });
      const { records: passes } = followRecords(run.child);
      while (passes.length < untilPasses) await new Promise((r) => setTimeout(r, 50));
      await between?.();
      run.child.kill('SIGINT');
      expect((await run.done).code).toBe(0);
      return passes;
    };
    const before = await follow(2);
    expect(before[0]).toMatchObject({ whole: true, annotated: first.length });
    await indexDocuments(ctx.client, index, later); // while no follower runs
    const after = await follow(1);
    expect(after[0]).toMatchObject({ whole: false, annotated: later.length, failed: 0 });
    expect(after[0].annotated + after[0].unchanged).toBeLessThan(first.length + later.length); // not the whole index again
  }, 120_000);
});
