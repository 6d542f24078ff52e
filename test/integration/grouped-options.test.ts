// annotate's and ingest's grouped options on a real engine (read, limits, state, output), and the command
// line's annotate --follow with --query and --slices, whose query and slice followIndex narrows pass by pass:
// each group does what its flat member of 0.x did (a flat member is refused now, naming the group it goes in).
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { expect, it } from 'vitest';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { ingestStream } from '../../src/jobs/ingest.js';
import { UsageError, UserError } from '../../src/errors.js';
import { createSigner } from '../../src/signature.js';
import { fixtureSample } from '../support/corpus.js';
import { expectedSignatures, followRecords, indexDocuments, runCli, signatureFields, sourcesById } from '../support/documents.js';
import { forEachEngine } from './harness.js';

const signer = createSigner();
const docs = fixtureSample(6, { seed: 36 });
const expected = expectedSignatures(signer, docs);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-grouped-'));

forEachEngine('grouped job options', (ctx) => {
  it('annotateIndex: read.query, limits, state and output.prefix do what their flat members did', async () => {
    const index = ctx.index('grouped-annotate');
    await indexDocuments(ctx.client, index, docs);
    const chosen = docs.filter((_, i) => i % 3 !== 0).map((d) => d.id);
    const query = { ids: { values: chosen } };
    const checkpointFile = path.join(tmp, `cp-${index}.json`);
    const options = {
      index,
      fields: ['text'],
      read: { query },
      limits: { pageSize: 3, threads: 1, bulk: { maxOperations: 2 } },
      state: { checkpointFile },
      output: { prefix: 'nd', errorsFile: path.join(tmp, `e-${index}.jsonl`) },
    };
    const summary = await annotateIndex(ctx.client, options);
    expect(summary).toMatchObject({ seen: chosen.length, annotated: chosen.length, failed: 0, complete: true, checkpoint: checkpointFile });
    expect(existsSync(checkpointFile)).toBe(true);
    const stored = await sourcesById(ctx.client, index);
    for (const doc of docs) {
      const source = stored.get(doc.id)!;
      expect(source.near_dup, doc.id).toBeUndefined();
      expect(signatureFields(source.nd), doc.id).toEqual(chosen.includes(doc.id) ? expected.get(doc.id) : undefined);
    }

    // The same job resumed: nothing left to do. The flat names of 0.x are refused before anything is read.
    const resumed = await annotateIndex(ctx.client, { ...options, state: { checkpointFile, resume: true } });
    expect(resumed).toMatchObject({ seen: 0, annotated: 0, complete: true });
    const flat = annotateIndex(ctx.client, { index, fields: ['text'], query, prefix: 'nd', checkpointFile, resume: true, errorsFile: options.output.errorsFile } as never);
    await expect(flat).rejects.toBeInstanceOf(UsageError);
    await expect(flat).rejects.toThrow('query: give it as read.query (annotate takes its options in groups: read, limits, state, output)');

    // Another query is another job: refused, naming the option key.
    const other = annotateIndex(ctx.client, { ...options, read: { query: { match_all: {} } }, state: { checkpointFile, resume: true } });
    await expect(other).rejects.toBeInstanceOf(UserError);
    await expect(other).rejects.toThrow(/is for a different job \(query differ\); run with the same options, or without resume to start over$/);
  });

  it('ingestStream: output.idField and output.prefix, limits.bulk', async () => {
    const index = ctx.index('grouped-ingest');
    const ndjson = `${docs.map((d) => JSON.stringify(d)).join('\n')}\n`;
    const summary = await ingestStream(ctx.client, Readable.from([ndjson]), {
      index,
      fields: ['text'],
      output: { idField: 'id', prefix: 'nd', errorsFile: path.join(tmp, `i-${index}.jsonl`) },
      limits: { threads: 1, bulk: { maxOperations: 3 } },
    });
    expect(summary).toMatchObject({ seen: docs.length, indexed: docs.length, confirmed: docs.length, failed: 0 });
    const stored = await sourcesById(ctx.client, index);
    expect([...stored.keys()].sort()).toEqual(docs.map((d) => d.id).sort());
    for (const doc of docs) {
      expect(stored.get(doc.id)!.near_dup).toBeUndefined();
      expect(signatureFields(stored.get(doc.id)!.nd)).toEqual(expected.get(doc.id));
    }
  });

  it('annotate --follow --query --slices: each pass narrows the query, the slice keeps its own marks and checkpoint', async () => {
    const index = ctx.index('grouped-follow');
    await indexDocuments(ctx.client, index, docs);
    const outside = docs.filter((_, i) => i % 4 === 0).map((d) => d.id);
    const query = JSON.stringify({ bool: { must_not: [{ ids: { values: outside } }] } });
    const cwd = mkdtempSync(path.join(os.tmpdir(), 'near-dup-grouped-follow-'));
    const run = runCli(['annotate', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--query', query, '--slices', '2', '--slice', '0', '--follow', '--interval', '300ms'], { cwd });
    const { records: passes, unfinished } = followRecords(run.child);
    const t0 = Date.now();
    // The first pass signs, the second reads back what the first wrote (unchanged), the third reads nothing.
    while (passes.length < 3) {
      if (Date.now() - t0 > 60_000 || run.child.exitCode !== null) throw new Error(`${passes.length} passes; stderr: ${unfinished().slice(-600)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    run.child.kill('SIGINT');
    const done = await run.done;
    expect(done.code, done.stderr).toBe(0);
    expect(passes[0]).toMatchObject({ whole: true, failed: 0, complete: true });
    expect(passes[0].annotated).toBeGreaterThan(0);
    expect(passes[2]).toMatchObject({ whole: false, annotated: 0, unchanged: 0, failed: 0, complete: true });
    expect(existsSync(path.join(cwd, '.near-dup', `follow-${index}-slice0of2.json`))).toBe(true);
    expect(existsSync(path.join(cwd, '.near-dup', `annotate-${index}-slice0of2.json`))).toBe(true);
    const stored = await sourcesById(ctx.client, index);
    const signed = [...stored].filter(([, source]) => source.near_dup !== undefined).map(([id]) => id);
    expect(signed.length).toBe(passes[0].annotated);
    expect(signed.filter((id) => outside.includes(id))).toEqual([]);
  }, 120_000);
});
