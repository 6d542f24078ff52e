// evaluate's pure parts: the figures of a quality report from pairs whose truth is known, the plots' data
// taken from it, and the plots rendered to SVG and PNG without a browser.
import { describe, expect, it } from 'vitest';
import { readLabels } from '../../src/cli/commands/evaluate.js';
import { plotSpecs, renderSvg, svgToPng } from '../../src/jobs/evaluate/plots.js';
import { candidateProbability, type EvaluatedPair, qualityReport } from '../../src/jobs/evaluate/quality.js';
import { writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const lsh = { bands: 26, rows: 4, numPerm: 128 };
const pair = (exact: number, estimated: number, candidate: boolean, source: EvaluatedPair['source'] = 'lsh', duplicate?: boolean): EvaluatedPair => ({
  a: `a${exact}`,
  b: `b${estimated}`,
  source,
  exact,
  estimated,
  candidate,
  duplicate,
});

describe('quality report', () => {
  it('precision, recall and F1 by threshold against exact Jaccard', () => {
    const pairs = [pair(0.9, 0.88, true), pair(0.6, 0.45, true), pair(0.55, 0.6, false, 'mlt'), pair(0.3, 0.52, true), pair(0.05, 0.0, false, 'random')];
    const report = qualityReport(pairs, lsh, 0.5);
    expect(report.thresholds.map((t) => t.threshold)).toEqual([0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95]);
    // At 0.5: related 0.9, 0.6, 0.55; predicted (candidate and estimate >= 0.5) 0.9 and 0.3 (estimated 0.52).
    expect(report.thresholds[9]).toEqual({ threshold: 0.5, precision: 0.5, recall: 0.3333, f1: 0.4, truePositives: 1, falsePositives: 1, falseNegatives: 2 });
    expect(report.pairs).toEqual({ total: 5, bySource: { lsh: 3, mlt: 1, random: 1 } });
    expect(report.estimation.bias).toBeCloseTo((-0.02 - 0.15 + 0.05 + 0.22 - 0.05) / 5, 4);
    expect(report.sCurve.theory[50]).toEqual({ similarity: 0.5, probability: Number(candidateProbability(0.5, 26, 4).toFixed(4)) });
    // Measured on the pairs LSH did not choose: in 0.5-0.6 only the more_like_this pair, not a candidate.
    expect(report.sCurve.measured.find((m) => m.from === 0.5)).toEqual({ from: 0.5, to: 0.6, pairs: 1, candidates: 0, rate: 0 });
    expect(report.sCurve.measured.map((m) => m.from)).toEqual([0, 0.5]);
    expect(report.histogram.reduce((s, b) => s + b.related + b.unrelated, 0)).toBe(5);
    expect(report.histogram.find((b) => b.from === 0.05)).toMatchObject({ related: 0, unrelated: 1 });
  });

  it('counts the pairs by source in one order, whichever source the run met first (the summary line reads alike run to run)', () => {
    const pairs = [pair(0.9, 0.88, true), pair(0.05, 0.0, false, 'random'), pair(0.55, 0.6, false, 'mlt')];
    expect(Object.keys(qualityReport(pairs, lsh, 0.5).pairs.bySource)).toEqual(['mlt', 'lsh', 'random']);
    expect(Object.keys(qualityReport([...pairs].reverse(), lsh, 0.5).pairs.bySource)).toEqual(['mlt', 'lsh', 'random']);
  });

  it('with labels: the truth is the label, and the recommended threshold the best F1', () => {
    const pairs = [pair(0.8, 0.8, true, 'labels', true), pair(0.7, 0.72, true, 'labels', true), pair(0.35, 0.36, true, 'labels', false), pair(0.2, 0.2, false, 'labels', false)];
    const report = qualityReport(pairs, lsh, 0.5);
    expect(report.truth).toBe('labels');
    const best = Math.max(...report.thresholds.map((t) => t.f1));
    expect(best).toBe(1);
    expect(report.recommendation.threshold).toBe(0.4); // the first threshold with F1 1: above 0.36, below 0.72
    expect(report.recommendation.why).toMatch(/best F1 on your labels: 1.000 at 0.4/);
    expect(report.recommendation.alternatives.map((a) => a.falseNegativeWeight)).toEqual([0.5, 0.6, 0.75, 0.9, 0.95]);
    expect(report.recommendation.expectedRecall).toBeGreaterThanOrEqual(0.95);
  });

  it('without labels: the emptiest stretch of the neighbour pairs, and bands that keep 95% of the pairs above it', () => {
    const pairs: EvaluatedPair[] = [];
    for (let i = 0; i < 40; i++) pairs.push(pair(0.8 + (i % 10) / 100, 0.8, true), pair(0.2 + (i % 10) / 100, 0.25, i % 4 === 0, 'mlt'));
    const report = qualityReport(pairs, lsh, 0.5);
    const r = report.recommendation;
    expect(r.threshold).toBeGreaterThan(0.3);
    expect(r.threshold).toBeLessThan(0.8);
    expect(r.expectedRecall).toBeGreaterThanOrEqual(0.95);
    const choice = r.alternatives.find((a) => a.falseNegativeWeight === r.falseNegativeWeight);
    expect(choice).toMatchObject({ bands: r.bands, rows: r.rows });
  });
});

describe('containment in the report', () => {
  it('counts the partial copies a Jaccard lookup misses, and the sample estimate error', () => {
    const withContainment = (exact: number, c: number, estimated: number | null): EvaluatedPair => ({ ...pair(exact, exact, true), containment: { exact: c, estimated } });
    const pairs = [withContainment(0.3, 0.95, 0.9), withContainment(0.45, 0.85, null), withContainment(0.7, 0.9, 0.92), withContainment(0.2, 0.3, 0.34)];
    const report = qualityReport(pairs, lsh, 0.5);
    // At Jaccard under 0.5 and containment of at least 0.8: the first two.
    expect(report.containment.partialCopies).toBe(2);
    expect(report.containment.partialCopyShare).toBe(0.5);
    expect(report.containment.estimatedPairs).toBe(3);
    expect(report.containment.meanAbsoluteError).toBeCloseTo((0.05 + 0.02 + 0.04) / 3, 4);
    expect(report.containment.bias).toBeCloseTo((-0.05 + 0.02 + 0.04) / 3, 4);
  });
});

describe('plots', () => {
  const pairs: EvaluatedPair[] = Array.from({ length: 200 }, (_, i) => pair(i / 200, Math.min(1, i / 200 + ((i % 7) - 3) / 100), i > 60, i % 5 === 0 ? 'random' : 'lsh'));
  const report = qualityReport(pairs, lsh, 0.5);

  it("each plot's data is the report's", () => {
    const specs = plotSpecs(report) as Record<string, any>;
    expect(Object.keys(specs).sort()).toEqual(['estimated-vs-exact', 'precision-recall', 's-curve', 'similarity-histogram']);
    const histogram = specs['similarity-histogram'].data.values;
    expect(histogram.reduce((s: number, v: any) => s + v.pairs, 0)).toBe(200);
    expect(specs['similarity-histogram'].encoding.y.scale.type).toBe('symlog');
    const pr = specs['precision-recall'].layer[0].data.values;
    expect(pr.filter((v: any) => v.measure === 'recall').map((v: any) => v.value)).toEqual(report.thresholds.map((t) => t.recall));
    expect(specs['precision-recall'].layer[1].data.values.map((m: any) => m.threshold)).toEqual([0.5, report.recommendation.threshold]);
    expect(specs['s-curve'].layer[1].data.values.map((m: any) => m.rate)).toEqual(report.sCurve.measured.map((m) => m.rate));
    expect(specs['estimated-vs-exact'].layer[0].data.values).toHaveLength(200);
  });

  it('render to SVG and PNG without a browser', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'near-dup-plots-'));
    for (const [name, spec] of Object.entries(plotSpecs(report))) {
      const svg = await renderSvg(spec);
      expect(svg.startsWith('<svg')).toBe(true);
      expect(svg).toContain(`>${String((spec as { title: string }).title).slice(0, 24)}`);
      const png = svgToPng(svg);
      expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a');
      expect(png.readUInt32BE(16)).toBeGreaterThan(500); // width from the IHDR chunk
      writeFileSync(path.join(dir, `${name}.png`), png);
    }
  });
});

it('--pairs: each line checked, the line number in the refusal', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'near-dup-labels-'));
  const good = path.join(dir, 'good.jsonl');
  writeFileSync(good, '{"a": "x", "b": 2, "duplicate": true}\n\n{"a": "y", "b": "z", "duplicate": false}\n');
  expect(readLabels(good)).toEqual([{ a: 'x', b: '2', duplicate: true }, { a: 'y', b: 'z', duplicate: false }]);
  const bad = path.join(dir, 'bad.jsonl');
  writeFileSync(bad, '{"a": "x", "b": "y", "duplicate": true}\n{"a": "x", "b": "y", "duplicate": "yes"}\n');
  expect(() => readLabels(bad)).toThrow(/line 2 needs "a" and "b" \(ids\) and "duplicate" \(true or false\)/);
  expect(() => readLabels(path.join(dir, 'none.jsonl'))).toThrow(/cannot read --pairs .*none.jsonl: ENOENT/);
});
