// What dedup remembers between runs (.near-dup/dedup-INDEX.json): enough for the next run to revisit only
// what was annotated or written since, when it clusters the same signatures with the same bar.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { writeJsonFile } from '../checkpoint.js';
import type { ClusterMethod } from './cluster-cut.js';
import type { ShardMarks } from './run-marks.js';

export interface DedupState {
  version: 1;
  index: string;
  params: string;
  prefix: string;
  minSimilarity: number;
  /**
   * The time mark: documents annotated after it are new to the next run. When the last complete run started,
   * or earlier: below the annotated_at of a document signed before it and written while it ran (run-marks.ts).
   */
  lastRunAt: string;
  /**
   * Where the last complete run's view of each shard ended (run-marks.ts): documents written above these are
   * new to the next run too, whenever they were signed. Absent in earlier versions and where the engine gives none.
   */
  marks?: ShardMarks[];
  /** The uuids of the concrete indices it ran on: an index deleted and made again under the same name is new. */
  uuids?: string[];
  /** How its families were cut into clusters (absent in the state of earlier versions, which kept whole families). */
  clusters?: ClusterMethod;
  /** The --canonical rule (and date field) its clusters were cut by, as text (absent in earlier versions: taken at its word). */
  order?: string;
}

export function defaultStatePath(index: string): string {
  return path.join('.near-dup', `dedup-${index.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);
}

/**
 * The state of the last complete run; none, or one that cannot be trusted, makes the run a full one, and
 * the `note` says why (a lastRunAt ahead of now would make every later run skip what was annotated since).
 */
export async function readDedupState(file: string, now = Date.now()): Promise<{ state?: DedupState; note?: string }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return {};
  }
  let state: Partial<DedupState> | undefined;
  try {
    const parsed = JSON.parse(text);
    // Files of earlier versions kept the state as a checkpoint's identity.
    state = parsed?.version === 1 ? parsed : parsed?.identity;
  } catch {
    // said below
  }
  const lastRunAt = typeof state?.lastRunAt === 'string' ? Date.parse(state.lastRunAt) : Number.NaN;
  const whole = typeof state?.index === 'string' && typeof state.params === 'string' && typeof state.prefix === 'string' && typeof state.minSimilarity === 'number';
  if (!whole || Number.isNaN(lastRunAt)) return { note: `the state of the last run, ${file}, is not readable (damaged, or edited); this run is a full one and writes it anew` };
  if (lastRunAt > now + 60_000) return { note: `the last run recorded in ${file} (${state?.lastRunAt}) is in the future; trusting it would skip what was annotated since, so this run is a full one` };
  if (state?.marks !== undefined && !validMarks(state.marks, state.uuids)) {
    return { note: `the marks of the last run in ${file} are not readable (damaged, or edited); trusting them could skip what was written since, so this run is a full one` };
  }
  return { state: { ...(state as DedupState), version: 1 } };
}

/** Marks of the indices the state names (by uuid), each a list of whole sequence numbers of -1 or more. */
function validMarks(marks: unknown, uuids: unknown): marks is ShardMarks[] {
  if (!Array.isArray(marks) || !Array.isArray(uuids)) return false;
  const known = new Set(uuids);
  return marks.every(
    (m) =>
      typeof m?.index === 'string' &&
      known.has(m.uuid) &&
      Array.isArray(m.shards) &&
      m.shards.length > 0 &&
      m.shards.every((n: unknown) => Number.isSafeInteger(n) && (n as number) >= -1),
  );
}

export async function writeDedupState(file: string, state: DedupState): Promise<void> {
  await writeJsonFile(file, state);
}

/** Whether a saved state allows an incremental run of these settings on these indices (a state without uuids, from an earlier version, is taken at its word). */
export function continues(saved: DedupState | undefined, current: Omit<DedupState, 'version' | 'lastRunAt'>): saved is DedupState {
  const same =
    saved !== undefined &&
    saved.index === current.index &&
    saved.params === current.params &&
    saved.prefix === current.prefix &&
    saved.minSimilarity === current.minSimilarity &&
    (saved.clusters ?? 'components') === (current.clusters ?? 'centres') &&
    (saved.order === undefined || saved.order === current.order);
  return same && (saved.uuids === undefined || saved.uuids.join(',') === (current.uuids ?? []).join(','));
}
