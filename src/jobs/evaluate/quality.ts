// The quality of an index's signatures, from pairs whose true similarity is known: precision, recall and F1
// of the current parameters at each threshold, the LSH S-curve against the rate measured on the pairs,
// how far the MinHash estimate is from exact Jaccard, and a recommendation with the figures behind it.
// Pure: pairs in, report out.
import { optimalBandsRows } from '../../sketch/lsh.js';
import { forCount, plural } from '../../plural.js';

/**
 * One pair of an evaluation: how it was found, its exact Jaccard, the estimate, and whether LSH makes it a candidate.
 */
export interface EvaluatedPair {
  a: string;
  b: string;
  /** How the pair was found: LSH candidates, the engine's more_like_this, random documents, or the user's labels. */
  source: 'lsh' | 'mlt' | 'random' | 'labels';
  /** Exact Jaccard of the two token sets (the tokens MinHash sees). */
  exact: number;
  /** The estimate from the stored MinHash signatures. */
  estimated: number;
  /** Whether the two share a band key: a candidate of the LSH query. */
  candidate: boolean;
  /** The user's label, with --pairs. */
  duplicate?: boolean;
  /** Share of the smaller text's tokens inside the other: exact, and estimated from the stored samples (null when too few are sampled). */
  containment?: { exact: number; estimated: number | null };
}

/** What the current bands give at one threshold: precision, recall and F1. */
export interface ThresholdRow {
  threshold: number;
  precision: number;
  recall: number;
  f1: number;
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
}

/** An evaluation's report: the figures at each threshold, the S-curve, the estimate's error, and the recommendation. */
export interface QualityReport {
  bands: number;
  rows: number;
  numPerm: number;
  /** The similarity the lookups keep by default (marked on the plots). */
  currentThreshold: number;
  truth: 'exact-jaccard' | 'labels';
  pairs: { total: number; bySource: Record<string, number> };
  thresholds: ThresholdRow[];
  sCurve: {
    theory: Array<{ similarity: number; probability: number }>;
    measured: Array<{ from: number; to: number; pairs: number; candidates: number; rate: number }>;
  };
  estimation: {
    meanAbsoluteError: number;
    rootMeanSquareError: number;
    bias: number;
    byBin: Array<{ from: number; to: number; pairs: number; meanAbsoluteError: number; bias: number }>;
    /** Up to MAX_POINTS pairs, for the scatter plot. */
    points: Array<{ exact: number; estimated: number }>;
  };
  histogram: Array<{ from: number; to: number; related: number; unrelated: number }>;
  containment: ContainmentQuality;
  recommendation: Recommendation;
}

/** What the pairs say of partial copies, which a Jaccard lookup misses and a containment one finds. */
export interface ContainmentQuality {
  /** Pairs whose smaller text is at least PARTIAL_COPY inside the other while their Jaccard is under the current threshold: partial copies a Jaccard lookup misses. */
  partialCopies: number;
  partialCopyShare: number;
  /** The estimate from the stored samples against exact containment, over the pairs with enough sampled tokens. */
  estimatedPairs: number;
  meanAbsoluteError: number;
  bias: number;
}

/** A choice of bands and rows, and the weight of missed pairs that gives it. */
export interface LshChoice {
  falseNegativeWeight: number;
  bands: number;
  rows: number;
  /** Share of the pairs at or above the threshold that these bands would make candidates (from their exact similarity). */
  expectedRecall: number;
  /** Share of the pairs below it that would still be candidates (read and verified for nothing). */
  expectedFalseCandidates: number;
}

/** The threshold and bands the pairs argue for, why, and the choices beside it. */
export interface Recommendation extends LshChoice {
  threshold: number;
  why: string;
  alternatives: LshChoice[];
}

const THRESHOLDS = Array.from({ length: 19 }, (_, i) => round((i + 1) * 0.05));
const FALSE_NEGATIVE_WEIGHTS = [0.5, 0.6, 0.75, 0.9, 0.95];
const TARGET_RECALL = 0.95;
const MAX_POINTS = 5000;
/** Containment from which a pair counts as a partial copy. */
export const PARTIAL_COPY = 0.8;

function mean(xs: readonly number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((sum, x) => sum + x, 0) / xs.length;
}

function round(x: number, digits = 4): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** Probability that a pair of Jaccard s shares at least one of b bands of r rows. */
export function candidateProbability(s: number, b: number, r: number): number {
  return 1 - (1 - s ** r) ** b;
}

const SOURCES: readonly EvaluatedPair['source'][] = ['mlt', 'lsh', 'random', 'labels'];

/**
 * The quality of the current parameters, measured on pairs whose true similarity is known (pure: pairs in, report
 * out).
 */
export function qualityReport(pairs: readonly EvaluatedPair[], lsh: { bands: number; rows: number; numPerm: number }, currentThreshold: number): QualityReport {
  const labelled = pairs.some((p) => p.duplicate !== undefined);
  const isRelated = (p: EvaluatedPair, t: number) => (labelled ? p.duplicate === true : p.exact >= t);
  const thresholds = THRESHOLDS.map((t) => thresholdRow(pairs, t, isRelated));
  // Counted in one order of the sources, whichever a run met first (the report and its summary line read alike run to run).
  const counts = new Map<string, number>();
  for (const p of pairs) counts.set(p.source, (counts.get(p.source) ?? 0) + 1);
  const bySource = Object.fromEntries(SOURCES.filter((s) => counts.has(s)).map((s) => [s, counts.get(s) as number]));
  const recommendation = recommend(pairs, thresholds, labelled, lsh.numPerm, currentThreshold);
  return {
    ...lsh,
    currentThreshold,
    truth: labelled ? 'labels' : 'exact-jaccard',
    pairs: { total: pairs.length, bySource },
    thresholds,
    sCurve: sCurve(pairs, lsh.bands, lsh.rows),
    estimation: estimation(pairs),
    histogram: histogram(pairs, labelled),
    containment: containmentQuality(pairs, currentThreshold),
    recommendation,
  };
}

function thresholdRow(pairs: readonly EvaluatedPair[], t: number, isRelated: (p: EvaluatedPair, t: number) => boolean): ThresholdRow {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const p of pairs) {
    const predicted = p.candidate && p.estimated >= t;
    const related = isRelated(p, t);
    if (predicted && related) tp++;
    else if (predicted) fp++;
    else if (related) fn++;
  }
  const precision = tp + fp === 0 ? 1 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 1 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { threshold: t, precision: round(precision), recall: round(recall), f1: round(f1), truePositives: tp, falsePositives: fp, falseNegatives: fn };
}

/** Bins of width 0.1 over [0, 1]; the last one holds 1.0. */
function bins<T>(pairs: readonly EvaluatedPair[], width: number, value: (p: EvaluatedPair) => number, make: (from: number, to: number, members: EvaluatedPair[]) => T): T[] {
  const count = Math.round(1 / width);
  const members: EvaluatedPair[][] = Array.from({ length: count }, () => []);
  for (const p of pairs) members[Math.min(count - 1, Math.floor(value(p) / width))].push(p);
  return members.map((m, i) => make(round(i * width), round((i + 1) * width), m));
}

/**
 * The curve, and the share of pairs that are candidates by exact similarity. Pairs found as LSH candidates
 * are left out of the measure (they are candidates by how they were chosen): it is taken on the pairs that
 * more_like_this, chance or the user's labels brought.
 */
function sCurve(pairs: readonly EvaluatedPair[], b: number, r: number): QualityReport['sCurve'] {
  const theory = Array.from({ length: 101 }, (_, i) => ({ similarity: i / 100, probability: round(candidateProbability(i / 100, b, r)) }));
  const unbiased = pairs.filter((p) => p.source !== 'lsh');
  const measured = bins(unbiased, 0.1, (p) => p.exact, (from, to, m) => {
    const candidates = m.filter((p) => p.candidate).length;
    return { from, to, pairs: m.length, candidates, rate: m.length === 0 ? 0 : round(candidates / m.length) };
  }).filter((bin) => bin.pairs > 0);
  return { theory, measured };
}

function estimation(pairs: readonly EvaluatedPair[]): QualityReport['estimation'] {
  const errors = pairs.map((p) => p.estimated - p.exact);
  const byBin = bins(pairs, 0.1, (p) => p.exact, (from, to, m) => {
    const e = m.map((p) => p.estimated - p.exact);
    return { from, to, pairs: m.length, meanAbsoluteError: round(mean(e.map(Math.abs))), bias: round(mean(e)) };
  }).filter((bin) => bin.pairs > 0);
  const step = Math.max(1, Math.ceil(pairs.length / MAX_POINTS));
  return {
    meanAbsoluteError: round(mean(errors.map(Math.abs))),
    rootMeanSquareError: round(Math.sqrt(mean(errors.map((e) => e * e)))),
    bias: round(mean(errors)),
    byBin,
    points: pairs.filter((_, i) => i % step === 0).map((p) => ({ exact: round(p.exact), estimated: round(p.estimated) })),
  };
}

function containmentQuality(pairs: readonly EvaluatedPair[], threshold: number): ContainmentQuality {
  const partialCopies = pairs.filter((p) => (p.containment?.exact ?? 0) >= PARTIAL_COPY && p.exact < threshold).length;
  const estimated = pairs.filter((p) => p.containment?.estimated !== undefined && p.containment.estimated !== null);
  const errors = estimated.map((p) => (p.containment?.estimated as number) - (p.containment?.exact as number));
  return {
    partialCopies,
    partialCopyShare: pairs.length === 0 ? 0 : round(partialCopies / pairs.length),
    estimatedPairs: estimated.length,
    meanAbsoluteError: round(mean(errors.map(Math.abs))),
    bias: round(mean(errors)),
  };
}

/** Related: labelled duplicates, or (without labels) pairs the engine found as neighbours; unrelated: the rest, or random pairs. */
function histogram(pairs: readonly EvaluatedPair[], labelled: boolean): QualityReport['histogram'] {
  const related = (p: EvaluatedPair) => (labelled ? p.duplicate === true : p.source !== 'random');
  return bins(pairs, 0.05, (p) => p.exact, (from, to, m) => ({ from, to, related: m.filter(related).length, unrelated: m.filter((p) => !related(p)).length }));
}

/**
 * With labels, the threshold of the best F1. Without, the emptiest stretch of the similarities of the
 * pairs the engine found as neighbours, between 0.2 and 0.9: a threshold there moves few pairs across.
 * Then the bands and rows for it: the lowest false-negative weight whose bands still make candidates of
 * 95% of the pairs at or above it (fewest candidates read for nothing).
 */
function recommend(pairs: readonly EvaluatedPair[], rows: ThresholdRow[], labelled: boolean, numPerm: number, current: number): Recommendation {
  let threshold: number;
  let why: string;
  if (labelled) {
    const best = rows.reduce((a, b) => (b.f1 > a.f1 ? b : a));
    threshold = best.threshold;
    why = `the best F1 on your labels: ${best.f1.toFixed(3)} at ${threshold} (precision ${best.precision.toFixed(3)}, recall ${best.recall.toFixed(3)})`;
  } else {
    const neighbours = pairs.filter((p) => p.source !== 'random');
    const counts = THRESHOLDS.filter((t) => t >= 0.2 && t <= 0.9).map((t) => ({ t, n: neighbours.filter((p) => Math.abs(p.exact - t) < 0.025).length }));
    const fewest = Math.min(...counts.map((c) => c.n));
    threshold = counts.filter((c) => c.n === fewest).reduce((a, b) => (Math.abs(b.t - current) < Math.abs(a.t - current) ? b : a)).t;
    const above = neighbours.filter((p) => p.exact >= threshold).length;
    why = `the emptiest stretch of the similarities of the ${plural(neighbours.length, 'neighbour pair')} between 0.2 and 0.9: ${fewest} within 0.025 of ${threshold}; ${plural(above, 'pair')} ${forCount(above, 'lies', 'lie')} at or above it`;
  }
  const alternatives = FALSE_NEGATIVE_WEIGHTS.map((w) => lshChoice(pairs, threshold, w, numPerm, labelled));
  const chosen = alternatives.find((c) => c.expectedRecall >= TARGET_RECALL) ?? alternatives[alternatives.length - 1];
  return { threshold, why, ...chosen, alternatives };
}

function lshChoice(pairs: readonly EvaluatedPair[], threshold: number, falseNegativeWeight: number, numPerm: number, labelled: boolean): LshChoice {
  const { b, r } = optimalBandsRows({ threshold, falseNegativeWeight, numPerm });
  const related = pairs.filter((p) => (labelled ? p.duplicate === true : p.exact >= threshold));
  const unrelated = pairs.filter((p) => (labelled ? p.duplicate !== true : p.exact < threshold));
  const share = (group: EvaluatedPair[]) => (group.length === 0 ? 0 : round(group.reduce((s, p) => s + candidateProbability(p.exact, b, r), 0) / group.length));
  return { falseNegativeWeight, bands: b, rows: r, expectedRecall: share(related), expectedFalseCandidates: share(unrelated) };
}
