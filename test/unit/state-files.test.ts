// Nothing near-dup writes follows a symbolic link it did not make (issue 37, item 5). A link planted at the
// name of a temporary file, of a state file, of near-dup's state folder, of the errors file or of the
// dedup journal's pairs leaves the file it points to as it was; a failed write leaves no temporary file.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import fs from 'node:fs';
import fsp from 'node:fs/promises';
import { syncBuiltinESMExports } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { UserError } from '../../src/errors.js';
import { type Checkpoint, readCheckpoint, writeCheckpoint, writeJsonFile } from '../../src/jobs/checkpoint.js';
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import { DedupJournal, type DedupRunPlan } from '../../src/jobs/dedup/state/journal.js';
import { writeDedupState } from '../../src/jobs/dedup/state/state-file.js';
import { ErrorsFile } from '../../src/jobs/errors-file.js';

const VICTIM_TEXT = 'precious: must not change\n';
let dir: string;
let victim: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'near-dup-state-files-'));
  victim = path.join(dir, 'victim.txt');
  writeFileSync(victim, VICTIM_TEXT);
});
afterEach(() => {
  expect(readFileSync(victim, 'utf8')).toBe(VICTIM_TEXT);
});

const checkpoint = (): Checkpoint => ({
  job: 'annotate',
  index: 'docs',
  identity: { fields: ['text'] },
  startedAt: new Date().toISOString(),
  updatedAt: new Date().toISOString(),
  complete: false,
  counts: { annotated: 3 },
});

/** The writers of state files: checkpoints, the dedup state, follow marks (writeJsonFile). */
const writers: Array<[string, (file: string) => Promise<void>]> = [
  ['a checkpoint', (file) => writeCheckpoint(file, checkpoint())],
  ['the dedup state', (file) => writeDedupState(file, { version: 1, index: 'docs', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, lastRunAt: new Date().toISOString() })],
  ['follow marks', (file) => writeJsonFile(file, { identity: {}, savedAt: new Date().toISOString(), marks: [] })],
];

const temporaries = (folder: string) => readdirSync(folder).filter((name) => name.endsWith('.tmp'));

for (const [what, write] of writers) {
  it(`${what}: a link at the old predictable temporary name is not followed`, async () => {
    const file = path.join(dir, '.near-dup', 'annotate-docs.json');
    mkdirSync(path.dirname(file), { mode: 0o700 });
    symlinkSync(victim, `${file}.${process.pid}.tmp`);
    await write(file);
    expect(lstatSync(file).isFile()).toBe(true);
    expect(JSON.parse(readFileSync(file, 'utf8'))).toBeTypeOf('object');
  });

  it(`${what}: a link at the file's own name is replaced, not followed, and the file is its owner's alone`, async () => {
    const file = path.join(dir, 'state.json');
    symlinkSync(victim, file);
    await write(file);
    expect(lstatSync(file).isSymbolicLink()).toBe(false);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(temporaries(dir)).toEqual([]);
  });

  it(`${what}: a .near-dup folder that is a link is refused, and nothing is written where it points`, async () => {
    const elsewhere = path.join(dir, 'elsewhere');
    mkdirSync(elsewhere);
    const target = path.join(elsewhere, 'annotate-docs.json');
    symlinkSync(victim, target); // what a rename over it would replace
    symlinkSync(elsewhere, path.join(dir, '.near-dup'));
    await expect(write(path.join(dir, '.near-dup', 'annotate-docs.json'))).rejects.toThrow(/\.near-dup is a symbolic link/);
    expect(readdirSync(elsewhere)).toEqual(['annotate-docs.json']);
    expect(lstatSync(target).isSymbolicLink()).toBe(true);
  });
}

it('a write that fails leaves no temporary file behind, and the old file as it was', async () => {
  const file = path.join(dir, 'state.json');
  mkdirSync(file); // the rename over a folder fails
  await expect(writeCheckpoint(file, checkpoint())).rejects.toThrow();
  expect(temporaries(dir)).toEqual([]);
  const kept = path.join(dir, 'kept.json');
  await writeCheckpoint(kept, checkpoint());
  const before = readFileSync(kept, 'utf8');
  await expect(writeJsonFile(kept, { big: 1n })).rejects.toThrow(); // not serializable: nothing written
  expect(readFileSync(kept, 'utf8')).toBe(before);
  expect(temporaries(dir)).toEqual([]);
  expect((await readCheckpoint(kept))?.counts).toEqual({ annotated: 3 });
});

it('writes to one state file at once each complete, under a temporary name of their own', async () => {
  const file = path.join(dir, 'state.json');
  await Promise.all(Array.from({ length: 8 }, (_, i) => writeJsonFile(file, { i })));
  expect(JSON.parse(readFileSync(file, 'utf8')).i).toBeGreaterThanOrEqual(0);
  expect(temporaries(dir)).toEqual([]);
});

it('the errors file is not appended to through a link to a file; a link to a device is written to', async () => {
  const file = path.join(dir, 'near-dup-errors-docs.jsonl');
  symlinkSync(victim, file);
  const errors = new ErrorsFile(file);
  expect(() => errors.add({ id: 'a', reason: 'refused' })).toThrow(/symbolic link to a file/);
  await errors.close();
  const device = path.join(dir, 'to-null.jsonl');
  symlinkSync('/dev/null', device);
  const quiet = new ErrorsFile(device);
  quiet.add({ id: 'b', reason: 'refused' });
  await quiet.close();
  const plain = new ErrorsFile(path.join(dir, 'errors.jsonl'));
  plain.add({ id: 'c', reason: 'refused' });
  plain.add({ id: 'd', reason: 'refused' });
  await plain.close();
  expect(readFileSync(path.join(dir, 'errors.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l).id)).toEqual(['c', 'd']);
});

it('an errors file on a full disk does not stop the job listing into it: each failure is counted, and closing says the file, its disk and the way out', async () => {
  const errors = new ErrorsFile('/dev/full'); // every write: ENOSPC
  for (let k = 0; k < 50; k++) errors.add({ id: `doc-${k}`, reason: 'refused' });
  await new Promise((resolve) => setTimeout(resolve, 50)); // the writes fail meanwhile
  errors.add({ id: 'doc-50', reason: 'refused' });
  expect(errors.count).toBe(51);
  const refused = await errors.close().catch((err: unknown) => err);
  expect(refused).toBeInstanceOf(UserError);
  expect((refused as Error).message).toBe(
    'cannot write /dev/full: the disk of /dev is full (51 documents failed, not all of them listed there); free room there, and run the same command again',
  );
});

it('a state file on a full disk is said with the file and its folder, and the old file is kept whole', async () => {
  const file = path.join(dir, 'state.json');
  await writeCheckpoint(file, checkpoint());
  const before = readFileSync(file, 'utf8');
  const open = fsp.open;
  fsp.open = (async (...args: Parameters<typeof open>) => {
    const handle = await open(...args);
    handle.writeFile = async () => {
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    };
    return handle;
  }) as typeof open;
  syncBuiltinESMExports();
  try {
    await expect(writeCheckpoint(file, { ...checkpoint(), counts: { annotated: 4 } })).rejects.toThrow(
      new UserError(`cannot write ${file}: the disk of ${dir} is full (${Buffer.byteLength(before).toLocaleString('en')} bytes to write; the file as it was is kept); free room there, and run the same command again`),
    );
  } finally {
    fsp.open = open;
    syncBuiltinESMExports();
  }
  expect(readFileSync(file, 'utf8')).toBe(before);
  expect(temporaries(dir)).toEqual([]);
});

it("the dedup journal's pairs on a full disk are said with the file, and its last checkpoint stands for --resume", async () => {
  const file = path.join(dir, '.near-dup', 'dedup-docs.run.json');
  const plan: DedupRunPlan = { index: 'docs', uuids: 'u', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, bucketChunk: 10, pass: 'bands', partitions: 2 };
  const documents = new DocNumbers();
  const journal = (await DedupJournal.start(file, plan)).namesBy(documents);
  journal.add({ na: documents.numberOf('x'), nb: documents.numberOf('y'), jaccard: 0.9, hamming: 1 });
  const append = fs.appendFileSync;
  fs.appendFileSync = () => {
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  };
  syncBuiltinESMExports();
  try {
    const refused = await journal.checkpoint(1, { buckets: 1, candidatePairs: 1, verifiedPairs: 1 }).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(UserError);
    expect((refused as Error).message).toBe(
      `cannot write ${file}.pairs.jsonl: the disk of ${path.dirname(file)} is full (what its last checkpoint counted stands: --resume goes on from there); free room there, and run the same command again`,
    );
  } finally {
    fs.appendFileSync = append;
    syncBuiltinESMExports();
  }
  expect((await readCheckpoint(file))?.counts).toMatchObject({ partitionsDone: 0, pairsBytes: 0 });
});

it("the dedup journal's pairs are not appended to, nor cut, through a link", async () => {
  const file = path.join(dir, '.near-dup', 'dedup-docs.run.json');
  const plan: DedupRunPlan = { index: 'docs', uuids: 'u', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, bucketChunk: 10, pass: 'bands', partitions: 2 };
  const documents = new DocNumbers();
  const journal = (await DedupJournal.start(file, plan)).namesBy(documents);
  symlinkSync(victim, `${file}.pairs.jsonl`);
  journal.add({ na: documents.numberOf('x'), nb: documents.numberOf('y'), jaccard: 0.9, hamming: 1 });
  await expect(journal.checkpoint(1, { buckets: 1, candidatePairs: 1, verifiedPairs: 1 })).rejects.toThrow(/symbolic link/);
});

it('a user-named output (dedup --output, evaluate) replaces a link, and writes into a device', async () => {
  const { replaceFile, writeOutputFile } = await import('../../src/jobs/file-writes.js');
  const out = path.join(dir, 'dups.txt');
  symlinkSync(victim, out);
  await writeOutputFile(out, 'a  # max 0.9 matches b\n');
  expect([lstatSync(out).isSymbolicLink(), readFileSync(out, 'utf8')]).toEqual([false, 'a  # max 0.9 matches b\n']);
  const device = path.join(dir, 'to-null.txt');
  symlinkSync('/dev/null', device);
  await writeOutputFile(device, 'into the device');
  expect(lstatSync(device).isSymbolicLink()).toBe(true);
  const report = path.join(dir, 'report.json');
  symlinkSync(victim, report);
  await replaceFile(report, '{}');
  expect(readFileSync(report, 'utf8')).toBe('{}');
  expect(temporaries(dir)).toEqual([]);
});

it('a streamed output (dedup --pairs) is not written through a link to a file, and starts empty', async () => {
  const { openForWriting } = await import('../../src/jobs/file-writes.js');
  const { closeSync, writeSync } = await import('node:fs');
  const linked = path.join(dir, 'pairs.jsonl');
  symlinkSync(victim, linked);
  expect(() => openForWriting(linked, { what: '--pairs' })).toThrow(/--pairs .* is a symbolic link to a file/);
  const plain = path.join(dir, 'plain.jsonl');
  writeFileSync(plain, 'old content, longer than the new\n');
  const fd = openForWriting(plain);
  writeSync(fd, 'new\n');
  closeSync(fd);
  expect(readFileSync(plain, 'utf8')).toBe('new\n');
});
