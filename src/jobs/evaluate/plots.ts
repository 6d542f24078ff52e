// The plots of a quality report, as Vega-Lite specifications rendered without a browser or a display:
// Vega draws SVG in Node (its "none" renderer), and resvg (a Rust SVG renderer shipped as prebuilt npm
// binaries, no system libraries) turns the SVG into PNG with the machine's fonts.
import { Resvg } from '@resvg/resvg-js';
import * as vega from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';
import type { QualityReport } from './quality.js';

/** The plots an evaluation writes, each as NAME.svg and NAME.png. */
export type PlotName = 'similarity-histogram' | 'precision-recall' | 's-curve' | 'estimated-vs-exact';

const CONFIG = { font: 'DejaVu Sans, Liberation Sans, Arial, sans-serif', view: { stroke: null }, axis: { grid: true } };
const SCHEMA = 'https://vega.github.io/schema/vega-lite/v6.json';

function base(title: string) {
  return { $schema: SCHEMA, title, width: 520, height: 300, config: CONFIG, background: 'white' } as const;
}

/** Every plot's specification, its data taken from the report. */
export function plotSpecs(report: QualityReport): Record<PlotName, TopLevelSpec> {
  const related = report.truth === 'labels' ? 'labelled duplicates' : 'neighbour pairs (LSH, more_like_this)';
  const unrelated = report.truth === 'labels' ? 'labelled not duplicates' : 'random pairs';
  const markers = [
    { threshold: report.currentThreshold, what: 'current' },
    { threshold: report.recommendation.threshold, what: 'recommended' },
  ];
  return {
    'similarity-histogram': {
      ...base('Exact Jaccard of related and unrelated pairs (log scale)'),
      data: { values: report.histogram.flatMap((b) => [{ from: b.from, to: b.to, kind: related, pairs: b.related }, { from: b.from, to: b.to, kind: unrelated, pairs: b.unrelated }]) },
      mark: { type: 'bar', opacity: 0.7 },
      encoding: {
        x: { field: 'from', type: 'quantitative', bin: { binned: true, step: 0.05 }, title: 'exact Jaccard', scale: { domain: [0, 1] } },
        x2: { field: 'to' },
        y: { field: 'pairs', type: 'quantitative', scale: { type: 'symlog' }, stack: null, title: 'pairs' },
        color: { field: 'kind', type: 'nominal', title: null, legend: { orient: 'top', labelLimit: 400 } },
      },
    },
    'precision-recall': {
      ...base(`Precision and recall of b=${report.bands}, r=${report.rows} by threshold`),
      layer: [
        {
          data: { values: report.thresholds.flatMap((t) => ['precision', 'recall', 'f1'].map((m) => ({ threshold: t.threshold, measure: m, value: t[m as 'precision'] }))) },
          mark: { type: 'line', point: true },
          encoding: {
            x: { field: 'threshold', type: 'quantitative', scale: { domain: [0, 1] } },
            y: { field: 'value', type: 'quantitative', scale: { domain: [0, 1] }, title: null },
            color: { field: 'measure', type: 'nominal', title: null, legend: { orient: 'top' } },
          },
        },
        {
          data: { values: markers },
          mark: { type: 'rule', strokeDash: [4, 4] },
          encoding: { x: { field: 'threshold', type: 'quantitative' }, tooltip: { field: 'what' }, strokeWidth: { value: 1.5 } },
        },
        { data: { values: markers }, mark: { type: 'text', angle: 270, dx: -8, align: 'right', baseline: 'bottom' }, encoding: { x: { field: 'threshold', type: 'quantitative' }, y: { value: 0 }, text: { field: 'what' } } },
      ],
    },
    's-curve': {
      ...base(`LSH S-curve, b=${report.bands}, r=${report.rows}, and the candidate rate measured on pairs LSH did not choose`),
      layer: [
        {
          data: { values: report.sCurve.theory },
          mark: 'line',
          encoding: { x: { field: 'similarity', type: 'quantitative', title: 'exact Jaccard' }, y: { field: 'probability', type: 'quantitative', title: 'probability of being a candidate' } },
        },
        {
          data: { values: report.sCurve.measured.map((m) => ({ ...m, similarity: (m.from + m.to) / 2 })) },
          mark: { type: 'point', filled: true, color: '#d62728' },
          encoding: { x: { field: 'similarity', type: 'quantitative' }, y: { field: 'rate', type: 'quantitative' }, size: { field: 'pairs', type: 'quantitative', title: 'pairs measured' } },
        },
      ],
    },
    'estimated-vs-exact': {
      ...base(`MinHash estimate against exact Jaccard (mean absolute error ${report.estimation.meanAbsoluteError})`),
      layer: [
        {
          data: { values: report.estimation.points },
          mark: { type: 'point', opacity: 0.4, size: 14 },
          encoding: { x: { field: 'exact', type: 'quantitative', scale: { domain: [0, 1] } }, y: { field: 'estimated', type: 'quantitative', scale: { domain: [0, 1] } } },
        },
        { data: { values: [{ x: 0, y: 0 }, { x: 1, y: 1 }] }, mark: { type: 'line', color: 'grey', strokeDash: [4, 4] }, encoding: { x: { field: 'x', type: 'quantitative' }, y: { field: 'y', type: 'quantitative' } } },
      ],
    },
  };
}

/** A Vega-Lite specification drawn as SVG, without a browser. */
export async function renderSvg(spec: TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(compile(spec).spec), { renderer: 'none' });
  try {
    return await view.toSVG();
  } finally {
    view.finalize();
  }
}

/** An SVG drawn as PNG on white, with the machine's fonts. */
export function svgToPng(svg: string): Buffer {
  return new Resvg(svg, { background: 'white', font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' } }).render().asPng();
}
