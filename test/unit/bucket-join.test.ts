// joinBucket against brute force: the clusters it leaves are the connected components of the pairs that
// pass (and of the clusters it started from), for buckets of every shape, with far fewer comparisons.
import { describe, expect, it } from 'vitest';
import { joinBucket } from '../../src/jobs/dedup/verify/large-buckets.js';
import { UnionFind } from '../../src/jobs/dedup/verify/union-find.js';
import { seededRandom } from '../support/seeded-random.js';

const hamming = (a: Uint32Array, b: Uint32Array) => a.reduce((d, v, k) => d + (v === b[k] ? 0 : 1), 0);

/** Families of near-copies of a few originals (each value changed with probability `noise`), shuffled. */
function bucket(random: () => number, families: number, size: number, noise: number): Uint32Array[] {
  const out: Uint32Array[] = [];
  for (let f = 0; f < families; f++) {
    const original = Uint32Array.from({ length: 128 }, () => Math.floor(random() * 2 ** 32));
    for (let i = 0; i < size; i++) out.push(original.map((v) => (random() < noise ? Math.floor(random() * 2 ** 32) : v)));
  }
  return out.sort(() => random() - 0.5);
}

function run(values: Uint32Array[], labels: number[], maxDistance: number) {
  const joined = new UnionFind();
  for (const [i, label] of labels.entries()) joined.union(String(i), `label-${label}`);
  let tried = 0;
  joinBucket(values, labels, maxDistance, (i, j) => {
    tried++;
    expect(joined.find(String(i))).not.toBe(joined.find(String(j))); // never a pair already joined
    if (hamming(values[i], values[j]) > maxDistance) return false;
    joined.union(String(i), String(j));
    return true;
  });
  const expected = new UnionFind();
  for (const [i, label] of labels.entries()) expected.union(String(i), `label-${label}`);
  for (let i = 0; i < values.length; i++) {
    for (let j = i + 1; j < values.length; j++) if (hamming(values[i], values[j]) <= maxDistance) expected.union(String(i), String(j));
  }
  const components = (uf: UnionFind) =>
    values
      .map((_, i) => values.map((_, j) => j).filter((j) => uf.find(String(j)) === uf.find(String(i))).join(','))
      .sort();
  return { tried, same: JSON.stringify(components(joined)) === JSON.stringify(components(expected)) };
}

describe('joinBucket', () => {
  it('leaves the connected components of the passing pairs, for buckets of every shape', () => {
    const random = seededRandom(7);
    for (const [families, size, noise] of [[1, 200, 0.1], [5, 40, 0.3], [40, 5, 0.45], [200, 1, 0], [3, 60, 0.55], [10, 20, 0.5]]) {
      const values = bucket(random, families, size, noise);
      for (const labels of [values.map((_, i) => i), values.map(() => Math.floor(random() * values.length * 0.7))]) {
        for (const maxDistance of [64, 20]) expect(run(values, labels, maxDistance).same).toBe(true);
      }
    }
  });

  it('joins n near-copies with about n comparisons, and prunes unrelated documents without comparing them', () => {
    const random = seededRandom(11);
    const copies = bucket(random, 1, 1000, 0.1);
    const { tried, same } = run(copies, copies.map((_, i) => i), 64);
    expect(same).toBe(true);
    expect(tried).toBeLessThan(1100);
    // Families with nothing in common: the pivots keep almost every pair between them from being compared.
    const families = bucket(random, 10, 100, 0.05);
    const result = run(families, families.map((_, i) => i), 64);
    expect(result.same).toBe(true);
    expect(result.tried).toBeLessThan(families.length * 5);
  });
});
