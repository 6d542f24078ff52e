// The cut with its clusters' members and the ids it wrote on disk (a run that spills its ids): the same
// clusters, in the same order, the same documents alone and the same answers about who was clustered as the
// cut that keeps them in memory; and every value read back from those files checked.
import { closeSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type CutSettings, cutFamilies } from '../../src/jobs/dedup/cluster-cut.js';
import { ClusterList } from '../../src/jobs/dedup/cluster-list.js';
import { MembersOnDisk } from '../../src/jobs/dedup/cluster-members.js';
import { DocNumbers } from '../../src/jobs/dedup/doc-numbers.js';
import { IdSet, IdSetOnDisk } from '../../src/jobs/dedup/id-set.js';
import { SpillFolder } from '../../src/jobs/dedup/spill-folder.js';
import type { StoredSignature } from '../../src/jobs/dedup/signature-store.js';
import { seededRandom } from '../support/corpus.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'nd-cut-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function inFolder<T>(test: (folder: SpillFolder) => T | Promise<T>): Promise<T> {
  const folder = new SpillFolder(scratch);
  try {
    return await test(folder);
  } finally {
    folder.remove();
  }
}

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
      expect(readdirSync(folder.path).sort()).toEqual(['cluster-members.bin', 'clustered-ids-sorted.bin', 'clustered-ids.bin']);
    });
  });

  it('hands out the largest clusters first, then by canonical id, whatever order they were cut in', async () => {
    const documents = new DocNumbers();
    for (const id of ['z', 'b', 'y', 'a', 'c', 'x', 'd', 'e', 'f']) documents.numberOf(id);
    const list = new ClusterList(documents);
    const numberOf = (id: string) => documents.find(id)!;
    const add = (canonical: string, members: string[]) => list.add({ id: canonical, canonical, members, similarity: new Map(members.map((m) => [m, m === canonical ? 1 : 0.75])), family: canonical }, numberOf);
    add('z', ['b', 'z']);
    add('y', ['a', 'y']);
    add('x', ['c', 'd', 'x']);
    add('e', ['e', 'f']);
    expect([...list].map((c) => c.canonical)).toEqual(['x', 'e', 'y', 'z']);
    expect([list.sizeAt(0), list.sizeAt(3)]).toEqual([3, 2]);
    expect([...list.duplicateSimilarities()]).toEqual([0.75, 0.75, 0.75, 0.75, 0.75]);
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

  it('refuses a member or similarity on disk that it never wrote, saying the folder was changed', async () => {
    await inFolder((folder) => {
      const members = new MembersOnDisk(folder, () => 10);
      members.append([1, 2, 3], [1, 0.5, 0.75]);
      expect(members.read(1, 3)).toEqual({ numbers: Int32Array.of(2, 3), similarities: Float64Array.of(0.5, 0.75) });
      damage(folder, 'cluster-members.bin', 12, Uint8Array.of(99, 0, 0, 0));
      expect(() => members.read(0, 3)).toThrow(/holds a document number 99 it never wrote: its folder was changed while dedup ran/);
      damage(folder, 'cluster-members.bin', 12, Uint8Array.of(2, 0, 0, 0));
      damage(folder, 'cluster-members.bin', 28, new Uint8Array(Float64Array.of(3).buffer));
      expect(() => members.read(2, 3)).toThrow(/similarity 3 it never wrote/);
      expect(() => members.read(2, 4)).toThrow(/ended early/);
    });
  });
});

describe('the clustered ids on disk (IdSetOnDisk)', () => {
  for (const sizes of [{}, { block: 4, sparse: 8 }, { block: 1, sparse: 1 }]) {
    it(`answers as the set in memory (blocks of ${sizes.block ?? 'default'}, one hash in ${sizes.sparse ?? 'default'} kept)`, async () => {
      await inFolder((folder) => {
        const onDisk = new IdSetOnDisk(folder, sizes);
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
      });
    });
  }

  it('an empty set has nothing', async () => {
    await inFolder((folder) => expect(new IdSetOnDisk(folder).has('a')).toBe(false));
  });

  it('refuses a sorted file that was changed under it', async () => {
    await inFolder((folder) => {
      const set = new IdSetOnDisk(folder, { block: 4, sparse: 16 });
      for (let k = 0; k < 100; k++) set.add(`d${k}`);
      expect(set.has('d1')).toBe(true);
      // The largest hash written first: the block it is in is out of order.
      damage(folder, 'clustered-ids-sorted.bin', 8, new Uint8Array(8).fill(255));
      let refused = 0;
      for (let k = 0; k < 100; k++) {
        try {
          set.has(`d${k}`);
        } catch (err) {
          expect(String(err)).toMatch(/clustered ids' file dedup spilled is out of order/);
          refused++;
        }
      }
      expect(refused).toBeGreaterThan(0);
    });
  });
});
