// What dedup keeps grows with the near-duplicates, not with the index: rows only for the documents in a
// verified pair (doc-rows.ts, union-find.ts, the verifier's best matches), a band sorted a part at a time.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { verifyBands } from '../../src/jobs/dedup/bands/band-pass.js';
import { SignatureRecords } from '../../src/jobs/dedup/scan/signature-table.js';
import { cutFamilies } from '../../src/jobs/dedup/cluster/cluster-cut.js';
import { IdSet } from '../../src/jobs/dedup/cluster/id-set.js';
import { seededUint32 } from '../support/seeded-random.js';
import { corpus, memoryPass, newVerifier, outcomeOf } from '../support/dedup-corpus.js';
import { DocRows } from '../../src/jobs/dedup/verify/doc-rows.js';
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import { UnionFind } from '../../src/jobs/dedup/verify/union-find.js';
import { PairVerifier } from '../../src/jobs/dedup/verify/pair-verifier.js';

/** Families by plain labelling: each pair's two labels merged, for the reference. */
function referenceFamilies(pairs: Array<[number, number]>): number[][] {
  const label = new Map<number, number>();
  const members = new Map<number, Set<number>>();
  for (const [a, b] of pairs) {
    for (const n of [a, b]) {
      if (label.has(n)) continue;
      label.set(n, n);
      members.set(n, new Set([n]));
    }
    const la = label.get(a)!, lb = label.get(b)!;
    if (la === lb) continue;
    for (const n of members.get(lb)!) {
      label.set(n, la);
      members.get(la)!.add(n);
    }
    members.delete(lb);
  }
  return [...members.values()].map((set) => [...set].sort((x, y) => x - y)).sort((x, y) => x[0] - y[0]);
}

describe('DocRows', () => {
  it('gives each number one row, finds it again through growth, and lists rows by ascending number', () => {
    const rows = new DocRows();
    const random = seededUint32(7);
    const given = new Map<number, number>();
    for (let k = 0; k < 50_000; k++) {
      const n = random() & 0x7fffffff;
      const row = rows.rowOf(n);
      if (given.has(n)) expect(row).toBe(given.get(n));
      else given.set(n, row);
    }
    expect(rows.size).toBe(given.size);
    for (const [n, row] of given) expect(rows.find(n)).toBe(row);
    expect(rows.find(-5)).toBe(-1);
    const ascending = Array.from(rows.ascending(), (row) => rows.numberAt(row));
    expect(ascending).toEqual([...given.keys()].sort((a, b) => a - b));
  });
});

describe('UnionFind in rows', () => {
  it('gives the families of plain labelling, in the order of their first member, with rows only for joined documents', () => {
    const random = seededUint32(11);
    const pairs: Array<[number, number]> = [];
    for (let k = 0; k < 20_000; k++) pairs.push([random() % 1_000_000, random() % 1_000_000]);
    const uf = new UnionFind(new DocNumbers());
    for (const [a, b] of pairs) uf.unionNumbers(a, b);
    const expected = referenceFamilies(pairs.filter(([a, b]) => a !== b));
    expect(Array.from(uf.families(), (f) => Array.from(f))).toEqual(expected);
    expect(uf.families().count).toBe(expected.length);
    expect(uf.rows.size).toBe(expected.reduce((sum, f) => sum + f.length, 0));
    const [first] = expected;
    expect(uf.joinedNumber(first[0])).toBe(true);
    expect(uf.rootOf(first[1])).toBe(uf.rootOf(first[0]));
    const lonely = [...Array(1_000_000).keys()].find((n) => !expected.some((f) => f.includes(n)))!;
    expect(uf.joinedNumber(lonely)).toBe(false);
    expect(uf.rootOf(lonely)).toBe(lonely);
  });

  it('keeps best matches only for documents in a verified pair, and ignores a pair of a document with itself', () => {
    const numbers = new DocNumbers();
    const verifier = new PairVerifier(0.5, { documents: numbers, width: 128 });
    for (let k = 0; k < 10_000; k++) numbers.append(`doc-${k}`);
    verifier.record({ a: 'doc-3', b: 'doc-9000', jaccard: 0.75, hamming: 2 });
    verifier.record({ a: 'doc-3', b: 'doc-17', jaccard: 0.875, hamming: 1 });
    verifier.record({ a: 'doc-42', b: 'doc-42', jaccard: 1, hamming: 0 });
    expect(verifier.clusters.rows.size).toBe(3);
    expect(verifier.bestMatch('doc-3')).toBe(0.875);
    expect(verifier.bestPartner('doc-3')).toBe('doc-17');
    expect(verifier.bestMatch('doc-9000')).toBe(0.75);
    expect(verifier.bestMatch('doc-42')).toBe(0);
    expect(verifier.bestPartner('doc-42')).toBeUndefined();
    expect(verifier.clusters.joined('doc-42')).toBe(false);
    expect([...verifier.involved()]).toEqual(['doc-3', 'doc-17', 'doc-9000']);
  });
});

/** A band's members as bandMembers hands them out: their slots one bucket after the other, and each bucket's [start, end). */
function collected(): { order: number[]; runs: number[]; addRun(slots: Uint32Array): void } {
  const got = { order: [] as number[], runs: [] as number[] };
  return {
    ...got,
    addRun(slots: Uint32Array) {
      got.runs.push(got.order.length, got.order.length + slots.length);
      got.order.push(...slots);
    },
  };
}

describe('bandMembers', () => {
  it('gives the members, runs and large keys of the whole sort, a part of the key space at a time', async () => {
    const { bandBuckets, bandMembers } = await import('../../src/jobs/dedup/bands/band-sort.js');
    const random = seededUint32(5);
    const n = 200_000;
    const hashes = new Uint32Array(n);
    for (let k = 0; k < n; k++) {
      const r = random();
      // Most keys unique, a tenth from a few thousand shared keys, a twentieth one boilerplate key (a slice far
      // larger than a part), a few in the first and last top bytes.
      hashes[k] = r % 10 === 0 ? (random() % 3000) * 0x15551 : r % 20 === 1 ? 0x7abcdef1 : r % 997 === 3 ? r & 0xff : r % 991 === 5 ? 0xff000000 | (r & 0x3) : random();
    }
    const source = (visit: (chunk: Uint32Array) => void) => {
      for (let start = 0; start < n; start += 4096) visit(hashes.subarray(start, Math.min(n, start + 4096)));
    };
    const whole = bandBuckets(source, n);
    const expected = collected();
    for (let r = 0; r < whole.runs.length; r += 2) expected.addRun(whole.order.subarray(whole.runs[r], whole.runs[r + 1]));
    const expectedLarge: number[] = [];
    for (let r = 0; r < whole.runs.length; r += 2) if (whole.runs[r + 1] - whole.runs[r] > 50) expectedLarge.push(whole.keys[whole.runs[r]] | 0);
    for (const passKeys of [1, 700, 5_000, 60_000, 1 << 24]) {
      const scratch = { keys: new Uint32Array(0), order: new Uint32Array(0) };
      const got = collected();
      const largeKeys = bandMembers(source, n, { bucketChunk: 50, sink: got, scratch, passKeys });
      expect(got.order).toEqual(expected.order);
      expect(got.runs).toEqual(expected.runs);
      expect(Array.from(largeKeys)).toEqual(expectedLarge);
      if (passKeys === 5_000) expect(scratch.keys.length).toBeLessThan(n / 2);
    }
  });
});

describe('a document met twice in one bucket', () => {
  it('is no pair: not counted, not reported, no best match with itself', () => {
    const numbers = new DocNumbers();
    const reported: string[] = [];
    const verifier = new PairVerifier(0.5, { documents: numbers, width: 4, onRecorded: (p) => reported.push(`${p.a}|${p.b}`) });
    const x = numbers.numberOf('x');
    const y = numbers.numberOf('y');
    const same = { values: Uint32Array.of(1, 2, 3, 4), simhash: { hi: 0, lo: 0 }, bands: Int32Array.of(7) };
    verifier.verifyMembersOf({ numbers: [x, x, y], signatures: [same, same, same] }, 0);
    expect(reported).toEqual(['x|y', 'x|y']);
    expect([verifier.candidatePairs, verifier.verifiedPairs]).toEqual([2, 2]);
    expect(verifier.bestPartner('x')).toBe('y');
  });
});

describe('the parts of a band sort', () => {
  it('reads the band once to count and once a part that holds keys (none for empty slices)', async () => {
    const { bandMembers } = await import('../../src/jobs/dedup/bands/band-sort.js');
    const hashes = Uint32Array.from({ length: 5000 }, (_, i) => i % 300);
    let reads = 0;
    const source = (visit: (chunk: Uint32Array) => void) => {
      reads++;
      visit(hashes);
    };
    const got = collected();
    bandMembers(source, 5000, { bucketChunk: 50, sink: got, scratch: { keys: new Uint32Array(0), order: new Uint32Array(0) }, passKeys: 1000 });
    expect(reads).toBe(2);
    expect(got.runs.length / 2).toBe(300);
    reads = 0;
    bandMembers(source, 5000, { bucketChunk: 50, sink: collected(), scratch: { keys: new Uint32Array(0), order: new Uint32Array(0) }, passKeys: 1 });
    expect(reads).toBe(2);
  });
});

describe('a pass whose bands are sorted in parts', () => {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'nd-parts-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));
  const docs = corpus(60, 9, 500, 120);

  for (const sortAhead of [false, true]) {
    it(`gives the pairs, counts, best matches and clusters of the pass in memory (parts of 40 keys, ${sortAhead ? 'on the sorting worker' : 'sorted here'}, gathered or not)`, async () => {
      const expected = await memoryPass(docs, 20);
      for (const rangeMembers of [0, 25]) {
        const numbers = new DocNumbers();
        const { verifier, pairs } = newVerifier(numbers);
        const spill = new SignatureRecords(numbers, { spillDir: scratch });
        for (const d of docs) spill.addSignature(d.id, d.signature);
        try {
          await verifyBands(spill, verifier, { bucketChunk: 20, groupMembers: 7, sortAhead, checkers: 0, rangeMembers, sortPassKeys: 40 });
        } finally {
          spill.close();
        }
        expect(outcomeOf(verifier, pairs, docs)).toEqual(expected);
      }
    });
  }
});

describe('the clustered ids (IdSet), answered without an index of every id', () => {
  it('has every id added and none of 200,000 others (ids alike but for a character, any text)', () => {
    const set = new IdSet();
    for (let k = 0; k < 200_000; k++) set.add(`doc-${k}`);
    set.add('');
    set.add('\ud800 lone surrogate');
    for (let k = 0; k < 200_000; k++) expect(set.has(`doc-${k}`)).toBe(true);
    expect(set.has('') && set.has('\ud800 lone surrogate')).toBe(true);
    let found = 0;
    for (let k = 200_000; k < 400_000; k++) if (set.has(`doc-${k}`) || set.has(`Doc-${k - 200_000}`)) found++;
    expect(found).toBe(0);
    expect(() => set.add('late')).toThrow(/after the first look-up/);
    expect(set.has('doc-7')).toBe(true);
  });

  it("the cut says which documents it clustered without looking a number up by id (a numbering on disk would build an index of every id)", async () => {
    const documents = new DocNumbers();
    const values = (offset: number) => Uint32Array.from({ length: 64 }, (_, k) => (k < 48 ? k : k + offset));
    const signatures = new Map([
      ['a', { values: values(0), simhash: '0', bands: Int32Array.of(1) }],
      ['b', { values: values(100), simhash: '0', bands: Int32Array.of(1) }],
      ['c', { values: values(200), simhash: '0', bands: Int32Array.of(1) }],
    ]);
    const family = Int32Array.from(['a', 'b', 'c'], (id) => documents.numberOf(id));
    for (let k = 0; k < 1000; k++) documents.numberOf(`other-${k}`);
    const noLookups = { ...documents, size: documents.size, idOf: (n: number) => documents.idOf(n), idsOf: (ns: ArrayLike<number>) => documents.idsOf(ns), numberOf: () => { throw new Error('looked up by id'); }, find: () => { throw new Error('looked up by id'); }, append: () => { throw new Error('numbered'); } };
    const cut = await cutFamilies([family], { method: 'components', rule: 'oldest', minSimilarity: 0.5, facts: { get: () => undefined }, signatures: async (ids) => new Map(ids.map((id) => [id, signatures.get(id)!])), documents: noLookups });
    expect([...cut.clusters].map((c) => [c.members, Array.from(c.numbers ?? [])])).toEqual([[['a', 'b', 'c'], Array.from(family)]]);
    expect(['a', 'b', 'c', 'other-5', 'gone'].map((id) => cut.clustered(id))).toEqual([true, true, true, false, false]);
  });
});
