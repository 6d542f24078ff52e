// near-dup annotate --follow: annotate, sleep, and annotate again what was written meanwhile, until stopped.
//
// What changed is asked of the engine by sequence number: every write to a document (a new one, a text
// changed by a full index or a partial update, and annotate's own writes) gives it the next `_seq_no` of
// its shard. Each pass first notes every shard's global checkpoint (every write at or below it has been
// applied on all copies of the shard), then refreshes the followed indices, so that the pass's scan sees
// every write up to its marks, searchable or not before (refresh off, or between two refreshes); the
// highest sequence number would not do, as writes up to it may be neither applied nor searchable yet. A
// pass reads only the documents above the lowest mark of each index (a range query on `_seq_no`, which
// both engines index), and signs those whose text or parameters differ from their stored signature (the
// others are counted unchanged and not written). A pass that does not end complete keeps the previous
// marks, so nothing it missed is skipped. An index deleted and made again (a new uuid) is read whole. The
// marks of the last complete pass are kept in a file (.near-dup/follow-INDEX.json), so a follower started
// again for the same job goes on from them instead of reading the whole index.
import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import type { EngineClient } from '../engine/client.js';
import { mayPass } from '../engine/errors.js';
import { UsageError } from '../errors.js';
import type { SignerOptions } from '../signature.js';
import { type AnnotateOptions, type AnnotateSettings, type AnnotateSummary, annotateIdentity, annotateIndex, resolveAnnotateOptions, templateSourceOf } from './annotate.js';
import { templateForJob } from './template-sample.js';
import { defaultCheckpointPath, identityDifferences, writeJsonFile } from './checkpoint.js';

/** `annotate --follow`: annotate's options, how long to wait between passes, and what to tell the caller. */
export interface FollowOptions extends AnnotateOptions {
  intervalMs: number;
  /** After each pass. */
  onPass?: (pass: FollowPass) => void;
  /** While waiting for the next pass. */
  onWait?: (wait: { pass: number; nextInMs: number; totals: FollowTotals }) => void;
  /** A pass that failed (the cluster unreachable, say): the next one tries again from the same marks. */
  onPassError?: (error: Error, pass: number) => void;
  /** Something the follower decided that the user should know (marks it could not use, and why). */
  onNote?: (line: string) => void;
  /** Where the marks of the last complete pass are kept (default .near-dup/follow-INDEX.json). */
  marksFile?: string;
}

/** What every pass of a follow did together, for the summary at its end. */
export interface FollowTotals {
  passes: number;
  annotated: number;
  unchanged: number;
  failed: number;
}

/** One pass of a follow, as its caller is told of it. */
export interface FollowPass {
  pass: number;
  /** Whether the pass read the whole job (the first, or after an index was made anew). */
  whole: boolean;
  summary: AnnotateSummary;
  totals: FollowTotals;
}

/** Per concrete index: its uuid and the lowest of its shards' global checkpoints. */
export type SeqNoMarks = Map<string, { uuid: string; seqNo: number }>;

/** Where the followed indices are: the marks a pass reads above, and each index's lowest highest sequence number. */
export interface SeqNoProgress {
  marks: SeqNoMarks;
  highest: Map<string, number>;
}

/** What the saved marks are (files without it were written before marks were checkpoints, and are not trusted). */
const MARKS_BASIS = 'global_checkpoint';

/** "10s", "500ms", "2m", "1h", or a number of seconds. */
export function parseInterval(text: string | number): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(String(text));
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 } as const;
  const ms = match ? Number(match[1]) * unit[(match[2] ?? 's') as keyof typeof unit] : Number.NaN;
  if (!(ms >= 100)) throw new UsageError((o) => `${o('interval')} "${text}" is not a duration of at least 100ms; give one like 10s, 500ms or 2m`);
  return ms;
}

/** Annotates the index again and again, each pass only what was written since the last one, until stopped. */
export async function followIndex(client: EngineClient, options: FollowOptions): Promise<FollowTotals> {
  const totals: FollowTotals = { passes: 0, annotated: 0, unchanged: 0, failed: 0 };
  // The job's query, slice and resume as given, resolved once; each pass narrows the query.
  const annotate = annotateOptionsOf(options);
  const job = resolveAnnotateOptions(annotate);
  const file = options.marksFile ?? defaultCheckpointPath('follow', options.index, job.read.slice);
  const identity = annotateIdentity(annotate);
  let marks = await readMarks(file, identity, options.onNote);
  let signer: SignerOptions | undefined;
  while (!options.signal?.aborted) {
    try {
      const next = await marksThenRefresh(client, options.index);
      if (marks) marks = withoutMarksAhead(marks, next, file, options.onNote);
      const query = marks ? changedSince(job.read.query, marks, next.marks) : job.read.query;
      const resume = totals.passes === 0 ? job.state.resume : false;
      signer ??= await followedSigner(client, options, job);
      const template = job.template && { ...job.template, keptOnly: true };
      const summary = await annotateIndex(client, { ...annotate, signer, template: template ?? false, read: { ...job.read, query }, state: { ...job.state, resume } });
      totals.passes++;
      totals.annotated += summary.annotated;
      totals.unchanged += summary.unchanged;
      totals.failed += summary.failed;
      options.onPass?.({ pass: totals.passes, whole: query === job.read.query, summary, totals: { ...totals } });
      // A resumed pass leaves out what the interrupted run signed, and so any of those changed since: its
      // marks are not kept, and the next pass reads those documents again.
      if (summary.complete && summary.missing === 0 && !resume) {
        marks = next.marks;
        await writeMarks(file, identity, marks);
      }
    } catch (err) {
      // A wrong option, or a failure no retry can fix (credentials, a missing index, a refused shape), ends
      // the follower; one that may pass (a 5xx, a timeout, the cluster away) is said, and the next pass tries again.
      if (!mayPass(err)) throw err;
      totals.passes++;
      options.onPassError?.(err as Error, totals.passes);
    }
    if (options.signal?.aborted) break;
    options.onWait?.({ pass: totals.passes, nextInMs: options.intervalMs, totals: { ...totals } });
    await sleep(options.intervalMs, undefined, { signal: options.signal }).catch(() => undefined);
  }
  return totals;
}

/** The follower's options but its own: annotateIndex refuses a key it does not read. */
function annotateOptionsOf(options: FollowOptions): AnnotateOptions {
  const { intervalMs: _interval, onPass: _pass, onWait: _wait, onPassError: _error, onNote: _note, marksFile: _marks, ...annotate } = options;
  return annotate;
}

/**
 * The pass's marks, then a refresh of the followed indices, in this order: a write at or below a checkpoint
 * is applied, and so made searchable by the refresh after it, whatever the index's refresh interval.
 * annotateIndex refreshes too, but lets a user who may not refresh go on; marks may not.
 */
async function marksThenRefresh(client: EngineClient, index: string): Promise<SeqNoProgress> {
  const progress = await seqNoProgress(client, index);
  await client.refresh(index);
  return progress;
}

/**
 * The marks of every concrete index behind `index` (an alias, a pattern or a data stream may have several),
 * from its primary shards: the lowest global checkpoint, and the lowest highest sequence number. A shard
 * that says neither (unassigned, say) gives -1: its index is read whole.
 */
export async function seqNoProgress(client: EngineClient, index: string): Promise<SeqNoProgress> {
  const stats = (await client.request('GET', `/${encodeURIComponent(index)}/_stats`, undefined, {
    level: 'shards',
    filter_path: 'indices.*.uuid,indices.*.shards.*.routing.primary,indices.*.shards.*.seq_no.global_checkpoint,indices.*.shards.*.seq_no.max_seq_no',
  })) as { indices?: Record<string, { uuid: string; shards: Record<string, ShardCopy[]> }> };
  const progress: SeqNoProgress = { marks: new Map(), highest: new Map() };
  for (const [name, entry] of Object.entries(stats.indices ?? {})) {
    const primaries = Object.values(entry.shards).map((copies) => copies.find((c) => c.routing.primary)?.seq_no);
    progress.marks.set(name, { uuid: entry.uuid, seqNo: Math.min(...primaries.map((s) => s?.global_checkpoint ?? -1)) });
    progress.highest.set(name, Math.min(...primaries.map((s) => s?.max_seq_no ?? -1)));
  }
  return progress;
}

interface ShardCopy {
  routing: { primary: boolean };
  seq_no?: { global_checkpoint?: number; max_seq_no?: number };
}

/**
 * The job's query narrowed to documents written since `marks` were taken. An index with no mark (new),
 * or made anew since (another uuid), is read whole.
 */
export function changedSince(query: Record<string, unknown> | undefined, marks: SeqNoMarks, now: SeqNoMarks): Record<string, unknown> {
  const should = [...now.keys()].map((name) => {
    const mark = marks.get(name);
    const whole = !mark || mark.uuid !== now.get(name)?.uuid;
    const inIndex = { term: { _index: name } };
    return whole ? inIndex : { bool: { filter: [inIndex, { range: { _seq_no: { gt: mark.seqNo } } }] } };
  });
  return { bool: { filter: [query ?? { match_all: {} }], should, minimum_should_match: 1 } };
}

interface SavedMarks {
  identity: Record<string, unknown>;
  basis?: string;
  savedAt: string;
  marks: Array<[string, { uuid: string; seqNo: number }]>;
}

/** The saved marks of this job; none yet, of another job, or unreadable (said): the first pass reads the whole job. */
async function readMarks(file: string, identity: Record<string, unknown>, note?: (line: string) => void): Promise<SeqNoMarks | undefined> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    const saved = JSON.parse(text) as SavedMarks;
    if (identityDifferences(saved.identity ?? {}, identity).length > 0) return undefined;
    if (saved.basis !== MARKS_BASIS) {
      note?.(`the marks in ${file} were written by an earlier near-dup (at the highest sequence numbers, which can pass over writes not yet searchable); the first pass reads the whole job, and the file is written anew after it`);
      return undefined;
    }
    const marks = new Map(saved.marks);
    const valid = [...marks].every(([name, m]) => typeof name === 'string' && typeof m?.uuid === 'string' && Number.isSafeInteger(m.seqNo) && m.seqNo >= -1);
    if (valid && marks.size > 0) return marks;
  } catch {
    // not JSON, or not marks: said below
  }
  note?.(`the marks in ${file} are not readable (damaged, or written by hand); the first pass reads the whole job, and the file is written anew after it`);
  return undefined;
}

/**
 * Marks above the index's own highest sequence numbers (a file from another cluster, or edited) would skip
 * every write until the index caught up: such an index is read whole, and that is said.
 */
function withoutMarksAhead(marks: SeqNoMarks, now: SeqNoProgress, file: string, note?: (line: string) => void): SeqNoMarks {
  const kept: SeqNoMarks = new Map(marks);
  for (const [name, mark] of marks) {
    const top = now.highest.get(name) ?? -1;
    if (now.marks.get(name)?.uuid === mark.uuid && mark.seqNo > top) {
      kept.delete(name);
      note?.(`the mark of ${name} in ${file} (sequence number ${mark.seqNo}) is ahead of the index (${top}); ${name} is read whole`);
    }
  }
  return kept;
}

async function writeMarks(file: string, identity: Record<string, unknown>, marks: SeqNoMarks): Promise<void> {
  const saved: SavedMarks = { identity, basis: MARKS_BASIS, savedAt: new Date().toISOString(), marks: [...marks] };
  await writeJsonFile(file, saved);
}

/**
 * The signer options of every pass: with the template set chosen once, from the whole of the job's
 * documents (a pass reads only what changed, and a set drawn from those would sign them alone with it), or
 * without one (asked so, or an index too small for the default's draw, said once).
 */
async function followedSigner(client: EngineClient, options: FollowOptions, job: AnnotateSettings): Promise<SignerOptions> {
  if (job.template === undefined) return job.signer;
  const chosen = await templateForJob(client, templateSourceOf(job), job.template);
  if (chosen.note) options.onNote?.(chosen.note);
  return chosen.template ? { ...job.signer, template: chosen.template } : job.signer;
}
