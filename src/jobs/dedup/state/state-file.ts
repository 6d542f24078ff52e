// What dedup remembers between runs (.near-dup/dedup-CLUSTERUUID-INDEX.json): enough for the next run to
// revisit only what was annotated or written since, when it clusters the same signatures with the same bar.
// Kept by cluster and index: a run on another cluster with an index of the same name has its own state.
import { hash } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { EngineClient } from '../../../engine/client.js';
import { writeJsonFile } from '../../checkpoint.js';
import type { ClusterMethod } from '../cluster/cluster-cut.js';
import type { ShardMarks } from './run-marks.js';

/** What a complete run leaves for the next: its settings, to tell whether it may be incremental, and its marks. */
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

/** The longest file name most file systems take (NAME_MAX), in bytes. */
const NAME_MAX = 255;
/** What the journal adds to the state file's name (`.json` -> `.run.json`), the longest name made of it. */
const JOURNAL_EXTRA = '.run.json'.length - '.json'.length;
/** How much of a long index name a cut name keeps, to be read by a person. */
const CUT_NAME_KEEPS = 100;
/** What a cluster's uuid may be to name a file: the engines give 22 characters of base64url. */
const CLUSTER_UUID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * The state file of an index on a cluster (by the index alone when the cluster gives no uuid, as earlier
 * versions named it). A name that would be too long for a file with its journal's `.run.json` (index names
 * take 255 bytes) keeps the start of the index's name and a hash of the uuid and the whole name.
 */
export function defaultStatePath(index: string, clusterUuid?: string): string {
  const safe = (name: string) => name.replace(/[^A-Za-z0-9._-]/g, '_');
  const cluster = clusterUuid ? `${safe(clusterUuid)}-` : '';
  let name = `dedup-${cluster}${safe(index)}.json`;
  if (name.length + JOURNAL_EXTRA > NAME_MAX) {
    const digest = hash('sha1', JSON.stringify([clusterUuid ?? null, index])).slice(0, 16);
    name = `dedup-${cluster}${safe(index).slice(0, CUT_NAME_KEEPS)}-${digest}.json`;
  }
  return path.join('.near-dup', name);
}

/**
 * The state file of an index for a reader that knows no cluster (dashboards, which talks to Dashboards or
 * Kibana): the newest of the index's files on any cluster (uuids are 22 characters), else the old name;
 * under `root`, the working folder by default.
 */
export function latestStatePath(index: string, root = '.'): string {
  const old = path.join(root, defaultStatePath(index));
  const folder = path.dirname(old);
  let files: string[] = [];
  try {
    // A file is this index's when it is the name this index has on the cluster its name gives.
    files = readdirSync(folder).filter((f) => /^dedup-[A-Za-z0-9_-]{22}-/.test(f) && path.basename(defaultStatePath(index, f.slice(6, 28))) === f);
  } catch {
    return old;
  }
  const modified = (file: string) => {
    try {
      return statSync(file).mtimeMs;
    } catch {
      return Number.NEGATIVE_INFINITY; // removed meanwhile
    }
  };
  const newest = files.map((f) => path.join(folder, f)).sort((a, b) => modified(b) - modified(a))[0];
  return newest ?? old;
}

/**
 * The cluster's uuid: from GET / (cheap, and allowed to most users), else from the cluster state's metadata
 * (an Elasticsearch node that serves no GET /); undefined when neither gives one fit to name a file
 * (Serverless, a narrow role, a busy cluster), which `said` is told in one line: the run then keeps its
 * state under the index's name alone.
 */
export async function clusterUuid(client: EngineClient, said?: (line: string) => void): Promise<string | undefined> {
  const asked: Array<[string, () => Promise<unknown>]> = [
    ['GET /', async () => (await client.request('GET', '/', undefined, undefined, { retry: false }))?.cluster_uuid],
    ['GET /_cluster/state/metadata', async () => (await client.request('GET', '/_cluster/state/metadata', undefined, { filter_path: 'metadata.cluster_uuid' }, { retry: false }))?.metadata?.cluster_uuid],
  ];
  const why: string[] = [];
  for (const [request, ask] of asked) {
    let uuid: unknown;
    try {
      uuid = await ask();
    } catch (err) {
      why.push(`${request}: ${(err as Error).message.replace(/\s+/g, ' ').trim()}`);
      continue;
    }
    // "_na_" is what a cluster says before it has elected a master.
    if (typeof uuid === 'string' && CLUSTER_UUID.test(uuid) && uuid !== '_na_') return uuid;
    why.push(`${request}: ${uuid === undefined ? 'no cluster_uuid' : uuid === '_na_' ? 'none yet (_na_, no master elected)' : 'not 1-64 characters of A-Z, a-z, 0-9, _ and -'}`);
  }
  said?.(`the cluster's uuid could not be read (${why.join('; ')}): the state file is the one named by the index alone, as before near-dup kept it by cluster`);
  return undefined;
}

/**
 * The state file a run reads and writes for an index on a cluster: keyed by both, or, until a run has
 * written one so named, the file an earlier version named by the index alone (read once, then left as it was).
 */
export function stateFileOf(index: string, clusterUuid: string | undefined): { read: string; write: string } {
  const write = defaultStatePath(index, clusterUuid);
  const old = defaultStatePath(index);
  return { read: existsSync(write) || !existsSync(old) ? write : old, write };
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

/** Writes the state whole or not at all (a temporary file renamed over the old one). */
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

/** The settings a state names, as a run that changed one says it (the key, and how it is said). */
const SETTINGS: Array<[keyof Omit<DedupState, 'version' | 'lastRunAt'>, string]> = [['params', 'params'], ['prefix', 'prefix'], ['minSimilarity', 'min similarity'], ['clusters', 'clusters'], ['order', 'canonical rule']];

/**
 * Why a run that could have been incremental is a full one, in one line; undefined when the saved state
 * allows an incremental run, or when there is none and `elsewhere` (a state of the index on another cluster)
 * is not given either: a first run.
 */
export function whyFull(saved: DedupState | undefined, current: Omit<DedupState, 'version' | 'lastRunAt'>, file: string, elsewhere?: string): string | undefined {
  // (Asked as a boolean: continues narrows `saved` to never where it says no.)
  const allowed: boolean = continues(saved, current);
  if (allowed) return undefined;
  // A first run is full without saying so; one after runs of the index on another cluster says why.
  if (saved === undefined) return elsewhere === undefined ? undefined : `no state of an earlier complete run for this cluster and index (${file}; ${elsewhere} is of another cluster): this run is a full one`;
  if (saved.index !== current.index) return `the state in ${file} is of the index "${saved.index}", not "${current.index}": this run is a full one`;
  const changed = SETTINGS.filter(([key]) => saved[key] !== undefined && saved[key] !== current[key]).map(([key, name]) => `${name} changed (${saved[key]} then, ${current[key]} now)`);
  if (saved.clusters === undefined && current.clusters !== 'components') changed.push('clusters changed (whole families then, centres now)');
  if (changed.length === 0 && (saved.uuids ?? []).join(',') !== (current.uuids ?? []).join(',')) {
    changed.push('the index was deleted and made again (or is another index of the same name) since the last run');
  }
  return `${changed.join('; ')} since the last run recorded in ${file}: this run is a full one`;
}
