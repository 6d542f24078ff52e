// evaluate --truth-field's pure scoring (shared with bench:quality): truth groups from sources and nearly
// identical texts, the pairs at or above a Jaccard found by prefix filtering, and the figures of a clustering,
// on hand-made sets whose figures are worked out in the comments.
import { describe, expect, it } from 'vitest';
import { documentFrequency, shingleSets } from '../../src/jobs/evaluate/shingle-sets.js';
import { jaccard, pairsAtLeast, scoreClusters, truthOf } from '../../src/jobs/evaluate/truth-scores.js';
import { normalizer } from '../../src/text/normalize.js';

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, k) => from + k);
const set = (...tokens: number[]) => Int32Array.from(new Set(tokens)).sort();

// Source A: 0 = {1..10}; 1 = {1..9, 11}: J(0,1) = 9/11 = 0.818; 2 = {1..10}, the same as 0: J = 1.
// Source B: 3 = {20..29}; 4 = {20..24, 40..44}: J = 5/15 = 0.333, a true pair by its source, below 0.7.
// No source: 5 = {1..10, 12}: J(0,5) = J(2,5) = 10/11 = 0.909 >= 0.9, so 5 joins A's group; J(1,5) = 9/12 = 0.75.
// Source C: 6 = {50..59}; 7 = {50..58, 60}: J = 9/11 = 0.818.
const sets = [set(...range(1, 10)), set(...range(1, 9), 11), set(...range(1, 10)), set(...range(20, 29)), set(...range(20, 24), ...range(40, 44)), set(...range(1, 10), 12), set(...range(50, 59)), set(...range(50, 58), 60)];
const labels = ['A', 'A', 'A', 'B', 'B', undefined, 'C', 'C'];

describe('the truth', () => {
  const truth = truthOf(sets, labels);

  it('groups sources with the documents nearly identical to theirs, and lists the true pairs at J >= 0.7 and 0.9', () => {
    // Groups {0,1,2,5}, {3,4}, {6,7}; sources A, B, C and document 5 alone: 4.
    expect(Array.from(truth.group)).toEqual([0, 0, 0, 3, 3, 0, 6, 6]);
    expect([truth.groups, truth.sources]).toEqual([3, 4]);
    // (0,5) and (2,5) are at J >= 0.9 across sources.
    expect(truth.crossSource).toBe(2);
    // Group A: all 6 of its pairs are >= 0.7 (0.818, 1, 0.909, 0.818, 0.75, 0.909); B's one is 0.333; C's 0.818.
    const pairs = truth.recallPairs.map(([i, j]) => `${i}-${j}`).sort();
    expect(pairs).toEqual(['0-1', '0-2', '0-5', '1-2', '1-5', '2-5', '6-7']);
    expect(truth.mustJoin.map(([i, j]) => `${i}-${j}`).sort()).toEqual(['0-2', '0-5', '2-5']);
    expect(truth.groupsWithSameText).toBe(1);
  });

  it('scores a clustering: pair precision, recall at J >= 0.7, groups split at J >= 0.9, the largest cluster', () => {
    // Clusters X = {0, 2, 3}, Y = {1, 5}, Z = {6, 7}; 4 alone.
    const scores = scoreClusters(['X', 'Y', 'X', 'X', undefined, 'Y', 'Z', 'Z'], truth);
    // Pairs in clusters: X 3, Y 1, Z 1 = 5; true: (0,2), (1,5), (6,7) = 3 -> precision 3/5.
    expect([scores.precision, scores.clusterPairs, scores.truePairsInClusters]).toEqual([0.6, 5, 3]);
    // Of the 7 true pairs at J >= 0.7, (0,2), (1,5), (6,7) share a cluster: 3/7.
    expect([scores.recall, scores.recallFound, scores.recallPairs]).toEqual([3 / 7, 3, 7]);
    // (0,5) at 0.909 ends apart: group A is split, of the 1 group with a pair at J >= 0.9.
    expect([scores.split, scores.splitOf]).toEqual([1, 1]);
    // X, of 3 documents: groups A and B, sources A and B.
    expect(scores.largest).toEqual({ key: 'X', size: 3, groups: 2, sources: 2 });
    expect([scores.clusters, scores.clustered]).toEqual([3, 7]);
  });

  it('a clustering of the truth groups themselves scores 1, 1, none split; no clusters, no precision', () => {
    const perfect = scoreClusters(['A', 'A', 'A', 'B', 'B', 'A', 'C', 'C'], truth);
    expect([perfect.precision, perfect.recall, perfect.split]).toEqual([1, 1, 0]);
    // The largest cluster holds sources A and document 5's own: 2 sources, 1 group.
    expect(perfect.largest).toEqual({ key: 'A', size: 4, groups: 1, sources: 2 });
    const none = scoreClusters(sets.map(() => undefined), truth);
    expect([none.precision, none.recall, none.split, none.clusters]).toEqual([null, 0, 1, 0]);
  });
});

describe('pairs at or above a Jaccard, by prefix filtering', () => {
  // Random sets over a small vocabulary (many shared tokens), some of them edited copies of others.
  let state = 7;
  const random = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const base = Array.from({ length: 40 }, () => Array.from({ length: 5 + Math.floor(random() * 30) }, () => Math.floor(random() * 400)));
  const docs = [...base, ...base.map((tokens) => tokens.map((t) => (random() < 0.1 ? Math.floor(random() * 400) : t)))].map((tokens) => Uint32Array.from(new Set(tokens)).sort());
  const brute = (t: number) => docs.flatMap((a, i) => docs.slice(i + 1).flatMap((b, k) => (jaccard(a, b) >= t ? [`${i}-${i + 1 + k}`] : []))).sort();

  it('finds exactly the pairs all-pairs finds, tokens in their own order or rarest first by a count that may be too high', () => {
    const counts = new Map<number, number>();
    for (const d of docs) for (const t of d) counts.set(t, (counts.get(t) ?? 0) + 1);
    const tooHigh = (token: number) => (counts.get(token) ?? 0) + (token % 3); // over-counted: still exact
    for (const t of [0.5, 0.7, 0.9]) {
      const expected = brute(t);
      expect(expected.length).toBeGreaterThan(0);
      expect(pairsAtLeast(docs, t).map(([i, j]) => `${i}-${j}`).sort()).toEqual(expected);
      expect(pairsAtLeast(docs, t, tooHigh).map(([i, j]) => `${i}-${j}`).sort()).toEqual(expected);
    }
  });
});

describe('the shingle sets evaluate measures with', () => {
  const texts = [
    'The <b>quick</b> brown fox jumps over the lazy dog, and the quick brown fox runs away.',
    'the quick brown fox jumps over the lazy dog and the quick brown fox runs far away',
    'Été: café crème, naïve façade. The quick brown fox jumps over the lazy dog.',
    'three words only',
  ];
  // The same shingles as strings: the text as norm-html makes it, every 4 consecutive words (fewer: all of them).
  const strings = texts.map((t) => {
    const w = normalizer('norm-html')(t).split(' ').filter(Boolean);
    return new Set(w.length <= 4 ? [w.join(' ')] : w.slice(3).map((_, i) => w.slice(i, i + 4).join(' ')));
  });
  const sets = texts.map(shingleSets());

  it("are the word 4-shingles of the normalized text, one hash each, ascending, as Jaccard on the strings", () => {
    for (const [k, set] of sets.entries()) {
      expect(set.length).toBe(strings[k].size);
      expect(Array.from(set)).toEqual(Array.from(set).sort((a, b) => a - b));
    }
    for (let a = 0; a < texts.length; a++) {
      for (let b = a + 1; b < texts.length; b++) {
        const shared = [...strings[a]].filter((s) => strings[b].has(s)).length;
        expect(jaccard(sets[a], sets[b])).toBeCloseTo(shared / (strings[a].size + strings[b].size - shared), 12);
      }
    }
    expect(jaccard(sets[0], sets[1])).toBeGreaterThan(0.5); // markup, case and punctuation do not count
  });

  it('counts the documents that hold each shingle, never too few', () => {
    const { df } = documentFrequency(sets);
    for (const set of sets) for (const token of set) expect(df(token)).toBeGreaterThanOrEqual(sets.filter((s) => s.includes(token)).length);
    const shared = sets[0].find((t) => sets[1].includes(t))!;
    expect(df(shared)).toBeGreaterThanOrEqual(2);
  });
});
