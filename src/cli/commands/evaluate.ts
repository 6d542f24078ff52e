// near-dup evaluate: choose the threshold and the bands from evidence on your own data.
import { forCount, plural } from '../../plural.js';
import { readFileSync } from 'node:fs';
import type { CommandModule } from 'yargs';
import { DEFAULT_MAX_CHARS, DEFAULT_PREFIX } from '../../annotation.js';
import { UsageError, UserError } from '../../errors.js';
import { evaluateIndex, evaluateTruth, type TruthSummary } from '../../jobs/evaluate.js';
import type { PairLabel } from '../../jobs/evaluate/pairs.js';
import type { NextCommands } from '../../jobs/evaluate/next-commands.js';
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
  truthField?: string;
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

/** The recommendation's commands, cheap first, each with what it costs and gives. */
function commandLines(report: QualityReport, commands: NextCommands): string[] {
  const r = report.recommendation;
  const lines = [`to apply it, first (clusters again from the signatures as they are, nothing signed): ${commands.dedup}`];
  const tuned = `${(r.expectedRecall * 100).toFixed(1)}% of the pairs at or above it become candidates, ${(r.expectedFalseCandidates * 100).toFixed(1)}% of the others`;
  if (commands.annotate === undefined) lines.push(`its LSH bands (b=${r.bands}, r=${r.rows}) are already the ones for ${r.threshold}: ${tuned}; no need to sign again`);
  else {
    lines.push(`then, for LSH bands tuned to ${r.threshold} (b=${r.bands}, r=${r.rows} in place of b=${report.bands}, r=${report.rows}: ${tuned}), sign every document again and run that dedup again: ${commands.annotate}`);
    if (commands.note) lines.push(`  (${commands.note})`);
  }
  return lines;
}

function summaryLines(report: QualityReport, index: string, commands: NextCommands): string[] {
  const at = report.thresholds.reduce((best, row) => (Math.abs(row.threshold - report.currentThreshold) < Math.abs(best.threshold - report.currentThreshold) ? row : best));
  const sources = Object.entries(report.pairs.bySource).map(([k, n]) => `${n} ${k === 'mlt' ? 'from more_like_this' : k === 'lsh' ? 'from LSH' : k}`);
  const r = report.recommendation;
  return [
    `evaluated ${plural(report.pairs.total, 'pair')} of "${index}" (${sources.join(', ')}); truth: ${report.truth === 'labels' ? 'your labels' : 'exact Jaccard of the texts'}`,
    `at the threshold ${at.threshold} with b=${report.bands}, r=${report.rows}: precision ${at.precision.toFixed(3)}, recall ${at.recall.toFixed(3)}, F1 ${at.f1.toFixed(3)}`,
    `MinHash estimate against exact Jaccard: mean absolute error ${report.estimation.meanAbsoluteError.toFixed(3)}, bias ${report.estimation.bias >= 0 ? '+' : ''}${report.estimation.bias.toFixed(3)}`,
    `partial copies a Jaccard lookup misses: ${plural(report.containment.partialCopies, 'pair')} ${forCount(report.containment.partialCopies, 'holds', 'hold')} at least ${PARTIAL_COPY} of the smaller text at Jaccard under ${report.currentThreshold} (similar --measure containment finds them); ` +
      `the containment estimate from the stored samples: mean absolute error ${report.containment.meanAbsoluteError.toFixed(3)} over ${plural(report.containment.estimatedPairs, 'pair')}`,
    `recommended threshold ${r.threshold}: ${r.why}`,
    ...commandLines(report, commands),
  ];
}

const fixed = (x: number | null) => (x === null ? 'none' : x.toFixed(3));

/** The figures of a truth evaluation, each with the numbers behind it. */
export function truthLines(summary: TruthSummary): string[] {
  const { documents: d, truth: t, scores: s } = summary.report;
  const field = summary.report.truthField;
  const lines = [
    `evaluated the clusters of "${summary.index}" against ${field}: ${plural(d.evaluated, 'document')}, ${plural(t.sources, 'source')}, ${plural(t.groups, 'truth group')} (sources joined by ${plural(t.crossSourcePairsAtSameText, 'pair')} of different sources at J >= ${t.sameText}); similarity: ${summary.report.similarity}`,
    `pair precision ${fixed(s.precision)}: ${s.truePairsInClusters} of the ${plural(s.clusterPairs, 'pair')} in ${plural(s.clusters, 'cluster')} (${plural(s.clustered, 'document')}) ${forCount(s.truePairsInClusters, 'is', 'are')} of one truth group`,
    `recall ${fixed(s.recall)}: ${s.recallFound} of the ${s.recallPairs} true pairs at J >= ${t.recallFrom} share a cluster`,
    `truth groups split: ${s.split} of the ${s.splitOf} with a pair at J >= ${t.sameText} (${t.mustJoinPairs} such pairs) have it in different clusters`,
    s.largest.size === 0 ? 'largest cluster: none' : `largest cluster: ${plural(s.largest.size, 'document')} from ${plural(s.largest.sources, 'source')} (${plural(s.largest.groups, 'truth group')}), cluster_id ${s.largest.clusterId}, e.g. ${s.largest.example}`,
  ];
  if (d.withoutSource.count > 0) lines.push(`${plural(d.withoutSource.count, 'document')} ${forCount(d.withoutSource.count, 'has', 'have')} no single value of ${field}, each its own source (${d.withoutSource.examples.join(', ')}${d.withoutSource.count > d.withoutSource.examples.length ? ', ...' : ''})`);
  if (d.withoutText.count > 0) lines.push(`${plural(d.withoutText.count, 'document')} left out, without text (${d.withoutText.examples[0].id}: ${d.withoutText.examples[0].reason}${d.withoutText.count > 1 ? ', ...' : ''})`);
  lines.push(`in ${summary.seconds.toFixed(1)} s; report in ${summary.file}`);
  return lines;
}

/** `near-dup evaluate`: how well the signatures find an index's duplicates, measured on its own pairs. */
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
      .option('truth-field', { type: 'string', describe: "measure dedup's clusters against this field, each document's source (its value names the text it comes from): pair precision, recall, groups split" })
      .option('threshold', { type: 'number', default: 0.5, describe: 'the similarity you use now (marked on the plots)' })
      .option('seed', advanced({ type: 'number', default: 1, describe: 'seed of the random sample' }))
      .option('neighbours', advanced({ type: 'number', default: 20, describe: 'neighbours asked per sampled document, of LSH and of more_like_this each' }))
      .option('prefix', advanced({ type: 'string', default: DEFAULT_PREFIX, describe: 'object the near-dup fields are under' }))
      .option('max-chars', advanced({ type: 'number', default: DEFAULT_MAX_CHARS, describe: 'cut longer texts, as annotate did' }))
      .epilogue(
        examples([
          ['near-dup evaluate --index news --field body --out quality/', 'sample 200 documents, write report.json and plots'],
          ['near-dup evaluate --index docs --field body --truth-field source --out quality/', "after dedup: its clusters against each document's source"],
        ]),
      ) as never,
  handler: async (argv) => {
    if (argv.truthField !== undefined) return handleTruth(argv);
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
      const lines = summaryLines(summary.report, summary.index, summary.commands);
      if (summary.skipped.length > 0) lines.push(`${plural(summary.skipped.length, 'document')} left out (${summary.skipped[0].id}: ${summary.skipped[0].reason}${summary.skipped.length > 1 ? ', ...' : ''})`);
      lines.push(`report and plots in ${summary.out}`);
      process.stderr.write(escapedLines(lines));
      process.stdout.write(jsonLine({ index: summary.index, params: summary.params, files: summary.files, recommendation: summary.report.recommendation, commands: summary.commands }));
    } finally {
      await client.close();
    }
  },
};

async function handleTruth(argv: EvaluateArgs): Promise<void> {
  if (argv.pairs) throw new UsageError(`--truth-field ${argv.truthField} and --pairs ${argv.pairs} are two truths: give one`);
  if (argv.truthField === '') throw new UsageError('--truth-field is empty: give the field that names each document\'s source, e.g. --truth-field source');
  const client = await connectFromArgs(argv);
  const progress = createProgressPrinter('evaluate');
  try {
    const summary = await evaluateTruth(client, {
      index: argv.index,
      fields: argv.field,
      prefix: argv.prefix,
      maxChars: argv.maxChars,
      truthField: argv.truthField as string,
      out: argv.out,
      onProgress: (p) => progress.update({ seen: p.done, total: p.total, elapsedSeconds: p.elapsedSeconds, unit: 'docs' }),
    });
    progress.done();
    process.stderr.write(escapedLines(truthLines(summary)));
    const { precision, recall, split, splitOf, largest } = summary.report.scores;
    process.stdout.write(jsonLine({ index: summary.index, truthField: summary.report.truthField, files: [summary.file], precision, recall, split, splitOf, largest }));
  } finally {
    await client.close();
  }
}
