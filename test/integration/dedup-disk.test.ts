// dedup and the disk it spills to, on real engines: a disk that fills while the clusters are about to be
// written leaves each cluster as it was, says the folder and what it needs, and the same command run again
// writes each cluster as it will be; a --spill-dir dedup cannot make its folder in, and a --pairs file on a
// full disk, are one line naming it and the way out, exit code 1. The full spill disk is injected at the file
// system's write (node:fs's writeSync, as every import of it sees it), for the file named, so that no root is
// needed for a small file system; /dev/full is a full disk for --pairs.
import fs, { mkdtempSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { EngineClient } from '../../src/engine/client.js';
import { scanIndex } from '../../src/engine/scan.js';
import { UserError } from '../../src/errors.js';
import { dedupIndex } from '../../src/jobs/dedup.js';
import { runCli } from '../support/documents.js';
import { type HandMade, indexSignatures } from './hand-made.js';
import { forEachEngine } from './harness.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-dedup-disk-'));
const FAMILIES = 150;

/**
 * Families of four: a and b near copies, c and d near copies, c a third changed from a. At 0.5 each family is
 * one cluster of four; at 0.8, two clusters of two.
 */
function families(count: number): HandMade[] {
  const docs: HandMade[] = [];
  for (let f = 0; f < count; f++) {
    const a = Uint32Array.from({ length: 128 }, (_, p) => f * 1000 + p);
    const b = a.map((v, p) => (p % 32 === 0 ? v + 500_000 : v));
    const c = a.map((v, p) => (p % 3 === 0 ? v + 700_000 : v));
    const d = c.map((v, p) => (p % 32 === 1 ? v + 900_000 : v));
    for (const [k, values] of [a, b, c, d].entries()) docs.push({ id: `f${f}-${'abcd'[k]}`, values, shared: `0_f${f}` });
  }
  return docs;
}

/** Each document's cluster fields, by id. */
async function clusterFields(client: EngineClient, index: string): Promise<Map<string, string>> {
  const fields = new Map<string, string>();
  const sourceIncludes = ['near_dup.cluster_id', 'near_dup.duplicate_of', 'near_dup.cluster_size', 'near_dup.is_canonical'];
  for await (const page of scanIndex(client, { index, query: { match_all: {} }, sourceIncludes, pageSize: 1000, pointInTime: client.pointInTime })) {
    for (const hit of page) fields.set(hit._id, JSON.stringify(hit._source?.near_dup ?? null));
  }
  return fields;
}

/** Runs `run` with every write to a file named `name` failing as a full disk does (ENOSPC). */
async function withDiskFullAt<T>(name: string, run: () => Promise<T>): Promise<T> {
  const write = fs.writeSync;
  fs.writeSync = ((fd: number, ...rest: unknown[]) => {
    if (path.basename(readlinkSync(`/proc/self/fd/${fd}`)) === name) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC', syscall: 'write' });
    return (write as (...args: unknown[]) => number)(fd, ...rest);
  }) as typeof fs.writeSync;
  syncBuiltinESMExports();
  try {
    return await run();
  } finally {
    fs.writeSync = write;
    syncBuiltinESMExports();
  }
}

forEachEngine('dedup and its disk', (ctx) => {
  // The clusters' file is written out at the write-back's first read of it; the clustered ids are sorted
  // into their file when the cut ends (before this change, at the write-back's first question, mid-way).
  for (const file of ['clusters.bin', 'clustered-ids-sorted.bin']) {
    it.skipIf(process.platform !== 'linux')(`a disk that fills at ${file} leaves every cluster as it was, says where and how much, and the same command again writes each as it will be`, async () => {
      const index = ctx.index('disk-full');
      const docs = families(FAMILIES);
      await indexSignatures(ctx.client, index, docs);
      const stateFile = path.join(tmp, `${index}.json`);
      const first = await dedupIndex(ctx.client, { index, compare: { minSimilarity: 0.5 }, state: { stateFile } });
      expect([first.clusters, first.complete]).toEqual([FAMILIES, true]);
      const before = await clusterFields(ctx.client, index);

      // Other settings, the signatures and ids spilled: the disk fills before the first update is sent.
      const spillDir = mkdtempSync(path.join(tmp, 'spill-'));
      const settings = { index, compare: { minSimilarity: 0.8 }, state: { stateFile }, limits: { maxCachedSignatures: 100, spillDir } };
      const refused = await withDiskFullAt(file, () => dedupIndex(ctx.client, settings)).catch((err: unknown) => err);
      expect(refused).toBeInstanceOf(UserError);
      expect((refused as Error).message).toMatch(
        new RegExp(`^the disk of ${spillDir} is full \\(.+ free\\): dedup could not write ${file.replace('.', '\\.')} of its spill ${spillDir}/near-dup-spill-[^ ]+, which needs (about|at least) .+ more there .*; nothing was written to the index: free room there, or give limits\\.spillDir a folder on a disk with room, and run the same command again$`),
      );
      expect(await clusterFields(ctx.client, index)).toEqual(before);
      expect(readdirSync(spillDir)).toEqual([]);

      const again = await dedupIndex(ctx.client, settings);
      expect([again.clusters, again.complete]).toEqual([2 * FAMILIES, true]);
      const after = await clusterFields(ctx.client, index);
      for (const doc of docs) {
        const { cluster_id, cluster_size } = JSON.parse(after.get(doc.id)!);
        const family = doc.id.slice(0, doc.id.indexOf('-'));
        expect([cluster_id, cluster_size]).toEqual([doc.id.endsWith('a') || doc.id.endsWith('b') ? `${family}-a` : `${family}-c`, 2]);
      }
    });
  }

  it.skipIf(process.platform !== 'linux')('--pairs on a full disk (/dev/full): one line naming the file and its folder, exit code 1, nothing written to the index', async () => {
    const index = ctx.index('pairs-full');
    await indexSignatures(ctx.client, index, families(3));
    const run = await runCli(['dedup', '--url', ctx.engine.url, '--index', index, '--pairs', '/dev/full'], { cwd: mkdtempSync(path.join(tmp, 'pairs-')) }).done;
    expect({ code: run.code, last: run.stderr.trimEnd().split('\n').pop() }).toEqual({
      code: 1,
      last: 'near-dup: cannot write /dev/full: the disk of /dev is full (the pairs verified until then are in it); free room there, and run the same command again',
    });
    expect([...(await clusterFields(ctx.client, index)).values()].every((fields) => JSON.parse(fields)?.cluster_id === undefined)).toBe(true);
  });

  it('a --spill-dir that is a file, missing, a dangling link or a place no folder can be made: one line naming it and the way out, exit code 1', async () => {
    const index = ctx.index('spill-dir');
    await indexSignatures(ctx.client, index, families(1));
    const here = mkdtempSync(path.join(tmp, 'places-'));
    const file = path.join(here, 'a-file');
    writeFileSync(file, 'x');
    const dangling = path.join(here, 'dangling');
    symlinkSync(path.join(here, 'gone'), dangling);
    const cases: Array<[value: string, why: string]> = [
      [file, 'not a folder'],
      [path.join(here, 'no-such-folder'), 'no such folder'],
      [dangling, `a link to ${path.join(here, 'gone')}, which does not exist`],
    ];
    if (process.platform === 'linux') cases.push(['/proc', 'no folder can be made there'], ['/sys', 'near-dup may not write there (permission denied)']);
    for (const [value, why] of cases) {
      const run = await runCli(['dedup', '--url', ctx.engine.url, '--index', index, '--max-cached-signatures', '1', '--spill-dir', value], { cwd: here }).done;
      // (The line before says the hand-made signatures are of the first layout.)
      expect({ code: run.code, last: run.stderr.trimEnd().split('\n').pop() }).toEqual({
        code: 1,
        last: `near-dup: --spill-dir ${value}: ${why}; give a folder near-dup may write to, or leave the option out to use the system's temporary folder`,
      });
    }
  });
});
