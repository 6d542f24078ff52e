// Cutting families into clusters (dedup/cluster/cluster-cut.ts) on chains built to drift: each version a
// near-duplicate of the one before, the first and the last far apart.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type CanonicalRule, type ClusterMethod, centres, compareValues, cutFamilies, cutFamily, pickCanonical, TIGHT_SIMILARITY } from '../../src/jobs/dedup/cluster/cluster-cut.js';
import { comparerOf, wholeComparerOf } from '../../src/jobs/dedup/verify/comparing.js';
import { coreExtension, withCore } from '../../src/sketch/core-similarity.js';
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import type { Facts } from '../../src/jobs/dedup/documents/facts.js';
import { keyHash, type StoredSignature } from '../../src/jobs/dedup/documents/signature-store.js';

const BAR = 0.5;
const BANDS = 32;
const ROWS = 4;

function estimate(a: Uint32Array, b: Uint32Array): number {
  return a.filter((v, i) => v === b[i]).length / a.length;
}

/** A signature from its values, its band keys hashed from the values of each band (as LSH makes them). */
function signatureOf(values: Uint32Array): StoredSignature {
  const bands = Int32Array.from({ length: values.length / ROWS }, (_, j) => keyHash(`${j}_${values.slice(j * ROWS, (j + 1) * ROWS).join(',')}`));
  return { values, simhash: '0000000000000000', bands };
}

/**
 * A chain of `length` versions: a band's values change together, and each version changes 3 bands in 10
 * of the one before, so neighbours share 70% of their values (and bands), versions two apart 40%, three
 * apart 10%.
 */
function driftingChain(length: number, name = 'v'): Map<string, StoredSignature> {
  return new Map(
    Array.from({ length }, (_, i) => [
      `${name}${String(i).padStart(2, '0')}`,
      signatureOf(Uint32Array.from({ length: BANDS * ROWS }, (_, p) => p * 1000 + Math.floor((3 * i + (Math.floor(p / ROWS) % 10)) / 10))),
    ]),
  );
}

/** Versions dated in chain order (the oldest first). */
function datedFacts(ids: Iterable<string>): Map<string, Facts> {
  return new Map([...ids].map((id, i) => [id, { tokens: 100, sortKey: Date.UTC(2020, 0, 1 + i) }]));
}

function cut(family: string[], signatures: Map<string, StoredSignature>, facts: Map<string, Facts>, method: ClusterMethod = 'centres', rule: CanonicalRule = 'oldest') {
  return cutFamily(family, signatures, { method, rule, minSimilarity: BAR, facts });
}

describe('cutting a family into clusters', () => {
  const chain = driftingChain(30);
  const ids = [...chain.keys()];
  const facts = datedFacts(ids);

  it('the chain drifts: neighbours within the bar, the first and the last far apart', () => {
    expect(estimate(chain.get('v00')!.values, chain.get('v01')!.values)).toBeGreaterThanOrEqual(BAR);
    expect(estimate(chain.get('v00')!.values, chain.get('v03')!.values)).toBeLessThan(BAR);
    expect(estimate(chain.get('v00')!.values, chain.get('v29')!.values)).toBe(0);
  });

  it('centres: every duplicate at least the bar from the canonical duplicate_of names, with that similarity', () => {
    const clusters = cut(ids, chain, facts);
    expect(clusters.length).toBeGreaterThan(5);
    for (const c of clusters) {
      expect(c.members).toContain(c.canonical);
      expect(c.id).toBe(c.canonical);
      for (const id of c.members) {
        const s = estimate(chain.get(id)!.values, chain.get(c.canonical)!.values);
        expect(c.similarity.get(id)).toBe(s);
        expect(s).toBeGreaterThanOrEqual(BAR);
      }
    }
    // No document in two clusters; the oldest of the family is a canonical.
    const all = clusters.flatMap((c) => c.members);
    expect(new Set(all).size).toBe(all.length);
    expect(clusters.map((c) => c.canonical)).toContain('v00');
    expect(new Set(clusters.map((c) => c.family))).toEqual(new Set(['v00']));
  });

  it('centres: each cluster\'s canonical is the member the --canonical rule prefers, so another rule keeps other documents', () => {
    const newest = cut(ids, chain, facts, 'centres', 'newest');
    expect(newest.map((c) => c.canonical)).toContain('v29');
    for (const c of newest) expect(c.canonical).toBe(pickCanonical(c.members, facts, 'newest'));
    for (const c of cut(ids, chain, facts)) expect(c.canonical).toBe(pickCanonical(c.members, facts, 'oldest'));
  });

  it('centres: the same clusters whatever order the family comes in', () => {
    const reversed = cut([...ids].reverse(), chain, facts);
    const shuffled = cut(ids.filter((_, i) => i % 2 === 0).concat(ids.filter((_, i) => i % 2 === 1)), chain, facts);
    const plain = cut(ids, chain, facts);
    expect(reversed).toEqual(plain);
    expect(shuffled).toEqual(plain);
  });

  it('components: the whole chain is one cluster, its canonical the oldest, the drift shown in the similarities', () => {
    const [only, ...rest] = cut(ids, chain, facts, 'components');
    expect(rest).toEqual([]);
    expect(only.members).toEqual(ids);
    expect(only.canonical).toBe('v00');
    expect(only.similarity.get('v29')).toBe(0);
  });

  it('members without a signature are left out, and a family left with one member makes no cluster', () => {
    const clusters = cut([...ids, 'gone'], chain, facts);
    expect(clusters.flatMap((c) => c.members)).not.toContain('gone');
    expect(cut(['v00', 'gone'], chain, facts)).toEqual([]);
  });
});

describe('a canonical left without duplicates goes with its nearest member', () => {
  // c is kept first; x (0.8 from c) and y (0.7) are its duplicates; o is 0.4 from c, so it is a canonical,
  // but x is nearer to c (0.8) than to o (0.6): o is left alone unless it takes x along.
  const part = (from: number, to: number, base: number) => Array.from({ length: to - from }, (_, k) => base + from + k);
  const values = {
    c: [...part(0, 100, 0)],
    x: [...part(0, 80, 0), ...part(80, 100, 1000)],
    y: [...part(0, 70, 0), ...part(70, 100, 2000)],
    o: [...part(0, 40, 3000), ...part(40, 80, 0), ...part(80, 100, 1000)],
  };
  const signatures = new Map(Object.entries(values).map(([id, v]) => [id, { values: Uint32Array.from(v), simhash: '0000000000000000', bands: Int32Array.of(7) }]));
  const facts = new Map<string, Facts>([
    ['c', { tokens: 40, sortKey: 0 }],
    ['x', { tokens: 30, sortKey: 0 }],
    ['y', { tokens: 20, sortKey: 0 }],
    ['o', { tokens: 10, sortKey: 0 }],
  ]);

  it('takes it from a cluster that keeps another duplicate: each duplicate still within the bar of its canonical', () => {
    const clusters = cut(['o', 'y', 'x', 'c'], signatures, facts, 'centres', 'longest');
    expect(clusters.map((c) => [c.canonical, c.members, c.similarity.get(c.members.find((m) => m !== c.canonical)!)])).toEqual([
      ['c', ['c', 'y'], 0.7],
      ['x', ['o', 'x'], 0.6],
    ]);
  });

  it('stays out when no cluster can spare its nearest member', () => {
    const clusters = cut(['o', 'x', 'c'], signatures, facts, 'centres', 'longest');
    expect(clusters.map((c) => [c.canonical, c.members])).toEqual([['c', ['c', 'x']]]);
  });

  it('a large family is searched by its band keys, with the clusters a small one gets member by member', () => {
    const long = driftingChain(150, 'w');
    const members = [...long.keys()];
    const args = [members, members.map((id) => long.get(id)!.bands), members.map((id) => long.get(id)!.values), BAR] as const;
    const indexed = centres(...args, 0);
    expect(centres(...args, Number.POSITIVE_INFINITY)).toEqual(indexed);
    for (const [i, c] of indexed.entries()) expect(estimate(args[2][c], args[2][i])).toBeGreaterThanOrEqual(BAR);
    expect(new Set(indexed).size).toBeGreaterThan(20);
  });

  it('members are compared only when they share a band key (what LSH pairs)', () => {
    const apart = [Int32Array.of(1), Int32Array.of(2)];
    const same = [Uint32Array.from(values.c), Uint32Array.from(values.c)];
    expect(centres(['a', 'b'], apart, same, BAR)).toEqual([0, 1]);
    expect(centres(['a', 'b'], [Int32Array.of(1), Int32Array.of(1)], same, BAR)).toEqual([0, 0]);
  });
});

describe('near-identical copies are never split', () => {
  // C is first in the order; X is within the bar of C, X2 (X with a few values changed) just below it.
  const base = Array.from({ length: 100 }, (_, p) => p + 1);
  const c = Uint32Array.from(base);
  const x = Uint32Array.from(base, (v, p) => (p < 52 ? v : v + 1000));
  const x2 = Uint32Array.from(x, (v, p) => (p < 5 ? v + 2000 : v));
  const sameBand = [Int32Array.of(7), Int32Array.of(7), Int32Array.of(7)];

  it('the copy of a duplicate goes with it, not to a canonical it is not near', () => {
    expect([estimate(c, x), estimate(c, x2), estimate(x, x2)]).toEqual([0.52, 0.47, 0.95]);
    const owner = centres(['c', 'x', 'x2'], sameBand, [c, x, x2], BAR);
    expect(owner[1]).toBe(owner[2]);
    for (const [i, o] of owner.entries()) expect(estimate([c, x, x2][o], [c, x, x2][i])).toBeGreaterThanOrEqual(BAR);
  });

  it('a group of copies joins a canonical only when every copy is within the bar of it', () => {
    const near = Uint32Array.from(base, (v, p) => (p < 60 ? v : v + 1000));
    const owner = centres(['c', 'n', 'n2'], sameBand, [c, near, Uint32Array.from(near, (v, p) => (p < 3 ? v + 2000 : v))], BAR);
    expect(owner).toEqual([0, 0, 0]);
  });

  it('a family of exact copies is grouped in a pass, not by comparing every pair', () => {
    const n = 5000;
    const one = Uint32Array.from({ length: 100 }, (_, p) => p);
    let reads = 0;
    // Counts the signatures read: each comparison reads two.
    const values = new Proxy(Array.from({ length: n }, () => one), {
      get: (target, key, receiver) => {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const owner = centres(Array.from({ length: n }, (_, i) => `c${i}`), Array.from({ length: n }, () => Int32Array.of(7)), values, BAR);
    expect(new Set(owner)).toEqual(new Set([0]));
    expect(reads).toBeLessThan(100 * n); // every pair would be 25 million
  });

  it('core signatures: a copy the core rule puts far from the canonical stays when the whole texts are near', () => {
    // Three pages all template but for a small core each (their names): C and X nearly identical, X and Y
    // just above the whole-text bar, C and Y just below it, where the rule falls to the cores (no slot's
    // minimum is a core token: 0).
    const numPerm = 128;
    const page = (shift: (p: number) => number) => withCore(Uint32Array.from({ length: numPerm }, (_, p) => p * 10 + shift(p)), coreExtension(new Array(numPerm).fill(1), 3));
    const pc = page(() => 0);
    const px = page((p) => (p < 3 ? 1 : 0)); // 3 values from C's
    const py = page((p) => (p < 3 ? 1 : p < 14 ? 2 : 0)); // 11 more from X's: 117 of 128 equal, 114 with C
    const comparing = { numPerm, core: true };
    const rule = comparerOf(comparing), whole = wholeComparerOf(comparing);
    expect([rule(pc, px), rule(px, py)].every((s) => s >= TIGHT_SIMILARITY)).toBe(true);
    expect(rule(pc, py)).toBe(0);
    expect(whole(pc, py)).toBeCloseTo(114 / 128);
    const bands = [Int32Array.of(7), Int32Array.of(7), Int32Array.of(7)];
    // By the rule alone, C is not near Y: the copies' canonical is X, which both are near (C would cut Y off).
    expect(centres(['c', 'x', 'y'], bands, [pc, px, py], 0.7, 64, rule)).toEqual([1, 1, 1]);
    expect(centres(['c', 'x', 'y'], bands, [pc, px, py], 0.7, 64, rule, whole)).toEqual([0, 0, 0]);
    const signatures = new Map(['c', 'x', 'y'].map((id, i) => [id, { values: [pc, px, py][i], simhash: '0000000000000000', bands: bands[i] }]));
    const [cluster] = cutFamily(['c', 'x', 'y'], signatures, { method: 'centres', rule: 'oldest', minSimilarity: 0.7, facts: datedFacts(['c', 'x', 'y']), comparing });
    expect(cluster.members).toEqual(['c', 'x', 'y']);
    expect(cluster.similarity.get('y')).toBeCloseTo(114 / 128); // the similarity it stays by, not the rule's 0
    // Plain signatures are cut the same way: the whole texts are the comparer, X the member both are near.
    expect(centres(['c', 'x', 'y'], bands, [pc, px, py].map((v) => v.subarray(0, numPerm)), 0.9)).toEqual([1, 1, 1]);
  });

  it('near-identical copies: the canonical is the first member every copy is near, else the first, and the far ones go on alone', () => {
    // Copies each 10 values of 100 from the one before: neighbours at 0.9 (near-identical), two apart at 0.8.
    const copies = Array.from({ length: 5 }, (_, i) => Uint32Array.from(base, (v, p) => (p < 10 * i ? v + 5000 : v)));
    const bands = copies.map(() => Int32Array.of(7));
    const names = copies.map((_, i) => `w${i}`);
    // Three: the middle one is within 0.85 of both ends, the preferred (first) one is not of the last.
    expect(centres(names.slice(0, 3), bands, copies.slice(0, 3), 0.85)).toEqual([1, 1, 1]);
    // Five: none is within 0.85 of all; the first is the canonical, and each member is near its own.
    const owner = centres(names, bands, copies, 0.85);
    expect(owner[0]).toBe(0);
    for (const [i, o] of owner.entries()) expect(estimate(copies[o], copies[i])).toBeGreaterThanOrEqual(0.85);
  });

  it('the same clusters whatever order the members come in', () => {
    const chain = driftingChain(40, 'q');
    const facts = new Map([...chain.keys()].map((id) => [id, { tokens: 100 + (id.charCodeAt(2) % 3), sortKey: null }]));
    const family = [...chain.keys()];
    const first = cut(family, chain, facts, 'centres', 'longest');
    fc.assert(
      fc.property(fc.shuffledSubarray(family, { minLength: family.length }), (shuffled) => {
        expect(cut(shuffled, chain, facts, 'centres', 'longest')).toEqual(first);
      }),
      { numRuns: 20 },
    );
  });
});

describe('the canonical order over mixed sort values', () => {
  // One field can hold dates in one document, keywords, numbers or booleans in others: the order must still
  // be total and transitive, or the canonical would depend on the order the engine returned the members in.
  const values = fc.oneof(fc.integer(), fc.double({ noNaN: false }), fc.string(), fc.constantFrom('2021-03-04', '2020-01-01T00:00:00Z', '12', 'abc'), fc.boolean(), fc.constant(null), fc.array(fc.integer(), { maxLength: 2 }));

  it('is antisymmetric and transitive in either direction, and never equal across kinds', () => {
    fc.assert(
      fc.property(values, values, values, fc.constantFrom(1 as const, -1 as const), (a, b, c, direction) => {
        const cmp = (x: unknown, y: unknown) => compareValues(x, y, direction);
        expect(Math.sign(cmp(a, b))).toBe(-Math.sign(cmp(b, a)) || 0);
        if (cmp(a, b) <= 0 && cmp(b, c) <= 0) expect(cmp(a, c)).toBeLessThanOrEqual(0);
        if (typeof a !== typeof b) expect(cmp(a, b)).not.toBe(0);
      }),
      { numRuns: 2000 },
    );
  });

  it('gives one canonical whatever order the members come in', () => {
    const facts = new Map<string, Facts>([
      ['a', { tokens: 1, sortKey: 'keyword' }],
      ['b', { tokens: 1, sortKey: Date.UTC(2020, 0, 1) }],
      ['c', { tokens: 1, sortKey: 7 }],
      ['d', { tokens: 1, sortKey: true }],
      ['e', { tokens: 1, sortKey: '2019-06-01' }],
    ]);
    const orders = [['a', 'b', 'c', 'd', 'e'], ['e', 'd', 'c', 'b', 'a'], ['c', 'a', 'e', 'b', 'd']];
    for (const rule of ['oldest', 'newest'] as const) {
      const picked = new Set(orders.map((members) => pickCanonical(members, facts, rule)));
      expect(picked.size).toBe(1);
    }
    // Numbers and dates first (by value, in the rule's direction), then other strings, then booleans.
    expect(pickCanonical(orders[0], facts, 'oldest')).toBe('c');
    expect(pickCanonical(orders[0], facts, 'newest')).toBe('b');
    expect(pickCanonical(['a', 'd'], facts, 'oldest')).toBe('a');
    expect(pickCanonical(['a', 'd'], facts, 'newest')).toBe('a');
  });
});

describe('a family member whose near-duplicates all went to other canonicals', () => {
  it('is in no cluster, and the cut names it (dedup writes it as a canonical of its own)', async () => {
    // C the oldest; Y 0.7 of C; X 0.76 of Y but 0.46 of C: Y goes to C, X finds no canonical within the bar,
    // and C's cluster of two cannot spare Y.
    const c = Uint32Array.from({ length: 100 }, (_, k) => k);
    const y = c.map((v, k) => (k < 30 ? v + 1000 : v));
    const x = y.map((v, k) => (k >= 30 && k < 54 ? v + 2000 : v));
    expect([estimate(c, y), estimate(y, x), estimate(c, x)]).toEqual([0.7, 0.76, 0.46]);
    const signatures = new Map<string, StoredSignature>([
      ['c', { values: c, simhash: '0', bands: Int32Array.of(1, 2) }],
      ['y', { values: y, simhash: '0', bands: Int32Array.of(1, 3) }],
      ['x', { values: x, simhash: '0', bands: Int32Array.of(4, 3) }],
    ]);
    const documents = new DocNumbers();
    const family = Int32Array.from(['c', 'y', 'x'], (id) => documents.numberOf(id));
    const facts = datedFacts(['c', 'y', 'x']);
    const result = await cutFamilies([family], {
      method: 'centres',
      rule: 'oldest',
      minSimilarity: BAR,
      facts,
      signatures: async (ids) => new Map(ids.map((id) => [id, signatures.get(id)!])),
      documents,
    });
    expect([...result.clusters].map((cluster) => [cluster.canonical, cluster.members])).toEqual([['c', ['c', 'y']]]);
    expect(documents.idsOf(result.alone)).toEqual(['x']);
    expect(['c', 'y', 'x', 'elsewhere'].map((id) => result.clustered(id))).toEqual([true, true, true, false]);
  });
});

describe('an id numbered twice', () => {
  it('is one member of its family (a scan numbering on disk without lookups met it in two indices of an alias)', async () => {
    const one = Uint32Array.from({ length: 100 }, (_, k) => k);
    const near = one.map((v, k) => (k < 10 ? v + 1000 : v));
    const signatures = new Map<string, StoredSignature>([
      ['a', { values: one, simhash: '0', bands: Int32Array.of(1) }],
      ['b', { values: near, simhash: '0', bands: Int32Array.of(1) }],
    ]);
    // Numbers 0 and 2 are both 'a'.
    const names = ['a', 'b', 'a'];
    const documents = { size: 3, numberOf: () => 0, find: () => undefined, idOf: (n: number) => names[n], idsOf: (ns: ArrayLike<number>) => Array.from(ns, (n) => names[n]), append: () => 0 };
    const settings = { method: 'centres' as const, rule: 'oldest' as const, minSimilarity: BAR, facts: datedFacts(['a', 'b']), signatures: async (ids: string[]) => new Map(ids.map((id) => [id, signatures.get(id)!])), documents };
    const pair = await cutFamilies([Int32Array.of(0, 1, 2)], settings);
    expect([...pair.clusters].map((cluster) => [cluster.canonical, cluster.members])).toEqual([['a', ['a', 'b']]]);
    // The id with itself only (a pair of its two numbers): no cluster, and not a document alone.
    const itself = await cutFamilies([Int32Array.of(0, 2)], settings);
    expect([[...itself.clusters].length, itself.alone.length]).toEqual([0, 0]);
  });
});
