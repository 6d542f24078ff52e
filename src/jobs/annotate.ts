// near-dup annotate: every matching document of an index gets the near-dup fields, written with bulk
// partial updates (nothing else of the document is touched), guarded by optimistic concurrency so a
// document changed meanwhile is re-read and re-signed rather than overwritten with a stale signature.
//
// Nothing is taken on trust: a scan page lost on the way starts the scan again from the documents this
// run has not written, and at the end the engine is asked how many documents of the job still have no
// signature of these parameters. Those are done in a sweep; what cannot be done is listed, and the job
// is not complete.
import os from 'node:os';
import { peakMemoryMb, UsageMeter } from './usage.js';
import { DEFAULT_MAX_CHARS, DEFAULT_PREFIX, underPrefix } from '../annotation.js';
import type { EngineClient, IndexMappings } from '../engine/client.js';
import type { RetrySnapshot } from '../engine/retry.js';
import { EngineResponseError } from '../engine/errors.js';
import { countMatching, scanIndex, type ScanHit } from '../engine/scan.js';
import { type BulkOptions, checkBulkOptions, requireWholeNumbers, UsageError, UserError } from '../errors.js';
import { absentFields, textFields } from '../indices/fields.js';
import { actionMeta, type DocLocation, locationOf } from '../engine/doc-location.js';
import { requireWholeSource } from '../indices/source-filter.js';
import { sourceToRead } from './source-to-read.js';
import { StoredLayout, storedPath, type StoredField } from '../stored/layout.js';
import { SIGNATURE_FIELDS } from '../stored/read.js';
import { closedIndicesBehind, requireWritable } from '../indices/index-state.js';
import { resolveSignerSettings, type SignerOptions } from '../signature.js';
import type { AnnotateInput, AnnotateResult } from '../signing/annotate-batch.js';
import { BULK_DEFAULTS, BulkWriter } from './bulk-writer.js';
import { defaultCheckpointPath, identityDifferences, readCheckpoint, writeCheckpoint, type Checkpoint } from './checkpoint.js';
import { ErrorsFile } from './errors-file.js';
import { InFlightLimit } from '../engine/in-flight.js';
import { planInFlight } from '../engine/in-flight-plan.js';
import { initIndex } from '../indices/init.js';
import { planMapping } from '../indices/mapping.js';
import { requireScroll } from '../engine/privileges.js';
import type { KeyLists } from '../stored/write.js';
import { createSignPool, type SignPool } from '../signing/sign-pool.js';
import { DEFAULT_TEMPLATE_REQUEST, type TemplateRequest, type TemplateSource, templateForJob } from './template-sample.js';
import { sourceWithFields } from '../signing/source-text.js';
import { readStoredSources, type StoredSource } from './stored-sources.js';
import { plural } from '../plural.js';
import { checkOptionKeys, given, type OptionKeys } from './option-groups.js';

/** Which documents of the index are read and signed. */
export interface AnnotateRead {
  /** A query in the engine's JSON DSL; documents outside it are not read (default: every document). */
  query?: Record<string, unknown>;
  /**
   * One of several processes or machines sharing the job: slice `id` of `max` (0 <= id < max, whole
   * numbers), the documents split by the engine's sliced scroll (default: the whole job in this process).
   * Each slice keeps a checkpoint of its own.
   */
  slice?: { id: number; max: number };
}

/** How much is read, signed and written at once. */
export interface AnnotateLimits {
  /** Documents per scan page (default 1,000; at least 1). */
  pageSize?: number;
  /** Signing threads (default: every core, `os.availableParallelism()`; at least 1). */
  threads?: number;
  /** Characters of a document's text that are signed: longer texts are cut, and counted in `cut` (default 10,000,000; at least 1). */
  maxChars?: number;
  /** The bulk requests that write the fields (defaults in ANNOTATE_DEFAULTS.bulk; concurrency planned from the cluster). */
  bulk?: BulkOptions;
}

/** What the run keeps on disk, so that a run stopped or killed can go on where it was. */
export interface AnnotateStateFiles {
  /**
   * Continue the job of `checkpointFile`: only documents the job has not signed yet are read. Throws a
   * UserError when there is no checkpoint, or when it is of another job (other index, fields, prefix,
   * signature parameters, query or slice).
   */
  resume?: boolean;
  /** Where the job's progress is kept (default .near-dup/annotate-INDEX.json, or -sliceIofN.json for a slice). */
  checkpointFile?: string;
}

/** What is written, where, and whether anything is. */
export interface AnnotateOutput {
  /** The object the near-dup fields go under (default `near_dup`). */
  prefix?: string;
  /** Sign and count, write nothing: no mapping, no document, no checkpoint; the summary shows a few of the updates (default false). */
  dryRun?: boolean;
  /** Sign again documents whose stored content hash and params already match (default false: they are counted unchanged). */
  force?: boolean;
  /**
   * Keep each document's _version (a producer indexing with version_type=external would otherwise get 409
   * on its next version): the whole document is written back at the version read, with
   * version_type=external_gte, instead of a partial update. Reads whole documents. Default false.
   */
  keepVersion?: boolean;
  /** Where the documents that failed are listed, one JSON line each (default near-dup-errors-INDEX.jsonl). */
  errorsFile?: string;
}

/** A progress report, at most once a second, and once at the end. */
export type AnnotateProgressListener = (progress: AnnotateProgress) => void;

/**
 * The options of annotateIndex, grouped: which documents are read, limits, state files, output. Every
 * member but `index` and `fields` may be left out (ANNOTATE_DEFAULTS).
 */
export interface AnnotateOptions {
  /** The index, alias, pattern or data stream whose documents are signed, each written where it lives. */
  index: string;
  /** The text fields signed (at least one; several are joined with a space; dotted paths reach into objects). */
  fields: string[];
  /** How signatures are made: createSigner's options (default: every default, `DEFAULT_CONDENSER`). */
  signer?: SignerOptions;
  /**
   * Template tokens, marked in each signature so that documents are compared by their own text (sketch/
   * core-similarity.ts): those in more than `share` of a sample of the documents (jobs/template-sample.ts),
   * the set kept in near-dup-templates and named in the params. Default DEFAULT_TEMPLATE_REQUEST (drawn
   * from 2,000 documents or more, else none); `false`: none.
   */
  template?: TemplateRequest | false;
  read?: AnnotateRead;
  limits?: AnnotateLimits;
  state?: AnnotateStateFiles;
  output?: AnnotateOutput;
  onProgress?: AnnotateProgressListener;
  /** Set to stop early (Ctrl-C): work in flight is finished and the checkpoint written; the summary is not complete. */
  signal?: AbortSignal;
}

/** Every default of annotateIndex, in one place (the command line's defaults are these too). */
export const ANNOTATE_DEFAULTS = {
  prefix: DEFAULT_PREFIX,
  /** Characters of a text signed; the rest is cut. */
  maxChars: DEFAULT_MAX_CHARS,
  /** Documents per scan page. */
  pageSize: 1000,
  /**
   * Each bulk request at most 5 MB and 1,000 operations (the bulk writer's own defaults, and the command
   * line's for --bulk-bytes and --bulk-size); requests in flight are planned from the cluster.
   */
  bulk: BULK_DEFAULTS,
} as const satisfies Partial<AnnotateLimits & AnnotateOutput>;

/** The options with every default filled in: what the run works from (resolveAnnotateOptions). */
export interface AnnotateSettings {
  index: string;
  fields: string[];
  signer: SignerOptions;
  template?: TemplateRequest;
  read: AnnotateRead;
  limits: { pageSize: number; threads: number; maxChars: number; bulk: BulkOptions & Required<Pick<BulkOptions, 'maxBytes' | 'maxOperations'>> };
  state: { resume: boolean; checkpointFile: string };
  output: { prefix: string; dryRun: boolean; force: boolean; keepVersion: boolean; errorsFile: string };
  onProgress?: AnnotateProgressListener;
  signal?: AbortSignal;
}

/** The keys annotateIndex reads (`satisfies` fails the build when a member is added to its interface and not here). */
const ANNOTATE_KEYS: OptionKeys = {
  job: 'annotate',
  topLevel: { index: 1, fields: 1, signer: 1, template: 1, read: 1, limits: 1, state: 1, output: 1, onProgress: 1, signal: 1 } satisfies Record<keyof AnnotateOptions, 1>,
  groups: {
    read: { query: 1, slice: 1 } satisfies Record<keyof AnnotateRead, 1>,
    limits: { pageSize: 1, threads: 1, maxChars: 1, bulk: 1 } satisfies Record<keyof AnnotateLimits, 1>,
    state: { resume: 1, checkpointFile: 1 } satisfies Record<keyof AnnotateStateFiles, 1>,
    output: { prefix: 1, dryRun: 1, force: 1, keepVersion: 1, errorsFile: 1 } satisfies Record<keyof AnnotateOutput, 1>,
  },
};

/** The bulk options given, over the defaults (ANNOTATE_DEFAULTS.bulk); the writing jobs share them. */
export function resolveBulkOptions(bulk: BulkOptions | undefined): AnnotateSettings['limits']['bulk'] {
  return { ...ANNOTATE_DEFAULTS.bulk, ...given(bulk) };
}

/**
 * The options with every default filled in: resolved once, at the start of a run (and by
 * checkAnnotateOptions). Throws a UsageError only for a key annotate does not read (a member out of its
 * group names where it goes); the values are checked by checkAnnotateOptions.
 */
export function resolveAnnotateOptions(options: AnnotateOptions): AnnotateSettings {
  checkOptionKeys(options, ANNOTATE_KEYS);
  const [read, limits, state, output] = [given(options.read), given(options.limits), given(options.state), given(options.output)];
  const { index, fields, signer = {}, template, onProgress, signal } = options;
  const { prefix, maxChars, pageSize } = ANNOTATE_DEFAULTS;
  return {
    index,
    fields,
    signer,
    ...(template === false ? {} : { template: template ?? DEFAULT_TEMPLATE_REQUEST }),
    read,
    limits: { pageSize, maxChars, ...limits, threads: limits.threads ?? os.availableParallelism(), bulk: resolveBulkOptions(limits.bulk) },
    state: { resume: state.resume ?? false, checkpointFile: state.checkpointFile ?? defaultCheckpointPath('annotate', index, read.slice) },
    output: {
      prefix: output.prefix ?? prefix,
      dryRun: output.dryRun ?? false,
      force: output.force ?? false,
      keepVersion: output.keepVersion ?? false,
      errorsFile: ErrorsFile.forIndex(index, output.errorsFile).file,
    },
    onProgress,
    signal,
  };
}

/** What a run did to the documents it read. */
export interface AnnotateCounts {
  /** Documents read (each once, however often it was read again). */
  seen: number;
  /** Documents whose fields were written (with `dryRun`: would have been). */
  annotated: number;
  /** Documents whose stored signature was already current (same text, same params): not written. */
  unchanged: number;
  /** Documents that cannot be signed or were refused by the engine (listed in the errors file). */
  failed: number;
  /** Documents whose text gives no token (empty, or shorter than a token): written, with a signature of no tokens. */
  empty: number;
  /** Documents whose text was cut at `maxChars`. */
  cut: number;
  /** Documents changed by someone else while being annotated, re-read and re-signed. */
  conflicts: number;
}

/** What onProgress is told: the counts so far. */
export interface AnnotateProgress extends AnnotateCounts {
  /**
   * Documents settled: written and acknowledged by the engine, found current, or failed (a dry run's counted
   * as written). Progress and its ETA count these: `seen` (read and signed) runs ahead by the writes in flight.
   */
  done: number;
  /** Documents the job reads, as the engine counted them at the start. */
  total?: number;
  elapsedSeconds: number;
}

/** What annotateIndex returns (and `near-dup annotate` prints as its JSON line). */
export interface AnnotateSummary extends AnnotateCounts {
  index: string;
  /** The params keyword of the signatures written. */
  params: string;
  /** Wall seconds of the whole run. */
  seconds: number;
  dryRun: boolean;
  /**
   * The engine reports no document of the job without a signature of these params, other than those
   * listed as failed (and the job was not interrupted).
   */
  complete: boolean;
  /** Documents of the job still without a signature at the end, not counted as failed (listed in the errors file). */
  missing: number;
  /** Bulk requests kept in flight, and what chose that number (see engine/in-flight-plan.ts). */
  inFlight: string;
  /** Closed indices the name matches: the engine reads none of their documents, so none was signed. */
  closedIndices: string[];
  /** What the run chose that the user did not ask for, in one line each (signed without template tokens, and why). */
  notes: string[];
  /** Scan pages lost on the way, after which the scan started again from what was left. */
  restarts: number;
  /** Extra passes over documents the engine still reported without a signature after the scan. */
  sweeps: number;
  /** Requests sent again, by cause, and the seconds spent waiting before them. */
  retries: RetrySnapshot;
  /** The checkpoint file written (none for a dry run): `resume` goes on from it. */
  checkpoint?: string;
  /** Where the documents that failed or are missing are listed, when there are any. */
  errorsFile?: string;
  /** Peak resident memory of this process (main thread and signing threads), MB. */
  peakMemoryMb: number;
  /** This process's CPU seconds (every thread), and the seconds spent waiting for the engine's answers (summed over requests in flight together). */
  timing: { cpuSeconds: number; engineWaitSeconds: number };
  /** With `dryRun`: a few of the updates that would have been sent. */
  sample?: Array<{ id: string; doc: Record<string, unknown> }>;
}

/** Documents per signing task. */
const BATCH = 100;
const MAX_CONFLICT_ROUNDS = 3;
/** Passes over what the engine still reports unsigned after the scan. */
const MAX_SWEEPS = 2;
/** At most this many failed ids are left out of later queries by id; more are simply read again. */
const MAX_EXCLUDED_IDS = 10_000;
/** At most this many documents still missing at the end are listed one by one. */
const MAX_LISTED_MISSING = 10_000;

/**
 * Signs every matching document of an index and writes its near-dup fields with bulk partial updates (what
 * `near-dup annotate` does): nothing else of a document changes, a document changed meanwhile is read and
 * signed again, and at the end the engine is asked which documents of the job still lack a signature.
 *
 * @param client near-dup's client, from `connect()`.
 * @param options `index` and `fields` (at least one text field; several are joined); `signer`
 *   (createSigner's options); `read`: `query` (default: every document), `slice` for one of several
 *   processes; `limits`: `pageSize` (1,000), `threads` (every core), `maxChars` (10,000,000), `bulk`
 *   (5 MB, 1,000 operations); `state`: `resume` with `checkpointFile` (.near-dup/annotate-INDEX.json);
 *   `output`: `prefix` (`near_dup`), `dryRun`, `force` (sign documents already current), `keepVersion`,
 *   `errorsFile` (near-dup-errors-INDEX.jsonl); `onProgress`; `signal` to stop early. Defaults in
 *   ANNOTATE_DEFAULTS.
 * @returns the counts; `complete` is true when the engine reports no document of the job left unsigned.
 * @throws {UsageError} a key annotate does not read (a member out of its group, `pageSize` for
 *   `limits.pageSize`, names where it goes), an option out of range (before connecting), signer options
 *   that are not valid (CondenserSpecError), a field the mapping has no room for; the message names the
 *   option key.
 * @throws {UserError} an index that does not exist, is blocked or keeps only part of `_source`; a
 *   checkpoint that is missing or for another job; an engine that refuses or cannot be reached.
 */
export async function annotateIndex(client: EngineClient, options: AnnotateOptions): Promise<AnnotateSummary> {
  const job = resolveAnnotateOptions(options);
  checkSettings(job);
  const { index, output } = job;
  const mappings = await checkTextFields(client, index, job.fields, output.prefix);
  // A dry run changes no mapping: it shows the updates as an index of the older layout would take them.
  let keyLists: KeyLists = 'lists';
  if (!output.dryRun) {
    const plans = Object.values(mappings).map((m) => planMapping(m.mappings, output.prefix));
    // A near-dup field mapped in a way that cannot change: initIndex refuses it, naming it, before anything is written.
    if (plans.some((p) => p.conflicts.length > 0)) await initIndex(client, index, output.prefix);
    keyLists = plans.some((p) => p.keyLists === 'lists') ? 'lists' : 'joined';
  }
  const notes: string[] = [];
  if (job.template && !job.signer.template) {
    const chosen = await templateForJob(client, templateSourceOf(job), job.template);
    if (chosen.template) job.signer = { ...job.signer, template: chosen.template };
    if (chosen.note) notes.push(chosen.note);
  }
  const inFlight = new InFlightLimit(await planInFlight(client, index, job.limits.bulk.concurrency));
  const run = new AnnotateRun(client, job, await openCheckpoint(job), { keyLists, inFlight });
  run.closedIndices = await closedIndicesBehind(client, index);
  run.notes = notes;
  try {
    await run.begin();
    await run.pass(run.firstQuery());
    await run.redoConflicts();
    await run.finish();
  } catch (err) {
    throw client.explain(err, index);
  } finally {
    await run.close();
  }
  return run.summary();
}

/**
 * The job's options, checked here once for the CLI and the library alike (annotateIndex checks them too,
 * before connecting).
 *
 * @throws {UsageError} a key annotate does not read, no field, a limit that is not a whole number of at
 *   least 1, bulk options out of range, a slice outside its count; the message names the option key.
 */
export function checkAnnotateOptions(options: AnnotateOptions): void {
  checkSettings(resolveAnnotateOptions(options));
}

function checkSettings({ fields, limits, read, template }: AnnotateSettings): void {
  if (!Array.isArray(fields) || fields.length === 0) throw new UsageError((o) => `name at least one text field with ${o('fields')}`);
  requireWholeNumbers([['pageSize', limits.pageSize, 1], ['maxChars', limits.maxChars, 1], ['threads', limits.threads, 1], ['template.sample', template?.sample, 1]]);
  if (template && !(template.share > 0 && template.share < 1)) {
    throw new UsageError((o) => `${o('template.share')} must be a number above 0 and below 1 (0.05: tokens in more than 5% of the documents are template text), got ${template.share}`);
  }
  checkBulkOptions(limits.bulk);
  if (read.slice) checkSlice(read.slice);
}

/**
 * Slice `id` of `max`: whole numbers, 0 <= id < max.
 *
 * @throws {UsageError} naming `slice.id` and `slice.max`.
 */
export function checkSlice({ id, max }: { id: number; max: number }): void {
  if (!(Number.isInteger(id) && Number.isInteger(max) && max >= 1 && id >= 0 && id < max)) {
    throw new UsageError((o) => `${o('slice.id')} must be a whole number from 0 to ${max - 1} for ${o('slice.max')} ${max}, got ${id}`);
  }
}

/**
 * Refuses before reading anything: an index that does not exist (never created by annotate), a text
 * field that no document can hold (the mapping has no such field and would have mapped it), or an index
 * whose `_source` does not keep whole documents (a partial update would cost fields their index).
 */
async function checkTextFields(client: EngineClient, index: string, fields: readonly string[], prefix: string): Promise<IndexMappings> {
  let mappings: IndexMappings;
  try {
    mappings = await client.getMapping(index);
  } catch (err) {
    throw client.describe(err, index);
  }
  const absent = absentFields(mappings, fields);
  if (absent.length === 0) {
    requireWholeSource(index, mappings, fields);
    return mappings;
  }
  const known = [...new Set(Object.values(mappings).flatMap((m) => textFields(m.mappings)))].filter((f) => !f.startsWith(`${prefix}.`)).sort();
  throw new UsageError(
    (o) =>
      `no document of "${index}" can hold ${absent.map((f) => `"${f}"`).join(', ')}: the mapping has no such field; ` +
      `${known.length ? `its text fields are ${known.slice(0, 20).join(', ')}${known.length > 20 ? ', ...' : ''}` : 'it maps no text field'}; check ${o('fields')}`,
  );
}

/** What must be the same for a run to continue another's work (its checkpoint, or follow's marks). */
export function annotateIdentity(options: AnnotateOptions): Record<string, unknown> {
  return identityOf(resolveAnnotateOptions(options));
}

// The template set itself is not part of it: the same request finds the same set, kept in the index.
function identityOf({ index, fields, signer, template, read, output }: AnnotateSettings): Record<string, unknown> {
  const params = resolveSignerSettings({ ...signer, template: undefined }).params;
  const { keptOnly: _, ...request } = template || {};
  return { index, fields, prefix: output.prefix, params, query: read.query ?? null, slice: read.slice ?? null, ...(template ? { template: request } : {}) };
}

/** Where a job's template set is drawn from: its documents, as it reads them (the whole query, never a slice). */
export function templateSourceOf(job: AnnotateSettings): TemplateSource {
  return { index: job.index, fields: job.fields, query: job.read.query, maxChars: job.limits.maxChars, signer: job.signer, dryRun: job.output.dryRun };
}

/** The checkpoint to continue (with `resume`, checked to be the same job) or a new one. */
async function openCheckpoint(job: AnnotateSettings): Promise<{ file: string; checkpoint: Checkpoint }> {
  const file = job.state.checkpointFile;
  const identity = identityOf(job);
  if (job.state.resume) {
    const checkpoint = await readCheckpoint(file);
    if (!checkpoint) throw new UserError((o) => `no checkpoint at ${file} to resume from; run without ${o('resume')} to start`);
    const differences = identityDifferences(checkpoint.identity, identity);
    if (differences.length > 0) {
      throw new UserError((o) => `the checkpoint ${file} is for a different job (${differences.join(', ')} differ); run with the same options, or without ${o('resume')} to start over`);
    }
    return { file, checkpoint };
  }
  const now = new Date().toISOString();
  return { file, checkpoint: { job: 'annotate', index: job.index, identity, startedAt: now, updatedAt: now, complete: false, counts: {} } };
}

/** One annotate job: its counts, its writer and signing pool, and the queries for what is left. */
class AnnotateRun {
  private readonly started = performance.now();
  private readonly retriesAtStart;
  private readonly usage: UsageMeter;
  private readonly params: string;
  private readonly dryRun: boolean;
  private readonly counts: AnnotateCounts = { seen: 0, annotated: 0, unchanged: 0, failed: 0, empty: 0, cut: 0, conflicts: 0 };
  private readonly previous: Record<string, number>;
  private readonly errors: ErrorsFile;
  private readonly writer: BulkWriter;
  private readonly pool: SignPool;
  /** The source fields read: the text and the stored signature, or everything (`keepVersion`, or when those are most of it). */
  private sourceIncludes: string[] | true;
  /** Documents that cannot be signed or were refused for good: counted once, left out of later reads. */
  private readonly failedIds = new Set<string>();
  /** Writes that never got through (overload, no answer): the document is still missing, and why. */
  private readonly unwritten = new Map<string, string>();
  /** Refused with 409 (changed meanwhile, or already written by a request whose answer was lost), and where each lives. */
  private readonly conflicted = new Map<string, DocLocation>();
  /** Of those, the ones sent again after a lost answer (a 409 there usually means our first write landed). */
  private readonly resent = new Set<string>();
  private readonly sample: NonNullable<AnnotateSummary['sample']> = [];
  closedIndices: string[] = [];
  notes: string[] = [];
  private total?: number;
  private missing = 0;
  private restarts = 0;
  private sweeps = 0;
  private interrupted = false;
  /** Set once the checks before the first write passed: from then on the engine may have changed. */
  private writing = false;
  /** Set once the check with the engine is done: a job that threw midway is not complete. */
  private finished = false;
  private processing: Promise<void> = Promise.resolve();
  private lastProgress = 0;
  private lastCheckpoint = performance.now();

  constructor(
    private readonly client: EngineClient,
    private readonly job: AnnotateSettings,
    private readonly saved: { file: string; checkpoint: Checkpoint },
    private readonly setup: { keyLists: KeyLists; inFlight: InFlightLimit },
  ) {
    this.retriesAtStart = client.retries.snapshot();
    this.usage = new UsageMeter(client);
    const { output, limits } = job;
    this.params = resolveSignerSettings(job.signer).params;
    this.dryRun = output.dryRun;
    this.previous = job.state.resume ? { ...saved.checkpoint.counts } : {};
    // The whole stored signature: one that is damaged is not current, whatever its content hash says.
    this.sourceIncludes = output.keepVersion ? true : [...job.fields, ...new StoredLayout(output.prefix).paths(...SIGNATURE_FIELDS)];
    this.errors = new ErrorsFile(output.errorsFile);
    this.pool = createSignPool(limits.threads);
    this.writer = new BulkWriter({
      send: (ndjson) => client.bulkNdjson(ndjson),
      ...limits.bulk,
      inFlight: setup.inFlight,
      retries: client.retries,
      onSuccess: (op) => {
        this.counts.annotated++;
        this.unwritten.delete(op.id);
        this.report();
      },
      onFailure: (op, reason, status, resent) => this.onWriteFailure(op.id, op.context as DocLocation, reason, status, resent),
      // Only a run that is about to write checks that it may, adds the fields to the mapping and replaces
      // the checkpoint: a run refused (or with nothing to sign) leaves the index and the checkpoint as they were.
      beforeFirstSend: () => this.prepareWrites(),
    });
  }

  private field(name: StoredField): string {
    return storedPath(this.job.output.prefix, name);
  }

  /** Before the first write: blocks and privileges (asked in requests that change nothing), the mapping, the checkpoint. */
  private async prepareWrites(): Promise<void> {
    const { index, output: { prefix, keepVersion } } = this.job;
    await requireWritable(this.client, index, { action: keepVersion ? 'index' : 'update', refresh: true });
    const { keyLists } = await initIndex(this.client, index, prefix);
    if (keyLists !== this.setup.keyLists) {
      throw new UserError(`the mapping of "${index}" changed while annotate was reading it (the near-dup fields take ${keyLists} key lists now); run the same command again`);
    }
    this.writing = true;
    await this.saveCheckpoint(false);
  }

  async begin(): Promise<void> {
    const { index, read: { slice } } = this.job;
    // A scroll's pages after the first need a privilege of their own: asked before the first page is signed and written.
    if (this.client.pointInTime !== 'elasticsearch' || slice) await requireScroll(this.client, index);
    await this.refreshBeforeReading();
    this.total = await countMatching(this.client, { index, query: this.firstQuery(), slice });
    // The whole source is cheaper for the engine to hand out than a filtered one, where little is left out.
    if (this.sourceIncludes !== true && this.total > 0) this.sourceIncludes = await sourceToRead(this.client, index, this.firstQuery(), this.sourceIncludes);
  }

  /**
   * What was written before the run started is read by it, searchable yet or not (refresh off, or written
   * since the last refresh): otherwise the scan, and the count of what is left unsigned after it, would not
   * see it, and the run would say complete. Not in a dry run (it changes nothing), nor on Serverless (no
   * refresh to ask; it makes writes searchable within its interval), nor for a user who may not refresh
   * (a read-only user's run reads what is searchable, and can write nothing anyway).
   */
  private async refreshBeforeReading(): Promise<void> {
    if (this.dryRun || this.client.info.serverless) return;
    try {
      await this.client.refresh(this.job.index);
    } catch (err) {
      if (!(err instanceof EngineResponseError && (err.refusal !== undefined || err.statusCode === 403))) throw err;
    }
  }

  // --- queries -------------------------------------------------------------------------------------

  /** Signed by this job (this run, or the run it resumes). */
  private stampedByThisJob(): Record<string, unknown> {
    return { bool: { filter: [{ term: { [this.field('params')]: this.params } }, { range: { [this.field('annotated_at')]: { gte: this.saved.checkpoint.startedAt } } }] } };
  }

  private excludingFailed(): Record<string, unknown>[] {
    const ids = [...this.failedIds];
    return ids.length > 0 && ids.length <= MAX_EXCLUDED_IDS ? [{ ids: { values: ids } }] : [];
  }

  /** The first scan: every document of the job, or with `resume` those the job has not signed yet. */
  firstQuery(): Record<string, unknown> {
    return { bool: { filter: [this.job.read.query ?? { match_all: {} }], must_not: this.job.state.resume ? [this.stampedByThisJob()] : [] } };
  }

  /** After a lost page: what this job has not yet signed, nor given up on. */
  private remainingQuery(): Record<string, unknown> {
    return { bool: { filter: [this.job.read.query ?? { match_all: {} }], must_not: [this.stampedByThisJob(), ...this.excludingFailed()] } };
  }

  /** At the end: documents of the job with no signature of these params at all (not failed for good). */
  private lackingQuery(): Record<string, unknown> {
    return { bool: { filter: [this.job.read.query ?? { match_all: {} }], must_not: [{ term: { [this.field('params')]: this.params } }, ...this.excludingFailed()] } };
  }

  // --- reading and signing --------------------------------------------------------------------------

  /**
   * Reads every document of `query` and signs it; the next page is fetched while this one is signed. A
   * lost scroll page restarts the scan from `restartQuery` once the work so far is written and visible.
   */
  async pass(query: Record<string, unknown>, restartQuery = () => this.remainingQuery()): Promise<void> {
    const pages = scanIndex(this.client, {
      index: this.job.index,
      query,
      sourceIncludes: this.sourceIncludes === true ? undefined : this.sourceIncludes,
      pageSize: this.job.limits.pageSize,
      slice: this.job.read.slice,
      seqNoPrimaryTerm: true,
      version: this.job.output.keepVersion,
      pointInTime: this.client.pointInTime,
      // A dry run writes nothing, so what is left cannot be asked of the engine: skip what was read instead.
      recovery: this.dryRun ? 'skip-seen' : async () => {
        await this.processing.catch(() => undefined);
        await this.writer.flush();
        if (this.writing) await this.client.refresh(this.job.index);
        return restartQuery();
      },
      onRestart: () => this.restarts++,
    });
    let next = pages.next();
    try {
      for (;;) {
        const page = await next;
        if (page.done) break;
        if (this.job.signal?.aborted) {
          this.interrupted = true;
          await pages.return(undefined);
          break;
        }
        this.processing = this.processHits(page.value, 'scan');
        next = pages.next();
        // The next page may fail (a refused scroll) while this one is signed: marked as looked after, so
        // that Node does not end the process with a stack trace before the loop comes to it and throws it.
        next.catch(() => undefined);
        await this.processing;
      }
    } catch (err) {
      void next.catch(() => undefined); // the first error is the one to report
      throw err;
    }
    // Everything read: said at once, with the writes still to come (the ETA counts them, not the reads).
    this.report(true);
    await this.writer.flush();
  }

  /** Signs a page on the pool and queues its updates; the writer holds us back when the cluster is slower. */
  private async processHits(hits: ScanHit[], mode: 'scan' | 'recheck'): Promise<void> {
    const results = await this.sign(hits);
    const stored = await this.storedSources(hits, results);
    for (let i = 0; i < results.length; i++) await this.handleResult(hits[i], results[i], mode, stored[i]);
    if (mode === 'scan') this.counts.seen += hits.length;
    this.report();
    if (performance.now() - this.lastCheckpoint > 5000) {
      this.lastCheckpoint = performance.now();
      await this.saveCheckpoint(false);
    }
  }

  private async sign(hits: ScanHit[]): Promise<AnnotateResult[]> {
    const { fields, signer, output, limits } = this.job;
    const batch = { fields, prefix: output.prefix, maxChars: limits.maxChars, force: output.force, keyLists: this.setup.keyLists };
    const inputs: AnnotateInput[] = hits.map((h) => ({ id: h._id, source: h._source }));
    const chunks: Promise<AnnotateResult[]>[] = [];
    for (let i = 0; i < inputs.length; i += BATCH) chunks.push(this.pool.annotate({ options: signer, batch, docs: inputs.slice(i, i + BATCH) }));
    return (await Promise.all(chunks)).flat();
  }

  /** With `keepVersion`, the stored source of each document to be written back whole (the others undefined), read in one _mget. */
  private async storedSources(hits: ScanHit[], results: AnnotateResult[]): Promise<Array<StoredSource | undefined>> {
    const stored = new Array<StoredSource | undefined>(hits.length);
    if (!this.job.output.keepVersion || this.dryRun) return stored;
    const whole = hits.flatMap((hit, i) => (results[i].status === 'annotated' && hit._version !== undefined ? [i] : []));
    const read = await readStoredSources(this.client, whole.map((i) => ({ id: hits[i]._id, location: locationOf(hits[i]) })));
    whole.forEach((hitAt, k) => {
      stored[hitAt] = read[k];
    });
    return stored;
  }

  /**
   * One document's outcome. In a recheck (after a 409), a document found current was written by our own
   * lost request (annotated) or by someone else's run (unchanged); only one that must be signed again
   * changed meanwhile.
   */
  private async handleResult(hit: ScanHit, result: AnnotateResult, mode: 'scan' | 'recheck', stored?: StoredSource): Promise<void> {
    if (result.status === 'unchanged') {
      if (mode === 'recheck' && this.resent.has(hit._id)) this.counts.annotated++;
      else this.counts.unchanged++;
      this.resent.delete(hit._id);
      return;
    }
    this.resent.delete(hit._id);
    if (result.status === 'failed') return this.fail(hit._id, result.reason);
    if (mode === 'recheck') this.counts.conflicts++;
    if (result.empty) this.counts.empty++;
    if (result.cut > 0) this.counts.cut++;
    const doc = underPrefix(this.job.output.prefix, result.fields as unknown as Record<string, unknown>);
    if (this.dryRun) {
      this.counts.annotated++;
      if (this.sample.length < 3) this.sample.push({ id: hit._id, doc });
      return;
    }
    // Written where the document lives (its own index, its routing), never through the alias or stream read.
    const location = locationOf(hit);
    if (this.job.output.keepVersion && hit._version !== undefined) return this.writeWhole(hit, location, result.fields as unknown as Record<string, unknown>, stored);
    const guard = hit._seq_no !== undefined && hit._primary_term !== undefined ? { if_seq_no: hit._seq_no, if_primary_term: hit._primary_term } : {};
    await this.writer.add({ id: hit._id, action: { update: actionMeta(hit._id, location, guard) }, body: { doc }, context: location });
  }

  /**
   * `--keep-version`: the document written back whole from its own stored text, the near-dup fields its only
   * change (sourceWithFields), at the version it was signed at with version_type external_gte, so that a newer
   * version written since answers 409 and is read and signed again. That version is the stored one's, taken
   * as the engine wrote it (an external version may be a long beyond what a number holds), once the stored
   * text is known to be the one signed: the same _seq_no and _primary_term as the hit. A text read after a
   * change (the scan's hit is older) is a conflict as that 409 would be.
   */
  private async writeWhole(hit: ScanHit, location: DocLocation, fields: Record<string, unknown>, stored: StoredSource | undefined): Promise<void> {
    if (!stored?.found) {
      if (stored?.error === undefined) return this.fail(hit._id, 'deleted while being annotated');
      return this.onWriteFailure(hit._id, location, `could not be read back to be written whole: ${stored.error}`, undefined, false);
    }
    const signed = stored.seqNo === hit._seq_no && stored.primaryTerm === hit._primary_term && Number(stored.version) === hit._version;
    if (!signed || stored.version === undefined) {
      this.conflicted.set(hit._id, location);
      return;
    }
    // A bulk line is one line: a source stored over several lines has them joined (a line break in JSON text
    // can only be white space between its tokens; a string holds it escaped).
    const text = sourceWithFields(stored.source, hit._source ?? {}, this.job.output.prefix, fields).replaceAll('\n', ' ');
    const version = Number.isSafeInteger(Number(stored.version)) ? Number(stored.version) : stored.version; // the engines take a long as a string
    const meta = actionMeta(hit._id, location, { version, version_type: 'external_gte' });
    await this.writer.add({ id: hit._id, action: { index: meta }, body: text, context: location });
  }

  private fail(id: string, reason: string, status?: number): void {
    if (this.failedIds.has(id)) return;
    this.failedIds.add(id);
    this.counts.failed++;
    this.errors.add({ id, status, reason });
  }

  private onWriteFailure(id: string, location: DocLocation, reason: string, status: number | undefined, resent: boolean): void {
    if (status === 409) {
      this.conflicted.set(id, location);
      if (resent) this.resent.add(id);
    } else if (status === undefined || status === 429 || status >= 500) {
      this.unwritten.set(id, reason); // may pass later: a sweep tries again, and if not, it is listed as missing
    } else {
      this.fail(id, reason, status);
    }
  }

  /** Documents refused with 409: read again, and signed again if they changed. */
  async redoConflicts(): Promise<void> {
    for (let round = 0; round < MAX_CONFLICT_ROUNDS && this.conflicted.size > 0 && !this.interrupted; round++) {
      const docs = [...this.conflicted].map(([id, location]) => ({ id, location }));
      const ids = docs.map((d) => d.id);
      this.conflicted.clear();
      const fresh = (await this.client.mget(docs, this.sourceIncludes)) as ScanHit[];
      const found = new Set(fresh.map((h) => h._id));
      for (const id of ids) if (!found.has(id)) this.fail(id, 'deleted while being annotated');
      await this.processHits(fresh, 'recheck');
      await this.writer.flush();
    }
    for (const id of this.conflicted.keys()) this.fail(id, `still changing after ${plural(MAX_CONFLICT_ROUNDS, 'attempt')}; run annotate again`, 409);
    this.conflicted.clear();
  }

  // --- the check with the engine ----------------------------------------------------------------------

  /**
   * Asks the engine how many documents of the job still have no signature of these params; sweeps them
   * up to MAX_SWEEPS times, then lists what is left in the errors file.
   */
  async finish(): Promise<void> {
    this.finished = true;
    if (this.dryRun || this.interrupted) return;
    const { index, read: { slice } } = this.job;
    for (;;) {
      // Only what this run wrote needs making visible: a run that wrote nothing asks no refresh (nor its privilege).
      if (this.writing) await this.client.refresh(index);
      this.missing = await countMatching(this.client, { index, query: this.lackingQuery(), slice });
      if (this.missing === 0 || this.sweeps >= MAX_SWEEPS || this.interrupted) break;
      this.sweeps++;
      await this.pass(this.lackingQuery(), () => this.lackingQuery());
      await this.redoConflicts();
    }
    if (this.missing > 0) await this.listMissing();
    if (this.restarts > 0) await this.recountUnchanged();
  }

  private async listMissing(): Promise<void> {
    let listed = 0;
    for await (const page of scanIndex(this.client, { index: this.job.index, query: this.lackingQuery(), sourceIncludes: [], slice: this.job.read.slice, pointInTime: this.client.pointInTime })) {
      for (const hit of page) {
        if (listed++ >= MAX_LISTED_MISSING) return;
        const why = this.unwritten.get(hit._id) ?? 'no answer from the engine for this document';
        this.errors.add({ id: hit._id, reason: `still without a signature after the job and ${plural(this.sweeps, 'sweep')} (${why}); run the same command with --resume` });
      }
    }
  }

  /** After a restart, documents found unchanged may have been read twice: the engine knows how many there are. */
  private async recountUnchanged(): Promise<void> {
    const query = {
      bool: {
        filter: [this.job.read.query ?? { match_all: {} }, { term: { [this.field('params')]: this.params } }],
        must_not: [this.stampedByThisJob(), ...this.excludingFailed()],
      },
    };
    this.counts.unchanged = await countMatching(this.client, { index: this.job.index, query, slice: this.job.read.slice });
    this.counts.seen = this.counts.annotated + this.counts.unchanged + this.counts.failed + this.missing;
  }

  // --- progress, checkpoint, summary -------------------------------------------------------------------

  private report(force = false): void {
    const t = performance.now();
    if (!force && t - this.lastProgress < 1000) return;
    this.lastProgress = t;
    const { annotated, unchanged, failed } = this.counts;
    this.job.onProgress?.({ ...this.counts, done: annotated + unchanged + failed, total: this.total, elapsedSeconds: (t - this.started) / 1000 });
  }

  get complete(): boolean {
    return this.finished && !this.interrupted && this.missing === 0;
  }

  /**
   * Replaces the checkpoint file: only once this run may have changed the index, or when it is complete; a
   * run refused before writing leaves the checkpoint of the run before it (complete or resumable) as it was.
   */
  private async saveCheckpoint(complete: boolean): Promise<void> {
    if (this.dryRun || !(complete || this.writing)) return;
    const checkpoint = this.saved.checkpoint;
    checkpoint.updatedAt = new Date().toISOString();
    checkpoint.complete = complete;
    checkpoint.counts = Object.fromEntries(Object.entries(this.counts).map(([k, v]) => [k, v + (this.previous[k] ?? 0)]));
    await writeCheckpoint(this.saved.file, checkpoint);
  }

  async close(): Promise<void> {
    await this.pool.close();
    // (An errors file its disk could not take is said, after the checkpoint is saved.)
    try {
      await this.errors.close();
    } finally {
      await this.saveCheckpoint(this.complete).catch(() => undefined);
    }
  }

  summary(): AnnotateSummary {
    this.report(true);
    return {
      index: this.job.index,
      params: this.params,
      ...this.counts,
      seconds: (performance.now() - this.started) / 1000,
      dryRun: this.dryRun,
      complete: this.complete,
      missing: this.missing,
      closedIndices: this.closedIndices,
      notes: this.notes,
      restarts: this.restarts,
      sweeps: this.sweeps,
      retries: this.client.retries.since(this.retriesAtStart),
      checkpoint: this.dryRun ? undefined : this.saved.file,
      errorsFile: this.errors.count > 0 ? this.errors.file : undefined,
      peakMemoryMb: peakMemoryMb(),
      timing: this.usage.read(),
      inFlight: this.setup.inFlight.describe(),
      sample: this.dryRun ? this.sample : undefined,
    };
  }
}

export type { SignPool };
