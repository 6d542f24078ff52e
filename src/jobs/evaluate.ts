// near-dup evaluate: how well an index's signatures find its near-duplicates, measured on its own texts (or
// on the user's labelled pairs), written as DIR/report.json and plots, with a recommendation. Or, given a
// truth field (each document's source), how well dedup's clusters match it (evaluateTruth).
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { EngineClient } from '../engine/client.js';
import { UserError } from '../errors.js';
import { resolveSignerSettings, signerOptionsFromParams } from '../signature.js';
import { keptDraw } from '../indices/template-store.js';
import { clusterUuid, readDedupState, stateFileOf } from './dedup/state/state-file.js';
import { type EvaluatedIndex, type NextCommands, nextCommands } from './evaluate/next-commands.js';
import { type GatheredPairs, gatherPairs, type PairSource } from './evaluate/pairs.js';
import { type PlotName, plotSpecs, renderSvg, svgToPng } from './evaluate/plots.js';
import { type QualityReport, qualityReport } from './evaluate/quality.js';
import { readTruthDocs, requireClusters, type TruthSource } from './evaluate/truth-read.js';
import { type TruthReport, truthReport } from './evaluate/truth-report.js';
import { replaceFile } from './file-writes.js';
import { plural } from '../plural.js';

/** What `evaluate` reads (its pair source) and where it writes its report and plots. */
export interface EvaluateOptions extends PairSource {
  out: string;
  /** The similarity lookups keep by default, marked on the plots (default 0.5). */
  currentThreshold: number;
}

/** What `evaluate` wrote, with the report and the next commands it suggests. */
export interface EvaluateSummary {
  index: string;
  params: string;
  out: string;
  report: QualityReport;
  /** The commands that apply the recommendation, the cheap one first. */
  commands: NextCommands;
  skipped: GatheredPairs['skipped'];
  files: string[];
}

/** The report's name in the output folder, for both kinds of evaluation. */
export const REPORT_FILE = 'report.json';

/**
 * Measures how well the index's signatures find its near-duplicate pairs at each threshold, writes report.json and the
 * plots, and the next commands its recommendation calls for.
 */
export async function evaluateIndex(client: EngineClient, options: EvaluateOptions): Promise<EvaluateSummary> {
  let gathered: GatheredPairs;
  try {
    gathered = await gatherPairs(client, options);
  } catch (err) {
    throw client.explain(err, options.index);
  }
  if (gathered.pairs.length === 0) {
    throw new UserError(`no pair of "${options.index}" could be evaluated (${plural(gathered.skipped.length, 'document')} left out, e.g. ${gathered.skipped[0]?.reason ?? 'none'}); check --field and --pairs`);
  }
  const settings = resolveSignerSettings(signerOptionsFromParams(gathered.params));
  const report = qualityReport(gathered.pairs, { bands: settings.lsh.b, rows: settings.lsh.r, numPerm: settings.spec.numPerm }, options.currentThreshold);
  const commands = nextCommands({ ...options, params: gathered.params, ...(await howItWasMade(client, options, gathered.params)) }, report.recommendation);
  await mkdir(options.out, { recursive: true });
  const reportFile = path.join(options.out, REPORT_FILE);
  const { labels: _labels, ...asked } = options;
  // Each file replaced through a fresh temporary one: a symbolic link in the folder is replaced, not followed (file-writes.ts).
  await replaceFile(reportFile, JSON.stringify({ index: options.index, params: gathered.params, generatedAt: new Date().toISOString(), options: asked, skipped: gathered.skipped, ...report, commands }, null, 2));
  const files = [reportFile, ...(await writePlots(report, options.out))];
  return { index: options.index, params: gathered.params, out: options.out, report, commands, skipped: gathered.skipped, files };
}

/**
 * What the printed commands must keep: the last dedup's cut (its state file on this machine) and the draw of
 * the index's template tokens. Either unknown leaves the commands to say so (next-commands.ts), never fails
 * the evaluation.
 */
async function howItWasMade(client: EngineClient, options: EvaluateOptions, params: string): Promise<Pick<EvaluatedIndex, 'lastDedup' | 'templateDraw'>> {
  const { state } = await readDedupState(stateFileOf(options.index, await clusterUuid(client)).read);
  const lastDedup = state && state.prefix === options.prefix ? { order: state.order, clusters: state.clusters } : undefined;
  const digest = signerOptionsFromParams(params)?.templateDigest;
  const templateDraw = digest === undefined ? undefined : await keptDraw(client, options.index, digest).catch(() => undefined);
  return { ...(lastDedup ? { lastDedup } : {}), ...(templateDraw ? { templateDraw } : {}) };
}

async function writePlots(report: QualityReport, out: string): Promise<string[]> {
  const files: string[] = [];
  for (const [name, spec] of Object.entries(plotSpecs(report)) as Array<[PlotName, Parameters<typeof renderSvg>[0]]>) {
    const svg = await renderSvg(spec);
    await replaceFile(path.join(out, `${name}.svg`), svg);
    await replaceFile(path.join(out, `${name}.png`), svgToPng(svg));
    files.push(path.join(out, `${name}.svg`), path.join(out, `${name}.png`));
  }
  return files;
}

/**
 * What `evaluate --truth-field` reads (dedup's clusters, and the field naming each document's source) and where
 * it writes its report.
 */
export interface TruthOptions extends TruthSource {
  out: string;
}

/** What `evaluate --truth-field` wrote, and how long the run took. */
export interface TruthSummary {
  index: string;
  out: string;
  report: TruthReport;
  /** The whole run, the scan included. */
  seconds: number;
  file: string;
}

/** Dedup's clusters against the sources of the truth field, written as DIR/report.json. */
export async function evaluateTruth(client: EngineClient, options: TruthOptions): Promise<TruthSummary> {
  const started = performance.now();
  let report: TruthReport;
  try {
    await requireClusters(client, options.index, options.prefix);
    report = truthReport(await readTruthDocs(client, options), options.truthField);
  } catch (err) {
    throw client.explain(err, options.index);
  }
  if (report.documents.evaluated === 0) {
    throw new UserError(`no document of "${options.index}" has text in --field ${options.fields.join(' --field ')} (${report.documents.withoutText.examples[0]?.reason ?? 'none read'}); check --field`);
  }
  const seconds = (performance.now() - started) / 1000;
  await mkdir(options.out, { recursive: true });
  const file = path.join(options.out, REPORT_FILE);
  const { onProgress: _progress, ...asked } = options;
  await replaceFile(file, JSON.stringify({ index: options.index, generatedAt: new Date().toISOString(), options: asked, seconds, ...report }, null, 2));
  return { index: options.index, out: options.out, report, seconds, file };
}
