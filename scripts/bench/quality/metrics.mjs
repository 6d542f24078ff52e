// The measures of bench:quality, from a clustering (each document's cluster key, or undefined when it is in
// no cluster) and the truth (truth.mjs):
//  - pair precision: of the pairs of documents put in one cluster, the share in one truth group;
//  - recall: of the true pairs with exact J >= 0.7, the share put in one cluster;
//  - split: the truth groups with a pair at exact J >= 0.9 whose two documents end in different clusters;
//  - the largest cluster, and how many truth groups it mixes.
// And, from the pairs a tool verified with their similarity, a curve of what each threshold would give.
// The measures themselves are near-dup's (dist/jobs/evaluate/truth-scores.js), shared with evaluate --truth-field.
import { scoreClusters } from '../../../dist/jobs/evaluate/truth-scores.js';

/** The measures of one clustering: keys[i] is document i's cluster key (undefined when alone). */
export const measure = scoreClusters;

/** Thresholds of the curves: 0.5 to 0.95 in steps of 0.05. */
export const CURVE = Array.from({ length: 10 }, (_, k) => Math.round((0.5 + 0.05 * k) * 100) / 100);

/**
 * At each threshold t, the verified pairs at similarity >= t: how many, the share that are true pairs, the
 * recall of the true pairs at J >= 0.7 among them, and the measures of their connected components (what
 * `--clusters components` at --min-similarity t would cluster). Thresholds below the run's bar are left out:
 * its pairs say nothing there.
 */
export function curve(pairs, truth, bar, indexOf, n) {
  const rows = [];
  const recallKeys = new Set(truth.recallPairs.map(([i, j]) => i * n + j));
  for (const t of CURVE) {
    if (t < bar - 1e-9) continue;
    const kept = pairs.filter(([, , s]) => s >= t - 1e-9).map(([a, b]) => [indexOf.get(a), indexOf.get(b)].sort((x, y) => x - y));
    const good = kept.filter(([i, j]) => truth.group[i] === truth.group[j]).length;
    const foundKeys = new Set(kept.map(([i, j]) => i * n + j).filter((k) => recallKeys.has(k)));
    const components = measure(componentsOf(kept, n), truth);
    rows.push({
      threshold: t,
      pairs: kept.length,
      pairPrecision: kept.length ? good / kept.length : null,
      pairRecall: recallKeys.size ? foundKeys.size / recallKeys.size : null,
      components,
    });
  }
  return rows;
}

function componentsOf(pairs, n) {
  const parent = Array.from({ length: n }, (_, i) => i);
  const root = (i) => (parent[i] === i ? i : (parent[i] = root(parent[i])));
  const linked = new Set();
  for (const [i, j] of pairs) {
    parent[root(i)] = root(j);
    linked.add(i).add(j);
  }
  return parent.map((_, i) => (linked.has(i) ? root(i) : undefined));
}
