// near-dup annotate: every matching document of an index gets the near-dup fields, written with bulk
// partial updates (nothing else of the document is touched), guarded by optimistic concurrency so a
// document changed meanwhile is re-read and re-signed rather than overwritten with a stale signature.
import { DEFAULT_MAX_CHARS, underPrefix } from '../annotation.js';
import type { EngineClient } from '../engine/client.js';
import { EngineResponseError } from '../engine/errors.js';
import { scanIndex, type ScanHit } from '../engine/scan.js';
import { UserError } from '../errors.js';
import { resolveSignerSettings, type SignerOptions } from '../signature.js';
import type { AnnotateInput, AnnotateResult } from './annotate-batch.js';
import { BulkWriter } from './bulk-writer.js';
import { defaultCheckpointPath, identityDifferences, readCheckpoint, writeCheckpoint, type Checkpoint } from './checkpoint.js';
import { ErrorsFile } from './errors-file.js';
import { initIndex } from './init.js';
import { createSignPool, type SignPool } from './sign-pool.js';

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
  maxChars?: number;
  threads?: number;
  pageSize?: number;
  bulk?: { maxBytes?: number; maxOperations?: number; concurrency?: number };
  onProgress?: (progress: AnnotateProgress) => void;
  /** Set to stop early (Ctrl-C): work in flight is finished and the checkpoint written. */
  signal?: AbortSignal;
}

export interface AnnotateCounts {
  seen: number;
  annotated: number;
  unchanged: number;
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
  complete: boolean;
  checkpoint?: string;
  errorsFile?: string;
  /** Peak resident memory of this process (main thread and signing threads), MB. */
  peakMemoryMb: number;
  /** With --dry-run: a few of the updates that would have been sent. */
  sample?: Array<{ id: string; doc: Record<string, unknown> }>;
}

const BATCH = 100;
const MAX_CONFLICT_ROUNDS = 3;

export async function annotateIndex(client: EngineClient, options: AnnotateOptions): Promise<AnnotateSummary> {
  const started = performance.now();
  const settings = resolveSignerSettings(options.signer);
  const prefix = options.prefix;
  const dryRun = options.dryRun ?? false;
  if (options.fields.length === 0) throw new UserError('name at least one text field with --field');

  if (!dryRun) await initIndex(client, options.index, prefix);
  else if (!(await client.indexExists(options.index))) {
    throw new UserError(`index "${options.index}" does not exist on ${client.url}; check the name (GET /_cat/indices)`);
  }

  // Resume: the documents this job has not written yet are those without this run's params and stamp.
  const checkpointFile = options.checkpointFile ?? defaultCheckpointPath('annotate', options.index, options.slice);
  const identity = { index: options.index, fields: options.fields, prefix, params: settings.params, query: options.query ?? null, slice: options.slice ?? null };
  let checkpoint: Checkpoint | undefined;
  if (options.resume) {
    checkpoint = await readCheckpoint(checkpointFile);
    if (!checkpoint) throw new UserError(`no checkpoint at ${checkpointFile} to resume from; run without --resume to start`);
    const differences = identityDifferences(checkpoint.identity, identity);
    if (differences.length > 0) {
      throw new UserError(
        `the checkpoint ${checkpointFile} is for a different job (${differences.join(', ')} differ); ` +
          'run with the same options, or without --resume to start over',
      );
    }
  }
  const now = new Date().toISOString();
  checkpoint ??= { job: 'annotate', index: options.index, identity, startedAt: now, updatedAt: now, complete: false, counts: {} };
  const counts: AnnotateCounts = { seen: 0, annotated: 0, unchanged: 0, failed: 0, empty: 0, cut: 0, conflicts: 0 };
  const previous = options.resume ? { ...checkpoint.counts } : {};
  const saveCheckpoint = async (complete: boolean) => {
    if (dryRun) return;
    checkpoint!.updatedAt = new Date().toISOString();
    checkpoint!.complete = complete;
    checkpoint!.counts = Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v + (previous[k] ?? 0)]));
    await writeCheckpoint(checkpointFile, checkpoint!);
  };
  await saveCheckpoint(false);

  const filter: Record<string, unknown>[] = [options.query ?? { match_all: {} }];
  const mustNot: Record<string, unknown>[] = [];
  if (options.resume) {
    mustNot.push({
      bool: {
        filter: [
          { term: { [`${prefix}.params`]: settings.params } },
          { range: { [`${prefix}.annotated_at`]: { gte: checkpoint.startedAt } } },
        ],
      },
    });
  }
  const query = { bool: { filter, must_not: mustNot } };
  const sourceIncludes = [...options.fields, `${prefix}.content_hash`, `${prefix}.params`];

  let total: number | undefined;
  try {
    total = await client.count(options.index, query);
    if (options.slice) total = Math.ceil(total / options.slice.max);
  } catch (err) {
    throw client.describe(err, options.index);
  }

  const errors = new ErrorsFile(options.errorsFile ?? `near-dup-errors-${options.index.replace(/[^A-Za-z0-9._-]/g, '_')}.jsonl`);
  const conflicted = new Set<string>();
  const sample: AnnotateSummary['sample'] = [];
  const writer = new BulkWriter({
    send: (ndjson) => client.bulkNdjson(ndjson),
    maxBytes: options.bulk?.maxBytes,
    maxOperations: options.bulk?.maxOperations,
    concurrency: options.bulk?.concurrency,
    onSuccess: () => counts.annotated++,
    onFailure: (op, reason, status) => {
      if (status === 409) {
        conflicted.add(op.id);
        return;
      }
      counts.failed++;
      errors.add({ id: op.id, status, reason });
    },
  });

  const pool = createSignPool(options.threads);
  const batchOptions = { fields: options.fields, prefix, maxChars: options.maxChars ?? DEFAULT_MAX_CHARS, force: options.force ?? false };
  let lastProgress = 0;
  const report = (force = false) => {
    const t = performance.now();
    if (!force && t - lastProgress < 1000) return;
    lastProgress = t;
    options.onProgress?.({ ...counts, total, elapsedSeconds: (t - started) / 1000 });
  };
  let lastCheckpoint = performance.now();

  // Signs a page on the pool and queues its updates; the writer holds us back when the cluster is slower.
  const processHits = async (hits: ScanHit[]) => {
    const inputs: AnnotateInput[] = hits.map((h) => ({ id: h._id, source: h._source }));
    const chunks: Promise<AnnotateResult[]>[] = [];
    for (let i = 0; i < inputs.length; i += BATCH) {
      chunks.push(pool.annotate({ options: options.signer, batch: batchOptions, docs: inputs.slice(i, i + BATCH) }));
    }
    const results = (await Promise.all(chunks)).flat();
    for (let i = 0; i < results.length; i++) {
      const result = results[i];
      const hit = hits[i];
      if (result.status === 'unchanged') counts.unchanged++;
      else if (result.status === 'failed') {
        counts.failed++;
        errors.add({ id: hit._id, reason: result.reason });
      } else {
        if (result.empty) counts.empty++;
        if (result.cut > 0) counts.cut++;
        const doc = underPrefix(prefix, result.fields as unknown as Record<string, unknown>);
        if (dryRun) {
          counts.annotated++;
          if (sample.length < 3) sample.push({ id: hit._id, doc });
          continue;
        }
        const action: Record<string, unknown> = { _index: hit._index, _id: hit._id };
        if (hit._seq_no !== undefined && hit._primary_term !== undefined) {
          action.if_seq_no = hit._seq_no;
          action.if_primary_term = hit._primary_term;
        }
        await writer.add({ id: hit._id, action: { update: action }, body: { doc } });
      }
    }
    counts.seen += hits.length;
    report();
    if (performance.now() - lastCheckpoint > 5000) {
      lastCheckpoint = performance.now();
      await saveCheckpoint(false);
    }
  };

  let interrupted = false;
  try {
    const pages = scanIndex(client, {
      index: options.index,
      query,
      sourceIncludes,
      pageSize: options.pageSize ?? 1000,
      slice: options.slice,
      seqNoPrimaryTerm: true,
      pointInTime: client.pointInTime,
    });
    // Fetch the next page while this one is being signed.
    let next = pages.next();
    for (;;) {
      const page = await next;
      if (page.done) break;
      if (options.signal?.aborted) {
        interrupted = true;
        await pages.return(undefined);
        break;
      }
      next = pages.next();
      await processHits(page.value);
    }
    await writer.flush();

    // Documents changed while we signed them: read them again and sign what they hold now.
    for (let round = 0; round < MAX_CONFLICT_ROUNDS && conflicted.size > 0 && !interrupted; round++) {
      const ids = [...conflicted];
      conflicted.clear();
      counts.conflicts += ids.length;
      counts.seen -= ids.length; // seen again below
      const fresh = await getDocuments(client, options.index, ids, sourceIncludes);
      const missing = ids.filter((id) => !fresh.some((h) => h._id === id));
      for (const id of missing) {
        counts.failed++;
        errors.add({ id, reason: 'deleted while being annotated' });
      }
      counts.seen += missing.length;
      await processHits(fresh);
      await writer.flush();
    }
    for (const id of conflicted) {
      counts.failed++;
      errors.add({ id, status: 409, reason: `still changing after ${MAX_CONFLICT_ROUNDS} attempts; run annotate again` });
    }
    if (!dryRun && counts.annotated > 0) await client.refresh(options.index);
  } catch (err) {
    if (err instanceof UserError) throw err;
    throw err instanceof EngineResponseError || (err as Error).name === 'ConnectionError' || (err as Error).name === 'TimeoutError'
      ? client.describe(err, options.index)
      : err;
  } finally {
    await pool.close();
    await errors.close();
    await saveCheckpoint(!interrupted).catch(() => undefined);
  }
  report(true);
  return {
    index: options.index,
    params: settings.params,
    ...counts,
    seconds: (performance.now() - started) / 1000,
    dryRun,
    complete: !interrupted,
    checkpoint: dryRun ? undefined : checkpointFile,
    errorsFile: errors.count > 0 ? errors.file : undefined,
    peakMemoryMb: Math.round(process.resourceUsage().maxRSS / 1024),
    sample: dryRun ? sample : undefined,
  };
}

async function getDocuments(client: EngineClient, index: string, ids: string[], includes: string[]): Promise<ScanHit[]> {
  const response = await client.request<{ docs: Array<ScanHit & { found?: boolean }> }>('POST', `/${encodeURIComponent(index)}/_mget`, {
    docs: ids.map((_id) => ({ _id, _source: includes })),
  });
  return response.docs.filter((d) => d.found);
}

export type { SignPool };
