// annotate --follow on a real engine: documents indexed while it runs are annotated within two intervals,
// a document whose text changes (by a partial update or by indexing it again) gets the new text's
// signature, one whose other fields change keeps its own, and SIGINT stops it cleanly with its checkpoint.
// Every write that landed before a pass starts is signed by that pass or the next, whether the engine has
// made it searchable yet or not (refresh off, the default refresh, a write between the marks and the scan).
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { expect, it } from 'vitest';
import { createSigner } from '../../src/signature.js';
import { fixtureSample } from '../support/corpus.js';
import { expectedSignatures, followRecords, indexDocuments, runCli, signatureFields, sourcesById } from '../support/documents.js';
import { FaultProxy, type ProxiedRequest } from '../support/fault-proxy.js';
import { dataStream, type EngineContext, forEachEngine } from './harness.js';

const signer = createSigner();
const docs = fixtureSample(8, { seed: 21 });
const [first, later] = [docs.slice(0, 10), docs.slice(10)];
const expected = expectedSignatures(signer, docs);
const INTERVAL_MS = 2000;

/** A text of its own for `tag`: a fixture text with a line that makes it another document. */
const textOf = (tag: string, i: number) => `${docs[i % docs.length].text}\n\nRevision ${tag}: amended, renumbered and restated.`;

/**
 * A follower on `index` through a relay that holds the request `holdAt` picks (given the number of index
 * stats requests so far: one at the start of each pass) until `between` has written; the passes it reported
 * once `passesWanted` are done, and the index's documents by id.
 */
async function followAround(
  ctx: EngineContext,
  index: string,
  options: { holdAt: (request: ProxiedRequest, statsSeen: number) => boolean; between: () => Promise<void>; passesWanted: number },
) {
  const relay = new FaultProxy(ctx.engine.url);
  const url = await relay.start();
  let statsSeen = 0;
  let held = false;
  let release: () => void = () => undefined;
  const written = new Promise<void>((resolve) => (release = resolve));
  relay.decide = (request) => {
    if (request.path.endsWith("/_stats")) statsSeen++;
    if (held || !options.holdAt(request, statsSeen)) return 'pass';
    held = true;
    return { holdUntil: written };
  };
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'near-dup-follow-around-'));
  const run = runCli(['annotate', '--url', url, '--index', index, '--field', 'text', '--follow', '--interval', '300ms'], { cwd });
  const { records: passes, unfinished } = followRecords(run.child);
  const until = async (what: () => boolean, label: string) => {
    const t0 = Date.now();
    while (!what()) {
      if (Date.now() - t0 > 60_000 || run.child.exitCode !== null) throw new Error(`${label}: not after ${Date.now() - t0} ms; passes ${JSON.stringify(passes)}; ${unfinished().slice(-600)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  try {
    await until(() => passes.length >= 1, 'the first pass');
    await until(() => held, 'the request held');
    await options.between();
    release();
    await until(() => passes.length >= options.passesWanted, `${options.passesWanted} passes`);
  } finally {
    release();
    run.child.kill('SIGINT');
    await run.done;
    await relay.stop();
  }
  return { passes, stored: await sourcesById(ctx.client, index) };
}

/** The ids whose stored signature is not that of `texts`' text for them. */
function wronglySigned(stored: Map<string, Record<string, any>>, texts: Map<string, string>): string[] {
  const wanted = expectedSignatures(signer, [...texts].map(([id, text]) => ({ id, text })));
  return [...texts.keys()].filter((id) => stored.get(id)?.text !== texts.get(id) || !isDeepStrictEqual(signatureFields(stored.get(id)?.near_dup), wanted.get(id)));
}

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

  /**
   * 30 documents signed by the first pass; while the follower sleeps (the second pass's first request held
   * until they land), 30 partial updates of their text (10 of them updated twice) and 30 new documents.
   */
  const sixtyWritesBetweenPasses = async (settings: Record<string, unknown>) => {
    const index = ctx.index('follow-unrefreshed');
    await ctx.client.createIndex(index, { settings });
    const texts = new Map(Array.from({ length: 30 }, (_, i) => [`d${i}`, textOf('first', i)]));
    await indexDocuments(ctx.client, index, [...texts].map(([id, text]) => ({ id, text })));
    const between = async () => {
      const lines: object[] = [];
      for (let i = 0; i < 30; i++) lines.push({ update: { _index: index, _id: `d${i}` } }, { doc: { text: textOf('second', i) } });
      for (let i = 0; i < 30; i++) lines.push({ index: { _index: index, _id: `n${i}` } }, { id: `n${i}`, text: textOf('new', i + 3) });
      for (let i = 0; i < 10; i++) lines.push({ update: { _index: index, _id: `d${i}` } }, { doc: { text: textOf('third', i) } });
      expect((await ctx.client.bulk(lines)).errors).toBe(false); // no refresh: the follower must see them anyway
      for (let i = 0; i < 30; i++) texts.set(`d${i}`, textOf(i < 10 ? 'third' : 'second', i)).set(`n${i}`, textOf('new', i + 3));
    };
    const { passes, stored } = await followAround(ctx, index, { holdAt: (request, stats) => request.path.endsWith('/_stats') && stats === 2, between, passesWanted: 3 });
    expect(passes[0]).toMatchObject({ whole: true, annotated: 30, complete: true });
    expect(wronglySigned(stored, texts), `passes: ${JSON.stringify(passes)}`).toEqual([]);
    // Each write signed once, by the pass that started after it (the next one finds it current).
    expect(passes[1]).toMatchObject({ whole: false, annotated: 60, failed: 0, complete: true });
    expect(passes[2]).toMatchObject({ annotated: 0, failed: 0, complete: true });
  };

  it('with refresh off (refresh_interval -1), the writes made while it sleeps are signed by the next pass: new documents, partial updates of the text, documents updated twice', async () => {
    await sixtyWritesBetweenPasses({ refresh_interval: '-1' });
  }, 120_000);

  it('with the default refresh, the writes made just before a pass are signed by it, searchable yet or not', async () => {
    await sixtyWritesBetweenPasses({});
  }, 120_000);

  /** A text update and a new document written while the second pass holds between its marks and its scan. */
  const writeBetweenMarksAndScan = async (holdAt: (request: ProxiedRequest) => boolean) => {
    const index = ctx.index('follow-between');
    await ctx.client.createIndex(index, { settings: { refresh_interval: '-1' } });
    const texts = new Map(Array.from({ length: 6 }, (_, i) => [`d${i}`, textOf('first', i)]));
    await indexDocuments(ctx.client, index, [...texts].map(([id, text]) => ({ id, text })));
    const between = async () => {
      await ctx.client.request('POST', `/${index}/_update/d1`, { doc: { text: textOf('second', 1) } });
      await ctx.client.request('PUT', `/${index}/_doc/n1`, { id: 'n1', text: textOf('new', 4) });
      texts.set('d1', textOf('second', 1)).set('n1', textOf('new', 4));
    };
    const { passes, stored } = await followAround(ctx, index, {
      // The first request of the second pass, after its marks are read, that holdAt picks.
      holdAt: (request, stats) => stats >= 2 && !request.path.endsWith('/_stats') && holdAt(request),
      between,
      passesWanted: 3,
    });
    expect(wronglySigned(stored, texts), `passes: ${JSON.stringify(passes)}`).toEqual([]);
    expect(passes[1].annotated + passes[2].annotated).toBe(2);
    expect(passes.slice(0, 3).every((p) => p.complete && p.failed === 0)).toBe(true);
  };

  it('a write landing right after the marks are read (the next request held) is signed by that pass or the next', async () => {
    await writeBetweenMarksAndScan(() => true);
  }, 120_000);

  it('a write landing just before the scan opens (its first read held) is signed by the next pass', async () => {
    await writeBetweenMarksAndScan((request) => request.kind === 'pit' || /[?&]scroll=/.test(request.url));
  }, 120_000);

  /** Writes between the first two passes into every index behind `name` (each index's own), none made searchable. */
  const followShape = async (name: string, place: (i: number) => string, extra: () => Promise<void> = async () => undefined) => {
    const texts = new Map(Array.from({ length: 12 }, (_, i) => [`d${i}`, textOf('first', i)]));
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
    const create = (id: string, text: string, i: number) => [{ create: { _index: place(i), _id: id } }, { '@timestamp': at(i), id, text }];
    expect((await ctx.client.bulk([...texts].flatMap(([id, text], i) => create(id, text, i)))).errors).toBe(false);
    await ctx.client.refresh(name);
    const between = async () => {
      await extra();
      const live = await ctx.client.search(name, { size: 100, query: { match_all: {} } }); // where each lives
      expect(live.hits.hits).toHaveLength(12);
      const lines: object[] = [];
      for (const hit of live.hits.hits.filter((h) => Number(h._id.slice(1)) % 2 === 0)) lines.push({ update: { _index: hit._index, _id: hit._id } }, { doc: { text: textOf('second', Number(hit._id.slice(1))) } });
      for (let i = 0; i < 6; i++) lines.push(...create(`n${i}`, textOf('new', i + 5), 20 + i));
      expect((await ctx.client.bulk(lines)).errors).toBe(false);
      for (let i = 0; i < 12; i += 2) texts.set(`d${i}`, textOf('second', i));
      for (let i = 0; i < 6; i++) texts.set(`n${i}`, textOf('new', i + 5));
    };
    const { passes, stored } = await followAround(ctx, name, { holdAt: (request, stats) => request.path.endsWith('/_stats') && stats === 2, between, passesWanted: 3 });
    expect(wronglySigned(stored, texts), `passes: ${JSON.stringify(passes)}`).toEqual([]);
    expect(passes[1]).toMatchObject({ annotated: 12, failed: 0, complete: true });
  };

  it('over an alias of two indices (one shard and three), refresh off: the writes between passes to each are signed', async () => {
    const [one, three, alias] = [ctx.index('follow-alias-a'), ctx.index('follow-alias-b'), ctx.name('follow-alias')];
    await ctx.client.createIndex(one, { settings: { refresh_interval: '-1', number_of_shards: 1 }, aliases: { [alias]: {} } });
    await ctx.client.createIndex(three, { settings: { refresh_interval: '-1', number_of_shards: 3 }, aliases: { [alias]: {} } });
    await followShape(alias, (i) => (i % 3 === 0 ? one : three));
  }, 120_000);

  it('over a data stream, refresh off, rolled over between passes: the writes to the old and the new backing index are signed', async () => {
    const stream = await dataStream(ctx, 'follow-stream', { priority: 500, settings: { refresh_interval: '-1', number_of_shards: 2 } });
    await followShape(stream, () => stream, async () => {
      await ctx.client.request('POST', `/${stream}/_rollover`);
    });
  }, 120_000);

  it('with --resume, a document the resumed run had signed and whose text changed since is signed again by the next pass', async () => {
    const index = ctx.index('follow-resume');
    await indexDocuments(ctx.client, index, first);
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'near-dup-follow-resume-'));
    const once = await runCli(['annotate', '--url', ctx.engine.url, '--index', index, '--field', 'text'], { cwd }).done;
    expect(once.code, once.stderr).toBe(0);
    const [changed, other] = [first[2], later[0]];
    await ctx.client.request('POST', `/${index}/_update/${encodeURIComponent(changed.id)}`, { doc: { text: other.text } }, { refresh: 'true' });
    const run = runCli(['annotate', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--resume', '--follow', '--interval', '300ms'], { cwd });
    const { records: passes } = followRecords(run.child);
    const t0 = Date.now();
    while (passes.length < 3 && Date.now() - t0 < 60_000) await new Promise((r) => setTimeout(r, 50));
    run.child.kill('SIGINT');
    expect((await run.done).code).toBe(0);
    const near = (await ctx.client.request('GET', `/${index}/_doc/${encodeURIComponent(changed.id)}`)) as any;
    expect(signatureFields(near._source.near_dup), JSON.stringify(passes)).toEqual(expected.get(other.id));
    expect(passes[0]).toMatchObject({ annotated: 0, complete: true }); // the resumed run had signed everything
    expect(passes[1]).toMatchObject({ whole: true, annotated: 1 });
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

  it('marks ahead of the index (a file from elsewhere, or edited) or from an earlier near-dup are said, and the index is read whole', async () => {
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
    // Marks of a near-dup from before marks were checkpoints may have passed over writes never made searchable.
    const { basis: _basis, ...earlier } = saved;
    writeFileSync(file, JSON.stringify(earlier));
    const older = await once();
    expect(older.stderr).toMatch(/the marks in .* were written by an earlier near-dup.*the first pass reads the whole job/);
    expect(older.passes[0]).toMatchObject({ whole: true });
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
