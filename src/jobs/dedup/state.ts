// What dedup remembers between runs (.near-dup/dedup-INDEX.json): enough for the next run to revisit only
// what was annotated since, when it clusters the same signatures with the same bar.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeJsonFile } from '../checkpoint.js';

export interface DedupState {
  version: 1;
  index: string;
  params: string;
  prefix: string;
  minSimilarity: number;
  /** When the last complete run started: documents annotated after it are new to the next run. */
  lastRunAt: string;
  /** The uuids of the concrete indices it ran on: an index deleted and made again under the same name is new. */
  uuids?: string[];
}

export function defaultStatePath(index: string): string {
  return path.join('.near-dup', `dedup-${index.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);
}

/** The state of the last complete run, or undefined (none, or unreadable: then the run is a full one). */
export async function readDedupState(file: string): Promise<DedupState | undefined> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8'));
    // Files of earlier versions kept the state as a checkpoint's identity.
    const state = parsed.version === 1 ? parsed : parsed.identity;
    return typeof state?.lastRunAt === 'string' ? { ...state, version: 1 } : undefined;
  } catch {
    return undefined;
  }
}

export async function writeDedupState(file: string, state: DedupState): Promise<void> {
  await writeJsonFile(file, state);
}

/** Whether a saved state allows an incremental run of these settings on these indices (a state without uuids, from an earlier version, is taken at its word). */
export function continues(saved: DedupState | undefined, current: Omit<DedupState, 'version' | 'lastRunAt'>): saved is DedupState {
  const same = saved !== undefined && saved.index === current.index && saved.params === current.params && saved.prefix === current.prefix && saved.minSimilarity === current.minSimilarity;
  return same && (saved.uuids === undefined || saved.uuids.join(',') === (current.uuids ?? []).join(','));
}
