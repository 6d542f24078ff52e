// The cut with its clusters' members and the ids it wrote on disk (a run that spills its ids): the same
// clusters, in the same order, the same documents alone and the same answers about who was clustered as the
// cut that keeps them in memory; and every value read back from those files checked.
import { closeSync, openSync, readdirSync, readSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { type CutSettings, cutFamilies } from '../../src/jobs/dedup/cluster/cluster-cut.js';
import { ClusterList, ClusterLog } from '../../src/jobs/dedup/cluster/cluster-list.js';
import { recordFile } from '../../src/jobs/dedup/spill/record-file.js';
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import { IdSet } from '../../src/jobs/dedup/cluster/id-set.js';
import type { SpillFolder } from '../../src/jobs/dedup/spill/spill-folder.js';
import type { StoredSignature } from '../../src/jobs/dedup/documents/signature-store.js';
import { seededRandom } from '../support/corpus.js';
import { spillFolders } from '../support/spill-folders.js';

const { inFolder } = spillFolders('nd-cut-');

function damage(folder: SpillFolder, file: string, at: number, bytes: Uint8Array): void {
  const fd = openSync(path.join(folder.path, file), 'r+');
  writeSync(fd, bytes, 0, bytes.length, at);
  closeSync(fd);
}

const WIDTH = 32;

/** Families of near-copies (2 to 12 members, some drifting apart, some members far from the rest), numbered among unrelated documents. */
function families(count: number, seed: number) {
  const random = seededRandom(seed);
  const documents = new DocNumbers();
  const signatures = new Map<string, StoredSignature>();
  const list: Int32Array[] = [];
  const value = () => (random() * 2 ** 32) >>> 0;
  for (let f = 0; f < count; f++) {
    const base = Uint32Array.from({ length: WIDTH }, value);
    const size = 2 + Math.floor(random() * 11);
    const members: number[] = [];
    for (let m = 0; m < size; m++) {
      const values = base.slice();
      const changed = Math.floor(random() * WIDTH * 0.8);
      for (let k = 0; k < changed; k++) values[Math.floor(random() * WIDTH)] = value();
      const id = `f${f}-${m}-${'x'.repeat(Math.floor(random() * 5))}`;
      // Unrelated documents between the members: the numbers of a family far apart.
      for (let k = Math.floor(random() * 3); k > 0; k--) documents.numberOf(`other-${documents.size}`);
      members.push(documents.numberOf(id));
      // Two bands of the values (what LSH pairs), so the cut compares members that share one.
      const bands = Int32Array.of(values[0] ^ values[1], values[2] ^ values[3], values[4] ^ values[5], values[6] ^ values[7]);
      if (m > 0 && random() < 0.7) bands[0] = signatures.get(documents.idOf(members[0]))!.bands[0];
      signatures.set(id, { values, simhash: '0', bands });
    }
    list.push(Int32Array.from(members));
  }
  return { documents, signatures, list };
}

function settings(documents: DocNumbers, signatures: Map<string, StoredSignature>, spill?: SpillFolder): CutSettings {
  return {
    method: 'centres',
    rule: 'oldest',
    minSimilarity: 0.5,
    facts: { get: () => undefined },
    signatures: async (ids) => new Map(ids.map((id) => [id, signatures.get(id)!])),
    documents,
    spill,
  };
}

describe('the cut with its clusters and ids on disk', () => {
  it('gives the clusters (in order), the documents alone and who was clustered as the cut in memory', async () => {
    await inFolder(async (folder) => {
      const { documents, signatures, list } = families(1500, 5);
      const inMemory = await cutFamilies(list, settings(documents, signatures));
      const onDisk = await cutFamilies(list, settings(documents, signatures, folder));
      expect(inMemory.clusters.length).toBeGreaterThan(500);
      expect(inMemory.alone.length).toBeGreaterThan(10);
      expect([...onDisk.clusters]).toEqual([...inMemory.clusters]);
      expect(Array.from(onDisk.alone)).toEqual(Array.from(inMemory.alone));
      expect([...onDisk.clusters.duplicateSimilarities()]).toEqual([...inMemory.clusters.duplicateSimilarities()]);
      expect([onDisk.clusters.memberCount, onDisk.families, onDisk.largestFamily]).toEqual([inMemory.clusters.memberCount, inMemory.families, inMemory.largestFamily]);
      for (let n = 0; n < documents.size; n++) expect(onDisk.clustered(documents.idOf(n))).toBe(inMemory.clustered(documents.idOf(n)));
      expect(onDisk.clustered('never-seen')).toBe(false);
      expect(readdirSync(folder.path).sort()).toEqual(['clustered-ids-sorted.bin', 'clustered-ids.bin', 'clusters.bin']);
    });
  });

  it('picks the largest clusters, then by canonical id, whatever order they were cut in', async () => {
    const documents = new DocNumbers();
    for (const id of ['z', 'b', 'y', 'a', 'c', 'x', 'd', 'e', 'f', 'g', 'h']) documents.numberOf(id);
    const list = new ClusterList(documents);
    const numberOf = (id: string) => documents.find(id)!;
    const add = (canonical: string, members: string[], family = canonical) => list.add({ id: canonical, canonical, members, similarity: new Map(members.map((m) => [m, m === canonical ? 1 : 0.75])), family }, numberOf);
    add('z', ['b', 'z']);
    add('y', ['a', 'y'], 'x');
    add('x', ['c', 'd', 'x']);
    add('e', ['e', 'f']);
    add('g', ['g', 'h']);
    expect([...list].map((c) => c.canonical)).toEqual(['z', 'y', 'x', 'e', 'g']);
    expect([...list].map((c) => c.family)).toEqual(['z', 'x', 'x', 'e', 'g']);
    expect(list.top(3).map((c) => c.canonical)).toEqual(['x', 'e', 'g']);
    expect(list.top(1).map((c) => c.canonical)).toEqual(['x']);
    expect(list.top(20).map((c) => c.canonical)).toEqual(['x', 'e', 'g', 'y', 'z']);
    expect(list.top(20)).toEqual([...list].sort((a, b) => b.members.length - a.members.length || (a.canonical < b.canonical ? -1 : 1)));
    expect([list.largestSize, list.length, list.memberCount]).toEqual([3, 5, 11]);
    // The largest size whatever order the sizes came in.
    const other = new ClusterList(documents);
    other.add({ id: 'x', canonical: 'x', members: ['c', 'd', 'x'], similarity: new Map([['x', 1]]), family: 'x' }, numberOf);
    other.add({ id: 'z', canonical: 'z', members: ['b', 'z'], similarity: new Map([['z', 1]]), family: 'z' }, numberOf);
    expect(other.largestSize).toBe(3);
    expect(new ClusterList(documents).top(20)).toEqual([]);
    expect(() => add('q', ['a', 'q'])).toThrow(/cluster member q has no number/);
    expect(() => list.add({ id: 'a', canonical: 'a', members: ['b', 'c'], similarity: new Map(), family: 'a' }, numberOf)).toThrow(/its canonical is not among its members/);
  });

  it('picks the largest among more clusters of one size than it names at once, as sorting them all would', async () => {
    await inFolder(async (folder) => {
      const { documents, signatures, list } = families(3000, 3);
      const { clusters } = await cutFamilies(list, settings(documents, signatures, folder));
      const sorted = [...clusters].sort((a, b) => b.members.length - a.members.length || (a.canonical < b.canonical ? -1 : 1));
      for (const k of [1, 20, 700, clusters.length + 5]) expect(clusters.top(k)).toEqual(sorted.slice(0, k));
    });
  });

  it('gives the least and median similarity of the duplicates, and how many are below the bar, as sorting them all would', async () => {
    await inFolder(async (folder) => {
      const { documents, signatures, list } = families(400, 9);
      for (const spill of [undefined, folder]) {
        const { clusters } = await cutFamilies(list, { ...settings(documents, signatures, spill), method: 'components' });
        const all = Float64Array.from(clusters.duplicateSimilarities()).sort();
        expect(all.length).toBeGreaterThan(1000);
        for (const bar of [0, 0.3, 0.5, 1.1]) {
          expect(clusters.spread(bar)).toEqual({ min: all[0], median: all[Math.floor(all.length / 2)], belowMinSimilarity: all.filter((x) => x < bar).length });
        }
      }
      expect(new ClusterList(documents).spread(0.5)).toEqual({ min: null, median: null, belowMinSimilarity: 0 });
      // Two duplicates: the median is the second (place 2 / 2 = 1 of them sorted).
      const two = new ClusterList(documents);
      const [a, b, c] = [0, 1, 2].map((n) => documents.idOf(n));
      two.add({ id: a, canonical: a, members: [a, b, c], similarity: new Map([[a, 1], [b, 0.6], [c, 0.5]]), family: a }, (id) => documents.find(id)!);
      expect(two.spread(0.55)).toEqual({ min: 0.5, median: 0.6, belowMinSimilarity: 1 });
    });
  });

  it('keeps records larger than its buffers and reads them back across chunks, on disk as in memory', async () => {
    await inFolder((folder) => {
      // A buffer of 100 bytes on disk (many writes), and records of 2 to 200,000 members (past a chunk read at once).
      const logs = [new ClusterLog(recordFile('clusters.bin'), () => 300_000), new ClusterLog(recordFile('clusters.bin', folder, 100), () => 300_000)];
      const made = [2, 3, 200_000, 5, 90_000, 2].map((size, c) => ({
        canonicalAt: c % size,
        family: 7 * c,
        numbers: Int32Array.from({ length: size }, (_, k) => (k * 7 + c) % 300_000),
        similarities: Float64Array.from({ length: size }, (_, k) => (k === c % size ? 1 : (k % 97) / 97)),
      }));
      for (const log of logs) {
        const places = made.map((record) => log.append(record));
        const read = [...log.records()];
        expect(read).toEqual(made.map((record, c) => ({ ...record, place: places[c] })));
        expect(log.at(places[4])).toEqual(read[4]);
      }
    });
  });

  it('refuses a record on disk that it never wrote, saying the folder was changed', async () => {
    await inFolder((folder) => {
      const log = new ClusterLog(recordFile('clusters.bin', folder), () => 10);
      log.append({ canonicalAt: 0, family: 1, numbers: Int32Array.of(1, 2, 3), similarities: Float64Array.of(1, 0.5, 0.75) });
      expect(log.at(0)).toMatchObject({ numbers: Int32Array.of(1, 2, 3), similarities: Float64Array.of(1, 0.5, 0.75) });
      const refused = (at: number, bytes: Uint8Array, message: RegExp) => {
        const original = new Uint8Array(bytes.length);
        const fd = openSync(path.join(folder.path, 'clusters.bin'), 'r+');
        readSync(fd, original, 0, original.length, at);
        closeSync(fd);
        damage(folder, 'clusters.bin', at, bytes);
        expect(() => log.at(0)).toThrow(message);
        expect(() => [...log.records()]).toThrow(message);
        damage(folder, 'clusters.bin', at, original);
      };
      // Another member of the run in place of one: only the check finds it.
      refused(16 + 4, Uint8Array.of(9, 0, 0, 0), /cluster at 0 whose members do not match its check: its folder was changed while dedup ran/);
      refused(16 + 4, Uint8Array.of(99, 0, 0, 0), /document number 99 it never wrote/);
      refused(16 + 12 + 8, new Uint8Array(Float64Array.of(3).buffer), /similarity 3 it never wrote/);
      refused(16 + 12, new Uint8Array(Float64Array.of(0.5).buffer), /do not match its check/);
      refused(0, Uint8Array.of(1, 0, 0, 0), /cluster of 1 member at 0/);
      refused(0, Uint8Array.of(200, 0, 0, 0), /cluster of 200 members at 0/);
      refused(8, Uint8Array.of(50, 0, 0, 0), /do not match its check/);
      // Another family, or another similarity, of the run: only the check finds them.
      refused(8, Uint8Array.of(2, 0, 0, 0), /do not match its check/);
      refused(16 + 12 + 8, new Uint8Array(Float64Array.of(0.875).buffer), /do not match its check/);
      refused(16 + 4, Uint8Array.of(10, 0, 0, 0), /document number 10 it never wrote/);
      expect(log.at(0).numbers).toEqual(Int32Array.of(1, 2, 3));
    });
  });
});

describe('the clustered ids on disk (IdSet with a spill folder)', () => {
  for (const sizes of [{}, { listBlock: 4, page: 8 }, { listBlock: 1, page: 1 }]) {
    it(`answers as the set in memory (lists written in blocks of ${sizes.listBlock ?? 'default'}, pages of ${sizes.page ?? 'default'})`, async () => {
      await inFolder((folder) => {
        const onDisk = new IdSet(folder, sizes);
        const inMemory = new IdSet();
        const ids = Array.from({ length: 20_000 }, (_, k) => `doc-${k}${k % 7 === 0 ? '\u00e9' : ''}`);
        for (const id of [...ids, ids[3], '']) {
          onDisk.add(id);
          inMemory.add(id);
        }
        expect(onDisk.size).toBe(inMemory.size);
        for (const id of ids) expect(onDisk.has(id)).toBe(true);
        expect(onDisk.has('')).toBe(true);
        let found = 0;
        for (let k = 20_000; k < 40_000; k++) if (onDisk.has(`doc-${k}`) || onDisk.has(`Doc-${k - 20_000}`)) found++;
        expect(found).toBe(0);
        expect(() => onDisk.add('late')).toThrow(/after the first look-up/);
        // The lists' file let go once sorted.
        expect(statSync(path.join(folder.path, 'clustered-ids.bin')).size).toBe(0);
      });
    });
  }

  it('is sealed by the cut (its sorted file written before the write-back asks), its room on the disk checked first', async () => {
    await inFolder(async (folder) => {
      const { documents, signatures, list } = families(100, 5);
      const cut = await cutFamilies(list, settings(documents, signatures, folder));
      const sorted = path.join(folder.path, 'clustered-ids-sorted.bin');
      const written = cut.clusters.memberCount + cut.alone.length;
      expect(written).toBeGreaterThan(100);
      expect([statSync(sorted).size, statSync(path.join(folder.path, 'clustered-ids.bin')).size]).toEqual([8 * written, 0]);
    });
    await inFolder((folder) => {
      const set = new IdSet(folder);
      for (let k = 0; k < 5000; k++) set.add(`d${k}`);
      let refused: unknown;
      try {
        set.seal(1024);
      } catch (err) {
        refused = err;
      }
      expect(refused).toBeInstanceOf(UserError);
      expect((refused as Error).message).toBe(
        `the disk of ${path.dirname(folder.path)} has 1 KB free, and dedup needs 40 KB more there for the 5,000 ids it writes cluster fields to (8 bytes each), before it writes any; ` +
          'nothing was written to the index: free room there, or give limits.spillDir a folder on a disk with room, and run the same command again',
      );
      expect(statSync(path.join(folder.path, 'clustered-ids-sorted.bin')).size).toBe(0);
    });
  });

  it('an empty set has nothing', async () => {
    await inFolder((folder) => expect(new IdSet(folder).has('a')).toBe(false));
  });

  it('refuses its files changed under it, never answering "not clustered" for an id it holds', async () => {
    await inFolder((folder) => {
      const set = new IdSet(folder, { listBlock: 4, page: 16 });
      for (let k = 0; k < 100; k++) set.add(`d${k}`);
      expect(set.has('d1')).toBe(true);
      // A page of the sorted file zeroed (in order still, but not what was written).
      damage(folder, 'clustered-ids-sorted.bin', 16 * 8, new Uint8Array(16 * 8));
      let refused = 0;
      for (let k = 0; k < 100; k++) {
        try {
          expect(set.has(`d${k}`)).toBe(true);
        } catch (err) {
          expect(String(err)).toMatch(/clustered ids' files dedup spilled were changed while it ran/);
          refused++;
        }
      }
      expect(refused).toBeGreaterThan(0);
    });
    await inFolder((folder) => {
      const set = new IdSet(folder, { listBlock: 4, page: 16 });
      for (let k = 0; k < 5000; k++) set.add(`d${k}`);
      // A hash of the lists' file moved to another list (its top byte changed) before they are sorted.
      const fd = openSync(path.join(folder.path, 'clustered-ids.bin'), 'r+');
      const top = new Uint8Array(1);
      readSync(fd, top, 0, 1, 7);
      writeSync(fd, Uint8Array.of(top[0] ^ 0x80), 0, 1, 7);
      closeSync(fd);
      expect(() => set.has('d1')).toThrow(/clustered ids' files dedup spilled were changed while it ran/);
    });
    await inFolder((folder) => {
      const set = new IdSet(folder, { listBlock: 4, page: 16 });
      for (let k = 0; k < 5000; k++) set.add(`d${k}`);
      // A block of the lists' file zeroed (hashes of list 0, were they written there).
      damage(folder, 'clustered-ids.bin', 64, new Uint8Array(32));
      expect(() => set.has('d1')).toThrow(/clustered ids' files dedup spilled were changed while it ran/);
    });
  });
});
