// The bucket and verify stages of the whole-index pass, without an engine: the radix sort of a band against
// the comparison sort it replaces, and the pairs, counts and clusters of the band pass with the signatures in
// memory and spilled to disk, against the pass in memory that dedup ran before.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_RANGE_MEMBERS } from '../../src/jobs/dedup/bands/band-gather.js';
import { MembersInMemory, membersOf, planRanges } from '../../src/jobs/dedup/bands/band-members.js';
import { rangesByDefault, verifyBandOf, verifyBands } from '../../src/jobs/dedup/bands/band-pass.js';
import { checkBuckets, LARGE } from '../../src/jobs/dedup/verify/bucket-check.js';
import { bandBuckets, bandMembers } from '../../src/jobs/dedup/bands/band-sort.js';
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import { PairVerifier, type VerifiedPair } from '../../src/jobs/dedup/verify/pair-verifier.js';
import type { StoredSignature } from '../../src/jobs/dedup/documents/signature-store.js';
import { chooseValueBits, SignatureRecords, spillBytes } from '../../src/jobs/dedup/scan/signature-table.js';
import { hammingDistance } from '../../src/sketch/simhash.js';
import { BANDS, bandRuns, corpus, type Doc, memoryPass, type Outcome, outcomeOf, WIDTH } from '../support/dedup-corpus.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'nd-stages-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

type Where = 'memory' | 'disk' | 'disk, sorted ahead' | 'disk, checked apart' | 'disk, compact' | 'disk, gathered' | 'disk, gathered ahead' | 'disk, gathered ahead, checked apart';

/** Bands gathered in ranges of this many members (as many as a large key's chunk, so a larger key is cut into ranges). */
const RANGE_MEMBERS = 50;

async function stagedPass(docs: Doc[], bucketChunk: number, where: Where, groupMembers: number): Promise<Outcome> {
  const numbers = new DocNumbers();
  const pairs: VerifiedPair[] = [];
  const verifier: PairVerifier = new PairVerifier(0.5, { documents: numbers, onVerified: (p) => pairs.push(verifier.named(p)) });
  if (where === 'memory') {
    const pool = new SignatureRecords(numbers, { expected: docs.length });
    for (const d of docs) pool.addSignature(d.id, d.signature);
    for (let band = 0; band < BANDS; band++) await verifyBandOf(pool, verifier, band, { bucketChunk, groupMembers });
  } else {
    const spill = new SignatureRecords(numbers, { spillDir: scratch, valueBits: where === 'disk, compact' ? 16 : 32 });
    try {
      for (const d of docs) spill.addSignature(d.id, d.signature);
      if (where === 'disk, sorted ahead') await verifyBands(spill, verifier, { bucketChunk, groupMembers, sortAhead: true, checkers: 0, rangeMembers: 0 });
      else if (where === 'disk, checked apart') await verifyBands(spill, verifier, { bucketChunk, groupMembers, sortAhead: true, checkers: 2, rangeMembers: 0 });
      else if (where === 'disk, gathered') await verifyBands(spill, verifier, { bucketChunk, groupMembers, sortAhead: false, checkers: 0, rangeMembers: RANGE_MEMBERS });
      else if (where === 'disk, gathered ahead') await verifyBands(spill, verifier, { bucketChunk, groupMembers, sortAhead: true, checkers: 0, rangeMembers: RANGE_MEMBERS });
      else if (where === 'disk, gathered ahead, checked apart') await verifyBands(spill, verifier, { bucketChunk, groupMembers, sortAhead: true, checkers: 2, rangeMembers: RANGE_MEMBERS });
      else for (let band = 0; band < BANDS; band++) await verifyBandOf(spill, verifier, band, { bucketChunk, groupMembers });
      expect(readdirSync(spill.path).filter((name) => name.includes('range'))).toEqual([]);
    } finally {
      spill.close();
    }
  }
  return outcomeOf(verifier, pairs, docs);
}

const spilled: DocNumbers[] = [];
afterAll(() => {
  for (const ids of spilled) ids.close();
});

/** A numbering with its ids on disk, in the test's scratch folder. */
function spilledIds(): DocNumbers {
  const ids = new DocNumbers(scratch);
  spilled.push(ids);
  return ids;
}

/** Flat [start, end, start, end, ...] runs as pairs. */
function pairsOf(runs: Uint32Array): Array<[number, number]> {
  const pairs: Array<[number, number]> = [];
  for (let k = 0; k < runs.length; k += 2) pairs.push([runs[k], runs[k + 1]]);
  return pairs;
}

describe('planRanges (a band gathered in ranges of buckets)', () => {
  it('packs whole buckets up to the size, cuts a larger one into ranges of that size, and covers every member once', () => {
    // Buckets of 3, 2, 4, 9 and 2 members, one after the other.
    const runs = Uint32Array.of(0, 3, 3, 5, 5, 9, 9, 18, 18, 20);
    const ranges = planRanges(runs, 5);
    expect(ranges.map(({ from, to, fromRun, toRun, members, cutEnd }) => [from, to, fromRun, toRun, members, cutEnd])).toEqual([
      [0, 5, 0, 2, 5, undefined],
      [5, 9, 2, 3, 4, undefined],
      [9, 14, 3, 4, 5, 18],
      [14, 18, 3, 4, 4, 18],
      [18, 20, 4, 5, 2, undefined],
    ]);
    expect(membersOf(ranges)).toBe(20);
    expect(planRanges(new Uint32Array(0), 5)).toEqual([]);
  });
});

describe('bandBuckets (radix sort of a band)', () => {
  it('bandMembers keeps the members only (documents in a bucket), bucket after bucket, with the runs as places among them', () => {
    const hashes = Int32Array.of(7, 3, 9, 7, 3, 1, 7, -2);
    const members = new MembersInMemory(Number.POSITIVE_INFINITY);
    const source = (visit: (chunk: Uint32Array) => void) => visit(new Uint32Array(hashes.buffer));
    expect([...bandMembers(source, hashes.length, { bucketChunk: 2, sink: members, scratch: { keys: new Uint32Array(0), order: new Uint32Array(0) } })]).toEqual([7]);
    const window = members.window(members.ranges[0]);
    expect([...window.order]).toEqual([1, 4, 0, 3, 6]); // hash 3: slots 1, 4; hash 7: slots 0, 3, 6
    expect(pairsOf(window.runs)).toEqual([[0, 2], [2, 5]]);
  });

  it('gives the order and runs of the comparison sort, for any hashes (signed, equal, extreme)', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.integer({ min: -3, max: 3 }), fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 })), { maxLength: 300 }), (hashes) => {
        const expected = bandRuns(Int32Array.from(hashes));
        const got = bandBuckets(Int32Array.from(hashes));
        expect([...got.order]).toEqual([...expected.order]);
        expect(pairsOf(got.runs)).toEqual(expected.runs);
        expect([...got.keys]).toEqual([...got.order].map((slot) => hashes[slot] >>> 0));
      }),
    );
  });

  it('reads a band a chunk at a time into arrays reused band after band, with the order and runs of a whole column', () => {
    const scratch = { keys: new Uint32Array(0), order: new Uint32Array(0) };
    for (const n of [50, 1000, 300]) {
      const hashes = Int32Array.from({ length: n }, (_, i) => ((i * 2654435761) >>> 20) - (i % 3 === 0 ? 2 ** 31 : 0));
      const chunked = (visit: (chunk: Uint32Array) => void) => {
        for (let at = 0; at < n; at += 7) visit(new Uint32Array(hashes.buffer, 4 * at, Math.min(7, n - at)));
      };
      const whole = bandBuckets(hashes);
      const got = bandBuckets(chunked, n, scratch);
      expect([[...got.order], [...got.keys], [...got.runs]]).toEqual([[...whole.order], [...whole.keys], [...whole.runs]]);
    }
    expect(scratch.keys.length).toBe(1000); // grown once, for the largest band
    expect(() => bandBuckets(() => undefined, 5)).toThrow(/held 0 hashes where 5 documents/);
  });

  it('sorts more documents than the numeric sort of the old pass held (2^21) the same way', () => {
    const n = 2 ** 21 + 5000;
    const hashes = new Int32Array(n);
    let state = 3;
    for (let i = 0; i < n; i++) hashes[i] = (state = (Math.imul(state, 1103515245) + 12345) | 0) >> 12; // many repeats
    const { order, runs } = bandBuckets(hashes);
    let unordered = 0;
    for (let k = 1; k < n; k++) {
      const a = hashes[order[k - 1]] >>> 0, b = hashes[order[k]] >>> 0;
      if (!(a < b || (a === b && order[k - 1] < order[k]))) unordered++;
    }
    expect(unordered).toBe(0);
    expect(new Set(order).size).toBe(n);
    expect(pairsOf(runs).reduce((s, [a, b]) => s + b - a, 0)).toBeGreaterThan(n / 2);
    let split = 0;
    for (const [a, b] of pairsOf(runs)) for (let k = a + 1; k < b; k++) if (hashes[order[k]] !== hashes[order[a]]) split++;
    expect(split).toBe(0);
  });
});

describe('the band pass, signatures in memory or spilled to disk', () => {
  const docs = corpus(60, 12, 600, 400);

  it('finds the pairs, counts, best matches and clusters of the pass in memory, in the same order (small groups, large keys chunked)', async () => {
    const expected = await memoryPass(docs, 50);
    expect(expected.pairs.length).toBeGreaterThan(300);
    expect(expected.clusters.length).toBeGreaterThan(30);
    const bandsWithCutKeys = Array.from({ length: BANDS }, (_, band) => bandBuckets(Int32Array.from(docs, (d) => d.signature.bands[band])).runs).filter((runs) =>
      pairsOf(runs).some(([start, end]) => end - start > RANGE_MEMBERS),
    );
    expect(bandsWithCutKeys.length).toBeGreaterThan(0); // (so the gathered ways cut a key into several ranges)
    const ways = [['memory', 1], ['memory', 100_000], ['disk', 7], ['disk', 100_000], ['disk, sorted ahead', 7], ['disk, sorted ahead', 100_000], ['disk, checked apart', 7]] as const;
    const gathered = [['disk, gathered', 7], ['disk, gathered', 100_000], ['disk, gathered ahead', 7], ['disk, gathered ahead, checked apart', 7]] as const;
    for (const [where, group] of [...ways, ...gathered]) {
      const got = await stagedPass(docs, 50, where, group);
      expect(got.pairs).toEqual(expected.pairs);
      expect(got.counts).toEqual(expected.counts);
      expect(got.best).toEqual(expected.best);
      expect(got.clusters).toEqual(expected.clusters);
    }
  });

  it('gathers the bands by default only when the records file is larger than the memory available could cache', () => {
    const spill = new SignatureRecords(undefined, { spillDir: scratch, valueBits: 32 });
    try {
      for (const d of docs) spill.addSignature(d.id, d.signature);
      const bytes = statSync(spill.records!().file).size;
      expect(bytes).toBe(docs.length * (4 * WIDTH + 8 + 4 * BANDS));
      expect(rangesByDefault(spill, 10 * bytes)).toBe(0);
      expect(rangesByDefault(spill, bytes)).toBe(DEFAULT_RANGE_MEMBERS);
      expect(rangesByDefault(new SignatureRecords(), 0)).toBe(0);
    } finally {
      spill.close();
    }
  });

  it('a compact spill (16 bits a value): the same pairs and clusters here; values equal in their low 16 bits count as equal, so a pair can only gain', async () => {
    const expected = await memoryPass(docs, 50);
    const got = await stagedPass(docs, 50, 'disk, compact', 7);
    expect(got.pairs).toEqual(expected.pairs);
    expect(got.clusters).toEqual(expected.clusters);
    // Two documents whose values differ only above the low 16 bits in a third of the values: 1/3 apart whole, the same compact.
    const base = docs[0].signature;
    const twin = { ...base, values: base.values.map((v, k) => (k % 3 === 0 ? (v ^ 0x10000) >>> 0 : v)) };
    const pair = [{ id: 'a', signature: base }, { id: 'b', signature: twin }];
    const [whole, compact] = [await stagedPass(pair, 50, 'disk', 7), await stagedPass(pair, 50, 'disk, compact', 7)];
    expect(whole.pairs.map((p) => p.jaccard)).toEqual([1 - Math.ceil(WIDTH / 3) / WIDTH]);
    expect(compact.pairs.map((p) => p.jaccard)).toEqual([1]);
    const spill = new SignatureRecords(undefined, { spillDir: scratch, valueBits: 16 });
    try {
      for (const d of docs.slice(0, 50)) spill.addSignature(d.id, d.signature);
      expect(spill.bytesPerDocument).toBe(2 * WIDTH + 8 + 8 * BANDS); // against 4 * WIDTH + 8 + 8 * BANDS whole
      const slots = Uint32Array.of(0, 3, 4, 49);
      const signatureOf = await spill.load(slots);
      for (const slot of slots) {
        const s = signatureOf(slot);
        expect([...s.values]).toEqual([...docs[slot].signature.values].map((v) => v & 0xffff));
        expect([...s.bands]).toEqual([...docs[slot].signature.bands]);
        expect(s.simhash).toEqual(docs[slot].signature.simhash);
      }
    } finally {
      spill.close();
    }
  });

  it('a bucket checked apart: a pair decided by an earlier band dropped, one met only in large keys kept whatever its similarity, a new one kept only above the bar', () => {
    const sig = (values: number[], bands: number[]): StoredSignature => ({ values: Uint32Array.from(values), bands: Int32Array.from(bands), simhash: { hi: values[0], lo: 0 } });
    const members = [sig([1, 2, 3, 4], [7, 8, 9]), sig([1, 2, 3, 5], [7, 8, 9]), sig([1, 6, 6, 6], [5, 8, 9]), sig([0, 0, 3, 4], [6, 1, 9])];
    const large = new Map([[0, new Set([7])], [1, new Set<number>()]]);
    const checked = checkBuckets({ band: 2, minSimilarity: 0.5, order: Uint32Array.of(0, 1, 2, 3), bounds: Uint32Array.of(0, 4) }, (slot) => members[slot], (band) => large.get(band));
    // 0-1 share band 0's large key and band 1's small one: decided. 0-2, 1-2 share band 1 (small): decided.
    // 0-3 and 1-3, 2-3: new; 0-3 equal in 2 of 4 (at the bar), 1-3 in 1, 2-3 in 0.
    expect([...checked.pairs]).toEqual([0, 0, 3, hammingDistance({ hi: 1, lo: 0 }, { hi: 0, lo: 0 })]);
    expect([...checked.similarities]).toEqual([0.5]);
    expect(checked.rejected).toBe(2);
    large.set(1, new Set([8]));
    const again = checkBuckets({ band: 2, minSimilarity: 0.9, order: Uint32Array.of(0, 1, 2), bounds: Uint32Array.of(0, 2, 3) }, (slot) => members[slot], (band) => large.get(band));
    // Now 0-1 share only large keys: kept below the bar (0.75), flagged; the bucket of one has no pair.
    expect([...again.pairs]).toEqual([0, 0, 1, LARGE]);
    expect([...again.similarities]).toEqual([0.75]);
    expect(again.rejected).toBe(0);
  });

  it("an 'auto' spill keeps whole values when they fit the disk, 16 bits when only that fits, and refuses with both sizes and the way out when neither does", () => {
    const at = { expected: 100_000_000, width: 128, bandCount: 26, where: '/spill' };
    const gib = 1024 ** 3;
    expect([spillBytes(1, 128, 26, 32), spillBytes(1, 128, 26, 16)]).toEqual([624 + 104 + 140, 368 + 104 + 140]);
    expect(chooseValueBits({ ...at, free: 85 * gib })).toBe(32);
    expect(chooseValueBits({ ...at, free: 64 * gib })).toBe(16);
    expect(chooseValueBits({ ...at, expected: 0, free: 0 })).toBe(32);
    expect(() => chooseValueBits({ ...at, free: 40 * gib })).toThrow(/100,000,000 signatures to \/spill: 57\.0 GB at least \(80\.8 GB with whole values\), and 40\.0 GB is free there; give limits.spillDir on a disk with room, or raise limits.maxCachedSignatures/);
    // The margin every spill leaves free: a disk with the whole spill free but not 1 GB more takes 16 bits, and the refusal says it.
    expect(chooseValueBits({ ...at, free: 81 * gib })).toBe(16);
    expect(() => chooseValueBits({ ...at, free: 40 * gib })).toThrow(/if memory allows; dedup leaves 1 GB of a spill's disk free$/);
  });

  it('the spill: its own folder (a planted file is not followed), signatures read back exactly, the folder gone when closed', async () => {
    const victim = path.join(scratch, 'victim.txt');
    writeFileSync(victim, 'keep me');
    const spill = new SignatureRecords(new DocNumbers(), { spillDir: scratch });
    try {
      expect(path.dirname(spill.path)).toBe(scratch);
      for (const d of docs.slice(0, 500)) spill.addSignature(d.id, d.signature);
      spill.addSignature('other-shape', { values: new Uint32Array(3), bands: new Int32Array(BANDS), simhash: { hi: 0, lo: 0 } });
      expect([spill.size, spill.leftOut]).toEqual([500, 1]);
      const slots = Uint32Array.of(0, 1, 2, 9, 200, 203, 499);
      const signatureOf = await spill.load(slots);
      for (const slot of slots) {
        const s = signatureOf(slot);
        expect([...s.values]).toEqual([...docs[slot].signature.values]);
        expect([...s.bands]).toEqual([...docs[slot].signature.bands]);
        expect(s.simhash).toEqual(docs[slot].signature.simhash);
      }
      const found = await spill.find([docs[3].id, 'nobody', docs[42].id]);
      expect([...found.keys()].sort()).toEqual([docs[42].id, docs[3].id].sort());
      expect(readdirSync(spill.path).sort()).toEqual(['band-0.bin', 'band-1.bin', 'band-2.bin', 'band-3.bin', 'band-4.bin', 'band-5.bin', 'band-6.bin', 'band-7.bin', 'records.bin']);
    } finally {
      spill.close();
    }
    expect(existsSync(spill.path)).toBe(false);
    // A second spill in the same parent gets a folder of its own, whatever is planted beside it.
    symlinkSync(victim, path.join(scratch, 'near-dup-spill-planted'));
    // A killed run's folder (its process gone, untouched for an hour: an earlier version's, which names no
    // namespace) is removed; a link named like one, and a live run's folder, are not (spill-folder.test.ts has the rest).
    const dead = path.join(scratch, 'near-dup-spill-2147483000-abcdef');
    const live = path.join(scratch, `near-dup-spill-${process.ppid}-abcdef`);
    const linked = path.join(scratch, 'near-dup-spill-2147483001-abcdef');
    const hourAgo = new Date(Date.now() - 3600_000);
    for (const folder of [dead, live]) mkdirSync(folder);
    writeFileSync(path.join(dead, 'records.bin'), 'x');
    for (const folder of [dead, live]) utimesSync(folder, hourAgo, hourAgo);
    symlinkSync(scratch, linked);
    const second = new SignatureRecords(undefined, { spillDir: scratch });
    second.addSignature('x', docs[0].signature);
    second.readBand(0, () => undefined);
    second.close();
    expect(readFileSync(victim, 'utf8')).toBe('keep me');
    expect([existsSync(dead), existsSync(live), existsSync(linked)]).toEqual([false, true, true]);
  });
});

describe('DocNumbers (ids in two record files, in memory or on disk)', () => {
  it.each(['memory', 'disk'])('numbers ids as a Map would, finds them again and gives them back exactly (any text, repeats, long ones): ids in %s', (where) => {
    fc.assert(
      fc.property(fc.array(fc.oneof(fc.string({ unit: 'binary', maxLength: 30 }), fc.constantFrom('', 'a', 'a', '__proto__', 'x'.repeat(5000))), { maxLength: 400 }), (ids) => {
        const numbers = where === 'memory' ? new DocNumbers() : spilledIds();
        const expected = new Map<string, number>();
        for (const id of ids) {
          if (!expected.has(id)) expected.set(id, expected.size);
          expect(numbers.numberOf(id)).toBe(expected.get(id));
        }
        expect(numbers.size).toBe(expected.size);
        for (const [id, n] of expected) {
          expect(numbers.find(id)).toBe(n);
          expect(numbers.idOf(n)).toBe(id);
        }
        expect(numbers.find('never-added-\u0000')).toBeUndefined();
      }),
    );
  });

  it.each(['memory', 'disk'])('ids in %s: appended unlooked-up as a scan meets them, read back in any order, found by id once asked (the index built then, kept up to date)', (where) => {
    const ids = where === 'memory' ? new DocNumbers() : spilledIds();
    const idOf = (i: number) => `doc-${i}-${'ü'.repeat(i % 7)}${i % 1000 === 0 ? 'y'.repeat(6000) : ''}\ud800`.slice(0, i % 3 === 0 ? undefined : -1);
    const n = 20_000;
    for (let i = 0; i < n; i++) expect(ids.append(idOf(i))).toBe(i);
    let wrong = 0;
    for (let i = n - 1; i >= 0; i -= 3) if (ids.idOf(i) !== idOf(i)) wrong++;
    expect(ids.idsOf([0, 1, 2, 1000, 19_999])).toEqual([0, 1, 2, 1000, 19_999].map(idOf));
    for (let i = 0; i < n; i += 5) if (ids.find(idOf(i)) !== i) wrong++;
    expect(wrong).toBe(0);
    expect(ids.find('doc-20000')).toBeUndefined();
    expect(ids.append(idOf(7))).toBe(7); // once indexed, an id met again keeps its number
    expect(ids.numberOf('new one')).toBe(n);
    expect([ids.find('new one'), ids.idOf(n), ids.size]).toEqual([n, 'new one', n + 1]);
    expect(() => ids.idOf(n + 1)).toThrow(/no document number/);
  });

  it('holds more ids than one chunk and one table size, in order', () => {
    const numbers = new DocNumbers();
    const n = 300_000;
    for (let i = 0; i < n; i++) numbers.numberOf(`document-${i}-${'é'.repeat(i % 13)}`);
    let wrong = 0;
    for (let i = 0; i < n; i += 7) if (numbers.find(`document-${i}-${'é'.repeat(i % 13)}`) !== i || numbers.idOf(i) !== `document-${i}-${'é'.repeat(i % 13)}`) wrong++;
    expect(wrong).toBe(0);
    expect(numbers.size).toBe(n);
  });
});
