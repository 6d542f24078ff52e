// near-dup annotate: every matching document of an index gets the near-dup fields, written with bulk
// partial updates (nothing else of the document is touched), guarded by optimistic concurrency so a
// document changed meanwhile is re-read and re-signed rather than overwritten with a stale signature.
//
// Nothing is taken on trust: a scan page lost on the way starts the scan again from the documents this
// run has not written, and at the end the engine is asked how many documents of the job still have no
// signature of these parameters. Those are done in a sweep; what cannot be done is listed, and the job
// is not complete.
import { peakMemoryMb, UsageMeter } from './usage.js';
import { DEFAULT_MAX_CHARS, mergeUnderPrefix, underPrefix } from '../annotation.js';
import type { EngineClient, IndexMappings } from '../engine/client.js';
import type { RetrySnapshot } from '../engine/retry.js';
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
import { BulkWriter } from './bulk-writer.js';
import { defaultCheckpointPath, identityDifferences, readCheckpoint, writeCheckpoint, type Checkpoint } from './checkpoint.js';
import { ErrorsFile } from './errors-file.js';
import { InFlightLimit } from '../engine/in-flight.js';
import { planInFlight } from '../engine/in-flight-plan.js';
import { initIndex } from '../indices/init.js';
import { planMapping } from '../indices/mapping.js';
import { requireScroll } from '../engine/privileges.js';
import type { KeyLists } from '../stored/write.js';
import { createSignPool, type SignPool } from '../signing/sign-pool.js';

export interface AnnotateOptions {
  index: string;
  fields: string[];
  prefix: string;
  signer: SignerOptions;
  /** A query in the engine's JSON DSL; documents outside it are not read. */
  query?: Record<string, unknown>;
  slice?: { id: number; max: number };
  resume?: boolean;
  checkpointFile?: string;
  errorsFile?: string;
  dryRun?: boolean;
  /** Re-sign documents whose stored content hash and params already match. */
  force?: boolean;
  /**
   * Keep each document's _version (a producer indexing with version_type=external would otherwise get 409
   * on its next version): the whole document is written back at the version read, with
   * version_type=external_gte, instead of a partial update. Reads whole documents.
   */
  keepVersion?: boolean;
  maxChars?: number;
  threads?: number;
  pageSize?: number;
  bulk?: BulkOptions;
  onProgress?: (progress: AnnotateProgress) => void;
  /** Set to stop early (Ctrl-C): work in flight is finished and the checkpoint written. */
  signal?: AbortSignal;
}

export interface AnnotateCounts {
  seen: number;
  annotated: number;
  unchanged: number;
  /** Documents that cannot be signed or were refused by the engine (listed in the errors file). */
  failed: number;
  empty: number;
  /** Documents whose text was cut at --max-chars. */
  cut: number;
  /** Documents changed by someone else while being annotated, re-read and re-signed. */
  conflicts: number;
}

export interface AnnotateProgress extends AnnotateCounts {
  total?: number;
  elapsedSeconds: number;
}

export interface AnnotateSummary extends AnnotateCounts {
  index: string;
  params: string;
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
  /** Scan pages lost on the way, after which the scan started again from what was left. */
  restarts: number;
  /** Extra passes over documents the engine still reported without a signature after the scan. */
  sweeps: number;
  /** Requests sent again, by cause, and the seconds spent waiting before them. */
  retries: RetrySnapshot;
  checkpoint?: string;
  errorsFile?: string;
  /** Peak resident memory of this process (main thread and signing threads), MB. */
  peakMemoryMb: number;
  /** This process's CPU seconds (every thread), and the seconds spent waiting for the engine's answers (summed over requests in flight together). */
  timing: { cpuSeconds: number; engineWaitSeconds: number };
  /** With --dry-run: a few of the updates that would have been sent. */
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
 * @param options `index` (an index, alias, pattern or data stream); `fields` (at least one text field;
 *   several are joined); `prefix` (DEFAULT_PREFIX); `signer` (createSigner's options); `query` (default:
 *   every document); `slice` for one of several processes; `resume` with `checkpointFile` (default
 *   .near-dup/annotate-INDEX.json); `errorsFile`; `dryRun`; `force` (sign documents already current);
 *   `keepVersion`; `maxChars` (default DEFAULT_MAX_CHARS, 10,000,000); `threads` (default: every core); `pageSize` (default
 *   1,000); `bulk` (BulkOptions); `onProgress`; `signal` to stop early.
 * @returns the counts; `complete` is true when the engine reports no document of the job left unsigned.
 * @throws {UsageError} an option out of range (before connecting), a field the mapping has no room for;
 *   the message names the option key.
 * @throws {UserError} an index that does not exist, is blocked or keeps only part of `_source`; a
 *   checkpoint that is missing or for another job; an engine that refuses or cannot be reached.
 */
export async function annotateIndex(client: EngineClient, options: AnnotateOptions): Promise<AnnotateSummary> {
  checkAnnotateOptions(options);
  const mappings = await checkTextFields(client, options.index, options.fields, options.prefix);
  // A dry run changes no mapping: it shows the updates as an index of the older layout would take them.
  let keyLists: KeyLists = 'lists';
  if (!options.dryRun) {
    const plans = Object.values(mappings).map((m) => planMapping(m.mappings, options.prefix));
    // A near-dup field mapped in a way that cannot change: initIndex refuses it, naming it, before anything is written.
    if (plans.some((p) => p.conflicts.length > 0)) await initIndex(client, options.index, options.prefix);
    keyLists = plans.some((p) => p.keyLists === 'lists') ? 'lists' : 'joined';
  }
  const inFlight = new InFlightLimit(await planInFlight(client, options.index, options.bulk?.concurrency));
  const run = new AnnotateRun(client, options, await openCheckpoint(options), { keyLists, inFlight });
  run.closedIndices = await closedIndicesBehind(client, options.index);
  try {
    await run.begin();
    await run.pass(run.firstQuery());
    await run.redoConflicts();
    await run.finish();
  } catch (err) {
    throw client.explain(err, options.index);
  } finally {
    await run.close();
  }
  return run.summary();
}

/** The job's options, checked here once for the CLI and the library alike. */
export function checkAnnotateOptions(options: AnnotateOptions): void {
  if (options.fields.length === 0) throw new UsageError((o) => `name at least one text field with ${o('fields')}`);
  requireWholeNumbers([['pageSize', options.pageSize, 1], ['maxChars', options.maxChars, 1], ['threads', options.threads, 1]]);
  checkBulkOptions(options.bulk);
  if (options.slice) checkSlice(options.slice);
}

/** Slice `id` of `max`: whole numbers, 0 <= id < max. */
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
  const { index, fields, prefix, query, slice } = options;
  return { index, fields, prefix, params: resolveSignerSettings(options.signer).params, query: query ?? null, slice: slice ?? null };
}

/** The checkpoint to continue (with --resume, checked to be the same job) or a new one. */
async function openCheckpoint(options: AnnotateOptions): Promise<{ file: string; checkpoint: Checkpoint }> {
  const file = options.checkpointFile ?? defaultCheckpointPath('annotate', options.index, options.slice);
  const identity = annotateIdentity(options);
  if (options.resume) {
    const checkpoint = await readCheckpoint(file);
    if (!checkpoint) throw new UserError((o) => `no checkpoint at ${file} to resume from; run without ${o('resume')} to start`);
    const differences = identityDifferences(checkpoint.identity, identity);
    if (differences.length > 0) {
      throw new UserError((o) => `the checkpoint ${file} is for a different job (${differences.join(', ')} differ); run with the same options, or without ${o('resume')} to start over`);
    }
    return { file, checkpoint };
  }
  const now = new Date().toISOString();
  return { file, checkpoint: { job: 'annotate', index: options.index, identity, startedAt: now, updatedAt: now, complete: false, counts: {} } };
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
  /** The source fields read: the text and the stored signature, or everything (--keep-version, or when those are most of it). */
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
    private readonly options: AnnotateOptions,
    private readonly saved: { file: string; checkpoint: Checkpoint },
    private readonly setup: { keyLists: KeyLists; inFlight: InFlightLimit },
  ) {
    this.retriesAtStart = client.retries.snapshot();
    this.usage = new UsageMeter(client);
    this.params = resolveSignerSettings(options.signer).params;
    this.dryRun = options.dryRun ?? false;
    this.previous = options.resume ? { ...saved.checkpoint.counts } : {};
    // The whole stored signature: one that is damaged is not current, whatever its content hash says.
    this.sourceIncludes = options.keepVersion ? true : [...options.fields, ...new StoredLayout(options.prefix).paths(...SIGNATURE_FIELDS)];
    this.errors = ErrorsFile.forIndex(options.index, options.errorsFile);
    this.pool = createSignPool(options.threads);
    this.writer = new BulkWriter({
      send: (ndjson) => client.bulkNdjson(ndjson),
      ...options.bulk,
      inFlight: setup.inFlight,
      retries: client.retries,
      onSuccess: (op) => {
        this.counts.annotated++;
        this.unwritten.delete(op.id);
      },
      onFailure: (op, reason, status, resent) => this.onWriteFailure(op.id, op.context as DocLocation, reason, status, resent),
      // Only a run that is about to write checks that it may, adds the fields to the mapping and replaces
      // the checkpoint: a run refused (or with nothing to sign) leaves the index and the checkpoint as they were.
      beforeFirstSend: () => this.prepareWrites(),
    });
  }

  private field(name: StoredField): string {
    return storedPath(this.options.prefix, name);
  }

  /** Before the first write: blocks and privileges (asked in requests that change nothing), the mapping, the checkpoint. */
  private async prepareWrites(): Promise<void> {
    const { index, prefix, keepVersion } = this.options;
    await requireWritable(this.client, index, { action: keepVersion ? 'index' : 'update', refresh: true });
    const { keyLists } = await initIndex(this.client, index, prefix);
    if (keyLists !== this.setup.keyLists) {
      throw new UserError(`the mapping of "${index}" changed while annotate was reading it (the near-dup fields take ${keyLists} key lists now); run the same command again`);
    }
    this.writing = true;
    await this.saveCheckpoint(false);
  }

  async begin(): Promise<void> {
    const { index, slice } = this.options;
    // A scroll's pages after the first need a privilege of their own: asked before the first page is signed and written.
    if (this.client.pointInTime !== 'elasticsearch' || slice) await requireScroll(this.client, index);
    this.total = await countMatching(this.client, { index, query: this.firstQuery(), slice });
    // The whole source is cheaper for the engine to hand out than a filtered one, where little is left out.
    if (this.sourceIncludes !== true && this.total > 0) this.sourceIncludes = await sourceToRead(this.client, index, this.firstQuery(), this.sourceIncludes);
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

  /** The first scan: every document of the job, or with --resume those the job has not signed yet. */
  firstQuery(): Record<string, unknown> {
    return { bool: { filter: [this.options.query ?? { match_all: {} }], must_not: this.options.resume ? [this.stampedByThisJob()] : [] } };
  }

  /** After a lost page: what this job has not yet signed, nor given up on. */
  private remainingQuery(): Record<string, unknown> {
    return { bool: { filter: [this.options.query ?? { match_all: {} }], must_not: [this.stampedByThisJob(), ...this.excludingFailed()] } };
  }

  /** At the end: documents of the job with no signature of these params at all (not failed for good). */
  private lackingQuery(): Record<string, unknown> {
    return { bool: { filter: [this.options.query ?? { match_all: {} }], must_not: [{ term: { [this.field('params')]: this.params } }, ...this.excludingFailed()] } };
  }

  // --- reading and signing --------------------------------------------------------------------------

  /**
   * Reads every document of `query` and signs it; the next page is fetched while this one is signed. A
   * lost scroll page restarts the scan from `restartQuery` once the work so far is written and visible.
   */
  async pass(query: Record<string, unknown>, restartQuery = () => this.remainingQuery()): Promise<void> {
    const pages = scanIndex(this.client, {
      index: this.options.index,
      query,
      sourceIncludes: this.sourceIncludes === true ? undefined : this.sourceIncludes,
      pageSize: this.options.pageSize ?? 1000,
      slice: this.options.slice,
      seqNoPrimaryTerm: true,
      version: this.options.keepVersion,
      pointInTime: this.client.pointInTime,
      // A dry run writes nothing, so what is left cannot be asked of the engine: skip what was read instead.
      recovery: this.dryRun ? 'skip-seen' : async () => {
        await this.processing.catch(() => undefined);
        await this.writer.flush();
        if (this.writing) await this.client.refresh(this.options.index);
        return restartQuery();
      },
      onRestart: () => this.restarts++,
    });
    let next = pages.next();
    try {
      for (;;) {
        const page = await next;
        if (page.done) break;
        if (this.options.signal?.aborted) {
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
    await this.writer.flush();
  }

  /** Signs a page on the pool and queues its updates; the writer holds us back when the cluster is slower. */
  private async processHits(hits: ScanHit[], mode: 'scan' | 'recheck'): Promise<void> {
    const results = await this.sign(hits);
    for (let i = 0; i < results.length; i++) await this.handleResult(hits[i], results[i], mode);
    if (mode === 'scan') this.counts.seen += hits.length;
    this.report();
    if (performance.now() - this.lastCheckpoint > 5000) {
      this.lastCheckpoint = performance.now();
      await this.saveCheckpoint(false);
    }
  }

  private async sign(hits: ScanHit[]): Promise<AnnotateResult[]> {
    const { fields, prefix, maxChars, force, signer } = this.options;
    const batch = { fields, prefix, maxChars: maxChars ?? DEFAULT_MAX_CHARS, force: force ?? false, keyLists: this.setup.keyLists };
    const inputs: AnnotateInput[] = hits.map((h) => ({ id: h._id, source: h._source }));
    const chunks: Promise<AnnotateResult[]>[] = [];
    for (let i = 0; i < inputs.length; i += BATCH) chunks.push(this.pool.annotate({ options: signer, batch, docs: inputs.slice(i, i + BATCH) }));
    return (await Promise.all(chunks)).flat();
  }

  /**
   * One document's outcome. In a recheck (after a 409), a document found current was written by our own
   * lost request (annotated) or by someone else's run (unchanged); only one that must be signed again
   * changed meanwhile.
   */
  private async handleResult(hit: ScanHit, result: AnnotateResult, mode: 'scan' | 'recheck'): Promise<void> {
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
    const doc = underPrefix(this.options.prefix, result.fields as unknown as Record<string, unknown>);
    if (this.dryRun) {
      this.counts.annotated++;
      if (this.sample.length < 3) this.sample.push({ id: hit._id, doc });
      return;
    }
    // Written where the document lives (its own index, its routing), never through the alias or stream read.
    const location = locationOf(hit);
    if (this.options.keepVersion && hit._version !== undefined) {
      // The document as read, with the fields, at its own version: a newer version written meanwhile answers 409.
      const whole = mergeUnderPrefix(hit._source ?? {}, this.options.prefix, result.fields as unknown as Record<string, unknown>);
      const meta = actionMeta(hit._id, location, { version: hit._version, version_type: 'external_gte' });
      return this.writer.add({ id: hit._id, action: { index: meta }, body: whole, context: location });
    }
    const guard = hit._seq_no !== undefined && hit._primary_term !== undefined ? { if_seq_no: hit._seq_no, if_primary_term: hit._primary_term } : {};
    await this.writer.add({ id: hit._id, action: { update: actionMeta(hit._id, location, guard) }, body: { doc }, context: location });
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
    for (const id of this.conflicted.keys()) this.fail(id, `still changing after ${MAX_CONFLICT_ROUNDS} attempts; run annotate again`, 409);
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
    const { index, slice } = this.options;
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
    for await (const page of scanIndex(this.client, { index: this.options.index, query: this.lackingQuery(), sourceIncludes: [], slice: this.options.slice, pointInTime: this.client.pointInTime })) {
      for (const hit of page) {
        if (listed++ >= MAX_LISTED_MISSING) return;
        const why = this.unwritten.get(hit._id) ?? 'no answer from the engine for this document';
        this.errors.add({ id: hit._id, reason: `still without a signature after the job and ${this.sweeps} sweeps (${why}); run the same command with --resume` });
      }
    }
  }

  /** After a restart, documents found unchanged may have been read twice: the engine knows how many there are. */
  private async recountUnchanged(): Promise<void> {
    const query = {
      bool: {
        filter: [this.options.query ?? { match_all: {} }, { term: { [this.field('params')]: this.params } }],
        must_not: [this.stampedByThisJob(), ...this.excludingFailed()],
      },
    };
    this.counts.unchanged = await countMatching(this.client, { index: this.options.index, query, slice: this.options.slice });
    this.counts.seen = this.counts.annotated + this.counts.unchanged + this.counts.failed + this.missing;
  }

  // --- progress, checkpoint, summary -------------------------------------------------------------------

  private report(force = false): void {
    const t = performance.now();
    if (!force && t - this.lastProgress < 1000) return;
    this.lastProgress = t;
    this.options.onProgress?.({ ...this.counts, total: this.total, elapsedSeconds: (t - this.started) / 1000 });
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
    await this.errors.close();
    await this.saveCheckpoint(this.complete).catch(() => undefined);
  }

  summary(): AnnotateSummary {
    this.report(true);
    return {
      index: this.options.index,
      params: this.params,
      ...this.counts,
      seconds: (performance.now() - this.started) / 1000,
      dryRun: this.dryRun,
      complete: this.complete,
      missing: this.missing,
      closedIndices: this.closedIndices,
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
