// The rows of the documents in a verified pair written to disk past a number and let go (sets-on-disk.ts):
// the union-find and the verifier must answer exactly as the ones that keep every row, while memory holds
// no more rows than the number given.
import { closeSync, existsSync, openSync, readdirSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { verifyBands } from '../../src/jobs/dedup/bands/band-pass.js';
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import { PairVerifier, type VerifiedPair } from '../../src/jobs/dedup/verify/pair-verifier.js';
import { SetsOnDisk } from '../../src/jobs/dedup/verify/sets-on-disk.js';
import { SignatureRecords } from '../../src/jobs/dedup/scan/signature-table.js';
import { UnionFind } from '../../src/jobs/dedup/verify/union-find.js';
import { seededRandom } from '../support/corpus.js';
import { spillFolders } from '../support/spill-folders.js';
import { corpus, memoryPass, outcomeOf, WIDTH } from '../support/dedup-corpus.js';

const { scratch, inFolder } = spillFolders('nd-sets-');

/** The families, each ascending, in the order of their first member (from the disk they come a range of roots at a time). */
const familiesOf = (uf: UnionFind) => Array.from(uf.families(), (family) => Array.from(family)).sort((a, b) => a[0] - b[0]);

describe('UnionFind with its rows written to disk', () => {
  for (const maxRows of [1, 5, 64]) {
    it(`joins, answers and gives the families of one that keeps every row (rows let go past ${maxRows})`, async () => {
      await inFolder((folder) => {
        const random = seededRandom(maxRows);
        const documents = 3000;
        const numbers = new DocNumbers();
        for (let n = 0; n < documents; n++) numbers.append(`d${n}`);
        const kept = new UnionFind(numbers);
        const spilled = new UnionFind(numbers);
        const disk = new SetsOnDisk(folder);
        spilled.spillTo(disk, maxRows);
        // Documents in the lower half are joined often (families), the upper half rarely.
        const any = () => (random() < 0.8 ? Math.floor(random() * documents * 0.1) : Math.floor(random() * documents));
        let mostRows = 0;
        for (let step = 0; step < 1500; step++) {
          const [a, b] = [any(), any()];
          kept.unionNumbers(a, b);
          spilled.unionNumbers(a, b);
          mostRows = Math.max(mostRows, spilled.rows.size);
          if (step % 25 !== 0) continue;
          for (let q = 0; q < 40; q++) {
            const [x, y] = [any(), any()];
            expect(spilled.rootOf(x) === spilled.rootOf(y)).toBe(kept.rootOf(x) === kept.rootOf(y));
            expect(spilled.joinedNumber(x)).toBe(kept.joinedNumber(x));
          }
          mostRows = Math.max(mostRows, spilled.rows.size);
        }
        expect(disk.size).toBeGreaterThan(0);
        // A union adds at most its two documents and their roots' rows past the number.
        expect(mostRows).toBeLessThanOrEqual(maxRows + 4);
        expect(familiesOf(spilled)).toEqual(familiesOf(kept));
        expect(spilled.sizeOf('d0')).toBe(kept.sizeOf('d0'));
      });
    });
  }

  it('gives thousands of families from the disk as in memory (more than the first table holds)', async () => {
    await inFolder((folder) => {
      const numbers = new DocNumbers();
      const kept = new UnionFind(numbers);
      const spilled = new UnionFind(numbers);
      spilled.spillTo(new SetsOnDisk(folder), 100);
      // 3,000 families of two to four, their members far apart in number.
      for (let f = 0; f < 3000; f++) {
        for (let k = 1; k <= f % 3 + 1; k++) {
          kept.unionNumbers(f, f + 5000 * k);
          spilled.unionNumbers(f, f + 5000 * k);
        }
      }
      const families = familiesOf(spilled);
      expect(families).toHaveLength(3000);
      expect(families).toEqual(familiesOf(kept));
      // A range of roots at a time, down to a root a range: the same families, each once.
      const disk = spilled.written!;
      // With more than one range, the members are read from their range's part of a file, held to its check.
      Array.from(disk.families(7));
      const parts = path.join(folder.path, 'family-members.bin');
      expect(statSync(parts).size).toBe(8 * disk.size);
      const fd = openSync(parts, 'r+');
      writeSync(fd, Int32Array.of(5000 + 3), 0, 4, 8 * 5);
      closeSync(fd);
      expect(() => Array.from(disk.families(7))).not.toThrow(); // (written again by the second pass)
      const damaged = disk.families(7);
      const again = openSync(parts, 'r+');
      writeSync(again, new Uint8Array(Int32Array.of(5000 + 3).buffer), 0, 4, 8 * 5);
      closeSync(again);
      expect(() => Array.from(damaged)).toThrow(/family member in range 0 of its roots it never wrote: its folder was changed/);
      for (const maxMembers of [1, 7, 1000]) {
        const ranged = disk.families(maxMembers);
        expect(ranged.count).toBe(3000);
        expect(Array.from(ranged, (family) => Array.from(family)).sort((a, b) => a[0] - b[0])).toEqual(families);
      }
    });
  });

  it('reads the families of a large index a range of roots at a time, each range holding about the number asked', async () => {
    await inFolder((folder) => {
      const numbers = new DocNumbers();
      const kept = new UnionFind(numbers);
      const spilled = new UnionFind(numbers);
      spilled.spillTo(new SetsOnDisk(folder), 500);
      // 20,000 families of two or three spread over 3,000,000 numbers (blocks of roots of 64 numbers), one
      // of them joined to the last number and one to the first, each way round.
      const random = seededRandom(3);
      const join = (a: number, b: number) => {
        kept.unionNumbers(a, b);
        spilled.unionNumbers(a, b);
      };
      for (let f = 0; f < 20_000; f++) {
        const a = Math.floor(random() * 2_999_000);
        join(a, a + 1 + Math.floor(random() * 900));
        if (f % 2 === 0) join(a, Math.floor(random() * 2_999_999));
      }
      join(2_999_999, 5);
      join(7, 2_999_999);
      join(0, 2_999_998);
      expect(familiesOf(spilled)).toEqual(familiesOf(kept));
      const disk = spilled.written!;
      for (const maxMembers of [1, 3000, 20_000]) {
        const families = disk.families(maxMembers);
        let most = 0;
        const read = Array.from(families, (family) => {
          most = Math.max(most, family.buffer.byteLength / 4);
          return Array.from(family);
        });
        expect(read.sort((a, b) => a[0] - b[0])).toEqual(familiesOf(kept));
        // A range holds about max(the number asked, the members / 256) members, give or take a block of roots.
        const bound = Math.max(maxMembers, Math.ceil(disk.size / 256));
        expect(most).toBeLessThanOrEqual(bound + 200);
        expect(most).toBeGreaterThan(maxMembers === 20_000 ? 10_000 : 0);
      }
    });
  });

  it('refuses a set or best match on disk that it never wrote, saying the folder was changed', async () => {
    await inFolder((folder) => {
      const numbers = new DocNumbers();
      const verifier = new PairVerifier(0.5, { documents: numbers, width: WIDTH, spill: { folder, maxRows: 1 } });
      for (let n = 0; n < 20; n += 2) verifier.record({ a: `d${n}`, b: `d${n + 1}`, jaccard: 0.75, hamming: 0 });
      verifier.clusters.writeRows();
      expect(verifier.bestOf(4)).toBe(0.75);
      const damage = (file: string, at: number, value: Int32Array | Float64Array) => {
        const fd = openSync(path.join(folder.path, file), 'r+');
        writeSync(fd, new Uint8Array(value.buffer), 0, value.byteLength, at * value.BYTES_PER_ELEMENT);
        closeSync(fd);
      };
      damage('best-partner.bin', 4, Int32Array.of(1001));
      expect(() => verifier.partnerOf(4)).toThrow(/best partner 1000 it never wrote: its folder was changed while dedup ran/);
      damage('best-similarity.bin', 6, Float64Array.of(7));
      expect(() => verifier.bestOf(6)).toThrow(/best similarity 7 it never wrote/);
      // A root written under another root: its family would be merged into that one without a word.
      damage('set-roots.bin', 2, Int32Array.of(4 + 1));
      expect(() => Array.from(verifier.clusters.families())).toThrow(/set root 2 \(a family of 1\) it never wrote/);
      damage('set-roots.bin', 2, Int32Array.of(2 + 1));
      expect(verifier.clusters.families().count).toBe(10);
      damage('set-roots.bin', 8, Int32Array.of(0));
      expect(() => verifier.clusters.families()).toThrow(/set root -1 it never wrote/);
      expect(() => verifier.clusters.rootOf(8)).toThrow(/set root -1 it never wrote/);
    });
  });

  it('keeps every row in memory and writes nothing while the rows stay under the number', async () => {
    await inFolder((folder) => {
      const numbers = new DocNumbers();
      const uf = new UnionFind(numbers);
      uf.spillTo(new SetsOnDisk(folder), 100);
      for (let n = 0; n < 40; n += 2) uf.union(`d${n}`, `d${n + 1}`);
      expect(uf.written).toBeUndefined();
      expect(uf.rows.size).toBe(40);
      expect(familiesOf(uf)).toHaveLength(20);
    });
  });
});

describe('PairVerifier with its rows written to disk', () => {
  for (const maxRows of [2, 30]) {
    it(`gives the best similarities, partners, documents in a pair and families of the one in memory (rows let go past ${maxRows})`, async () => {
      await inFolder((folder) => {
        const random = seededRandom(100 + maxRows);
        const numbers = new DocNumbers();
        const kept = new PairVerifier(0.5, { documents: numbers, width: WIDTH });
        const spilled = new PairVerifier(0.5, { documents: numbers, width: WIDTH, spill: { folder, maxRows } });
        const documents = 400;
        for (let n = 0; n < documents; n++) numbers.append(`d${String(n).padStart(3, '0')}`);
        // Few similarities, so that many best matches tie (the smaller id wins, whatever the order met).
        for (let p = 0; p < 900; p++) {
          const a = Math.floor(random() * documents * (random() < 0.7 ? 0.2 : 1));
          const b = Math.floor(random() * documents);
          const pair: VerifiedPair = { a: numbers.idOf(a), b: numbers.idOf(b), jaccard: (32 + Math.floor(random() * 4) * 8) / WIDTH, hamming: 3 };
          kept.record(pair);
          spilled.record(pair);
        }
        expect(spilled.clusters.written?.size).toBeGreaterThan(0);
        for (let n = 0; n < documents; n++) {
          expect([spilled.bestOf(n), spilled.partnerOf(n)]).toEqual([kept.bestOf(n), kept.partnerOf(n)]);
        }
        expect([...spilled.involvedNumbers()]).toEqual([...kept.involvedNumbers()]);
        expect(familiesOf(spilled.clusters)).toEqual(familiesOf(kept.clusters));
        // Answered from the disk alone once every row is written.
        expect(spilled.clusters.rows.size).toBe(0);
        expect(Array.from({ length: documents }, (_, n) => spilled.bestOf(n))).toEqual(Array.from({ length: documents }, (_, n) => kept.bestOf(n)));
      });
    });
  }

  it('writes its files in the spill folder given, and they go with it', async () => {
    let where = '';
    await inFolder((folder) => {
      where = folder.path;
      const numbers = new DocNumbers();
      const verifier = new PairVerifier(0.5, { documents: numbers, width: WIDTH, spill: { folder, maxRows: 1 } });
      for (let n = 0; n < 10; n++) verifier.record({ a: `a${n}`, b: `b${n}`, jaccard: 0.75, hamming: 0 });
      expect(readdirSync(folder.path).sort()).toEqual(['best-partner.bin', 'best-similarity.bin', 'set-roots.bin']);
    });
    expect(existsSync(where)).toBe(false);
  });
});

describe('a pass over the bands with the rows written to disk', () => {
  const docs = corpus(60, 9, 500, 120);

  it('gives the pairs, counts, clusters and best matches of the pass in memory (sorted here or on the worker, checked here or on a thread, gathered or not)', async () => {
    const expected = await memoryPass(docs, 20);
    const ways = [
      { maxRows: 1, sortAhead: false, checkers: 0, rangeMembers: 0 },
      { maxRows: 10, sortAhead: true, checkers: 1, rangeMembers: 25 },
      { maxRows: 100, sortAhead: true, checkers: 0, rangeMembers: 0 },
    ];
    for (const { maxRows, ...way } of ways) {
      await inFolder(async (folder) => {
        const numbers = new DocNumbers();
        const pairs: VerifiedPair[] = [];
        const verifier: PairVerifier = new PairVerifier(0.5, { documents: numbers, spill: { folder, maxRows }, onVerified: (p) => pairs.push(verifier.named(p)) });
        const spill = new SignatureRecords(numbers, { spillDir: scratch });
        for (const d of docs) spill.addSignature(d.id, d.signature);
        try {
          await verifyBands(spill, verifier, { bucketChunk: 20, groupMembers: 7, ...way });
        } finally {
          spill.close();
        }
        expect(verifier.clusters.written?.size).toBeGreaterThan(0);
        expect(outcomeOf(verifier, pairs, docs)).toEqual(expected);
      });
    }
  });
});
