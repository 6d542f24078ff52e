// dedup's progress by stage (issue 50: "a 9.8 s dedup printed no progress"): a full run reports the signatures
// read, the bands, the families cut and the documents written back, in that order; an incremental one the new
// documents, the pairs verified around them, the cut and the write-back. The last write-back report counts every
// document written. Without a terminal the command line writes each stage as a JSON line (paced by
// NEAR_DUP_PROGRESS_SECONDS, here 0: every report).
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { type DedupProgress, type DedupSummary, dedupIndex } from '../../src/jobs/dedup.js';
import { fixtureSample } from '../support/corpus.js';
import { indexDocuments, runCli } from '../support/documents.js';
import { forEachEngine } from './harness.js';

const docs = fixtureSample(20);

type Report = Parameters<DedupProgress>[0];

/** The stages in the order reported, each once. */
function stagesOf(reports: Report[]): string[] {
  return reports.map((r) => r.stage).filter((stage, i, all) => i === 0 || all[i - 1] !== stage);
}

forEachEngine('dedup progress', (ctx) => {
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'nd-dedup-progress-'));

  it('reports every stage in order, the last write-back report the documents written', async () => {
    const index = ctx.index('dedup-progress');
    await indexDocuments(ctx.client, index, docs);
    await annotateIndex(ctx.client, { index, fields: ['text'], signer: {} });
    const stateFile = path.join(cwd, `${index}.json`);
    const run = async (): Promise<{ reports: Report[]; summary: DedupSummary }> => {
      const reports: Report[] = [];
      const summary = await dedupIndex(ctx.client, { index, state: { stateFile }, onProgress: (p) => reports.push(p) });
      return { reports, summary };
    };

    const full = await run();
    expect(full.summary.mode).toBe('full');
    expect(stagesOf(full.reports)).toEqual(['signatures', 'bands', 'cut', 'write-back']);
    expect(full.summary.written).toBeGreaterThan(0);
    expect(full.reports.at(-1)).toMatchObject({ stage: 'write-back', done: full.summary.written });
    expect(full.reports.filter((r) => r.stage === 'cut').at(-1)?.done).toBe(full.summary.families);

    // Copies of two documents, signed: the next run is incremental and verifies the pairs around them.
    const copies = docs.slice(0, 2).map((d) => ({ ...d, id: `${d.id}-copy` }));
    await indexDocuments(ctx.client, index, copies);
    await annotateIndex(ctx.client, { index, fields: ['text'], signer: {} });
    const incremental = await run();
    expect(incremental.summary.mode).toBe('incremental');
    expect(stagesOf(incremental.reports)).toEqual(['new documents', 'verify', 'cut', 'write-back']);
    expect(incremental.reports.filter((r) => r.stage === 'verify').at(-1)?.done).toBe(incremental.summary.verifiedPairs);
    expect(incremental.reports.at(-1)).toMatchObject({ stage: 'write-back', done: incremental.summary.written });
  });

  it('without a terminal, the command line writes each stage as a JSON line', async () => {
    const index = ctx.index('dedup-progress-cli');
    await indexDocuments(ctx.client, index, docs);
    await annotateIndex(ctx.client, { index, fields: ['text'], signer: {} });
    const run = await runCli(['dedup', '--url', ctx.engine.url, '--index', index, '--full'], { cwd, env: { NEAR_DUP_PROGRESS_SECONDS: '0' } }).done;
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stderr.split('\n').filter((l) => l.startsWith('{"job":"dedup"')).map((l) => JSON.parse(l));
    const stages = lines.map((l) => l.stage).filter((stage, i, all) => i === 0 || all[i - 1] !== stage);
    expect(stages).toEqual(['signatures', 'bands', 'cut', 'write-back']);
    expect(lines.at(-1).seen).toBe(JSON.parse(run.stdout).written);
  });
});
