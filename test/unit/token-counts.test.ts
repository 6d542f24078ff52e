// Template sampling in bounded memory (src/sketch/token-counts.ts, TemplateSampler): past its room the
// rarest tokens are dropped, the template ones kept with their counts; a sample of more distinct tokens
// than a JS Map holds (2^24) is counted, not thrown on.
import { describe, expect, it } from 'vitest';
import { TemplateSampler } from '../../src/sketch/template-tokens.js';
import { TokenCounts } from '../../src/sketch/token-counts.js';

/** Document d: tokens 1-3 in every one, 4 in every tenth, and `own` tokens of its own. */
function doc(d: number, own: number): Uint32Array {
  const hashes = new Uint32Array(own + 4);
  hashes.set([1, 2, 3, d % 10 === 0 ? 4 : 5]);
  for (let i = 0; i < own; i++) hashes[4 + i] = (0x10000 + d * own + i) >>> 0;
  return hashes;
}

describe('TokenCounts', () => {
  it('holds at most maxTracked tokens, keeping the frequent ones and how short their counts may be', () => {
    const counts = new TokenCounts(1000);
    for (let d = 1; d <= 500; d++) for (const h of doc(d, 20)) counts.add(h, d);
    expect(counts.tracked).toBeLessThanOrEqual(1000);
    const held = new Map<number, number>();
    counts.forEach((h, c) => void held.set(h, c));
    expect(held.get(1)).toBe(500);
    expect(held.get(4)).toBe(50); // never among the rarest: counted exactly
    expect(counts.undercount).toBeGreaterThan(0);
    expect(held.size).toBeLessThan(1000);
  });

  it('is exact while the room lasts', () => {
    const counts = new TokenCounts(1000);
    for (let d = 1; d <= 10; d++) for (const h of [7, 7, 8, 9 + d]) counts.add(h, d);
    const held = new Map<number, number>();
    counts.forEach((h, c) => void held.set(h, c));
    expect(held.get(7)).toBe(10);
    expect(held.get(8)).toBe(10);
    expect(held.get(12)).toBe(1);
    expect(counts.undercount).toBe(0);
  });
});

describe('TemplateSampler in bounded memory', () => {
  it('draws the same set with a small room as with a room for every token', () => {
    const small = new TemplateSampler(0.05, 3, 512);
    const large = new TemplateSampler(0.05, 3);
    for (let d = 0; d < 2000; d++) {
      small.add(doc(d, 30));
      large.add(doc(d, 30));
    }
    expect(Array.from(small.result().hashes)).toEqual([1, 2, 3, 4, 5]);
    expect(small.result().digest).toBe(large.result().digest);
    expect(small.undercount).toBeGreaterThan(0);
    expect(large.undercount).toBe(0);
  });

  it('counts a sample of more distinct tokens than a JS Map holds (2^24)', () => {
    const sampler = new TemplateSampler(0.05, 3);
    const own = 10_000;
    const docs = Math.ceil(2 ** 24 / own) + 10; // 1,688 documents, 16.9 million distinct tokens
    for (let d = 0; d < docs; d++) sampler.add(doc(d, own));
    expect(sampler.documents).toBe(docs);
    expect(Array.from(sampler.result().hashes)).toEqual([1, 2, 3, 4, 5]);
  }, 60_000);
});
