// The checkpoint of a long job: enough to resume it after a crash or Ctrl-C. Annotate does not need a
// scan position: every document it writes carries `annotated_at` and `params`, so resuming is a query
// for the documents this run has not written yet, in a new point in time.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.js';
import { replaceFile, STATE_FOLDER } from './file-writes.js';

/** A long job's checkpoint on disk: what it was doing, and what must match for `--resume` to go on with it. */
export interface Checkpoint {
  job: string;
  index: string;
  /** What must be equal for a resume to continue the same work. */
  identity: Record<string, unknown>;
  startedAt: string;
  updatedAt: string;
  complete: boolean;
  counts: Record<string, number>;
  /** Checksums of the files the job appends to beside the checkpoint (the dedup journal's pairs). */
  checksums?: Record<string, string>;
}

/**
 * Where a job keeps its checkpoint for an index (and slice), under the state folder, the index name made safe as a
 * file name.
 */
export function defaultCheckpointPath(job: string, index: string, slice?: { id: number; max: number }): string {
  const safe = index.replace(/[^A-Za-z0-9._-]/g, '_');
  return path.join(STATE_FOLDER, `${job}-${safe}${slice ? `-slice${slice.id}of${slice.max}` : ''}.json`);
}

/**
 * The checkpoint at `file`, or undefined when there is none; a damaged one is refused with how to start over, not
 * taken.
 */
export async function readCheckpoint(file: string): Promise<Checkpoint | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new UserError((o) => `checkpoint ${file} is not valid JSON (cut short, or edited); delete it and run without ${o('resume')} to start over`);
  }
  const problem = checkpointProblem(parsed);
  if (problem) throw new UserError((o) => `checkpoint ${file} is damaged (${problem}); delete it and run without ${o('resume')} to start over`);
  return parsed as Checkpoint;
}

/** What is wrong with a checkpoint read from disk, or undefined when it has the shape this version writes. */
function checkpointProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return 'not a JSON object';
  const c = value as Record<string, unknown>;
  if (typeof c.job !== 'string' || typeof c.index !== 'string') return 'no job or index';
  if (typeof c.identity !== 'object' || c.identity === null || Array.isArray(c.identity)) return 'no identity';
  if (typeof c.startedAt !== 'string' || Number.isNaN(Date.parse(c.startedAt))) return `startedAt ${JSON.stringify(c.startedAt)} is not a date`;
  if (Date.parse(c.startedAt) > Date.now() + 60_000) return `startedAt ${c.startedAt} is in the future`;
  const counts = c.counts as Record<string, unknown> | undefined;
  if (typeof counts !== 'object' || counts === null || Object.values(counts).some((n) => !Number.isSafeInteger(n) || (n as number) < 0)) return 'its counts are not whole numbers';
  return undefined;
}

/** Writes a checkpoint whole (through a temporary file), so that a crash leaves the old one or the new, never half. */
export async function writeCheckpoint(file: string, checkpoint: Checkpoint): Promise<void> {
  await writeJsonFile(file, checkpoint);
}

/**
 * JSON written to a temporary file, flushed to the disk (fsync) and renamed over the old one, so a crash or
 * a full disk never leaves half a file (checkpoints, job states, journals): the old file or the new one.
 */
export async function writeJsonFile(file: string, value: unknown): Promise<void> {
  await writeDurably(file, JSON.stringify(value, null, 2) + '\n');
}

/**
 * A state file written whole: to a fresh temporary file beside it (random name, O_EXCL, mode 0600), synced,
 * renamed over it (a symbolic link there is replaced, never followed), the folder synced; a failure leaves
 * no temporary file. The .near-dup folder must be a real folder of this user (file-writes.ts).
 */
export async function writeDurably(file: string, text: string): Promise<void> {
  await replaceFile(file, text, { mode: 0o600 });
}

/** Which identity fields differ between a checkpoint and the job being started. */
export function identityDifferences(saved: Record<string, unknown>, current: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(saved), ...Object.keys(current)]);
  return [...keys].filter((k) => JSON.stringify(saved[k]) !== JSON.stringify(current[k]));
}
