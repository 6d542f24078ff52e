// The gathered bands (band-gather.ts, range-records.ts, band-pass.ts verifyGathered) checked as a stranger
// would: the plan of ranges against the runs it cuts, each range file against the records it should hold
// (sweeps whose reads end inside a word of the member bits, documents not a multiple of 32, a read of one
// record), the pass with ranges of 1, 2 and a large key's chunk against the pass in memory, a band with no
// room to gather beside one that has, the share view, and what a failure leaves on the disk.
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, watch, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { type BandRange, forEachPlace, gatherBand, gatherBands, membersOf, planRanges } from '../../src/jobs/dedup/band-gather.js';
import { bandSets, verifyBandOf, verifyBands } from '../../src/jobs/dedup/band-pass.js';
import sortBands from '../../src/jobs/dedup/band-sort-worker.js';
import { bandBuckets, membersOnly } from '../../src/jobs/dedup/band-sort.js';
import type { SortedBand } from '../../src/jobs/dedup/band-sorter.js';
import { BucketChecker } from '../../src/jobs/dedup/bucket-checker.js';
import { DocNumbers } from '../../src/jobs/dedup/doc-numbers.js';
import { RangeRecords } from '../../src/jobs/dedup/range-records.js';
import { SignatureSpill } from '../../src/jobs/dedup/signature-spill.js';
import { keyRange } from '../../src/jobs/dedup/share-plan.js';
import { shareTable } from '../../src/jobs/dedup/share-table.js';
import { type RecordLayout, RecordReader, recordBytes } from '../../src/jobs/dedup/spill-records.js';
import { BANDS, corpus, type Doc, memoryPass, newVerifier, type Outcome, outcomeOf } from '../support/dedup-corpus.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'nd-gather-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function spillOf(docs: Doc[], numbers?: DocNumbers, valueBits: 16 | 32 = 32): SignatureSpill {
  const spill = new SignatureSpill(scratch, numbers, { valueBits });
  for (const d of docs) spill.addSignature(d.id, d.signature);
  return spill;
}

/** Runs `test` in a folder of its own under the scratch folder, removed after. */
function inFolder(name: string, test: (folder: string) => void): void {
  const folder = mkdtempSync(path.join(scratch, `${name}-`));
  try {
    test(folder);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const rangeFiles = (folder: string) => readdirSync(folder).filter((name) => name.includes('range'));

interface Gathered {
  rangeMembers: number;
  sortAhead: boolean;
  checkers: number;
  groupMembers?: number;
  bandsPerSweep?: number;
}

/** The pass over a spill with its bands gathered; no range file may be left once it is done. */
async function gatheredPass(docs: Doc[], bucketChunk: number, way: Gathered): Promise<Outcome> {
  const numbers = new DocNumbers();
  const { verifier, pairs } = newVerifier(numbers);
  const spill = spillOf(docs, numbers);
  try {
    const { sortAhead, checkers, rangeMembers, bandsPerSweep } = way;
    await verifyBands(spill, verifier, { bucketChunk, groupMembers: way.groupMembers ?? 7, sortAhead, checkers, rangeMembers, bandsPerSweep });
    expect(rangeFiles(spill.path)).toEqual([]);
  } finally {
    spill.close();
  }
  return outcomeOf(verifier, pairs, docs);
}

/** Runs as flat [start, end, ...]: sorted, apart, each of 2 or more, from sizes and gaps. */
function runsFrom(parts: Array<{ gap: number; size: number }>): Uint32Array {
  const runs: number[] = [];
  let at = 0;
  for (const { gap, size } of parts) {
    at += gap;
    runs.push(at, at + size);
    at += size;
  }
  return Uint32Array.from(runs);
}

describe('planRanges', () => {
  it('covers every place of every run once, in order; packs whole runs up to the size; cuts only a larger run, into consecutive parts of the size', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ gap: fc.nat(3), size: fc.integer({ min: 2, max: 20 }) }), { maxLength: 40 }), fc.integer({ min: 1, max: 25 }), (parts, target) => {
        const runs = runsFrom(parts);
        const ranges = planRanges(runs, target);
        const places: number[] = [];
        for (const range of ranges) {
          const before = places.length;
          forEachPlace(range, runs, (p) => places.push(p));
          expect(places.length - before).toBe(range.members);
          expect(range.members).toBeGreaterThan(0);
          expect(range.members).toBeLessThanOrEqual(target);
          const sizeOf = (r: number) => runs[2 * r + 1] - runs[2 * r];
          if (range.toRun - range.fromRun > 1 || sizeOf(range.fromRun) <= target) {
            // Whole runs: from the first's start to the last's end.
            expect([range.from, range.to]).toEqual([runs[2 * range.fromRun], runs[2 * range.toRun - 1]]);
          } else {
            expect(range.toRun - range.fromRun).toBe(1);
            expect((range.from - runs[2 * range.fromRun]) % target).toBe(0);
          }
        }
        const expected: number[] = [];
        for (let r = 0; r < runs.length; r += 2) for (let p = runs[r]; p < runs[r + 1]; p++) expected.push(p);
        expect(places).toEqual(expected);
        expect(membersOf(ranges)).toBe(expected.length);
        // Consecutive ranges never share a run unless it is one cut into parts.
        for (let k = 1; k < ranges.length; k++) if (ranges[k].fromRun < ranges[k - 1].toRun) expect(ranges[k].fromRun).toBe(ranges[k - 1].fromRun);
      }),
      { numRuns: 300 },
    );
  });
});

/** A records file of `documents` records of this layout, each marked with its slot (first and last word): its bytes. */
function plantRecords(folder: string, documents: number, layout: RecordLayout): Buffer {
  const bytes = recordBytes(layout);
  const all = Buffer.alloc(documents * bytes);
  for (let s = 0; s < documents; s++) {
    all.writeUInt32LE(s + 1, s * bytes);
    all.writeUInt32LE(Math.imul(s + 1, 0x9e3779b1) >>> 0, (s + 1) * bytes - 4);
  }
  writeFileSync(path.join(folder, 'records.bin'), all);
  return all;
}

/** Checks that each range file holds its members' records once, in slot order, and that the ranges hold every member once. */
function expectRangeFiles(ranges: readonly BandRange[], order: Uint32Array, runs: Uint32Array, all: Buffer, bytes: number): void {
  const seen = new Set<number>();
  for (const range of ranges) {
    const slots: number[] = [];
    forEachPlace(range, runs, (p) => slots.push(order[p]));
    slots.sort((a, b) => a - b);
    for (const slot of slots) {
      expect(seen.has(slot)).toBe(false);
      seen.add(slot);
    }
    const expected = Buffer.concat(slots.map((slot) => all.subarray(slot * bytes, (slot + 1) * bytes)));
    const got = readFileSync(range.file as string);
    expect(got.length).toBe(expected.length);
    expect(got.equals(expected)).toBe(true);
  }
  let members = 0;
  for (let r = 0; r < runs.length; r += 2) members += runs[r + 1] - runs[r];
  expect(seen.size).toBe(members);
}

/** gatherBand on a band of these hashes over a planted records file, with the whole order (sorted here) or the members only (sorted on the worker). */
function gatherCase(hashes: Int32Array, layout: RecordLayout, rangeMembers: number, membersOnlyOrder: boolean): void {
  inFolder('case', (folder) => {
    const all = plantRecords(folder, hashes.length, layout);
    const sorted = bandBuckets(hashes);
    const { order, runs } = membersOnlyOrder ? membersOnly(sorted.order, sorted.runs, new Uint32Array(hashes.length)) : sorted;
    const ranges = gatherBand({ records: path.join(folder, 'records.bin'), layout, documents: hashes.length, band: 3, rangeMembers }, order, runs);
    expect(ranges).toBeDefined();
    expectRangeFiles(ranges as BandRange[], order, runs, all, recordBytes(layout));
    expect(readdirSync(folder).length).toBe(1 + (ranges as BandRange[]).length);
  });
}

describe('gatherBand', () => {
  const small: RecordLayout = { width: 2, bandCount: 1, valueBits: 32 };

  it('writes each member record once into its range file, in slot order (any band, any range size, documents around multiples of 32)', () => {
    const documents = fc.oneof(fc.constantFrom(1, 2, 31, 32, 33, 63, 64, 65, 97), fc.integer({ min: 1, max: 300 }));
    fc.assert(
      fc.property(
        documents.chain((n) => fc.tuple(fc.array(fc.integer({ min: 0, max: Math.max(1, n >> 2) }), { minLength: n, maxLength: n }), fc.integer({ min: 1, max: n + 2 }), fc.boolean())),
        ([keys, rangeMembers, onlyMembers]) => gatherCase(Int32Array.from(keys), small, rangeMembers, onlyMembers),
      ),
      { numRuns: 150 },
    );
  });

  it('members at the last slots, in the last word, at bit 31, in a file of 1, 33 and 65 documents', () => {
    for (const n of [2, 33, 64, 65]) {
      // Only slots 31, the last two and slot 0 share keys; the rest are alone.
      const hashes = Int32Array.from({ length: n }, (_, s) => 1000 + s);
      hashes[n - 1] = hashes[n - 2] = 7;
      if (n > 32) hashes[31] = hashes[0] = -1;
      for (const rangeMembers of [1, 2, 3]) for (const onlyMembers of [false, true]) gatherCase(hashes, small, rangeMembers, onlyMembers);
    }
  });

  // Records so large that one read of the sweep (8 MB) holds 31, 32, 33 or 1 of them: reads end inside a word of
  // the member bits, a whole read holds no member (skipped), and the last read is short.
  for (const [perRead, width, documents] of [[31, 66_000, 97], [32, 64_000, 97], [33, 62_000, 97], [1, 1_050_000, 5]] as const) {
    it(`reads of ${perRead} records: each member met once, with its range`, () => {
      const layout: RecordLayout = { width, bandCount: 1, valueBits: 32 };
      expect(Math.floor((8 * 1024 * 1024) / recordBytes(layout))).toBe(perRead);
      let state = perRead;
      const random = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
      const hashes = Int32Array.from({ length: documents }, (_, s) => (s >= 31 && s < 62 ? 5000 + s : Math.floor(random() * (documents / 3))));
      if (documents > 64) hashes[documents - 1] = hashes[30];
      for (const rangeMembers of [1, 4, 1000]) gatherCase(hashes, layout, rangeMembers, true);
    });
  }

  it('a band with no bucket: no range, no file', () => {
    inFolder('case', (folder) => {
      plantRecords(folder, 40, small);
      const sorted = bandBuckets(Int32Array.from({ length: 40 }, (_, s) => s));
      expect(gatherBand({ records: path.join(folder, 'records.bin'), layout: small, documents: 40, band: 0, rangeMembers: 2 }, sorted.order, sorted.runs)).toEqual([]);
      expect(readdirSync(folder)).toEqual(['records.bin']);
    });
  });

  it('refuses a file planted under a range name, and leaves nothing of its own open or on the disk', () => {
    inFolder('case', (folder) => {
      plantRecords(folder, 40, small);
      writeFileSync(path.join(folder, 'band-0-range-2.bin'), 'planted');
      const sorted = bandBuckets(Int32Array.from({ length: 40 }, (_, s) => s >> 2)); // ten buckets of 4
      const open = readdirSync('/proc/self/fd').length;
      expect(() => gatherBand({ records: path.join(folder, 'records.bin'), layout: small, documents: 40, band: 0, rangeMembers: 4 }, sorted.order, sorted.runs)).toThrow(/EEXIST/);
      expect(readdirSync('/proc/self/fd').length).toBe(open);
      expect(readdirSync(folder).sort()).toEqual(['band-0-range-2.bin', 'records.bin']);
      expect(readFileSync(path.join(folder, 'band-0-range-2.bin'), 'utf8')).toBe('planted');
    });
  });

  it('a records file cut short (a damaged disk, a changed folder) is said, and leaves nothing behind', () => {
    inFolder('case', (folder) => {
      plantRecords(folder, 40, small);
      truncateSync(path.join(folder, 'records.bin'), 20 * recordBytes(small));
      const sorted = bandBuckets(Int32Array.from({ length: 40 }, (_, s) => s % 10));
      const open = readdirSync('/proc/self/fd').length;
      expect(() => gatherBand({ records: path.join(folder, 'records.bin'), layout: small, documents: 40, band: 0, rangeMembers: 4 }, sorted.order, sorted.runs)).toThrow(/ended early/);
      expect(readdirSync('/proc/self/fd').length).toBe(open);
      expect(readdirSync(folder)).toEqual(['records.bin']);
    });
  });
});

describe('gatherBands (several bands a pass over the records)', () => {
  const small: RecordLayout = { width: 2, bandCount: 1, valueBits: 32 };

  /** Bands of these hashes gathered in one pass, against each gathered alone; `skip`: bands given no task. */
  function severalCase(bands: Int32Array[], rangeMembers: number, skip: ReadonlySet<number> = new Set()): void {
    inFolder('several', (folder) => {
      const documents = bands[0].length;
      const all = plantRecords(folder, documents, small);
      const records = path.join(folder, 'records.bin');
      const sorted = bands.map((hashes) => membersOnly(bandBuckets(hashes).order, bandBuckets(hashes).runs, new Uint32Array(documents)));
      const given = sorted.flatMap(({ order, runs }, band) => (skip.has(band) ? [] : [{ task: { records, layout: small, documents, band, rangeMembers }, order, runs }]));
      const got = gatherBands(given);
      expect(got.length).toBe(given.length);
      let files = 1;
      given.forEach(({ order, runs }, k) => {
        expect(got[k]).toBeDefined();
        expectRangeFiles(got[k] as BandRange[], order, runs, all, recordBytes(small));
        files += (got[k] as BandRange[]).length;
        expect(got[k]).toEqual(planRanges(runs, rangeMembers).map((range, i) => ({ ...range, file: path.join(folder, `band-${given[k].task.band}-range-${i}.bin`) })));
      });
      expect(readdirSync(folder).length).toBe(files);
    });
  }

  it('each band of a pass gets the range files it gets alone (1 to 4 bands, any range size, bands with no bucket among them)', () => {
    const documents = fc.oneof(fc.constantFrom(1, 2, 31, 32, 33, 65), fc.integer({ min: 1, max: 200 }));
    fc.assert(
      fc.property(
        documents.chain((n) =>
          fc.tuple(
            fc.array(fc.oneof(fc.array(fc.integer({ min: 0, max: Math.max(1, n >> 2) }), { minLength: n, maxLength: n }), fc.constant(Array.from({ length: n }, (_, s) => s))), { minLength: 1, maxLength: 4 }),
            fc.integer({ min: 1, max: n + 2 }),
          ),
        ),
        ([bands, rangeMembers]) => severalCase(bands.map((keys) => Int32Array.from(keys)), rangeMembers),
      ),
      { numRuns: 150 },
    );
  });

  it('a band without a task in the set is left alone, its neighbours gathered', () => {
    const n = 70;
    const bands = [0, 1, 2].map((b) => Int32Array.from({ length: n }, (_, s) => (s * (b + 3)) % 17));
    severalCase(bands, 5, new Set([1]));
    severalCase(bands, 5, new Set([0, 2]));
  });

  it('the disk\'s room is shared by the bands of a pass: each band that would not leave 1 GB free after those before it is left to be read where it lies', () => {
    inFolder('room', (folder) => {
      const documents = 64;
      plantRecords(folder, documents, small);
      const records = path.join(folder, 'records.bin');
      const sorted = bandBuckets(Int32Array.from({ length: documents }, (_, s) => s >> 2)); // sixteen buckets of 4: every document a member
      const needs = documents * recordBytes(small);
      const bands = [0, 1, 2].map((band) => ({ task: { records, layout: small, documents, band, rangeMembers: 16 }, order: sorted.order, runs: sorted.runs }));
      const margin = 1024 ** 3;
      const fitted = (free: number) => {
        const got = gatherBands(bands, free).map((ranges) => ranges !== undefined);
        const files = readdirSync(folder).filter((name) => name.includes('range'));
        for (const name of files) rmSync(path.join(folder, name));
        return { got, bands: [...new Set(files.map((name) => name.split('-')[1]))].sort() };
      };
      expect(fitted(margin + 3 * needs)).toEqual({ got: [true, true, true], bands: ['0', '1', '2'] });
      expect(fitted(margin + 2 * needs)).toEqual({ got: [true, true, false], bands: ['0', '1'] });
      expect(fitted(margin + 1.5 * needs)).toEqual({ got: [true, false, false], bands: ['0'] });
      expect(fitted(margin + needs - 1)).toEqual({ got: [false, false, false], bands: [] });
    });
  });

  it('a file planted under the second band\'s name: the pass refused, nothing of the first band left either', () => {
    inFolder('case', (folder) => {
      plantRecords(folder, 40, small);
      writeFileSync(path.join(folder, 'band-1-range-1.bin'), 'planted');
      const records = path.join(folder, 'records.bin');
      const sorted = bandBuckets(Int32Array.from({ length: 40 }, (_, s) => s >> 2));
      const open = readdirSync('/proc/self/fd').length;
      const task = (band: number) => ({ task: { records, layout: small, documents: 40, band, rangeMembers: 4 }, order: sorted.order, runs: sorted.runs });
      expect(() => gatherBands([task(0), task(1), task(2)])).toThrow(/EEXIST/);
      expect(readdirSync('/proc/self/fd').length).toBe(open);
      expect(readdirSync(folder).sort()).toEqual(['band-1-range-1.bin', 'records.bin']);
    });
  });
});

describe('the sorting worker (sortBands) and the sets of bands', () => {
  it('sorts each band of a task as it sorts it alone, and gathers only the bands given a task, each into its own ranges', () => {
    const docs = corpus(6, 5, 60, 30, 3);
    const spill = spillOf(docs);
    try {
      const { file, layout } = spill.records();
      const buffer = () => new SharedArrayBuffer(4 * spill.size);
      const task = (band: number) => ({ records: file, layout, documents: spill.size, band, rangeMembers: 3 });
      const alone = [0, 1, 2].map((band) => {
        const order = buffer();
        const [got] = sortBands({ bands: [{ file: spill.bandFile(band), order }], documents: spill.size, bucketChunk: 3 });
        return { ...got, order: new Uint32Array(order, 0, got.members).slice() };
      });
      const orders = [buffer(), buffer(), buffer()];
      const together = sortBands({ bands: [0, 1, 2].map((band) => ({ file: spill.bandFile(band), order: orders[band] })), documents: spill.size, bucketChunk: 3, gather: [undefined, undefined, task(2)] });
      try {
        for (const band of [0, 1, 2]) {
          expect(Array.from(new Uint32Array(orders[band], 0, together[band].members))).toEqual(Array.from(alone[band].order));
          expect(together[band].runs).toEqual(alone[band].runs);
          expect(together[band].largeKeys).toEqual(alone[band].largeKeys);
        }
        expect(together[0].ranges).toBeUndefined();
        expect(together[1].ranges).toBeUndefined();
        const ranges = together[2].ranges as BandRange[];
        expect(ranges.length).toBeGreaterThan(1);
        expect(rangeFiles(spill.path).sort()).toEqual(ranges.map((range) => path.basename(range.file as string)).sort());
        expect(rangeFiles(spill.path).every((name) => name.startsWith('band-2-range-'))).toBe(true);
        const all = readFileSync(file);
        expectRangeFiles(ranges, alone[2].order, alone[2].runs, all, recordBytes(layout));
      } finally {
        for (const name of rangeFiles(spill.path)) rmSync(path.join(spill.path, name));
      }
    } finally {
      spill.close();
    }
  });

  it('bands in sets of the size asked, every band once and in order; a size that is not a number of at least one is one', () => {
    for (const count of [0, 1, 7, 8, 26]) {
      for (const size of [1, 2, 2.5, 3, 26, 100]) {
        const sets = bandSets(count, size);
        expect(sets.flat()).toEqual(Array.from({ length: count }, (_, b) => b));
        expect(sets.every((set) => set.length <= Math.floor(size) && set.length > 0)).toBe(true);
      }
      for (const size of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 0.5]) expect(bandSets(count, size)).toEqual(Array.from({ length: count }, (_, b) => [b]));
    }
  });
});

describe('RangeRecords', () => {
  it('reads a range back by slot, refuses a slot not in it, says a file cut short, and removes its file', async () => {
    const folder = mkdtempSync(path.join(scratch, 'case-'));
    try {
      const layout: RecordLayout = { width: 4, bandCount: 2, valueBits: 32 };
      plantRecords(folder, 70, layout);
      const sorted = bandBuckets(Int32Array.from({ length: 70 }, (_, s) => s % 9));
      const ranges = gatherBand({ records: path.join(folder, 'records.bin'), layout, documents: 70, band: 1, rangeMembers: 10 }, sorted.order, sorted.runs) as BandRange[];
      const reader = new RecordReader(layout);
      for (const range of ranges) {
        const records = new RangeRecords(range as BandRange & { file: string }, sorted.order, sorted.runs, reader);
        const slots = Uint32Array.from(sorted.order.subarray(range.from, range.to)).sort();
        const signatureOf = await records.load(slots);
        for (const slot of slots) expect(signatureOf(slot).values[0]).toBe(slot + 1);
        const outside = sorted.order[ranges[0] === range ? ranges[1].from : ranges[0].from];
        expect(() => records.placeOf(outside)).toThrow(/not a member/);
        records.remove();
      }
      expect(readdirSync(folder)).toEqual(['records.bin']);
      const again = gatherBand({ records: path.join(folder, 'records.bin'), layout, documents: 70, band: 2, rangeMembers: 10 }, sorted.order, sorted.runs) as BandRange[];
      truncateSync(again[0].file as string, recordBytes(layout) * 3);
      const records = new RangeRecords(again[0] as BandRange & { file: string }, sorted.order, sorted.runs, reader);
      await expect(records.load(Uint32Array.from(sorted.order.subarray(again[0].from, again[0].to)).sort())).rejects.toThrow(/ended early/);
      records.remove();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('the gathered pass against the pass in memory', () => {
  // [families, copies, loners, boilerplate]: 31, 32, 33 and 65 documents, then 600.
  const shapes: Array<[number, number, number, number]> = [
    [2, 6, 9, 10],
    [2, 6, 10, 10],
    [2, 6, 11, 10],
    [3, 7, 24, 20],
    [20, 10, 200, 200],
  ];

  for (const shape of shapes) {
    const docs = corpus(...shape, 5 + shape[2]);
    it(`${docs.length} documents: ranges of 1, 2, a chunk and more, sorted here (the same pairs, counts, best matches, clusters)`, async () => {
      for (const bucketChunk of [1, 2, 3, 50]) {
        const expected = await memoryPass(docs, bucketChunk);
        for (const rangeMembers of [1, 2, bucketChunk, bucketChunk + 1, 1000]) {
          for (const groupMembers of docs.length > 100 ? [7] : [1, 7]) {
            const got = await gatheredPass(docs, bucketChunk, { rangeMembers, sortAhead: false, checkers: 0, groupMembers });
            expect(got).toEqual(expected);
          }
        }
      }
    });
  }

  it('the same sorted ahead on the worker (members only), with and without checking threads', async () => {
    for (const shape of [shapes[1], shapes[3], shapes[4]]) {
      const docs = corpus(...shape, 5 + shape[2]);
      for (const bucketChunk of [2, 50]) {
        const expected = await memoryPass(docs, bucketChunk);
        for (const rangeMembers of [1, bucketChunk + 1]) {
          expect(await gatheredPass(docs, bucketChunk, { rangeMembers, sortAhead: true, checkers: 0 })).toEqual(expected);
          expect(await gatheredPass(docs, bucketChunk, { rangeMembers, sortAhead: true, checkers: 2 })).toEqual(expected);
        }
      }
    }
  });

  it(`bands gathered 1, 2, 3 and ${BANDS} a pass on the worker, with and without checking threads`, async () => {
    const docs = corpus(...shapes[4], 11);
    for (const bucketChunk of [2, 50]) {
      const expected = await memoryPass(docs, bucketChunk);
      for (const bandsPerSweep of [1, 2, 3, BANDS]) {
        for (const checkers of [0, 2]) expect(await gatheredPass(docs, bucketChunk, { rangeMembers: bucketChunk + 1, sortAhead: true, checkers, bandsPerSweep })).toEqual(expected);
      }
    }
  });

  it('checking threads with a chunk smaller than a pairwise bucket (32): a bucket of more than the chunk is a large key there too', async () => {
    const docs = corpus(2, 6, 10, 10, 15);
    for (const bucketChunk of [2, 5]) {
      const expected = await memoryPass(docs, bucketChunk);
      for (const rangeMembers of [0, bucketChunk]) expect(await gatheredPass(docs, bucketChunk, { rangeMembers, sortAhead: true, checkers: 2 })).toEqual(expected);
    }
  });

  it('a compact spill gathered gives what the compact spill read where it lies gives', async () => {
    const docs = corpus(...shapes[4], 3);
    const outcomes: Outcome[] = [];
    for (const rangeMembers of [0, 3]) {
      const numbers = new DocNumbers();
      const { verifier, pairs } = newVerifier(numbers);
      const spill = spillOf(docs, numbers, 16);
      try {
        await verifyBands(spill, verifier, { bucketChunk: 3, groupMembers: 7, sortAhead: false, checkers: 0, rangeMembers });
      } finally {
        spill.close();
      }
      outcomes.push(outcomeOf(verifier, pairs, docs));
    }
    expect(outcomes[1]).toEqual(outcomes[0]);
  });

  it('bands gathered and bands read where they lie (no room to gather one) in one pass, members-only order, with and without checking threads', async () => {
    const docs = corpus(...shapes[4], 9);
    const bucketChunk = 3;
    const expected = await memoryPass(docs, bucketChunk);
    for (const checkers of [0, 2]) {
      const numbers = new DocNumbers();
      const { verifier, pairs } = newVerifier(numbers);
      const spill = spillOf(docs, numbers);
      const checker = checkers > 0 ? new BucketChecker(checkers) : undefined;
      try {
        const { file, layout } = spill.records();
        for (let band = 0; band < BANDS; band++) {
          const sorted = bandBuckets((visit) => spill.readBand(band, visit), spill.size);
          const largeKeys: number[] = [];
          for (let r = 0; r < sorted.runs.length; r += 2) if (sorted.runs[r + 1] - sorted.runs[r] > bucketChunk) largeKeys.push(sorted.keys[sorted.runs[r]] | 0);
          const members = membersOnly(sorted.order, sorted.runs, new Uint32Array(spill.size));
          // Every other band "had no room": read where its records lie.
          const ranges = band % 2 === 0 ? gatherBand({ records: file, layout, documents: spill.size, band, rangeMembers: 4 }, members.order, members.runs) : undefined;
          const band_: SortedBand = { order: members.order, runs: members.runs, largeKeys: Int32Array.from(largeKeys), ranges };
          await verifyBandOf(spill, verifier, band, { bucketChunk, groupMembers: 7, sorted: band_, checker });
          expect(rangeFiles(spill.path)).toEqual([]);
        }
      } finally {
        await checker?.close();
        spill.close();
      }
      expect(outcomeOf(verifier, pairs, docs)).toEqual(expected);
    }
  });

  it('a resumed run: the bands it had are marked only (no range file made for them), the rest gathered', async () => {
    const docs = corpus(...shapes[4], 4);
    const bucketChunk = 3;
    // (Three bands a pass: the set of bands 3 to 5 has two marked only and one gathered.)
    for (const [sortAhead, bandsPerSweep] of [[false, 1], [true, 1], [true, 3]] as const) {
      const run = async (startAt: number, collect: (band: number, spill: SignatureSpill) => void) => {
        const numbers = new DocNumbers();
        const { verifier, pairs } = newVerifier(numbers);
        const spill = spillOf(docs, numbers);
        // Every file made in the spill's folder while the pass runs (a range file made and removed is seen too).
        const made = new Set<string>();
        const watcher = watch(spill.path, (_event, name) => name && made.add(String(name)));
        try {
          await verifyBands(spill, verifier, { bucketChunk, startAt, sortAhead, checkers: 0, rangeMembers: 5, bandsPerSweep, onBand: (band) => collect(band, spill) });
          expect(rangeFiles(spill.path)).toEqual([]);
          await new Promise((resolve) => setTimeout(resolve, 100)); // (the last events delivered)
        } finally {
          watcher.close();
          spill.close();
        }
        const gathered = [...new Set([...made].filter((name) => name.includes('-range-')).map((name) => Number(name.split('-')[1])))].sort();
        return { outcome: outcomeOf(verifier, pairs, docs), verifier, gathered };
      };
      const bands: number[] = [];
      const resumed = await run(5, (band) => bands.push(band));
      expect(bands).toEqual([5, 6, 7]);
      expect(resumed.gathered).toEqual([5, 6, 7]);
      const readHere = await (async () => {
        const numbers = new DocNumbers();
        const { verifier, pairs } = newVerifier(numbers);
        const spill = spillOf(docs, numbers);
        try {
          await verifyBands(spill, verifier, { bucketChunk, startAt: 5, sortAhead, checkers: 0, rangeMembers: 0 });
        } finally {
          spill.close();
        }
        return outcomeOf(verifier, pairs, docs);
      })();
      expect(resumed.outcome).toEqual(readHere);
    }
  });

  it("a share's view (bands sorted and gathered on this thread) gives what it gives read where its records lie", async () => {
    const docs = corpus(...shapes[4], 6);
    const bucketChunk = 3;
    for (const share of [1, 2]) {
      const outcomes: Outcome[] = [];
      for (const rangeMembers of [0, 1, 4]) {
        const numbers = new DocNumbers();
        const { verifier, pairs } = newVerifier(numbers);
        const spill = spillOf(docs, numbers);
        try {
          const view = shareTable(spill, { range: keyRange({ number: share, count: 2 }), bucketChunk, onForeignLargeKey: (band, hash) => verifier.markLargeKey(band, hash) });
          await verifyBands(view, verifier, { bucketChunk, groupMembers: 7, sortAhead: true, checkers: 0, rangeMembers });
          expect(rangeFiles(spill.path)).toEqual([]);
        } finally {
          spill.close();
        }
        outcomes.push(outcomeOf(verifier, pairs, docs));
      }
      expect(outcomes[0].pairs.length).toBeGreaterThan(0);
      expect(outcomes[1]).toEqual(outcomes[0]);
      expect(outcomes[2]).toEqual(outcomes[0]);
    }
  });

  it('random corpora, chunks and range sizes (sorted here)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({ families: fc.integer({ min: 0, max: 6 }), copies: fc.integer({ min: 2, max: 9 }), loners: fc.integer({ min: 0, max: 40 }), boilerplate: fc.integer({ min: 0, max: 30 }), seed: fc.nat(1000) }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 1, max: 40 }),
        async ({ families, copies, loners, boilerplate, seed }, bucketChunk, rangeMembers) => {
          const docs = corpus(families, copies, loners, boilerplate, seed);
          fc.pre(docs.length > 1);
          expect(await gatheredPass(docs, bucketChunk, { rangeMembers, sortAhead: false, checkers: 0, groupMembers: 5 })).toEqual(await memoryPass(docs, bucketChunk));
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe('what a failure leaves', () => {
  it('a pass that fails after a band: no range file left of the bands gathered ahead (waited for, then removed) or of its set, nor a descriptor', async () => {
    const docs = corpus(20, 10, 200, 200, 2);
    for (const [sortAhead, bandsPerSweep] of [[false, 1], [true, 1], [true, 3]] as const) {
      const numbers = new DocNumbers();
      const { verifier } = newVerifier(numbers);
      const spill = spillOf(docs, numbers);
      spill.records();
      const open = readdirSync('/proc/self/fd').length;
      try {
        const failing = verifyBands(spill, verifier, {
          bucketChunk: 3,
          sortAhead,
          checkers: 0,
          rangeMembers: 4,
          bandsPerSweep,
          onBand: async () => {
            await new Promise((resolve) => setTimeout(resolve, 300)); // (the next band gathered by then)
            throw new Error('stopped after band 0');
          },
        });
        await expect(failing).rejects.toThrow('stopped after band 0');
        expect(rangeFiles(spill.path)).toEqual([]);
        expect(readdirSync('/proc/self/fd').length).toBeLessThanOrEqual(open);
      } finally {
        spill.close();
      }
    }
  });

  it('the sort of the next set failing while this one is verified: said once awaited (not an unhandled rejection), no range file left', async () => {
    const docs = corpus(20, 10, 200, 200, 4);
    for (const bandsPerSweep of [1, 2]) {
      const numbers = new DocNumbers();
      const { verifier } = newVerifier(numbers);
      const spill = spillOf(docs, numbers);
      // The table as the pass sees it, but the band file of the second set gone.
      const table = Object.create(spill) as SignatureSpill;
      table.bandFile = (band: number) => (band === bandsPerSweep ? path.join(spill.path, 'gone.bin') : spill.bandFile(band));
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on('unhandledRejection', onUnhandled);
      try {
        const failing = verifyBands(table, verifier, {
          bucketChunk: 3,
          sortAhead: true,
          checkers: 0,
          rangeMembers: 4,
          bandsPerSweep,
          onBand: () => new Promise((resolve) => setTimeout(resolve, 300)), // (the next set's sort has failed by then)
        });
        await expect(failing).rejects.toThrow(/ENOENT/);
        expect(unhandled).toEqual([]);
        expect(rangeFiles(spill.path)).toEqual([]);
      } finally {
        process.off('unhandledRejection', onUnhandled);
        spill.close();
      }
    }
  });

  it('a range file removed under the pass is said (not skipped), and the band leaves none', async () => {
    const docs = corpus(20, 10, 200, 200, 8);
    const numbers = new DocNumbers();
    const { verifier } = newVerifier(numbers);
    const spill = spillOf(docs, numbers);
    try {
      const { file, layout } = spill.records();
      const sorted = bandBuckets((visit) => spill.readBand(0, visit), spill.size);
      const ranges = gatherBand({ records: file, layout, documents: spill.size, band: 0, rangeMembers: 4 }, sorted.order, sorted.runs) as BandRange[];
      expect(ranges.length).toBeGreaterThan(2);
      rmSync(ranges[1].file as string);
      await expect(verifyBandOf(spill, verifier, 0, { bucketChunk: 3, sorted: { ...sorted, largeKeys: new Int32Array(0), ranges } })).rejects.toThrow(/ENOENT/);
      expect(rangeFiles(spill.path)).toEqual([]);
    } finally {
      spill.close();
    }
  });
});
