// near-dup evaluate on a real engine: an annotated corpus whose truth the test knows, evaluated from the
// command line by sampling and by labels; the report's figures are checked against exact Jaccard computed
// here, and every plot is written as SVG and PNG.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { createSigner } from '../../src/signature.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { fixtureSample } from '../support/corpus.js';
import { indexDocuments, runCli } from '../support/documents.js';
import { exactJaccardOf } from '../support/jaccard.js';
import { forEachEngine } from './harness.js';

const signer = createSigner();
const docs = fixtureSample(20, { seed: 31 });
const exactJaccard = exactJaccardOf(signer, docs);
const PLOTS = ['similarity-histogram', 'precision-recall', 's-curve', 'estimated-vs-exact'];

forEachEngine('evaluate', (ctx) => {
  const index = ctx.index('evaluate');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-evaluate-'));

  beforeAll(async () => {
    await indexDocuments(ctx.client, index, docs);
    const summary = await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, state: { checkpointFile: path.join(tmp, 'cp.json') }, output: { prefix: 'near_dup', errorsFile: path.join(tmp, 'errors.jsonl') } });
    expect(summary.complete).toBe(true);
  });

  const evaluate = async (args: string[]) => {
    const out = path.join(tmp, args.includes('--pairs') ? 'labels' : 'sample');
    const result = await runCli(['evaluate', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--out', out, ...args], { cwd: tmp }).done;
    expect(result.code, result.stderr).toBe(0);
    return { out, stderr: result.stderr, report: JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8')) };
  };

  it('by sampling: pairs from LSH, more_like_this and random documents, each exact Jaccard right, the plots written', async () => {
    const { out, stderr, report } = await evaluate(['--sample', String(docs.length)]);
    expect(Object.keys(report.pairs.bySource).sort()).toEqual(['lsh', 'mlt', 'random']);
    // Every pair's exact Jaccard, as the report bins them, agrees with the one computed here.
    const total = report.histogram.reduce((s: number, b: any) => s + b.related + b.unrelated, 0);
    expect(total).toBe(report.pairs.total);
    const strong = docs.flatMap((a, i) => docs.slice(i + 1).filter((b) => exactJaccard(a.id, b.id) >= 0.6)).length;
    const evaluatedStrong = report.histogram.filter((b: any) => b.from >= 0.6).reduce((s: number, b: any) => s + b.related + b.unrelated, 0);
    expect(evaluatedStrong).toBe(strong); // every pair 0.1 above the threshold is among the evaluated pairs
    const atCurrent = report.thresholds.find((t: any) => t.threshold === 0.5);
    expect(atCurrent.recall).toBeGreaterThan(0.8);
    expect(report.estimation.meanAbsoluteError).toBeLessThan(0.1);
    // Containment: estimated from the stored samples where they are large enough, close to the exact value.
    expect(report.containment.estimatedPairs).toBeGreaterThan(0);
    expect(report.containment.meanAbsoluteError).toBeLessThan(0.1);
    expect(stderr).toMatch(/partial copies a Jaccard lookup misses: \d+ pairs/);
    expect(report.recommendation.threshold).toBeGreaterThanOrEqual(0.2);
    // The commands that apply it, cheap first, with the flags those commands take.
    const t = report.recommendation.threshold;
    expect(stderr).toContain(`first (clusters again from the signatures as they are, nothing signed): near-dup dedup --index ${index} --min-similarity ${t}`);
    expect(report.commands.dedup).toBe(`near-dup dedup --index ${index} --min-similarity ${t}`);
    if (report.recommendation.bands !== report.bands || report.recommendation.rows !== report.rows) {
      expect(stderr).toContain(`sign every document again and run that dedup again: near-dup annotate --index ${index} --field text --threshold ${t} --false-negative-weight ${report.recommendation.falseNegativeWeight}\n`);
    }
    for (const name of PLOTS) {
      expect(readFileSync(path.join(out, `${name}.svg`), 'utf8').startsWith('<svg')).toBe(true);
      expect(readFileSync(path.join(out, `${name}.png`)).subarray(1, 4).toString()).toBe('PNG');
    }
  });

  it('by labels: the truth is the user’s, the recommendation the best F1', async () => {
    const labels = docs.flatMap((a, i) => docs.slice(i + 1, i + 6).map((b) => ({ a: a.id, b: b.id, duplicate: a.family === b.family && exactJaccard(a.id, b.id) >= 0.5 })));
    const file = path.join(tmp, 'labels.jsonl');
    writeFileSync(file, labels.map((l) => JSON.stringify(l)).join('\n'));
    const { report, stderr } = await evaluate(['--pairs', file]);
    expect(report.truth).toBe('labels');
    expect(report.pairs.total).toBe(labels.length);
    const bestF1 = Math.max(...report.thresholds.map((t: any) => t.f1));
    expect(report.thresholds.find((t: any) => t.threshold === report.recommendation.threshold).f1).toBe(bestF1);
    expect(bestF1).toBeGreaterThan(0.8);
    expect(stderr).toMatch(/truth: your labels/);
    expect(existsSync(path.join(tmp, 'labels', 's-curve.png'))).toBe(true);
  });

  it('after a dedup here, the printed dedup command cuts as that run did (its rule and its clusters)', async () => {
    const dedup = await runCli(['dedup', '--url', ctx.engine.url, '--index', index, '--canonical', 'longest', '--clusters', 'components'], { cwd: tmp }).done;
    expect(dedup.code, dedup.stderr).toBe(0);
    const { report, stderr } = await evaluate(['--sample', String(docs.length)]);
    const t = report.recommendation.threshold;
    expect(report.commands.dedup).toBe(`near-dup dedup --index ${index} --min-similarity ${t} --canonical longest --clusters components`);
    expect(stderr).toContain(report.commands.dedup);
    expect(report.commands.note ?? '').not.toMatch(/--canonical/);
  });
});
