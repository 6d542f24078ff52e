// near-dup dedup: every near-duplicate cluster of an index, found and verified here, written back as cluster
// fields (dedupIndex); or its find split between processes that share only the engine (dedupShare, each share's
// pairs into a pairs index, then dedupIndex with fromShares). Here the options are resolved and checked once,
// and the stages called in order: the run prepared, the lock taken, the pairs found (incremental, full or from
// the shares), the families cut into clusters, written back, containment, the state recorded, the summary.
import os from 'node:os';
import { clusterWarnings } from './dedup/cluster/cluster-guard.js';
import { storedPath, type StoredField } from '../stored/layout.js';
import { paramsShape } from '../stored/read.js';
import { peakMemoryMb, UsageMeter } from './usage.js';
import { existsSync, type WriteStream } from 'node:fs';
import path from 'node:path';
import { DEFAULT_PREFIX } from '../annotation.js';
import type { EngineClient } from '../engine/client.js';
import { locationOf } from '../engine/doc-location.js';
import { absentFields, mappedFields } from '../indices/fields.js';
import { requireWholeSource } from '../indices/source-filter.js';
import { requireWritable } from '../indices/index-state.js';
import { initIndex } from '../indices/init.js';
import type { RetrySnapshot } from '../engine/retry.js';
import { type BulkOptions, checkBulkOptions, requireWholeNumbers, UsageError, UserError } from '../errors.js';
import { checkOptionKeys, given } from './option-groups.js';
import { sampleEvery } from '../signature.js';
import { containmentPass, writeContainment } from './dedup/containment-pass.js';
import { type DocIds, DocNumbers } from './dedup/documents/doc-numbers.js';
import { fullPass, type FullPassSettings } from './dedup/full-pass.js';
import { rangesByDefault } from './dedup/bands/band-pass.js';
import type { ReadTable } from './dedup/scan/table-read.js';
import { type IncrementalSettings, incrementalPass } from './dedup/incremental-pass.js';
import { PairVerifier, type VerifiedPair, type VerifierFor } from './dedup/verify/pair-verifier.js';
import type { DedupJournal } from './dedup/state/journal.js';
import { type SignatureReader, SignatureStore, storedFields } from './dedup/documents/signature-store.js';
import { clusterUuid, continues, type DedupState, defaultStatePath, latestStatePath, readDedupState, stateFileOf, whyFull, writeDedupState } from './dedup/state/state-file.js';
import { type LockSettings, lockHolder, RunLock, writingUnder } from './dedup/state/run-lock.js';
import { RunView } from './dedup/state/run-marks.js';
import { type CanonicalRule, type ClusterMethod, CLUSTER_METHODS, type Cut, cutFamilies } from './dedup/cluster/cluster-cut.js';
import type { ClusterList, DedupCluster } from './dedup/cluster/cluster-list.js';
import { writeBack, type WriteBackResult } from './dedup/write/write-back.js';
import { ErrorsFile } from './errors-file.js';
import { PairsIndex } from './dedup/split/pairs-index.js';
import { SharePass } from './dedup/split/share-pass.js';
import { type SharedPairs, sharedPairs } from './dedup/split/final-step.js';
import { checkPairsIndexName, checkShareCount, markerId, parseShare, runName, shareName, type ShareRunIdentity } from './dedup/split/plan.js';
import { closeStream as closeWritten, openForWriting, streamInto } from './file-writes.js';
import { chooseParams, type ParamsDamage } from './params-held.js';
import { plural } from '../plural.js';

export type { CanonicalRule, ClusterMethod, DedupCluster };

/**
 * The stages the progress callback is told about, in the order a run goes through them: signatures read and
 * bands done (each band's buckets sorted and their pairs verified) of the full pass, or the new documents of an
 * incremental one and the pairs verified around them (verify); then families cut into clusters (cut), documents
 * written back (write-back), containment lookups.
 */
export type DedupStage = 'signatures' | 'bands' | 'new documents' | 'verify' | 'cut' | 'write-back' | 'containment';

/** Documents an incremental run looks up at most to read the families it touches whole; past that it runs in full. */
const MAX_INCREMENTAL_LOOKUPS = 10_000;

/** Ids read at once where documents are named by number for the write-back. */
const IDS_READ = 4096;

/** Every default of dedupIndex and dedupShare, in one place (the command line's defaults are these too). */
export const DEDUP_DEFAULTS = {
  prefix: DEFAULT_PREFIX,
  /** The LSH threshold the signatures are made for, by default. */
  minSimilarity: 0.7,
  /**
   * Without --date-field (then the oldest). Never the time of signing (annotated_at), which follows how the
   * documents were ingested: the same documents gave other clusters on every run.
   */
  canonical: 'longest',
  clusters: 'centres',
  maxCachedSignatures: 1_000_000,
  maxCachedMembers: 4_000_000,
  bucketChunk: 1000,
  pageSize: 5000,
} as const satisfies Partial<DedupCompare & DedupLimits>;

/** Documents per scan page, by default. */
export const DEFAULT_PAGE_SIZE = DEDUP_DEFAULTS.pageSize;

/** What is compared, and how verified pairs become clusters. */
export interface DedupCompare {
  /** The object the near-dup fields are under (default `near_dup`). */
  prefix?: string;
  /** Only signatures with these params; default: the one params value in the index (refused if several). */
  params?: string;
  /** Pairs below this estimated Jaccard are not near-duplicates (default 0.7, the LSH threshold; above 0, at most 1). */
  minSimilarity?: number;
  /**
   * The document each cluster keeps: oldest, newest, longest (ties to the smallest id), or the lowest (asc) or
   * highest (desc) value of a field (default: oldest with dateField, else longest).
   */
  canonical?: CanonicalRule;
  /**
   * centres (default): each family of verified pairs is cut into clusters whose every duplicate is within
   * minSimilarity of its canonical; components: every family is one cluster (single linkage).
   */
  clusters?: ClusterMethod;
  /** Date field for oldest/newest (default: <prefix>.annotated_at). */
  dateField?: string;
  /**
   * Also find partial copies: documents holding at least this share of their tokens inside a larger
   * document get contained_in and max_containment (signatures need a containment sample). Above 0, at most 1.
   */
  containment?: number;
}

/** How much the run holds in memory, reads and writes at once, and how far an incremental run may look. */
export interface DedupLimits {
  /**
   * Signatures held in memory (default 1,000,000, about 0.6 KB each): past this many documents in scope they
   * are spilled to local disk (about 0.75 KB each, removed at the end) and read back a bucket group at a time.
   */
  maxCachedSignatures?: number;
  /**
   * Documents with a near-duplicate whose sets and best matches are held in memory once the signatures are
   * spilled (default 4,000,000, about 30 bytes each, 12 more while written): past this many they are written to
   * the spill by document number (16 bytes a document of the index) and let go, and read back when met again.
   */
  maxCachedMembers?: number;
  /** Where signatures are spilled (default: the system's temporary folder). */
  spillDir?: string;
  /**
   * Documents of one band key verified at once (default 1,000, at least 4). A key held by more is read on its
   * own and verified a chunk at a time, each chunk with representatives of the clusters found so far in that key.
   */
  bucketChunk?: number;
  /** Documents per page of the scans that read the stale cluster fields (default 5,000; the signatures' scan reads at most 1,000 a page). */
  pageSize?: number;
  /**
   * Documents an incremental run may look up to read the families it touches whole (default: a tenth of
   * the index, at least 100, at most 10,000); past that, the run is a full one.
   */
  maxFamilyLookups?: number;
  /** The write-back's bulk requests. */
  bulk?: BulkOptions;
}

/** What the run remembers between runs, in files of its own. */
export interface DedupStateFiles {
  /** Where the last run is remembered, for incremental re-runs (default .near-dup/dedup-CLUSTERUUID-INDEX.json; one named by the index alone, of an earlier version, is read until then). */
  stateFile?: string;
  /** Continue a full run that was killed or stopped, from its last finished band (see dedup/state/journal.ts). */
  resume?: boolean;
  /** Redo the whole index even when an earlier run's state allows an incremental one. */
  full?: boolean;
}

/** What the run writes besides the cluster fields, and whether it writes those at all. */
export interface DedupOutput {
  /** Find and report the clusters, write nothing to the index. */
  dryRun?: boolean;
  /** Write every verified pair as a JSON line here. */
  pairsFile?: string;
  /** Keep each document's best matches (at most 10) in the summary's `matches`. */
  collectMatches?: boolean;
  /** Where the documents left out or not written are listed (default near-dup-errors-INDEX.jsonl). */
  errorsFile?: string;
}

/** A progress report: the stage (DedupStage) and how far it is, `done` of `total` when the total is known. */
export type DedupProgress = (p: { stage: DedupStage; done: number; total?: number; elapsedSeconds: number }) => void;

/**
 * The options of dedupIndex, grouped: what is compared, limits, state files, output. Every member but
 * `index` may be left out (DEDUP_DEFAULTS).
 */
export interface DedupOptions {
  /** The annotated index, alias, pattern or data stream. */
  index: string;
  compare?: DedupCompare;
  limits?: DedupLimits;
  state?: DedupStateFiles;
  output?: DedupOutput;
  /**
   * The find split between processes that share only the engine (see dedupShare): this run is the final
   * step, clustering from the pairs of this many shares in `pairsIndex` (each checked first) and writing back.
   */
  fromShares?: number;
  /** Where the shares of a split run write their pairs and progress (dedupShare), and the final step reads them. */
  pairsIndex?: string;
  /** The lock a run that writes holds while it runs: where it is kept, and its lease (dedup/state/run-lock.ts). */
  lock?: LockSettings;
  onProgress?: DedupProgress;
}

/** One share of a split dedup (dedupShare): which share, and where its pairs go. */
export type DedupShareOptions = Omit<DedupOptions, 'fromShares' | 'pairsIndex'> & {
  /** "K/N": this process verifies the buckets whose band-key hash is in the K-th of N ranges. */
  share: string;
  pairsIndex: string;
};

/** The options with every default filled in: what the run works from (resolveDedupOptions). */
export interface DedupSettings {
  index: string;
  compare: Required<Pick<DedupCompare, 'prefix' | 'minSimilarity' | 'canonical' | 'clusters'>> & Pick<DedupCompare, 'params' | 'dateField' | 'containment'>;
  limits: Required<Pick<DedupLimits, 'maxCachedSignatures' | 'maxCachedMembers' | 'bucketChunk' | 'pageSize'>> & Pick<DedupLimits, 'spillDir' | 'maxFamilyLookups' | 'bulk'>;
  /** `byCluster`: the state file is the default one, named by the cluster's uuid and the index once connected. */
  state: { stateFile: string; resume: boolean; full: boolean; byCluster?: boolean };
  output: { dryRun: boolean; pairsFile?: string; collectMatches: boolean; errorsFile?: string };
  fromShares?: number;
  pairsIndex?: string;
  lock: LockSettings;
  onProgress?: DedupProgress;
}

/** Every member of each group (`satisfies` fails the build when a member is added to its interface and not here). */
const MEMBERS = {
  compare: { prefix: 1, params: 1, minSimilarity: 1, canonical: 1, clusters: 1, dateField: 1, containment: 1 } satisfies Record<keyof DedupCompare, 1>,
  limits: { maxCachedSignatures: 1, maxCachedMembers: 1, spillDir: 1, bucketChunk: 1, pageSize: 1, maxFamilyLookups: 1, bulk: 1 } satisfies Record<keyof DedupLimits, 1>,
  state: { stateFile: 1, resume: 1, full: 1 } satisfies Record<keyof DedupStateFiles, 1>,
  output: { dryRun: 1, pairsFile: 1, collectMatches: 1, errorsFile: 1 } satisfies Record<keyof DedupOutput, 1>,
};

/** The top-level options of dedupIndex, and of dedupShare (which takes `share` where the final step takes `fromShares`). */
const TOP_LEVEL = { index: 1, compare: 1, limits: 1, state: 1, output: 1, fromShares: 1, pairsIndex: 1, lock: 1, onProgress: 1 } satisfies Record<keyof DedupOptions, 1>;
const SHARE_TOP_LEVEL = { ...TOP_LEVEL, share: 1 } satisfies Record<keyof DedupShareOptions | 'fromShares', 1>;

/** The options with every default filled in: resolved once, at the start of a run; a key dedup would not read is refused. */
export function resolveDedupOptions(options: DedupOptions): DedupSettings {
  return resolve(options, TOP_LEVEL);
}

/** The options resolved, the keys checked against the top level of dedupIndex's or dedupShare's. */
function resolve(options: DedupOptions, topLevel: object): DedupSettings {
  checkOptionKeys(options, { job: 'dedup', topLevel, groups: MEMBERS });
  const [compare, limits, state, output] = [given(options.compare), given(options.limits), given(options.state), given(options.output)];
  const { prefix, minSimilarity, canonical, clusters, maxCachedSignatures, maxCachedMembers, bucketChunk, pageSize } = DEDUP_DEFAULTS;
  return {
    index: options.index,
    compare: { prefix, minSimilarity, clusters, ...compare, canonical: compare.canonical ?? (compare.dateField ? 'oldest' : canonical) },
    limits: { maxCachedSignatures, maxCachedMembers, bucketChunk, pageSize, ...limits },
    state: { stateFile: state.stateFile ?? defaultStatePath(options.index), resume: state.resume ?? false, full: state.full ?? false, byCluster: state.stateFile === undefined },
    output: { ...output, dryRun: output.dryRun ?? false, collectMatches: output.collectMatches ?? false },
    fromShares: options.fromShares,
    pairsIndex: options.pairsIndex,
    lock: options.lock ?? {},
    onProgress: options.onProgress,
  };
}

/** A verified pair as dedup reports it (collectMatches, --pairs): the two ids, the similarity estimated, the SimHash distance. */
export type DedupPair = VerifiedPair;

/** What a dedup run found and wrote: the summary the command prints as JSON, and dedupIndex returns. */
export interface DedupSummary {
  index: string;
  params: string;
  /** full: every bucket of the index; incremental: only what documents annotated since the last run touch. */
  mode: 'full' | 'incremental';
  /** Documents annotated since the last run, or written since its view of the index ended (incremental mode). */
  newDocuments?: number;
  documents: number;
  /**
   * Documents whose stored signature is damaged or of another shape than the params say (a MinHash of
   * the wrong length, band keys missing, a SimHash that is not 16 hex digits): left out of every pair,
   * each named in the errors file; `annotate --force` on them signs them again.
   */
  damaged: number;
  /** What the run decided that the user should know (a state file it could not trust, and why). */
  notes: string[];
  /** What a reviewer should know before reading the clusters (a family chaining a large share of the index, a loose large cluster), each with the command that raises the bar; also among the notes. */
  warnings: string[];
  buckets: number;
  candidatePairs: number;
  verifiedPairs: number;
  /** How the families were cut into clusters. */
  clusterMethod: ClusterMethod;
  /** Connected components of the verified pairs (what --clusters components writes as clusters). */
  families: number;
  largestFamily: number;
  clusters: number;
  duplicates: number;
  /**
   * Documents with a near-duplicate that are in no cluster (each of their near-duplicates went to a
   * canonical they are not near enough to): written as canonicals of their own, cluster_size 1.
   */
  alone: number;
  largestCluster: number;
  /**
   * Each duplicate's estimated Jaccard to its canonical: the least and the median (null without
   * duplicates), and how many are below --min-similarity (none but with --clusters components).
   */
  canonicalSimilarity: { min: number | null; median: number | null; belowMinSimilarity: number };
  cleared: number;
  written: number;
  failed: number;
  excludedParams: number;
  seconds: number;
  dryRun: boolean;
  /**
   * Every cluster field was written and the engine holds them: documents with a cluster_id are exactly
   * the members of the clusters (full mode), and nothing failed. Always false for a dry run.
   */
  complete: boolean;
  /** Partitions taken over from the killed run that --resume continued. */
  resumedPartitions: number;
  retries: RetrySnapshot;
  /** Peak resident memory of this process, MB. */
  peakMemoryMb: number;
  /**
   * Where the time went: wall seconds of each phase (finding and verifying pairs, building clusters,
   * writing them back), this process's CPU seconds, and the seconds spent waiting for the engine's answers
   * (summed over requests in flight together).
   */
  timing: { findSeconds: number; clusterSeconds: number; writeSeconds: number; cpuSeconds: number; engineWaitSeconds: number };
  /** With --containment: documents found inside a larger one, lookups made, and what was written. */
  containment?: { minContainment: number; contained: number; lookups: number; tooShort: number; written: number; cleared: number; failed: number; complete: boolean; seconds: number };
  /** Largest clusters first, at most 20, for printing. */
  top: Array<{ cluster_id: string; size: number; canonical: string; members: string[]; family: string; minCanonicalSimilarity: number }>;
  /** Per document, its best matches (for --format text), only when asked for. */
  matches?: Map<string, Array<{ id: string; jaccard: number }>>;
  errorsFile?: string;
  /** The final step of a split run: the shares read, and their pairs. */
  fromShares?: { shares: number; pairsIndex: string; run: string; pages: number; pairs: number; duplicates: number };
}

/** A progress report of one stage, timed from the start of the run. */
type Progress = (stage: DedupStage, done: number, total?: number) => void;

/** What a run settles before it looks for pairs: the documents compared, how they are ordered, and the last run's state. */
interface DedupRun {
  /** The options, resolved, with the state file settled (named by the cluster's uuid): every step after prepareRun reads its settings here, and only here. */
  job: DedupSettings;
  params: string;
  excludedParams: number;
  /** The documents compared: this params value, at least one token. */
  scope: Record<string, unknown>;
  /** Documents in scope. */
  documents: number;
  /** Documents whose params value is not a parameter set: damaged, left out. */
  damagedParams: ParamsDamage;
  sortField: string;
  /** Whether every signature fits the cache: then they are held in memory, else spilled to disk. */
  everythingCached: boolean;
  runStartedAt: string;
  /** The last complete run, when its state could be read and trusted. */
  saved?: DedupState;
  uuids: string[];
  /** This run's settings, as the state file keeps them. */
  current: Omit<DedupState, 'version' | 'lastRunAt'>;
  notes: string[];
  /** The stored fields a signature and its facts are read from. */
  fields: string[];
  /** What this run spilled to disk (the ids of a full pass too large for memory): removed when it ends. */
  spilled: Array<{ close(): void }>;
}

/** One attempt at finding the pairs (an incremental one may give way to a full one): its numbering, store and pairs file. */
interface Attempt {
  numbers: DocNumbers;
  store: SignatureStore;
  pairsOut?: WriteStream;
  /** A verifier in that numbering, that reports to the pairs file: made by the pass, with what it journals to. */
  verifierFor: VerifierFor;
}

/** The verified pairs, and how they were found. */
interface PairsFound {
  attempt: Attempt;
  /** The verify stage, every pair recorded: its families and best matches. */
  verifier: PairVerifier;
  incremental: boolean;
  /** A full pass's journal (finished once the run is complete), and the bands it took over from a killed run. */
  journal?: DedupJournal;
  resumedPartitions?: number;
  /** The shares the pairs came from (the final step of a split run). */
  shared?: SharedPairs & { run: string };
  /** The documents whose cluster fields an incremental run decides. */
  decided?: Set<string>;
  newDocuments?: number;
}

/** What the write-back left: the cluster fields and the containment written, the errors file, when each phase ended. */
interface RunResults {
  written: WriteBackResult;
  containment?: NonNullable<DedupSummary['containment']>;
  errors: ErrorsFile;
  found: number;
  clustered: number;
}

/** Where a job's time, CPU and retries are counted from, and its progress reports, timed from there. */
interface JobClock {
  started: number;
  usage: UsageMeter;
  retriesAtStart: RetrySnapshot;
  progress: Progress;
}

function startClock(client: EngineClient, onProgress: DedupProgress | undefined): JobClock {
  const started = performance.now();
  const progress: Progress = (stage, done, total) => onProgress?.({ stage, done, total, elapsedSeconds: (performance.now() - started) / 1000 });
  return { started, usage: new UsageMeter(client), retriesAtStart: client.retries.snapshot(), progress };
}

/**
 * Every near-duplicate cluster of an annotated index, found and verified, written back as cluster fields
 * (what `near-dup dedup` does). A re-run after a complete one revisits only what was annotated since,
 * unless `state.full`. Options: see DedupOptions (grouped) and DEDUP_DEFAULTS.
 *
 * @param client near-dup's client, from `connect()`.
 * @returns what was found and written; `complete` is true when the engine holds every field written.
 * @throws {UsageError} an option out of range or two that conflict (before anything is read), a canonical
 *   or date field the index does not map; the message names the option key.
 * @throws {UserError} an index that does not exist, is blocked for writes or keeps only part of `_source`,
 *   several parameter sets without `compare.params`, a state or pairs file that cannot be written, an
 *   engine that refuses or cannot be reached (one line that says what to do).
 */
export async function dedupIndex(client: EngineClient, options: DedupOptions): Promise<DedupSummary> {
  const clock = startClock(client, options.onProgress);
  const { progress } = clock;
  const job = resolveDedupOptions(options);
  checkSettings(job);
  let run: DedupRun | undefined;
  let lock: RunLock | undefined;
  let view: RunView | undefined;
  try {
    // From here the settings are the run's (run.job: its state file settled).
    run = await prepareRun(client, job);
    lock = await lockRun(client, run);
    // Where this run's view begins, before it reads anything (only a run that records its state needs it;
    // the final step of a split run clusters what its shares read, earlier).
    view = run.job.output.dryRun || run.job.fromShares !== undefined ? undefined : await RunView.open(client, run.job.index);
    const { pairs, found, cut } = await findClusters(client, run, progress);
    const clustered = performance.now();
    const errors = ErrorsFile.forIndex(run.job.index, run.job.output.errorsFile);
    // Every write checks the lock first: a run paused past its lease writes nothing once another took it over.
    const writer = lock ? writingUnder(lock, client) : client;
    lock?.check();
    const written = await writeClusters(writer, run, pairs, cut, errors, progress);
    const containment = run.job.compare.containment === undefined ? undefined : await findContainment(writer, run, errors, progress);
    await errors.close();
    lock?.check();
    if (written.complete) await recordCompleteRun(run, pairs, view);
    return summarize(client, run, pairs, cut, { written, containment, errors, found, clustered }, clock);
  } catch (err) {
    throw client.explain(err, job.index);
  } finally {
    await view?.close();
    await lock?.release();
    for (const spill of run?.spilled.splice(0) ?? []) spill.close();
  }
}

/**
 * The lock of the indices a run writes, one key a concrete index (an alias and one of its indices exclude each
 * other). A dry run writes nothing and takes none: it says in its notes when another run is writing.
 */
async function lockRun(client: EngineClient, run: DedupRun): Promise<RunLock | undefined> {
  const { job } = run;
  const request = { keys: run.uuids.map((uuid) => `dedup-${uuid}`), what: `dedup of "${job.index}"`, settings: holderSettings(run) };
  if (job.output.dryRun) {
    const holder = await lockHolder(client, request.keys, job.lock);
    if (holder) run.notes.push(holder);
    return undefined;
  }
  const lock = await RunLock.take(client, request, job.lock);
  run.notes.push(...lock.notes);
  return lock;
}

/** A run's settings as a refused run names them. */
function holderSettings(run: DedupRun): string {
  const { job } = run;
  const { minSimilarity, clusters, canonical, dateField } = job.compare;
  const rule = typeof canonical === 'object' ? `${canonical.order === 'desc' ? '-' : ''}${canonical.field}` : canonical;
  const mode = job.fromShares !== undefined ? `final step of ${plural(job.fromShares, 'share')} from ${job.pairsIndex}` : job.state.full ? 'full' : job.state.resume ? 'resumed' : 'incremental where it can';
  return `${mode}, min similarity ${minSimilarity}, clusters ${clusters}, canonical ${rule}${dateField ? ` by ${dateField}` : ''}, params ${run.params}`;
}

/** Checks the index, chooses the params, counts the documents in scope and reads the last run's state. */
async function prepareRun(client: EngineClient, given: DedupSettings): Promise<DedupRun> {
  const uuidNotes: string[] = [];
  const { read: stateRead, write: stateFile } = given.state.byCluster ? stateFileOf(given.index, await clusterUuid(client, (line) => uuidNotes.push(line))) : { read: given.state.stateFile, write: given.state.stateFile };
  const job = { ...given, state: { ...given.state, stateFile } };
  const { prefix, minSimilarity, canonical, clusters } = job.compare;
  const f = (name: StoredField) => storedPath(prefix, name);
  await checkTarget(client, job);
  const { params, excludedParams, damagedParams } = await chooseParams(client, job.index, prefix, job.compare.params);
  const scope = { bool: { filter: [{ term: { [f('params')]: params } }, { range: { [f('token_count')]: { gt: 0 } } }] } };
  const documents = await client.count(job.index, scope);
  const sortField = canonical === 'longest' ? f('token_count') : typeof canonical === 'object' ? canonical.field : (job.compare.dateField ?? f('annotated_at'));
  // When the whole index fits the cache, its signatures are held in memory; else spilled to disk.
  const everythingCached = documents <= job.limits.maxCachedSignatures;
  const runStartedAt = new Date().toISOString();
  const incremental = !(job.state.full || job.state.resume || job.fromShares !== undefined);
  const read = incremental ? await readDedupState(stateRead) : {};
  const uuids = await client.indexUuids(job.index);
  const order = JSON.stringify({ canonical, sortField });
  const current = { index: job.index, params, prefix, minSimilarity, uuids, clusters, order };
  // Why a run that could have been incremental is full, in one line (a state it could not trust says its own).
  const why = read.note ?? (incremental ? whyFull(read.state, current, stateRead, job.state.byCluster ? stateElsewhere(job.index, stateRead) : undefined) : undefined);
  const notes = [...uuidNotes, ...(why ? [why] : [])];
  const fields = storedFields(prefix, sortField);
  return { job, params, excludedParams, scope, documents, damagedParams, sortField, everythingCached, runStartedAt, saved: read.state, uuids, current, notes, fields, spilled: [] };
}

/** A state file of the index on another cluster (in the state file's folder), when there is one. */
function stateElsewhere(index: string, own: string): string | undefined {
  const other = latestStatePath(index, path.dirname(path.dirname(own)));
  return other !== own && path.resolve(other) !== path.resolve(own) && existsSync(other) ? other : undefined;
}

/** Refuses, before any work, an index the write-back would harm and a sort field that is a typo. */
async function checkTarget(client: EngineClient, job: DedupSettings): Promise<void> {
  // The write-back is a partial update: an index whose _source leaves fields out would lose their index.
  if (!job.output.dryRun) {
    requireWholeSource(job.index, await client.getMapping(job.index), []);
    await requireWritable(client, job.index);
  }
  await checkSortField(client, job.index, job.compare.canonical, job.compare.dateField, job.compare.prefix);
}

/**
 * The pairs found, then cut into clusters with the signatures the scan read: those go (a spill is removed) once
 * the clusters are cut, before the write-back.
 */
async function findClusters(client: EngineClient, run: DedupRun, progress: Progress): Promise<{ pairs: PairsFound; found: number; cut: Cut }> {
  const { table, ...pairs } = await findPairs(client, run, progress);
  const found = performance.now();
  try {
    return { pairs, found, cut: await cutClusters(run, pairs, table, progress) };
  } finally {
    table?.close?.();
  }
}

/**
 * Finds and verifies the pairs: only around what was annotated since the last complete run when its state
 * allows, else (or when the families touched are too large to read whole) over the whole index, whose scan
 * also gives the table of its signatures.
 */
async function findPairs(client: EngineClient, run: DedupRun, progress: Progress): Promise<PairsFound & { table?: ReadTable }> {
  if (run.job.fromShares !== undefined) return findSharedPairs(client, run, run.job.fromShares);
  if (continues(run.saved, run.current)) {
    const attempt = newAttempt(client, run, 'incremental');
    const verifier = attempt.verifierFor();
    const result = await incrementalPass(client, attempt.store, verifier, incrementalSettings(run, run.saved, progress));
    if (!result.tooLarge) return { attempt, verifier, incremental: true, decided: result.decided, newDocuments: result.newDocuments };
    run.notes.push(`the families the ${plural(result.newDocuments, 'new document')} touch needed ${plural(result.tooLarge.lookups, 'lookup')} or more; this run is a full one instead`);
    if (attempt.pairsOut) await closeStream(attempt.pairsOut);
  }
  const attempt = newAttempt(client, run, 'full');
  return { attempt, incremental: false, ...(await fullPass(client, attempt.store, attempt.verifierFor, fullPassSettings(run, attempt.numbers, progress))) };
}

/**
 * The final step of a split run: the pairs of every share, each checked, recorded as if verified here
 * (dedup/split/final-step.ts); refused, naming what to run, while a share is not complete.
 */
async function findSharedPairs(client: EngineClient, run: DedupRun, count: number): Promise<PairsFound> {
  const { job } = run;
  const pairsIndex = await PairsIndex.existing(client, job.pairsIndex as string);
  const identity = await shareIdentity(client, run, count);
  const name = runName(identity);
  const attempt = newAttempt(client, run, 'shared');
  const verifier = attempt.verifierFor();
  try {
    // (Past --max-cached-signatures the ids are on disk, and the pairs go there in parts of --max-cached-members.)
    const { folder } = attempt.numbers;
    const spill = folder ? { folder, maxPairs: job.limits.maxCachedMembers } : undefined;
    const errors = ErrorsFile.forIndex(job.index, job.output.errorsFile);
    const shared = await sharedPairs(pairsIndex, { identity, run: name, count }, attempt.store, verifier, errors, { dryRun: job.output.dryRun, spill });
    // Every share is done writing: the pairs index is searchable again (Dashboards, Kibana, a curious user).
    if (!job.output.dryRun) await pairsIndex.setRefresh(null);
    return { attempt, verifier, incremental: false, shared: { ...shared, run: name } };
  } catch (err) {
    if (attempt.pairsOut) await closeStream(attempt.pairsOut);
    throw err;
  }
}

/**
 * What the shares of a split run must agree on (dedup/split/plan.ts), the latest annotated_at in scope among it: a
 * document signed again between two shares makes them shares of different runs.
 */
async function shareIdentity(client: EngineClient, run: DedupRun, shares: number): Promise<ShareRunIdentity> {
  const { uuids, params, documents, scope } = run;
  const { index, compare, limits } = run.job;
  const response = await client.search(index, { size: 0, query: scope, aggs: { last: { max: { field: storedPath(compare.prefix, 'annotated_at') } } } });
  const last = response.aggregations?.last?.value;
  const lastAnnotatedAt = typeof last === 'number' ? new Date(last).toISOString() : null;
  return { index, uuids: uuids.join(','), params, prefix: compare.prefix, minSimilarity: compare.minSimilarity, bucketChunk: limits.bucketChunk, shares, documents, lastAnnotatedAt };
}

/** What one share did (dedupShare). */
export interface ShareSummary {
  index: string;
  /** "K/N". */
  share: string;
  pairsIndex: string;
  /** The run's name: every document of this run in the pairs index starts with it. */
  run: string;
  params: string;
  documents: number;
  /** Documents left out for a damaged stored signature (named in the errors file). */
  damaged: number;
  bands: number;
  /** Bands an earlier attempt of this share had done, taken over (their pairs checked and replayed). */
  resumedBands: number;
  /** Why an earlier attempt's work was not taken over (its marker or a page failed a check), if it was not. */
  restarted?: string;
  /** The share was complete before this run: checked with the engine, nothing done. */
  alreadyComplete: boolean;
  /** Of this share's buckets (and of the bands taken over). */
  buckets: number;
  candidatePairs: number;
  verifiedPairs: number;
  /** Pairs and page documents the pairs index holds for this share. */
  pairs: number;
  pages: number;
  /** The marker says complete and the engine holds every page it lists (checked, not assumed). */
  complete: true;
  /** The final step, once every share is complete. */
  next: string;
  seconds: number;
  peakMemoryMb: number;
  retries: RetrySnapshot;
  timing: { cpuSeconds: number; engineWaitSeconds: number };
  errorsFile?: string;
  /** What the share decided that the user should know (a killed attempt's lock taken over). */
  notes: string[];
}

/**
 * One share of a find split between processes that share only the engine (dedup/split/share-pass.ts): every
 * signature read through this process's own scan, the buckets whose band-key hash is in the share's range
 * verified, their pairs written to `pairsIndex` with a marker of the share's progress. Run again, a share
 * goes on from its last band written. Nothing of the index is written; the final step (dedupIndex with
 * `fromShares`) clusters from every share's pairs and writes back.
 */
export async function dedupShare(client: EngineClient, options: DedupShareOptions): Promise<ShareSummary> {
  const { started, usage, retriesAtStart, progress } = startClock(client, options.onProgress);
  const job = resolveShareOptions(options);
  const share = parseShare(options.share);
  let run: DedupRun | undefined;
  let lock: RunLock | undefined;
  try {
    // Dry, as far as the index goes: a share writes nothing there (the index may even be blocked for writes meanwhile),
    // nor a pairs file or matches (refused for a share). From here the settings are the run's (run.job).
    run = await prepareRun(client, { ...job, state: { ...job.state, full: true }, output: { ...job.output, dryRun: true, pairsFile: undefined, collectMatches: false } });
    const pairsIndex = await PairsIndex.open(client, options.pairsIndex);
    const identity = await shareIdentity(client, run, share.count);
    const name = runName(identity);
    // A share writes only its own marker and pages: it locks them, not the index (the shares of one run go on
    // side by side, each in its own process; the same share started twice would overwrite its own pages).
    lock = await RunLock.take(
      client,
      { keys: [`share-${pairsIndex.name}-${markerId(name, share)}`], what: `dedup share ${shareName(share)} of "${run.job.index}" into ${pairsIndex.name}`, settings: `run ${name}, min similarity ${run.job.compare.minSimilarity}, params ${run.params}` },
      run.job.lock,
    );
    const attempt = newAttempt(client, run, 'full');
    const damaged = () => attempt.store.damagedCount + (run as DedupRun).damagedParams.count;
    const outcome = await new SharePass(client, attempt.store, attempt.verifierFor, {
      ...scanSettings(run, attempt.numbers),
      share,
      identity,
      run: name,
      pairs: pairsIndex,
      damaged,
      onProgress: progress,
    }).run();
    lock.check();
    const errors = ErrorsFile.forIndex(run.job.index, run.job.output.errorsFile);
    nameDamaged(errors, run, attempt.store);
    await errors.close();
    const { progress: done } = outcome;
    return {
      index: run.job.index,
      share: shareName(share),
      pairsIndex: pairsIndex.name,
      run: name,
      params: run.params,
      documents: run.documents,
      damaged: outcome.alreadyComplete ? done.damaged : damaged(),
      bands: done.bandCount,
      resumedBands: outcome.resumedBands,
      restarted: outcome.restarted,
      alreadyComplete: outcome.alreadyComplete,
      buckets: done.buckets,
      candidatePairs: done.candidatePairs,
      verifiedPairs: done.verifiedPairs,
      pairs: done.pairs,
      pages: done.pages.reduce((sum, n) => sum + n, 0),
      complete: true,
      next: `near-dup dedup --index ${run.job.index} --from-shares ${share.count} --pairs-index ${pairsIndex.name}`,
      seconds: (performance.now() - started) / 1000,
      peakMemoryMb: peakMemoryMb(),
      retries: client.retries.since(retriesAtStart),
      timing: usage.read(),
      errorsFile: errors.count > 0 ? errors.file : undefined,
      notes: lock.notes,
    };
  } catch (err) {
    throw client.explain(err, job.index);
  } finally {
    await lock?.release();
    for (const spill of run?.spilled.splice(0) ?? []) spill.close();
  }
}

/** What the scan of a full pass or a share reads, and where it spills. */
function scanSettings(run: DedupRun, numbers: DocIds) {
  const { job, scope, fields: storedFields, documents, everythingCached } = run;
  const { prefix } = job.compare;
  const { pageSize, spillDir } = job.limits;
  return { index: job.index, prefix, scope, storedFields, pageSize, documents, numbers, everythingCached, spillDir };
}

/**
 * A new attempt: for a full pass (or a share), every document in scope numbered; for an incremental
 * run, which reads the clusters its documents were in, or the final step of a split run, only those met.
 */
function newAttempt(client: EngineClient, run: DedupRun, kind: 'full' | 'incremental' | 'shared'): Attempt {
  const { job } = run;
  // Every document met is numbered once, for the store's facts and the verifier's clusters alike; a full
  // pass or a split run's final step too large for memory keeps the ids on disk (an incremental run meets
  // few documents).
  const numbers = kind === 'incremental' || run.everythingCached ? new DocNumbers() : spilledIds(run);
  // A full pass numbers every document in scope: its columns are made that size at once.
  const expected = kind === 'full' ? run.documents : 0;
  const store = new SignatureStore(signatureReader(client, job.index, run.scope, run.fields), job.compare.prefix, run.sortField, run.params, run.everythingCached ? Number.POSITIVE_INFINITY : job.limits.maxCachedSignatures, {
    documents: numbers,
    keepClusterIds: kind === 'incremental',
    // Only the longest rule sorts by the token count (its sort field is the token count too).
    keepTokens: job.compare.canonical === 'longest',
    expected,
  });
  const pairsOut = job.output.pairsFile ? streamInto(job.output.pairsFile, openForWriting(job.output.pairsFile, { what: '--pairs' })) : undefined;
  const verifierFor: VerifierFor = (onVerified) =>
    new PairVerifier(job.compare.minSimilarity, {
      documents: numbers,
      width: paramsShape(run.params)?.numPerm,
      core: paramsShape(run.params)?.core,
      // (Past --max-cached-members, the sets go to the disk beside the ids when they are there.)
      spill: numbers.folder ? { folder: numbers.folder, maxRows: job.limits.maxCachedMembers } : undefined,
      collectMatches: job.output.collectMatches,
      onVerified,
      onRecorded: (pair) => pairsOut?.write(JSON.stringify(pair) + '\n'),
    });
  return { numbers, store, pairsOut, verifierFor };
}

/** The documents in a verified pair whose facts were never read (met only through pairs a resumed run replayed). */
function* withoutFacts(verifier: PairVerifier, store: SignatureStore): Generator<string> {
  for (const n of verifier.involvedNumbers()) if (!store.facts.at(n)) yield verifier.clusters.documents.idOf(n);
}

/** A numbering with its ids on disk (in --spill-dir, else the system's temporary folder), removed when the run ends. */
function spilledIds(run: DedupRun): DocNumbers {
  const ids = new DocNumbers(run.job.limits.spillDir ?? os.tmpdir());
  run.spilled.push(ids);
  return ids;
}

/** What the incremental pass reads: the documents annotated or written since the last run, and their neighbourhood. */
function incrementalSettings(run: DedupRun, saved: DedupState, progress: Progress): IncrementalSettings {
  const { job } = run;
  return {
    index: job.index,
    prefix: job.compare.prefix,
    scope: run.scope,
    since: saved.lastRunAt,
    marks: saved.marks,
    bucketChunk: job.limits.bucketChunk,
    pageSize: job.limits.pageSize,
    // A family is cut as a whole, so it is read whole; past a tenth of the index a full run is cheaper.
    wholeFamilies: job.compare.clusters === 'centres' ? { maxLookups: job.limits.maxFamilyLookups ?? Math.min(MAX_INCREMENTAL_LOOKUPS, Math.max(100, Math.floor(run.documents / 10))) } : undefined,
    onNewDocuments: (count) => progress('new documents', count),
    onVerified: (pairs) => progress('verify', pairs),
  };
}

/** What the full pass reads, and where it journals (not in a dry run: nothing to resume). */
function fullPassSettings(run: DedupRun, numbers: DocIds, progress: Progress): FullPassSettings {
  const { job } = run;
  return {
    ...scanSettings(run, numbers),
    uuids: run.uuids,
    params: run.params,
    minSimilarity: job.compare.minSimilarity,
    bucketChunk: job.limits.bucketChunk,
    journalFile: job.output.dryRun ? undefined : `${job.state.stateFile.replace(/\.json$/, '')}.run.json`,
    resume: job.state.resume,
    onProgress: progress,
  };
}

/**
 * Cuts the families of verified pairs into clusters, then closes the pairs file. The signatures come from the
 * scan's table (through the store when there was none: a resumed run that had every band, an incremental run,
 * a split run's final step).
 */
async function cutClusters(run: DedupRun, { attempt, verifier }: PairsFound, table: ReadTable | undefined, progress: Progress): Promise<Cut> {
  const { numbers, store } = attempt;
  // With the ids on disk, the sets and best matches go there too before the cut (nothing without a spill
  // to write to): memory then holds the clusters being cut, not a row for every document with a near-duplicate.
  verifier.clusters.writeRows();
  // Pairs replayed by --resume bring documents whose facts were never read in this process.
  await store.loadFacts(withoutFacts(verifier, store));
  const { clusters: method, canonical: rule, minSimilarity } = run.job.compare;
  const cut = await cutFamilies(verifier.clusters.families(), {
    method,
    rule,
    minSimilarity,
    comparing: verifier.comparing,
    facts: store.facts,
    signatures: table ? (ids, numbers) => table.find(ids, numbers) : (ids) => store.load(ids),
    // A spill larger than the page cache has the members' records gathered in one pass in order (signature-table.ts).
    gatherMembers: table?.gatherMembers && rangesByDefault(table) > 0 ? (families) => table.gatherMembers?.(families) : undefined,
    documents: numbers,
    spill: numbers.folder,
    onFamilies: (done) => progress('cut', done),
  });
  if (attempt.pairsOut) await closeStream(attempt.pairsOut);
  return cut;
}

/** Documents by number, each with its id (read a few thousand at a time, in the order given). */
function* byId(numbers: Int32Array, documents: DocIds): Generator<[string, number]> {
  for (let first = 0; first < numbers.length; first += IDS_READ) {
    const chunk = numbers.subarray(first, first + IDS_READ);
    const ids = documents.idsOf(chunk);
    for (let k = 0; k < chunk.length; k++) yield [ids[k], chunk[k]];
  }
}

/** Names the damaged signatures in the errors file, then writes the clusters back (nothing in a dry run). */
async function writeClusters(client: EngineClient, run: DedupRun, pairs: PairsFound, cut: Cut, errors: ErrorsFile, progress: Progress): Promise<WriteBackResult> {
  const { job } = run;
  const { attempt: { store }, verifier } = pairs;
  nameDamaged(errors, run, store);
  // The fields dedup writes may be newer than the index's mapping (canonical_similarity): added first, or a
  // strict mapping would refuse every update.
  if (!job.output.dryRun && (cut.clusters.length > 0 || cut.alone.length > 0)) await initIndex(client, job.index, job.compare.prefix);
  const membership = { clustered: cut.clustered, best: verifier.best, alone: byId(cut.alone, verifier.clusters.documents) };
  return job.output.dryRun
    ? { written: 0, failed: 0, cleared: 0, complete: false }
    : await writeBack(client, cut.clusters, membership, store.facts, errors, {
        index: job.index,
        prefix: job.compare.prefix,
        pageSize: job.limits.pageSize,
        bulk: job.limits.bulk,
        decided: pairs.decided,
        updates: cut.clusters.memberCount + cut.alone.length,
        onProgress: (done, total) => progress('write-back', done, total),
      });
}

/** Names the documents whose stored signature was left out, each with the way to sign it again. */
function nameDamaged(errors: ErrorsFile, run: DedupRun, store: SignatureStore): void {
  const fix = `near-dup annotate --force --query '{"ids":{"values":[...]}}' signs it again`;
  for (const [id, reason] of store.damaged) errors.add({ id, reason: `stored signature left out of dedup: ${reason}; ${fix}` });
  for (const d of run.damagedParams.documents) errors.add({ id: d.id, index: d.index, reason: `stored signature left out of dedup: ${d.reason}; ${fix}` });
}

/**
 * A complete run: nothing is left to resume, and the next run may be an incremental one from where this run's
 * view ended (its marks, and its start or the annotated_at of what was signed before it and written meanwhile).
 * When that cannot be told (the engine fails the reads it takes), the state of the run before is kept: the
 * next run then reads more than it needs, and misses nothing.
 */
async function recordCompleteRun(run: DedupRun, pairs: PairsFound, view: RunView | undefined): Promise<void> {
  await pairs.journal?.finish();
  let settled: { since: string; marks?: DedupState['marks']; note?: string };
  try {
    settled = view ? await view.settle(run.scope, run.job.compare.prefix, run.runStartedAt) : { since: splitRunStart(run, pairs) };
  } catch (err) {
    run.notes.push(`this run's state was not recorded (${(err as Error).message}): the next run starts from the run before it`);
    return;
  }
  if (settled.note) run.notes.push(settled.note);
  await writeDedupState(run.job.state.stateFile, { version: 1, ...run.current, lastRunAt: settled.since, ...(settled.marks ? { marks: settled.marks } : {}) });
}

/**
 * The final step of a split run clusters what its shares read, from the first share's start: documents
 * annotated after that are new to the next run (the shares note no marks of their own).
 */
function splitRunStart(run: DedupRun, pairs: PairsFound): string {
  const starts = (pairs.shared?.shares ?? []).map((s) => Date.parse(s.startedAt)).filter((t) => !Number.isNaN(t));
  return starts.length > 0 ? new Date(Math.min(...starts, Date.parse(run.runStartedAt))).toISOString() : run.runStartedAt;
}

/** What the run found, wrote and cost (the summary printed, and returned to a library caller). */
function summarize(client: EngineClient, run: DedupRun, pairs: PairsFound, cut: Cut, results: RunResults, clock: JobClock): DedupSummary {
  const { job } = run;
  const { attempt: { store }, verifier } = pairs;
  const { clusters } = cut;
  const { written, containment, errors, found, clustered } = results;
  const top = topClusters(clusters);
  const warnings = clusterWarnings({ index: job.index, documents: run.documents, largestFamily: cut.largestFamily, minSimilarity: job.compare.minSimilarity, params: run.params, largest: top[0] });
  return {
    index: job.index,
    params: run.params,
    mode: pairs.incremental ? 'incremental' : 'full',
    newDocuments: pairs.newDocuments,
    documents: run.documents,
    damaged: store.damagedCount + run.damagedParams.count,
    notes: [...run.notes, ...warnings],
    warnings,
    buckets: verifier.buckets,
    candidatePairs: verifier.candidatePairs,
    verifiedPairs: verifier.verifiedPairs,
    clusterMethod: job.compare.clusters,
    families: cut.families,
    largestFamily: cut.largestFamily,
    clusters: clusters.length,
    duplicates: clusters.memberCount - clusters.length,
    alone: cut.alone.length,
    canonicalSimilarity: clusters.spread(job.compare.minSimilarity),
    largestCluster: clusters.largestSize,
    ...written,
    complete: written.complete && (containment?.complete ?? true),
    failed: written.failed + (containment?.failed ?? 0),
    containment,
    excludedParams: run.excludedParams,
    seconds: (performance.now() - clock.started) / 1000,
    dryRun: job.output.dryRun,
    resumedPartitions: pairs.resumedPartitions ?? 0,
    retries: client.retries.since(clock.retriesAtStart),
    peakMemoryMb: peakMemoryMb(),
    timing: {
      findSeconds: (found - clock.started) / 1000,
      clusterSeconds: (clustered - found) / 1000,
      writeSeconds: (performance.now() - clustered) / 1000,
      ...clock.usage.read(),
    },
    top,
    matches: verifier.matches,
    errorsFile: errors.count > 0 ? errors.file : undefined,
    fromShares: pairs.shared && {
      shares: pairs.shared.shares.length,
      pairsIndex: job.pairsIndex as string,
      run: pairs.shared.run,
      pages: pairs.shared.pages,
      pairs: pairs.shared.pairs,
      duplicates: pairs.shared.duplicates,
    },
  };
}

/** The largest clusters, at most 20 (then by canonical id), each with its first 10 members, for printing. */
function topClusters(clusters: ClusterList): DedupSummary['top'] {
  return clusters.top(20).map((c) => ({
    cluster_id: c.id,
    size: c.members.length,
    canonical: c.canonical,
    members: c.members.slice(0, 10),
    family: c.family,
    minCanonicalSimilarity: minimum(c.similarity.values()),
  }));
}

/** The smallest of some numbers (a loop: a cluster may hold more members than a call takes arguments). */
function minimum(values: Iterable<number>): number {
  let min = Number.POSITIVE_INFINITY;
  for (const v of values) min = Math.min(min, v);
  return min;
}

/** The containment pass of dedup --containment, and its write-back unless this is a dry run. */
async function findContainment(client: EngineClient, run: DedupRun, errors: ErrorsFile, progress: Progress): Promise<NonNullable<DedupSummary['containment']>> {
  const began = performance.now();
  const { job, params, scope } = run;
  const minContainment = job.compare.containment!;
  if (sampleEvery(params) === 0) {
    throw new UserError(
      (o) =>
        `${o('containment')} needs signatures with a containment sample, and those of "${job.index}" have none (params "${params}"); ` +
        `run near-dup annotate --index ${job.index} --field FIELD again first`,
    );
  }
  const settings = { index: job.index, prefix: job.compare.prefix, scope, minContainment, pageSize: job.limits.pageSize, onProgress: (done: number) => progress('containment', done) };
  const found = await containmentPass(client, settings);
  const written = job.output.dryRun ? { written: 0, failed: 0, cleared: 0, complete: false } : await writeContainment(client, found, errors, { ...settings, bulk: job.limits.bulk });
  return { minContainment, contained: found.contained.size, lookups: found.lookups, tooShort: found.tooShort, ...written, seconds: (performance.now() - began) / 1000 };
}

/** The job's options, checked here once for the CLI and the library alike: a mistake is a UsageError naming the option key. */
export function checkDedupOptions(options: DedupOptions): void {
  checkSettings(resolveDedupOptions(options));
}

/** The resolved options' ranges, then the split run's options. */
function checkSettings(job: DedupSettings): void {
  const { minSimilarity, containment, clusters } = job.compare;
  if (!(minSimilarity > 0 && minSimilarity <= 1)) throw new UsageError((o) => `${o('minSimilarity')} must be above 0 and at most 1, got ${minSimilarity}`);
  if (containment !== undefined && !(containment > 0 && containment <= 1)) {
    throw new UsageError((o) => `${o('containment')} must be above 0 and at most 1 (the least share of a document inside a larger one, e.g. 0.8), got ${containment}`);
  }
  const { maxCachedSignatures, maxCachedMembers, pageSize, bucketChunk, maxFamilyLookups, bulk } = job.limits;
  requireWholeNumbers([['maxCachedSignatures', maxCachedSignatures, 1], ['maxCachedMembers', maxCachedMembers, 1], ['pageSize', pageSize, 1], ['bucketChunk', bucketChunk, 4], ['maxFamilyLookups', maxFamilyLookups, 0], ['leaseSeconds', job.lock.leaseSeconds, 3]]);
  checkBulkOptions(bulk);
  if (!CLUSTER_METHODS.includes(clusters)) {
    throw new UsageError((o) => `${o('clusters')} must be ${CLUSTER_METHODS.join(' or ')} (centres: every duplicate near its canonical; components: whole families), got "${clusters}"`);
  }
  checkSplitOptions(job);
}

/** fromShares goes with pairsIndex, and not with resume; pairsIndex alone goes nowhere. */
function checkSplitOptions(job: DedupSettings): void {
  if (job.fromShares !== undefined) {
    checkShareCount(job.fromShares);
    checkPairsIndexName(job.pairsIndex, job.index);
    if (job.state.resume) {
      throw new UsageError((o) => `${o('resume')} is not for ${o('fromShares')}: the final step reads the shares' pairs again whenever it runs, so run the same command again as it is`);
    }
  } else if (job.pairsIndex !== undefined) {
    const name = job.pairsIndex;
    throw new UsageError((o) => `${o('pairsIndex')} "${name}" goes with ${o('share')} K/N (a share writes its pairs there) or ${o('fromShares')} N (the final step reads them)`);
  }
}

/** A share's options: the job's own, the share, the pairs index, and none of what only the final step does. */
export function checkShareOptions(options: DedupShareOptions): void {
  resolveShareOptions(options);
}

/** A share's options, checked and resolved (dedupShare). */
function resolveShareOptions(options: DedupShareOptions): DedupSettings {
  if ((options as DedupOptions).fromShares !== undefined) {
    throw new UsageError((o) => `${o('share')} and ${o('fromShares')} go to different runs: each share with ${o('share')} K/N, then the final step with ${o('fromShares')} N`);
  }
  const job = resolve({ ...options, pairsIndex: undefined }, SHARE_TOP_LEVEL);
  checkSettings(job);
  parseShare(options.share);
  checkPairsIndexName(options.pairsIndex, options.index);
  const finalOnly: Array<[key: string, value: unknown]> = [
    ['dryRun', job.output.dryRun],
    ['resume', job.state.resume],
    ['containment', job.compare.containment],
    ['pairsFile', job.output.pairsFile],
    ['collectMatches', job.output.collectMatches],
  ];
  const given = finalOnly.find(([, value]) => value !== undefined && value !== false);
  if (given) throw new UsageError((o) => `${o(given[0])} is not for ${o('share')}: ${notForShare(given[0], o)}`);
  return { ...job, pairsIndex: options.pairsIndex };
}

/** Why an option of the final step is refused for a share, and where it goes instead. */
function notForShare(key: string, o: (key: string) => string): string {
  if (key === 'resume') return `a share goes on from its last band written by itself: run the same ${o('share')} again`;
  return `give it to the final step (${o('fromShares')} N), which clusters and writes back; a share writes only its pairs to ${o('pairsIndex')}`;
}

/** Reads stored signatures by id, within the scope, a request per call. */
function signatureReader(client: EngineClient, index: string, scope: Record<string, unknown>, fields: string[]): SignatureReader {
  return async (ids) => {
    const response = await client.search(index, { size: ids.length, query: { bool: { filter: [scope, { ids: { values: ids } }] } }, _source: fields });
    return response.hits.hits.map((hit) => ({ id: hit._id, location: locationOf(hit), source: hit._source ?? {} }));
  };
}

function closeStream(stream: WriteStream): Promise<void> {
  return closeWritten(stream, 'the pairs verified until then are in it');
}

/** A canonical field or date field that the mapping does not have is a typo (`--canonical longst`), not a field. */
async function checkSortField(client: EngineClient, index: string, canonical: CanonicalRule | undefined, dateField: string | undefined, prefix: string): Promise<void> {
  const named = [typeof canonical === 'object' ? { key: 'canonical', field: canonical.field } : undefined, dateField ? { key: 'dateField', field: dateField } : undefined].filter(
    (x): x is { key: string; field: string } => x !== undefined,
  );
  if (named.length === 0) return;
  const mappings = await client.getMapping(index);
  for (const { key, field } of named) {
    if (absentFields(mappings, [field]).length === 0) continue;
    const known = [...new Set(Object.values(mappings).flatMap((m) => mappedFields(m.mappings)))].filter((f) => !f.startsWith(`${prefix}.`) && f !== prefix).sort();
    const rules = key === 'canonical' ? 'oldest, newest, longest, a field (lowest first) or -field (highest first)' : 'a date field';
    throw new UsageError(
      (o) => `${o(key)} "${field}" is not a field of "${index}"; give ${rules}. Its fields: ${known.slice(0, 20).join(', ')}${known.length > 20 ? ', ...' : ''}`,
    );
  }
}
