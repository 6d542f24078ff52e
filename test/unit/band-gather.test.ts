// The gathered bands (band-gather.ts, range-records.ts, band-pass.ts verifyGathered) checked as a stranger
// would: the plan of ranges against the runs it cuts, each range file against the records it should hold
// (sweeps whose reads end inside a word of the member bits, documents not a multiple of 32, a read of one
// record), the pass with ranges of 1, 2 and a large key's chunk against the pass in memory, a band with no
// room to gather beside one that has, the share view, and what a failure leaves on the disk.
import { mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, watch, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatherTask, gatherBands, RangeRecords } from '../../src/jobs/dedup/bands/band-gather.js';
import { bandSets, verifyBandOf, verifyBands } from '../../src/jobs/dedup/bands/band-pass.js';
import { type BandMembersAt, MembersInMemory, MembersOnDisk, membersOf, planRanges, sortedToFiles, windowCheck } from '../../src/jobs/dedup/bands/band-members.js';
import sortBands from '../../src/jobs/dedup/bands/band-sort.worker.js';
import { bandBuckets, bandMembers, type BandSource, type SortedBand } from '../../src/jobs/dedup/bands/band-sort.js';
import { BucketChecker } from '../../src/jobs/dedup/verify/bucket-check.js';
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import { SignatureRecords } from '../../src/jobs/dedup/scan/signature-table.js';
import { beaterOnline } from '../../src/jobs/dedup/spill/spill-liveness.js';
import { keyRange } from '../../src/jobs/dedup/split/plan.js';
import { shareTable } from '../../src/jobs/dedup/split/share-pass.js';
import { type RecordLayout, RecordReader, recordBytes } from '../../src/jobs/dedup/scan/spill-records.js';
import { BANDS, corpus, type Doc, memoryPass, newVerifier, type Outcome, outcomeOf } from '../support/dedup-corpus.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'nd-gather-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
// The thread that touches spill folders (spill-liveness.ts) running before any test counts this process's descriptors.
beforeAll(() => beaterOnline());

function spillOf(docs: Doc[], numbers?: DocNumbers, valueBits: 16 | 32 = 32): SignatureRecords {
  const spill = new SignatureRecords(numbers, { spillDir: scratch, valueBits });
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

/** The files a band's sort and gather leave in a folder (its members and buckets, its ranges). */
const rangeFiles = (folder: string) => readdirSync(folder).filter((name) => /-range-|-members|-buckets/.test(name));

/** The hashes of a band, as its sort reads them. */
const sourceOf = (hashes: Int32Array): BandSource => (visit) => visit(new Uint32Array(hashes.buffer, hashes.byteOffset, hashes.length));

/**
 * A band of these hashes sorted as dedup sorts it, its ranges of `target` members: its members in memory, or
 * written to its two files in `folder` (as the sorting worker writes them); its large keys (of more than `bucketChunk`).
 */
function sortedMembers(hashes: Int32Array | BandSource, n: number, target: number, settings: { folder?: string; band?: number; bucketChunk?: number } = {}): { members: BandMembersAt; largeKeys: Int32Array } {
  const source = typeof hashes === 'function' ? hashes : sourceOf(hashes);
  const scratch = { keys: new Uint32Array(0), order: new Uint32Array(0) };
  const bucketChunk = settings.bucketChunk ?? n + 1;
  if (!settings.folder) {
    const members = new MembersInMemory(target);
    return { members, largeKeys: bandMembers(source, n, { bucketChunk, sink: members, scratch }) };
  }
  const band = settings.band ?? 0;
  const files = { order: path.join(settings.folder, `band-${band}-members.bin`), runs: path.join(settings.folder, `band-${band}-buckets.bin`) };
  const { members, sorted } = sortedToFiles(files, target, (sink) => bandMembers(source, n, { bucketChunk, sink, scratch }));
  return { members, largeKeys: sorted };
}

/** One band gathered alone: whether it was. */
const gatherBand = (task: GatherTask, members: BandMembersAt): boolean => gatherBands([{ task, members }])[0];

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

/** Runs as flat [start, end, ...], one after the other from 0, of these sizes. */
function runsFrom(sizes: number[]): Uint32Array {
  const runs: number[] = [];
  let at = 0;
  for (const size of sizes) {
    runs.push(at, at + size);
    at += size;
  }
  return Uint32Array.from(runs);
}

describe('the ranges of a band (band-ranges.ts)', () => {
  it('cover every member once, in order; pack whole buckets up to the size; cut only a larger bucket, into consecutive parts of the size', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 2, max: 20 }), { maxLength: 40 }), fc.integer({ min: 1, max: 25 }), (sizes, target) => {
        const runs = runsFrom(sizes);
        const ranges = planRanges(runs, target);
        let at = 0;
        for (const range of ranges) {
          expect(range.from).toBe(at);
          expect(range.members).toBe(range.to - range.from);
          expect(range.members).toBeGreaterThan(0);
          expect(range.members).toBeLessThanOrEqual(target);
          const sizeOf = (r: number) => runs[2 * r + 1] - runs[2 * r];
          if (range.cutEnd === undefined) {
            // Whole runs: from the first's start to the last's end.
            expect([range.from, range.to]).toEqual([runs[2 * range.fromRun], runs[2 * range.toRun - 1]]);
            for (let r = range.fromRun; r < range.toRun; r++) expect(sizeOf(r)).toBeLessThanOrEqual(target);
          } else {
            expect(range.toRun - range.fromRun).toBe(1);
            expect(sizeOf(range.fromRun)).toBeGreaterThan(target);
            expect(range.cutEnd).toBe(runs[2 * range.fromRun + 1]);
            expect((range.from - runs[2 * range.fromRun]) % target).toBe(0);
          }
          at = range.to;
        }
        expect(at).toBe(runs.length > 0 ? runs[runs.length - 1] : 0);
        expect(membersOf(ranges)).toBe(at);
        // Consecutive ranges never share a run unless it is one cut into parts.
        for (let k = 1; k < ranges.length; k++) if (ranges[k].fromRun < ranges[k - 1].toRun) expect(ranges[k].fromRun).toBe(ranges[k - 1].fromRun);
      }),
      { numRuns: 300 },
    );
    expect(() => planRanges(Uint32Array.from([0, 2, 3, 5]), 4)).toThrow(/bucket 1/);
  });

  it('a window in memory and one read back from the files are the same, and its check is the one planned (any band, any range size)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }).chain((n) => fc.tuple(fc.array(fc.integer({ min: 0, max: Math.max(1, n >> 2) }), { minLength: n, maxLength: n }), fc.integer({ min: 1, max: n + 2 }))),
        ([keys, target]) =>
          inFolder('window', (folder) => {
            const hashes = Int32Array.from(keys);
            const inMemory = sortedMembers(hashes, hashes.length, target, { bucketChunk: 3 });
            const onDisk = sortedMembers(hashes, hashes.length, target, { folder, bucketChunk: 3 });
            expect(onDisk.largeKeys).toEqual(inMemory.largeKeys);
            expect(onDisk.members.ranges.map(({ check: _, ...range }) => range)).toEqual(inMemory.members.ranges);
            const sorted = bandBuckets(hashes);
            const expected: number[] = [];
            for (let r = 0; r < sorted.runs.length; r += 2) expected.push(...sorted.order.subarray(sorted.runs[r], sorted.runs[r + 1]));
            const got: number[] = [];
            for (const range of onDisk.members.ranges) {
              const window = onDisk.members.window(range);
              expect(window).toEqual(inMemory.members.window(range));
              expect(windowCheck(window)).toBe(range.check);
              got.push(...window.order);
            }
            expect(got).toEqual(expected);
            onDisk.members.remove();
            expect(readdirSync(folder)).toEqual([]);
          }),
      ),
      { numRuns: 150 },
    );
  });

  it('a window whose files were changed, zeroed or cut short is said, never verified', () => {
    inFolder('damaged', (folder) => {
      const hashes = Int32Array.from({ length: 200 }, (_, s) => s % 40); // forty buckets of 5
      const { members } = sortedMembers(hashes, 200, 20, { folder });
      const file = (name: string) => path.join(folder, `band-0-${name}.bin`);
      const original = { members: readFileSync(file('members')), buckets: readFileSync(file('buckets')) };
      const damages: Array<[string, (bytes: Buffer) => void]> = [
        ['members', (bytes) => bytes.writeUInt32LE(bytes.readUInt32LE(4 * 25) + 1, 4 * 25)], // another slot, of the run
        ['members', (bytes) => bytes.fill(0, 4 * 20, 4 * 40)],
        ['buckets', (bytes) => bytes.writeUInt32LE(bytes.readUInt32LE(8 * 5 + 4) - 1, 8 * 5 + 4)], // a bucket one shorter
        ['buckets', (bytes) => bytes.fill(0, 8 * 4, 8 * 8)],
      ];
      for (const [name, damage] of damages) {
        const bytes = Buffer.from(original[name as 'members' | 'buckets']);
        damage(bytes);
        writeFileSync(file(name), bytes);
        const reader = new MembersOnDisk({ order: file('members'), runs: file('buckets') }, members.ranges, members.members);
        expect(() => members.ranges.map((range) => reader.window(range))).toThrow(/not those written/);
        writeFileSync(file(name), original[name as 'members' | 'buckets']);
      }
      truncateSync(file('members'), 4 * 150);
      expect(() => members.ranges.map((range) => members.window(range))).toThrow(/ended early/);
      members.remove();
      expect(readdirSync(folder)).toEqual([]);
    });
  });

  it('a file planted under the name of a band\'s buckets is refused, and the members file made beside it removed', () => {
    inFolder('planted', (folder) => {
      writeFileSync(path.join(folder, 'band-0-buckets.bin'), 'planted');
      const open = readdirSync('/proc/self/fd').length;
      expect(() => sortedMembers(Int32Array.from({ length: 40 }, (_, s) => s >> 2), 40, 8, { folder })).toThrow(/EEXIST/);
      expect(readdirSync('/proc/self/fd').length).toBe(open);
      expect(readdirSync(folder)).toEqual(['band-0-buckets.bin']);
      expect(readFileSync(path.join(folder, 'band-0-buckets.bin'), 'utf8')).toBe('planted');
    });
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
function expectRangeFiles(members: BandMembersAt, all: Buffer, bytes: number): void {
  const seen = new Set<number>();
  for (const range of members.ranges) {
    const slots = Array.from(members.window(range).order).sort((a, b) => a - b);
    for (const slot of slots) {
      expect(seen.has(slot)).toBe(false);
      seen.add(slot);
    }
    const expected = Buffer.concat(slots.map((slot) => all.subarray(slot * bytes, (slot + 1) * bytes)));
    const got = readFileSync(range.file as string);
    expect(got.length).toBe(expected.length);
    expect(got.equals(expected)).toBe(true);
  }
  expect(seen.size).toBe(members.members);
}

/** A band of these hashes gathered over a planted records file, its members in memory or on the disk (as the sorting worker keeps them). */
function gatherCase(hashes: Int32Array, layout: RecordLayout, rangeMembers: number, onDisk: boolean): void {
  inFolder('case', (folder) => {
    const all = plantRecords(folder, hashes.length, layout);
    const { members } = sortedMembers(hashes, hashes.length, rangeMembers, onDisk ? { folder, band: 3 } : {});
    expect(gatherBand({ records: path.join(folder, 'records.bin'), layout, documents: hashes.length, band: 3, rangeMembers }, members)).toBe(members.members > 0);
    if (members.members > 0) expectRangeFiles(members, all, recordBytes(layout));
    expect(readdirSync(folder).length).toBe(1 + members.ranges.length + (onDisk ? 2 : 0));
  });
}

describe('gatherBands, one band', () => {
  const small: RecordLayout = { width: 2, bandCount: 1, valueBits: 32 };

  it('writes each member record once into its range file, in slot order (any band, any range size, documents around multiples of 32)', () => {
    const documents = fc.oneof(fc.constantFrom(1, 2, 31, 32, 33, 63, 64, 65, 97), fc.integer({ min: 1, max: 300 }));
    fc.assert(
      fc.property(
        documents.chain((n) => fc.tuple(fc.array(fc.integer({ min: 0, max: Math.max(1, n >> 2) }), { minLength: n, maxLength: n }), fc.integer({ min: 1, max: n + 2 }), fc.boolean())),
        ([keys, rangeMembers, onDisk]) => gatherCase(Int32Array.from(keys), small, rangeMembers, onDisk),
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
      for (const rangeMembers of [1, 2, 3]) for (const onDisk of [false, true]) gatherCase(hashes, small, rangeMembers, onDisk);
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
      const { members } = sortedMembers(Int32Array.from({ length: 40 }, (_, s) => s), 40, 2);
      expect(gatherBand({ records: path.join(folder, 'records.bin'), layout: small, documents: 40, band: 0, rangeMembers: 2 }, members)).toBe(false);
      expect(members.ranges).toEqual([]);
      expect(readdirSync(folder)).toEqual(['records.bin']);
    });
  });

  it('refuses a file planted under a range name, and leaves nothing of its own open or on the disk', () => {
    inFolder('case', (folder) => {
      plantRecords(folder, 40, small);
      writeFileSync(path.join(folder, 'band-0-range-2.bin'), 'planted');
      const { members } = sortedMembers(Int32Array.from({ length: 40 }, (_, s) => s >> 2), 40, 4); // ten buckets of 4
      const open = readdirSync('/proc/self/fd').length;
      expect(() => gatherBand({ records: path.join(folder, 'records.bin'), layout: small, documents: 40, band: 0, rangeMembers: 4 }, members)).toThrow(/EEXIST/);
      expect(readdirSync('/proc/self/fd').length).toBe(open);
      expect(readdirSync(folder).sort()).toEqual(['band-0-range-2.bin', 'records.bin']);
      expect(readFileSync(path.join(folder, 'band-0-range-2.bin'), 'utf8')).toBe('planted');
      expect(members.ranges.some((range) => range.file)).toBe(false);
    });
  });

  it('a records file cut short (a damaged disk, a changed folder) is said, and leaves nothing behind', () => {
    inFolder('case', (folder) => {
      plantRecords(folder, 40, small);
      truncateSync(path.join(folder, 'records.bin'), 20 * recordBytes(small));
      const { members } = sortedMembers(Int32Array.from({ length: 40 }, (_, s) => s % 10), 40, 4);
      const open = readdirSync('/proc/self/fd').length;
      expect(() => gatherBand({ records: path.join(folder, 'records.bin'), layout: small, documents: 40, band: 0, rangeMembers: 4 }, members)).toThrow(/ended early/);
      expect(readdirSync('/proc/self/fd').length).toBe(open);
      expect(readdirSync(folder)).toEqual(['records.bin']);
    });
  });
});

describe('gatherBands (several bands a pass over the records)', () => {
  const small: RecordLayout = { width: 2, bandCount: 1, valueBits: 32 };

  /** Bands of these hashes gathered in one pass, each into its own ranges; `skip`: bands given no task. */
  function severalCase(bands: Int32Array[], rangeMembers: number, skip: ReadonlySet<number> = new Set()): void {
    inFolder('several', (folder) => {
      const documents = bands[0].length;
      const all = plantRecords(folder, documents, small);
      const records = path.join(folder, 'records.bin');
      const sorted = bands.map((hashes) => sortedMembers(hashes, documents, rangeMembers).members);
      const given = sorted.flatMap((members, band) => (skip.has(band) ? [] : [{ task: { records, layout: small, documents, band, rangeMembers }, members }]));
      const got = gatherBands(given);
      expect(got).toEqual(given.map(({ members }) => members.members > 0));
      let files = 1;
      given.forEach(({ members, task }) => {
        if (members.members > 0) expectRangeFiles(members, all, recordBytes(small));
        files += members.ranges.length;
        expect(members.ranges.map((range) => range.file)).toEqual(members.ranges.map((_, i) => path.join(folder, `band-${task.band}-range-${i}.bin`)));
      });
      for (const band of skip) expect(sorted[band].ranges.some((range) => range.file)).toBe(false);
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
      const hashes = Int32Array.from({ length: documents }, (_, s) => s >> 2); // sixteen buckets of 4: every document a member
      const needs = documents * recordBytes(small);
      const margin = 1024 ** 3;
      const fitted = (free: number) => {
        const bands = [0, 1, 2].map((band) => ({ task: { records, layout: small, documents, band, rangeMembers: 16 }, members: sortedMembers(hashes, documents, 16).members }));
        const got = gatherBands(bands, free);
        const files = readdirSync(folder).filter((name) => name.includes('range'));
        for (const name of files) rmSync(path.join(folder, name));
        expect(bands.map(({ members }) => members.ranges.some((range) => range.file))).toEqual(got);
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
      const hashes = Int32Array.from({ length: 40 }, (_, s) => s >> 2);
      const open = readdirSync('/proc/self/fd').length;
      const task = (band: number) => ({ task: { records, layout: small, documents: 40, band, rangeMembers: 4 }, members: sortedMembers(hashes, 40, 4).members });
      expect(() => gatherBands([task(0), task(1), task(2)])).toThrow(/EEXIST/);
      expect(readdirSync('/proc/self/fd').length).toBe(open);
      expect(readdirSync(folder).sort()).toEqual(['band-1-range-1.bin', 'records.bin']);
    });
  });
});

describe('the sorting worker (sortBands) and the sets of bands', () => {
  it('sorts each band of a task as it sorts it alone, writes its members to its files, and gathers only the bands given a task, each into its own ranges', () => {
    const docs = corpus(6, 5, 60, 30, 3);
    const spill = spillOf(docs);
    try {
      const { file, layout } = spill.records!();
      const filesOf = (band: number, tag: string) => ({ order: path.join(spill.path, `band-${band}-members${tag}.bin`), runs: path.join(spill.path, `band-${band}-buckets${tag}.bin`) });
      const task = (band: number) => ({ records: file, layout, documents: spill.size, band, rangeMembers: 3 });
      const here = (band: number, target: number) => sortedMembers((visit) => spill.readBand(band, visit), spill.size, target, { bucketChunk: 3 });
      const alone = [0, 1, 2].map((band) => {
        const [got] = sortBands({ bands: [{ file: spill.bandFile!(band), members: filesOf(band, '-alone') }], documents: spill.size, bucketChunk: 3, windowMembers: 5 });
        const members = new MembersOnDisk(filesOf(band, '-alone'), got.ranges, got.members);
        const sorted = here(band, 5);
        expect(got.largeKeys).toEqual(sorted.largeKeys);
        expect(got.ranges.map(({ check: _, ...range }) => range)).toEqual(sorted.members.ranges);
        for (const range of got.ranges) expect(members.window(range)).toEqual(sorted.members.window(range));
        members.remove();
        return got;
      });
      const open = readdirSync('/proc/self/fd').length;
      const together = sortBands({ bands: [0, 1, 2].map((band) => ({ file: spill.bandFile!(band), members: filesOf(band, '') })), documents: spill.size, bucketChunk: 3, windowMembers: 5, gather: [undefined, undefined, task(2)] });
      // Nothing left open (a file the caller removes would keep its room on the disk while the worker held it).
      expect(readdirSync('/proc/self/fd').length).toBe(open);
      try {
        for (const band of [0, 1]) for (const field of ['ranges', 'members', 'largeKeys'] as const) expect(together[band][field]).toEqual(alone[band][field]);
        expect(together[0].ranges.some((range) => range.file) || together[1].ranges.some((range) => range.file)).toBe(false);
        const gathered = new MembersOnDisk(filesOf(2, ''), together[2].ranges, together[2].members);
        expect(together[2].ranges.map(({ check: _, file: __, ...range }) => range)).toEqual(here(2, 3).members.ranges);
        expect(gathered.ranges.length).toBeGreaterThan(1);
        const ranged = rangeFiles(spill.path).filter((name) => name.includes('-range-'));
        expect(ranged.sort()).toEqual(gathered.ranges.map((range) => path.basename(range.file as string)).sort());
        expect(ranged.every((name) => name.startsWith('band-2-range-'))).toBe(true);
        expectRangeFiles(gathered, readFileSync(file), recordBytes(layout));
      } finally {
        for (const name of rangeFiles(spill.path)) rmSync(path.join(spill.path, name));
      }
    } finally {
      spill.close();
    }
  });

  it('a band whose sort fails leaves none of the task\'s files (those of the bands sorted before it removed)', () => {
    const docs = corpus(6, 5, 60, 30, 3);
    const spill = spillOf(docs);
    try {
      const members = (band: number) => ({ order: path.join(spill.path, `band-${band}-members.bin`), runs: path.join(spill.path, `band-${band}-buckets.bin`) });
      const bands = [0, 1].map((band) => ({ file: spill.bandFile!(band), members: members(band) }));
      bands.push({ file: path.join(spill.path, 'gone.bin'), members: members(2) });
      const open = readdirSync('/proc/self/fd').length;
      expect(() => sortBands({ bands, documents: spill.size, bucketChunk: 3, windowMembers: 5 })).toThrow(/ENOENT/);
      expect(rangeFiles(spill.path)).toEqual([]);
      // A file planted under a band's members name: refused, the band's hashes file closed, the planted file left.
      writeFileSync(members(1).order, 'planted');
      expect(() => sortBands({ bands: bands.slice(0, 2), documents: spill.size, bucketChunk: 3, windowMembers: 5 })).toThrow(/EEXIST/);
      expect(readdirSync('/proc/self/fd').length).toBe(open);
      expect(rangeFiles(spill.path)).toEqual(['band-1-members.bin']);
      expect(readFileSync(members(1).order, 'utf8')).toBe('planted');
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
      const hashes = Int32Array.from({ length: 70 }, (_, s) => s % 9);
      const { members } = sortedMembers(hashes, 70, 10);
      const task = (band: number) => ({ records: path.join(folder, 'records.bin'), layout, documents: 70, band, rangeMembers: 10 });
      expect(gatherBand(task(1), members)).toBe(true);
      const { ranges } = members;
      const reader = new RecordReader(layout);
      for (const range of ranges) {
        const window = members.window(range);
        const records = new RangeRecords(range.file as string, window.order, reader);
        const slots = window.order.slice().sort();
        const signatureOf = await records.load(slots);
        for (const slot of slots) expect(signatureOf(slot).values[0]).toBe(slot + 1);
        const outside = members.window(ranges[0] === range ? ranges[1] : ranges[0]).order[0];
        expect(() => records.placeOf(outside)).toThrow(/not a member/);
        records.remove();
      }
      expect(readdirSync(folder)).toEqual(['records.bin']);
      const again = sortedMembers(hashes, 70, 10).members;
      expect(gatherBand(task(2), again)).toBe(true);
      truncateSync(again.ranges[0].file as string, recordBytes(layout) * 3);
      const window = again.window(again.ranges[0]);
      const records = new RangeRecords(again.ranges[0].file as string, window.order, reader);
      await expect(records.load(window.order.slice().sort())).rejects.toThrow(/ended early/);
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
        const { file, layout } = spill.records!();
        for (let band = 0; band < BANDS; band++) {
          // Members on the disk as the worker leaves them; every other band "had no room": read where its records lie.
          const sorted: SortedBand = sortedMembers((visit) => spill.readBand(band, visit), spill.size, 4, { folder: spill.path, band, bucketChunk });
          if (band % 2 === 0) gatherBand({ records: file, layout, documents: spill.size, band, rangeMembers: 4 }, sorted.members);
          await verifyBandOf(spill, verifier, band, { bucketChunk, groupMembers: 7, sorted, checker });
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
      const run = async (startAt: number, collect: (band: number, spill: SignatureRecords) => void) => {
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
      spill.records!();
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
      const table = Object.create(spill) as SignatureRecords;
      table.bandFile = (band: number) => (band === bandsPerSweep ? path.join(spill.path, 'gone.bin') : spill.bandFile!(band));
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

  /**
   * Band 0 of a spill sorted with its members on disk (and gathered, when asked), `damage` done to its files
   * under the pass: verifying it refused as `refusal`, nothing of the band left on the disk.
   */
  async function damagedBand(gather: boolean, damage: (sorted: SortedBand, folder: string) => void, refusal: RegExp): Promise<void> {
    const docs = corpus(20, 10, 200, 200, 8);
    const numbers = new DocNumbers();
    const { verifier } = newVerifier(numbers);
    const spill = spillOf(docs, numbers);
    try {
      const sorted = sortedMembers((visit) => spill.readBand(0, visit), spill.size, 4, { folder: spill.path, bucketChunk: 3 });
      if (gather) {
        const { file, layout } = spill.records!();
        expect(gatherBand({ records: file, layout, documents: spill.size, band: 0, rangeMembers: 4 }, sorted.members)).toBe(true);
      }
      damage(sorted, spill.path);
      await expect(verifyBandOf(spill, verifier, 0, { bucketChunk: 3, sorted })).rejects.toThrow(refusal);
      expect(rangeFiles(spill.path)).toEqual([]);
    } finally {
      spill.close();
    }
  }

  it('a range file removed under the pass is said (not skipped), and the band leaves none', async () => {
    await damagedBand(
      true,
      (sorted) => {
        expect(sorted.members.ranges.length).toBeGreaterThan(2);
        rmSync(sorted.members.ranges[1].file as string);
      },
      /ENOENT/,
    );
  });

  it('a band\'s members file changed under the pass is said (not verified), and the band leaves nothing', async () => {
    await damagedBand(
      false,
      (_, folder) => {
        const members = path.join(folder, 'band-0-members.bin');
        const bytes = readFileSync(members);
        bytes.writeUInt32LE(bytes.readUInt32LE(bytes.length - 4) ^ 1, bytes.length - 4);
        writeFileSync(members, bytes);
      },
      /not those written/,
    );
  });
});
