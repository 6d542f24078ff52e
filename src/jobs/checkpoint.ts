// The checkpoint of a long job: enough to resume it after a crash or Ctrl-C. Annotate does not need a
// scan position: every document it writes carries `annotated_at` and `params`, so resuming is a query
// for the documents this run has not written yet, in a new point in time.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { UserError } from '../errors.js';

export interface Checkpoint {
  job: string;
  index: string;
  /** What must be equal for a resume to continue the same work. */
  identity: Record<string, unknown>;
  startedAt: string;
  updatedAt: string;
  complete: boolean;
  counts: Record<string, number>;
}

export function defaultCheckpointPath(job: string, index: string, slice?: { id: number; max: number }): string {
  const safe = index.replace(/[^A-Za-z0-9._-]/g, '_');
  return path.join('.near-dup', `${job}-${safe}${slice ? `-slice${slice.id}of${slice.max}` : ''}.json`);
}

export async function readCheckpoint(file: string): Promise<Checkpoint | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return JSON.parse(text) as Checkpoint;
  } catch {
    throw new UserError(`checkpoint ${file} is not valid JSON; delete it to start over without --resume`);
  }
}

export async function writeCheckpoint(file: string, checkpoint: Checkpoint): Promise<void> {
  await writeJsonFile(file, checkpoint);
}

/** JSON written to a temporary file and renamed, so a crash mid-write never leaves half a file (checkpoints, job states). */
export async function writeJsonFile(file: string, value: unknown): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(value, null, 2) + '\n');
  await rename(tmp, file);
}

/** Which identity fields differ between a checkpoint and the job being started. */
export function identityDifferences(saved: Record<string, unknown>, current: Record<string, unknown>): string[] {
  const keys = new Set([...Object.keys(saved), ...Object.keys(current)]);
  return [...keys].filter((k) => JSON.stringify(saved[k]) !== JSON.stringify(current[k]));
}
