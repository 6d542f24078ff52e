// near-dup ingest: NDJSON documents indexed already annotated, with the bulk writer's back-pressure,
// retries and per-document error reporting.
//
// Every document goes out with an id (its --id-field, or one near-dup chooses, like the engine's own),
// so a bulk request whose answer was lost can be sent again without doubling anything: an `index` with
// the user's id writes the same document twice, a `create` with ours answers 409 the second time, which
// then means "done by the lost request". A data stream takes only `create`, the user's ids too: a 409 there
// is a document already in the stream, counted unchanged when it is the same line. The engine is asked, a
// thousand ids at a time, whether it holds every document reported indexed, where it wrote each one.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Readable } from 'node:stream';
import { DEFAULT_MAX_CHARS, DEFAULT_PREFIX, valueAt } from '../annotation.js';
import { type EngineClient, EngineResponseError } from '../engine/client.js';
import { requireWritable } from '../indices/index-state.js';
import { onlyRefusals } from '../engine/privileges.js';
import type { RetrySnapshot } from '../engine/retry.js';
import { type BulkOptions, checkBulkOptions, requireWholeNumbers, UsageError } from '../errors.js';
import { resolveSignerSettings, type SignerOptions } from '../signature.js';
import type { KeyLists } from '../stored/write.js';
import type { TemplateTokens } from '../sketch/template-tokens.js';
import { ANNOTATE_DEFAULTS, type AnnotateSettings, resolveBulkOptions } from './annotate.js';
import { checkOptionKeys, given, type OptionKeys } from './option-groups.js';
import { type BulkOperation, BulkWriter } from './bulk-writer.js';
import { ErrorsFile } from './errors-file.js';
import { compareWithStored, type Refused } from './already-there.js';
import type { IngestLineOptions, IngestResult } from '../signing/ingest-lines.js';
import { InFlightLimit } from '../engine/in-flight.js';
import { planInFlight } from '../engine/in-flight-plan.js';
import { initIndex } from '../indices/init.js';
import { type LineBatch, type LongLine, lineBatches, MAX_LINE_BYTES } from '../signing/line-batches.js';
import { createSignPool, type SignPool } from '../signing/sign-pool.js';
import { plural } from '../plural.js';
import { DEFAULT_TEMPLATE_REQUEST, findTemplate, signedWithoutOn, storeTemplate } from '../indices/template-store.js';
import { drawFromLines, MAX_HELD_SAMPLE_BYTES, type TemplateRequest, templateDraw, tooFewNote } from './template-sample.js';

/** What ingest writes, and where. */
export interface IngestOutput {
  /** The object the near-dup fields go under (default `near_dup`). */
  prefix?: string;
  /**
   * The field whose value (a string or a number, 1 to 512 bytes) becomes each document's _id. Default, and
   * for a line without it: an id near-dup chooses, 20 random URL-safe characters like the engine's own,
   * written with `create` so that a request sent again after a lost answer never doubles a document.
   */
  idField?: string;
  /** Where the lines that failed are listed, one JSON line each, with their line number (default near-dup-errors-INDEX.jsonl). */
  errorsFile?: string;
}

/** How much is signed and written at once. */
export interface IngestLimits {
  /** Characters of a document's text that are signed: longer texts are cut, and counted in `cut` (default 10,000,000; at least 1). */
  maxChars?: number;
  /** Signing threads (default: every core, `os.availableParallelism()`; at least 1). */
  threads?: number;
  /**
   * Bytes of the longest line taken (default 100 MB; 1 to MAX_LINE_BYTES, 500 MiB): a longer line is
   * passed over as it is read, never held whole, and fails alone (listed with its number and length).
   */
  maxLineBytes?: number;
  /** The bulk requests that index the documents (defaults in INGEST_DEFAULTS.bulk; concurrency planned from the cluster). */
  bulk?: BulkOptions;
}

/** What onProgress is told, at most once a second (and once every line is read, and at the end): lines read, documents indexed and failed so far. */
export interface IngestProgress {
  seen: number;
  /**
   * Documents settled: indexed and acknowledged by the engine, or failed. Progress and its rate count these:
   * `seen` (read and signed) runs ahead by the writes in flight.
   */
  done: number;
  indexed: number;
  failed: number;
  elapsedSeconds: number;
}

/**
 * The options of ingestStream, grouped: output and limits. Every member but `index` and `fields` may be
 * left out (INGEST_DEFAULTS).
 */
export interface IngestOptions {
  /** The index (or data stream, or alias with a write index) the documents go to: created with the near-dup fields when missing. */
  index: string;
  /** The text fields signed (at least one; several are joined with a space; dotted paths reach into objects). */
  fields: string[];
  /** How signatures are made: createSigner's options (default: every default, `DEFAULT_CONDENSER`). */
  signer?: SignerOptions;
  output?: IngestOutput;
  limits?: IngestLimits;
  /**
   * Template tokens, marked in each signature (annotate's `template`): the set the index keeps for the same
   * draw, else one drawn from the first `sample` documents of the input and kept with the index before the
   * first write. Default DEFAULT_TEMPLATE_REQUEST (drawn from 2,000 documents or more, else none, said
   * through onWarning); `false`: none.
   */
  template?: TemplateRequest | false;
  /**
   * The input again from its start (a regular file; nothing else can be read twice): the sample is then
   * read in a first pass and the input read again. Without it, the sample's lines are held in memory (at most MAX_HELD_SAMPLE_BYTES) and ingested
   * after it.
   */
  reread?: () => Readable;
  /** Told, in one line each, what the user should know of the run (a sample cut short). */
  onWarning?: (line: string) => void;
  onProgress?: (progress: IngestProgress) => void;
}

/** What ingestStream returns (and `near-dup ingest` prints as its JSON line). */
export interface IngestSummary {
  index: string;
  /** The params keyword of the signatures written. */
  params: string;
  /** Lines holding a document (blank lines not counted). */
  seen: number;
  /** Documents the engine took (and, checked at the end, holds). */
  indexed: number;
  /**
   * Lines already in a data stream under their --id-field id, the stored document the same line (a re-run):
   * not written again, as a stream overwrites nothing. Another document at the id fails the line.
   */
  unchanged: number;
  /** Lines that could not be signed or were refused by the engine (listed in the errors file). */
  failed: number;
  /** Documents whose text gives no token: indexed, with a signature of no tokens. */
  empty: number;
  /** Documents whose text was cut at `maxChars`. */
  cut: number;
  /** Blank lines, skipped. */
  blank: number;
  /** Lines longer than `maxLineBytes`, passed over unread (counted in `failed` too, each listed in the errors file). */
  tooLong: number;
  /** The first of them: its line number and length in bytes. */
  firstTooLong?: LongLine;
  /** Documents sent again after a request whose answer was lost (none doubled). */
  resent: number;
  /** Documents the engine confirmed it holds at the end, of those reported indexed. */
  confirmed: number;
  /** What the run chose that the user did not ask for, in one line each (signed without template tokens, and why). */
  notes: string[];
  /** Requests sent again, by cause, and the seconds spent waiting before them. */
  retries: RetrySnapshot;
  /** Wall seconds of the whole run. */
  seconds: number;
  /** Bulk requests kept in flight, and what chose that number (see engine/in-flight-plan.ts). */
  inFlight: string;
  /** Where the lines that failed are listed, when there are any. */
  errorsFile?: string;
}

/** Every default of ingestStream, in one place (the command line's defaults are these too). */
export const INGEST_DEFAULTS = {
  prefix: DEFAULT_PREFIX,
  /** Characters of a text signed; the rest is cut. */
  maxChars: DEFAULT_MAX_CHARS,
  /** Bytes of the longest line read: a document of 100 MB is the engines' own http.max_content_length. */
  maxLineBytes: 100 * 1024 * 1024,
  /** Each bulk request at most 5 MB and 1,000 operations: annotate's (ANNOTATE_DEFAULTS.bulk). */
  bulk: ANNOTATE_DEFAULTS.bulk,
} as const satisfies Partial<IngestLimits & IngestOutput>;

/** The options with every default filled in: what the run works from (resolveIngestOptions). */
export interface IngestSettings {
  index: string;
  fields: string[];
  signer: SignerOptions;
  output: { prefix: string; idField?: string; errorsFile: string };
  limits: { maxChars: number; threads: number; maxLineBytes: number; bulk: AnnotateSettings['limits']['bulk'] };
  template?: TemplateRequest;
  onProgress?: (progress: IngestProgress) => void;
}

/** The keys ingestStream reads (`satisfies` fails the build when a member is added to its interface and not here). */
const INGEST_KEYS: OptionKeys = {
  job: 'ingest',
  topLevel: { index: 1, fields: 1, signer: 1, output: 1, limits: 1, template: 1, reread: 1, onWarning: 1, onProgress: 1 } satisfies Record<keyof IngestOptions, 1>,
  groups: {
    output: { prefix: 1, idField: 1, errorsFile: 1 } satisfies Record<keyof IngestOutput, 1>,
    limits: { maxChars: 1, threads: 1, maxLineBytes: 1, bulk: 1 } satisfies Record<keyof IngestLimits, 1>,
  },
};

/**
 * The options with every default filled in: resolved once, at the start of a run (and by
 * checkIngestOptions). Throws a UsageError only for a key ingest does not read (a member out of its group
 * names where it goes); the values are checked by checkIngestOptions.
 */
export function resolveIngestOptions(options: IngestOptions): IngestSettings {
  checkOptionKeys(options, INGEST_KEYS);
  const [output, limits] = [given(options.output), given(options.limits)];
  const { index, fields, signer = {}, template, onProgress } = options;
  return {
    index,
    fields,
    signer,
    ...(template === false ? {} : { template: template ?? DEFAULT_TEMPLATE_REQUEST }),
    output: { prefix: output.prefix ?? INGEST_DEFAULTS.prefix, idField: output.idField, errorsFile: ErrorsFile.forIndex(index, output.errorsFile).file },
    limits: {
      maxChars: limits.maxChars ?? INGEST_DEFAULTS.maxChars,
      threads: limits.threads ?? os.availableParallelism(),
      maxLineBytes: limits.maxLineBytes ?? INGEST_DEFAULTS.maxLineBytes,
      bulk: resolveBulkOptions(limits.bulk),
    },
    onProgress,
  };
}

/**
 * The job's options, checked here once for the CLI and the library alike (ingestStream checks them too,
 * before connecting).
 *
 * @throws {UsageError} a key ingest does not read, no field, `maxChars` or `threads` not a whole number of
 *   at least 1, `maxLineBytes` not one from 1 to MAX_LINE_BYTES, bulk options out of range; the message
 *   names the option key.
 */
export function checkIngestOptions(options: IngestOptions): void {
  checkSettings(resolveIngestOptions(options));
}

function checkSettings({ fields, limits, template }: IngestSettings): void {
  if (!Array.isArray(fields) || fields.length === 0) throw new UsageError((o) => `name at least one text field with ${o('fields')}`);
  requireWholeNumbers([['maxChars', limits.maxChars, 1], ['threads', limits.threads, 1], ['maxLineBytes', limits.maxLineBytes, 1], ['template.sample', template?.sample, 1]]);
  if (template && !(template.share > 0 && template.share < 1)) {
    throw new UsageError((o) => `${o('template.share')} must be a number above 0 and below 1 (0.05: tokens in more than 5% of the documents are template text), got ${template.share}`);
  }
  if (limits.maxLineBytes > MAX_LINE_BYTES) {
    throw new UsageError((o) => `${o('maxLineBytes')} must be a whole number from 1 to ${MAX_LINE_BYTES} (a line is read as one string), got ${limits.maxLineBytes}`);
  }
  checkBulkOptions(limits.bulk);
}

/** Lines of the first batch looked at for `fields`: enough to tell a misspelt field from sparse ones. */
const FIELD_CHECK_LINES = 1000;

/**
 * Refuses `fields` when not one of the first documents (JSON objects among the first lines) has any of the
 * fields, naming the fields they have: a misspelt field, caught before the index is created. Lines that are
 * not JSON objects are left to the signing, which reports each.
 */
export function checkFieldsPresent(bytes: Uint8Array, fields: readonly string[], index: string): void {
  const seen = new Map<string, number>();
  let documents = 0;
  const lines = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8').split('\n', FIELD_CHECK_LINES);
  for (const line of lines) {
    if (line.trim() === '') continue;
    let doc: unknown;
    try {
      doc = JSON.parse(line);
    } catch {
      continue;
    }
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) continue;
    documents++;
    if (fields.some((f) => valueAt(doc, f) !== undefined)) return;
    for (const key of Object.keys(doc)) seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  if (documents === 0) return;
  const theirs = [...seen.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12).map(([k]) => JSON.stringify(k)).join(', ');
  throw new UsageError(
    (o) =>
      `none of the first ${plural(documents, 'document')} has ${fields.length > 1 ? 'any of the fields' : 'the field'} ${fields.map((f) => `"${f}"`).join(', ')}; ` +
      `their fields are ${theirs}: give one of those with ${o('fields')} (nothing was written to "${index}")`,
  );
}

/** An id like the engines' own: 20 URL-safe characters, 120 random bits. */
function newId(): string {
  return randomBytes(15).toString('base64url');
}

/** Ids asked of the engine at once when checking that every indexed document is there. */
const CHECK_CHUNK = 1000;

/**
 * Indexes NDJSON documents from a stream, each signed on the way in (what `near-dup ingest` does): the index
 * is created with the near-dup fields if it is missing, each line becomes a document with its `near_dup`
 * object, and the engine is asked at the end whether every document written is there.
 *
 * @param client near-dup's client, from `connect()`.
 * @param input a readable stream of JSON lines (a file, standard input, an HTTP body).
 * @param options `index` and `fields` (at least one; several are joined); `signer` (createSigner's
 *   options); `output`: `prefix` (`near_dup`), `idField` (default: a random id), `errorsFile`
 *   (near-dup-errors-INDEX.jsonl); `limits`: `maxChars` (10,000,000: longer texts are cut), `threads`
 *   (every core), `maxLineBytes` (100 MB: a longer line fails alone, unread), `bulk` (5 MB, 1,000
 *   operations); `onProgress`. Defaults in INGEST_DEFAULTS.
 * @returns the counts; lines that could not be signed or written are counted as failed and listed in the errors file.
 * @throws {UsageError} a key ingest does not read (a member out of its group, `maxChars` for
 *   `limits.maxChars`, names where it goes), an option out of range, signer options that are not valid
 *   (CondenserSpecError), or `fields` that none of the first documents holds (before anything is
 *   written); the message names the option key.
 * @throws {UserError} an engine that refuses or cannot be reached, an index that cannot take the fields.
 */
export async function ingestStream(client: EngineClient, input: Readable, options: IngestOptions): Promise<IngestSummary> {
  const job = resolveIngestOptions(options);
  checkSettings(job);
  const started = performance.now();
  const retriesAtStart = client.retries.snapshot();
  // The first batch is read before the index is made: `fields` that none of its documents has is refused
  // there, rather than an index created and every line failed.
  const batches = lineBatches(input, BATCH_BYTES, job.limits.maxLineBytes, 'skip')[Symbol.asyncIterator]();
  const first = await batches.next();
  if (!first.done) checkFieldsPresent(first.value.bytes, job.fields, job.index);
  const { keyLists, dataStream } = await prepareIndex(client, job.index, job.output.prefix);
  let lines = prepend(first, batches);
  const notes: string[] = [];
  if (job.template) {
    const chosen = await templateForIngest(client, job, job.template, lines, { ...options, onNote: (note) => notes.push(note) });
    if (chosen.template) job.signer = { ...job.signer, template: chosen.template };
    if (chosen.reread) input.destroy();
    lines = chosen.lines;
  }
  const settings = resolveSignerSettings(job.signer);
  const inFlight = new InFlightLimit(await planInFlight(client, job.index, job.limits.bulk.concurrency));
  const run = new IngestRun(client, job, { keyLists, dataStream, inFlight, started });
  try {
    for (let next = await lines.next(); !next.done; next = await lines.next()) await run.add(next.value);
    await run.finish();
  } catch (err) {
    run.abandon();
    throw client.explain(err, job.index);
  } finally {
    await run.close();
  }
  return {
    index: job.index,
    params: settings.params,
    ...run.counts,
    resent: run.resent,
    confirmed: run.confirmed,
    notes,
    ...(run.firstTooLong ? { firstTooLong: run.firstTooLong } : {}),
    retries: client.retries.since(retriesAtStart),
    inFlight: inFlight.describe(),
    seconds: (performance.now() - started) / 1000,
    errorsFile: run.errorsFile,
  };
}

/** Bytes of NDJSON a batch of lines holds, about. */
const BATCH_BYTES = 256 * 1024;

/** The batches of `rest` after `first` (already read). */
async function* prepend(first: IteratorResult<LineBatch>, rest: AsyncIterator<LineBatch>): AsyncGenerator<LineBatch> {
  for (let next = first; !next.done; next = await rest.next()) yield next.value;
}

/** Batches already read, then the rest of `rest`. */
async function* heldThen(held: LineBatch[], rest: AsyncIterator<LineBatch>): AsyncGenerator<LineBatch> {
  yield* held;
  for (let next = await rest.next(); !next.done; next = await rest.next()) yield next.value;
}

/**
 * The template set ingest signs with: the one the index keeps for the same draw, else one drawn from the
 * first documents of the input and kept with the index (before the first write); and the lines to ingest,
 * from the start: the input read again (`reread`), or the lines held for the sample and the rest after them.
 */
async function templateForIngest(
  client: EngineClient,
  job: IngestSettings,
  asked: TemplateRequest,
  lines: AsyncGenerator<LineBatch>,
  options: Pick<IngestOptions, 'reread' | 'onWarning'> & { onNote: (note: string) => void },
): Promise<{ template?: TemplateTokens; lines: AsyncGenerator<LineBatch>; reread: boolean }> {
  const draw = templateDraw(job.signer, asked);
  const kept = await keptOrRefused(() => findTemplate(client, job.index, draw), asked, options);
  if (kept !== undefined) return { template: kept || undefined, lines, reread: false };
  const { fields, limits } = job;
  const holdBytes = options.reread ? undefined : MAX_HELD_SAMPLE_BYTES;
  const sample = await drawFromLines(lines, { fields, maxChars: limits.maxChars, signer: job.signer, draw, holdBytes });
  if (sample.cutShort) {
    options.onWarning?.(
      `the template sample is ${plural(sample.template.sample, 'document')}, not ${draw.sampleAsked}: their lines filled the ${MAX_HELD_SAMPLE_BYTES / 1024 / 1024} MB held from a stream read once; give the input as a regular file (--file; a pipe or FIFO is read once) to draw from all ${draw.sampleAsked}`,
    );
  }
  const tooFew = asked.atLeast !== undefined && sample.template.sample < asked.atLeast;
  if (tooFew) options.onNote(tooFewNote(job.index, sample.template.sample, asked));
  const template = tooFew ? undefined : (await keptOrRefused(() => storeTemplate(client, job.index, sample.template, draw), asked, options)) || undefined;
  if (!options.reread) return { template, lines: heldThen(sample.held, lines), reread: false };
  const again = lineBatches(options.reread(), BATCH_BYTES, limits.maxLineBytes, 'skip')[Symbol.asyncIterator]();
  return { template, lines: prepend(await again.next(), again), reread: true };
}

/** A store request's answer; `false` when a default request was refused (said, and signed without a set). */
async function keptOrRefused(request: () => Promise<TemplateTokens | undefined>, asked: TemplateRequest, options: { onNote: (note: string) => void }): Promise<TemplateTokens | false | undefined> {
  try {
    return await request();
  } catch (err) {
    options.onNote(signedWithoutOn(err, asked));
    return false;
  }
}

/**
 * Whether this user may write here, asked before anything is changed (of an index that exists: a new one
 * is asked right after it is made, before any document goes in); then the index is made, or its mapping
 * given the near-dup fields. Returns the key-list form its mapping takes, and whether the name writes to
 * a data stream (one there, or one its template makes at the first document).
 */
async function prepareIndex(client: EngineClient, index: string, prefix: string): Promise<{ keyLists: KeyLists; dataStream: boolean }> {
  const checked = await mayWriteIfThere(client, index);
  const { keyLists, streamTemplates } = await initIndex(client, index, prefix);
  if (!checked) await mayWriteIfThere(client, index);
  return { keyLists, dataStream: streamTemplates.length > 0 };
}

/**
 * Asks whether this user may index documents here, and read them back with _mget; false for a name that
 * is not there yet (a data stream is made by its first document, and then the first bulk request's
 * refusal stops the job).
 */
async function mayWriteIfThere(client: EngineClient, index: string): Promise<boolean> {
  try {
    await requireWritable(client, index, { action: 'index', refresh: true });
    // The check of what was indexed reads with _mget: refused there, every document would be written and then failed.
    await onlyRefusals(async () => void (await client.existingIds(index, [`near-dup-privilege-check-${newId()}`])));
    return true;
  } catch (err) {
    if (err instanceof EngineResponseError && err.type === 'index_not_found_exception') return false;
    throw client.explain(err, index);
  }
}

/** One ingest: its counts, its signing pool and writer, and the check that the engine holds what it indexed. */
class IngestRun {
  readonly counts = { seen: 0, indexed: 0, unchanged: 0, failed: 0, empty: 0, cut: 0, blank: 0, tooLong: 0 };
  confirmed = 0;
  firstTooLong?: LongLine;
  /** Lines passed over for their length, by number, until their place in the signed results (an empty line) comes. */
  private readonly longLines = new Map<number, number>();
  private readonly errors: ErrorsFile;
  private readonly writer: BulkWriter;
  private readonly pool: SignPool;
  private readonly lines: IngestLineOptions;
  /** Creates refused with 409, not yet compared with the document the engine holds. */
  private readonly refused: Array<Refused & { line: number; resent: boolean }> = [];
  /** Documents reported indexed, each with the concrete index the engine named, not yet confirmed. */
  private readonly indexedDocs: Array<{ index: string; id: string }> = [];
  private confirming = Promise.resolve();
  /** Signed batches not yet handed to the writer, in order. */
  private readonly pending: Promise<IngestResult[]>[] = [];
  private lastProgress = 0;

  constructor(
    private readonly client: EngineClient,
    private readonly job: IngestSettings,
    private readonly setup: { keyLists: KeyLists; dataStream: boolean; inFlight: InFlightLimit; started: number },
  ) {
    const { output, limits } = job;
    this.errors = new ErrorsFile(output.errorsFile);
    this.writer = new BulkWriter({
      send: (ndjson) => client.bulkNdjson(ndjson),
      ...limits.bulk,
      inFlight: setup.inFlight,
      retries: client.retries,
      onSuccess: (op, result) => this.succeeded(op, result._index),
      onFailure: (op, reason, status, resent, result) => {
        // A document at that id already: ours after a lost answer, or a data stream's from an earlier run.
        if (status === 409 && 'create' in op.action) return this.refusedAsThere(op, result?._index, resent);
        this.counts.failed++;
        this.errors.add({ id: op.id, line: op.context, status, reason });
      },
    });
    this.pool = createSignPool(limits.threads);
    this.lines = { fields: job.fields, prefix: output.prefix, idField: output.idField, maxChars: limits.maxChars, keyLists: setup.keyLists };
  }

  /** Documents sent again after a request whose answer was lost. */
  get resent(): number {
    return this.writer.stats.resent;
  }

  get errorsFile(): string | undefined {
    return this.errors.count > 0 ? this.errors.file : undefined;
  }

  /** Queues a batch of lines for signing; waits while twice as many batches as threads are signed or written. */
  async add({ bytes, firstLineNumber, longLines = [] }: LineBatch): Promise<void> {
    for (const long of longLines) this.longLines.set(long.line, long.bytes);
    this.pending.push(this.pool.ingest({ options: this.job.signer, ingest: this.lines, bytes, firstLineNumber }, [bytes.buffer as ArrayBuffer]));
    while (this.pending.length >= this.pool.threads * 2) await this.drainOne();
  }

  /** Every batch written, the last ids confirmed, and what was indexed made visible. */
  async finish(): Promise<void> {
    while (this.pending.length > 0) await this.drainOne();
    // Everything read: said at once, with the writes still to come.
    this.report(true);
    await this.writer.flush();
    this.report(true);
    await this.confirm(this.indexedDocs.splice(0));
    await this.compare(this.refused.splice(0));
    if (this.counts.indexed > 0) await this.client.refresh(this.job.index);
  }

  /** Cut short with the pool: the first error is the one to report. */
  abandon(): void {
    for (const p of this.pending) p.catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.pool.close();
    await this.errors.close();
  }

  /** `index`: the concrete index the engine says it wrote to (a data stream's backing index, an alias's write index). */
  private succeeded(op: BulkOperation, index: string | undefined): void {
    this.counts.indexed++;
    this.report();
    this.indexedDocs.push({ index: index ?? this.job.index, id: op.id });
    if (this.indexedDocs.length >= CHECK_CHUNK) void this.confirm(this.indexedDocs.splice(0)).catch(() => undefined);
  }

  /** A create refused with 409: compared with the stored document, a thousand at a time. */
  private refusedAsThere(op: BulkOperation, index: string | undefined, resent: boolean): void {
    this.refused.push({ id: op.id, index: index ?? this.job.index, json: op.body as string, line: op.context as number, resent });
    if (this.refused.length >= CHECK_CHUNK) void this.compare(this.refused.splice(0)).catch(() => undefined);
  }

  /**
   * The same line stored: done by a lost request (resent), else there from an earlier run (unchanged).
   * Another document at the id, or none (deleted since the refusal), fails the line.
   */
  private compare(refused: Array<Refused & { line: number; resent: boolean }>): Promise<void> {
    this.confirming = this.confirming.then(async () => {
      if (refused.length === 0) return;
      const found = await compareWithStored(this.client, refused, this.job.output.prefix);
      refused.forEach((r, i) => {
        if (found[i] === 'same' && r.resent) {
          this.counts.indexed++;
          this.confirmed++;
        } else if (found[i] === 'same') {
          this.counts.unchanged++;
        } else {
          this.counts.failed++;
          const reason =
            found[i] === 'different'
              ? `another document with this id is already in ${r.index} (a data stream never overwrites a document, it only creates): delete that one, or give this line another id, and ingest it again`
              : 'refused as already there (409), but the engine does not have it; ingest this document again';
          this.errors.add({ id: r.id, line: r.line, status: 409, reason });
        }
      });
      this.report();
    });
    return this.confirming;
  }

  /** Documents reported indexed, checked with the engine a thousand at a time, as they come, each where it was written. */
  private confirm(docs: Array<{ index: string; id: string }>): Promise<void> {
    this.confirming = this.confirming.then(async () => {
      const found = await this.client.documentsExist(docs);
      docs.forEach(({ id }, i) => {
        if (found[i]) {
          this.confirmed++;
          return;
        }
        this.counts.indexed--;
        this.counts.failed++;
        this.errors.add({ id, reason: 'reported indexed, but the engine does not have it; ingest this document again' });
      });
    });
    return this.confirming;
  }

  private async drainOne(): Promise<void> {
    for (const result of await this.pending.shift()!) await this.handle(result);
    this.report();
  }

  /** The counts told to onProgress, at most once a second unless `force`. */
  private report(force = false): void {
    const now = performance.now();
    if (!force && now - this.lastProgress <= 1000) return;
    this.lastProgress = now;
    const { seen, indexed, unchanged, failed } = this.counts;
    this.job.onProgress?.({ seen, done: indexed + unchanged + failed, indexed, failed, elapsedSeconds: (now - this.setup.started) / 1000 });
  }

  /** A line passed over for its length (an empty line stands in its place): it held a document, which failed. */
  private tooLong(line: number): void {
    const bytes = this.longLines.get(line) as number;
    this.longLines.delete(line);
    this.counts.seen++;
    this.counts.failed++;
    this.counts.tooLong++;
    this.firstTooLong ??= { line, bytes };
    const limit = this.job.limits.maxLineBytes;
    this.errors.add({ line, bytes, reason: `the line is ${bytes} bytes, longer than the ${limit} bytes of maxLineBytes (--max-line-bytes): not read; split the document, or raise the limit` });
  }

  private async handle(result: IngestResult): Promise<void> {
    if ('blank' in result) {
      if (this.longLines.has(result.line)) this.tooLong(result.line);
      else this.counts.blank++;
      return;
    }
    this.counts.seen++;
    if ('error' in result) {
      this.counts.failed++;
      this.errors.add({ id: result.id, line: result.line, reason: result.error });
      return;
    }
    if (result.empty) this.counts.empty++;
    if (result.cut > 0) this.counts.cut++;
    const id = result.id ?? newId();
    const target = { _index: this.job.index, _id: id };
    // A data stream takes only `create`; elsewhere the user's id overwrites, so that a re-run writes each line once.
    const action = result.id === undefined || this.setup.dataStream ? { create: target } : { index: target };
    await this.writer.add({ id, action, body: result.json, context: result.line });
  }
}
