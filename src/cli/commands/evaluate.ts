// near-dup evaluate: choose the threshold and the bands from evidence on your own data.
import { readFileSync } from 'node:fs';
import type { CommandModule } from 'yargs';
import { DEFAULT_MAX_CHARS, DEFAULT_PREFIX } from '../../annotation.js';
import { UsageError, UserError } from '../../errors.js';
import { evaluateIndex } from '../../jobs/evaluate.js';
import type { PairLabel } from '../../jobs/evaluate/pairs.js';
import { PARTIAL_COPY, type QualityReport } from '../../jobs/evaluate/quality.js';
import { olderLayoutNote } from '../../jobs/params-held.js';
import { type ConnectionArgs, connectFromArgs, withConnectionOptions } from '../connection-options.js';
import { createProgressPrinter } from '../progress.js';
import { escaped, escapedLines, jsonLine } from '../terminal-text.js';
import { advanced, examples } from '../help.js';

interface EvaluateArgs extends ConnectionArgs {
  index: string;
  field: string[];
  out: string;
  sample: number;
  pairs?: string;
  threshold: number;
  seed: number;
  neighbours: number;
  prefix: string;
  maxChars: number;
}

/** Lines {"a": ID, "b": ID, "duplicate": true|false}; a wrong line is refused with its number. */
export function readLabels(file: string): PairLabel[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UserError(`cannot read --pairs ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}; check the path`);
  }
  return text.split('\n').flatMap((line, i) => {
    if (line.trim() === '') return [];
    let value: { a?: unknown; b?: unknown; duplicate?: unknown };
    try {
      value = JSON.parse(line);
    } catch {
      throw new UsageError(`--pairs ${file} line ${i + 1} is not JSON; each line must be {"a": ID, "b": ID, "duplicate": true|false}`);
    }
    const id = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? String(v) : undefined);
    const a = id(value.a);
    const b = id(value.b);
    if (a === undefined || b === undefined || typeof value.duplicate !== 'boolean') {
      throw new UsageError(`--pairs ${file} line ${i + 1} needs "a" and "b" (ids) and "duplicate" (true or false), got ${line.slice(0, 120)}`);
    }
    return [{ a, b, duplicate: value.duplicate }];
  });
}

function summaryLines(report: QualityReport, index: string): string[] {
  const at = report.thresholds.reduce((best, row) => (Math.abs(row.threshold - report.currentThreshold) < Math.abs(best.threshold - report.currentThreshold) ? row : best));
  const sources = Object.entries(report.pairs.bySource).map(([k, n]) => `${n} ${k === 'mlt' ? 'from more_like_this' : k === 'lsh' ? 'from LSH' : k}`);
  const r = report.recommendation;
  return [
    `evaluated ${report.pairs.total} pairs of "${index}" (${sources.join(', ')}); truth: ${report.truth === 'labels' ? 'your labels' : 'exact Jaccard of the texts'}`,
    `at the threshold ${at.threshold} with b=${report.bands}, r=${report.rows}: precision ${at.precision.toFixed(3)}, recall ${at.recall.toFixed(3)}, F1 ${at.f1.toFixed(3)}`,
    `MinHash estimate against exact Jaccard: mean absolute error ${report.estimation.meanAbsoluteError.toFixed(3)}, bias ${report.estimation.bias >= 0 ? '+' : ''}${report.estimation.bias.toFixed(3)}`,
    `partial copies a Jaccard lookup misses: ${report.containment.partialCopies} pairs hold at least ${PARTIAL_COPY} of the smaller text at Jaccard under ${report.currentThreshold} (similar --measure containment finds them); ` +
      `the containment estimate from the stored samples: mean absolute error ${report.containment.meanAbsoluteError.toFixed(3)} over ${report.containment.estimatedPairs} pairs`,
    `recommended threshold ${r.threshold}: ${r.why}`,
    `recommended --threshold ${r.threshold} --false-negative-weight ${r.falseNegativeWeight} (b=${r.bands}, r=${r.rows}): ${(r.expectedRecall * 100).toFixed(1)}% of the pairs at or above it become candidates, ${(r.expectedFalseCandidates * 100).toFixed(1)}% of the others`,
  ];
}

export const evaluateCommand: CommandModule<object, EvaluateArgs> = {
  command: 'evaluate',
  describe: 'Measure precision, recall and the estimate error on your own data; plots and a recommendation',
  builder: (yargs) =>
    withConnectionOptions(yargs)
      .option('index', { alias: 'i', type: 'string', demandOption: true, describe: 'annotated index to evaluate' })
      .option('field', { alias: 'f', type: 'string', array: true, demandOption: true, describe: 'the text field(s) it was annotated from' })
      .option('out', { type: 'string', demandOption: true, describe: 'folder for report.json and the plots (SVG and PNG)' })
      .option('sample', { type: 'number', default: 200, describe: 'documents drawn at random (without --pairs)' })
      .option('pairs', { type: 'string', describe: 'labelled pairs: JSON lines {"a": ID, "b": ID, "duplicate": true|false}' })
      .option('threshold', { type: 'number', default: 0.5, describe: 'the similarity you use now (marked on the plots)' })
      .option('seed', advanced({ type: 'number', default: 1, describe: 'seed of the random sample' }))
      .option('neighbours', advanced({ type: 'number', default: 20, describe: 'neighbours asked per sampled document, of LSH and of more_like_this each' }))
      .option('prefix', advanced({ type: 'string', default: DEFAULT_PREFIX, describe: 'object the near-dup fields are under' }))
      .option('max-chars', advanced({ type: 'number', default: DEFAULT_MAX_CHARS, describe: 'cut longer texts, as annotate did' }))
      .epilogue(
        examples([
          ['near-dup evaluate --index news --field body --out quality/', 'sample 200 documents, write report.json and plots'],
        ]),
      ) as never,
  handler: async (argv) => {
    const labels = argv.pairs ? readLabels(argv.pairs) : undefined;
    const client = await connectFromArgs(argv);
    const layout = await olderLayoutNote(client, argv.index, argv.prefix, argv.field.join(' --field '));
    if (layout) process.stderr.write(escaped`near-dup: ${layout}\n`);
    const progress = createProgressPrinter('evaluate');
    try {
      const summary = await evaluateIndex(client, {
        index: argv.index,
        fields: argv.field,
        prefix: argv.prefix,
        sample: argv.sample,
        seed: argv.seed,
        neighbours: argv.neighbours,
        randomPartners: 5,
        maxChars: argv.maxChars,
        labels,
        out: argv.out,
        currentThreshold: argv.threshold,
        onProgress: (p) => progress.update({ seen: p.done, total: p.total, elapsedSeconds: p.elapsedSeconds, unit: p.stage === 'neighbours' ? 'sampled' : 'docs' }),
      });
      progress.done();
      const lines = summaryLines(summary.report, summary.index);
      if (summary.skipped.length > 0) lines.push(`${summary.skipped.length} documents left out (${summary.skipped[0].id}: ${summary.skipped[0].reason}${summary.skipped.length > 1 ? ', ...' : ''})`);
      lines.push(`report and plots in ${summary.out}`);
      process.stderr.write(escapedLines(lines));
      process.stdout.write(jsonLine({ index: summary.index, params: summary.params, files: summary.files, recommendation: summary.report.recommendation }));
    } finally {
      await client.close();
    }
  },
};
