// What a full dedup run has done so far, so that a killed run can resume instead of starting over: the
// verified pairs, appended a band at a time, and how many bands are done (its "partitions"). The
// pairs are what the clusters are made of, so replaying them rebuilds the union-find exactly as it was.
//
// A journal is read back before anything is written from it, and trusted only when whole: its identity
// names the index by its uuids as well as its name, and each checkpoint records the length and SHA-256
// of the pairs file so far. A pairs file cut short, edited, or of another run is said in one line, never
// replayed into a partial write-back.
import { createHash, type Hash } from 'node:crypto';
import { appendFileSync, fsyncSync, closeSync } from 'node:fs';
import { readFile, rm } from 'node:fs/promises';
import { UserError } from '../../../errors.js';
import { readCheckpoint, writeCheckpoint } from '../../checkpoint.js';
import { diskFullError, openForAppend, truncateFile } from '../../file-writes.js';
import type { DocIds } from '../documents/doc-numbers.js';
import { namedPairs, type NumberedPair, type VerifiedPair } from '../verify/pair-verifier.js';

/** Pairs waiting in memory (by number) before they are named and appended to the file (about 4 MB of text). */
const FLUSH_PAIRS = 50_000;

/** What must be equal for a run to continue another: the same signatures, bar and partition plan. */
export interface DedupRunIdentity {
  index: string;
  /** The uuids of the concrete indices, joined: an index deleted and made again under the name is another. */
  uuids: string;
  params: string;
  prefix: string;
  minSimilarity: number;
  bucketChunk: number;
  /** The pass that wrote it, band by band (earlier versions' journals say 'partitions' or 'memory': not resumed). */
  pass: 'bands';
}

/** The identity, and how many partitions the band keys were split into (a resumed run uses the same). */
export interface DedupRunPlan extends DedupRunIdentity {
  partitions: number;
}

/** The run's counts so far, kept at each checkpoint so that a resumed run reports the whole run's. */
export interface DedupRunCounters {
  buckets: number;
  candidatePairs: number;
  verifiedPairs: number;
}

/** A full run's journal (the file header says what it keeps, and why a resumed run can trust it). */
export class DedupJournal {
  private buffered: NumberedPair[] = [];
  /** The numbering the pairs' documents are named by when written. */
  private documents?: DocIds;

  private constructor(
    private readonly file: string,
    private readonly identity: DedupRunPlan,
    private readonly startedAt: string,
    /** Bytes of the pairs file written so far, and their SHA-256, kept as they are appended. */
    private bytes: number,
    private readonly hash: Hash,
    /** Partitions done when the run started (0 for a new run). */
    readonly partitionsDone: number,
    /** Counters of the run being resumed. */
    readonly counters: DedupRunCounters,
  ) {}

  /** A new journal (any earlier one for this file is dropped). */
  static async start(file: string, identity: DedupRunPlan): Promise<DedupJournal> {
    await rm(pairsFile(file), { force: true });
    const journal = new DedupJournal(file, identity, new Date().toISOString(), 0, createHash('sha256'), 0, { buckets: 0, candidatePairs: 0, verifiedPairs: 0 });
    await journal.checkpoint(0, journal.counters);
    return journal;
  }

  /** The journal of a killed run with the same identity, and the pairs it had verified, to replay. */
  static async resume(file: string, identity: DedupRunIdentity): Promise<{ journal: DedupJournal; pairs: VerifiedPair[]; partitions: number }> {
    const saved = await readCheckpoint(file);
    if (saved?.job !== 'dedup-run') throw new UserError(`no interrupted dedup run at ${file} to resume; run without --resume`);
    const savedIdentity = checkedPlan(file, saved.identity as unknown as DedupRunPlan, identity);
    const bytes = saved.counts.pairsBytes ?? 0;
    const pairsPath = pairsFile(file);
    const whole = bytes > 0 ? await readFile(pairsPath).catch(() => Buffer.alloc(0)) : Buffer.alloc(0);
    if (whole.length < bytes) throw damaged(file, `${pairsPath} holds ${whole.length} bytes, its checkpoint says ${bytes} were written (cut short)`);
    // A write cut short by the kill leaves a tail past the last checkpoint: it is dropped, and redone.
    const prefix = whole.subarray(0, bytes);
    const hash = createHash('sha256').update(prefix);
    const expected = saved.checksums?.pairs;
    if (expected === undefined || hash.copy().digest('hex') !== expected) throw damaged(file, `${pairsPath} does not match the checksum its checkpoint recorded (edited, or of another run)`);
    if (bytes > 0) await truncateFile(pairsPath, bytes);
    const counters = { buckets: saved.counts.buckets ?? 0, candidatePairs: saved.counts.candidatePairs ?? 0, verifiedPairs: saved.counts.verifiedPairs ?? 0 };
    const journal = new DedupJournal(file, savedIdentity, saved.startedAt, bytes, hash, saved.counts.partitionsDone ?? 0, counters);
    return { journal, pairs: parsePairs(prefix.toString('utf8'), file), partitions: savedIdentity.partitions };
  }

  /** The numbering the pairs added are in (their ids are read from it, a batch at a time, when written). */
  namesBy(documents: DocIds): this {
    this.documents = documents;
    return this;
  }

  /** A verified pair; written to the file once enough of them are waiting (what a checkpoint has not covered is dropped on resume). */
  add(pair: NumberedPair): void {
    this.buffered.push(pair);
    if (this.buffered.length >= FLUSH_PAIRS) this.flush();
  }

  /** Makes the pairs so far durable, then records that `partitionsDone` partitions are done. */
  async checkpoint(partitionsDone: number, counters: DedupRunCounters): Promise<void> {
    this.flush();
    const now = new Date().toISOString();
    await writeCheckpoint(this.file, {
      job: 'dedup-run',
      index: this.identity.index,
      identity: this.identity as unknown as Record<string, unknown>,
      startedAt: this.startedAt,
      updatedAt: now,
      complete: false,
      counts: { partitionsDone, pairsBytes: this.bytes, ...counters },
      checksums: { pairs: this.hash.copy().digest('hex') },
    });
  }

  /** Appends the pairs waiting, and makes them durable before a checkpoint can count them. */
  private flush(): void {
    if (this.buffered.length === 0) return;
    if (!this.documents) throw new Error('the dedup journal was given pairs without the numbering to name them by');
    const text = namedPairs(this.buffered, this.documents)
      .map((pair) => `${JSON.stringify(pair)}\n`)
      .join('');
    this.buffered = [];
    // Never through a symbolic link planted at the pairs file's name (file-writes.ts); only its owner reads it.
    const fd = openForAppend(pairsFile(this.file), { mode: 0o600, what: "the dedup journal's pairs" });
    try {
      appendFileSync(fd, text);
      fsyncSync(fd);
    } catch (err) {
      throw diskFullError(err, pairsFile(this.file), 'what its last checkpoint counted stands: --resume goes on from there');
    } finally {
      closeSync(fd);
    }
    this.bytes += Buffer.byteLength(text);
    this.hash.update(text);
  }

  /** The run is over: nothing to resume. */
  async finish(): Promise<void> {
    await rm(pairsFile(this.file), { force: true });
    await rm(this.file, { force: true });
  }
}

/** The plan of the run a journal was written by, refused unless it has this run's identity and a whole partition count. */
function checkedPlan(file: string, saved: DedupRunPlan, identity: DedupRunIdentity): DedupRunPlan {
  const differences = (Object.keys(identity) as Array<keyof DedupRunIdentity>).filter((k) => saved[k] !== identity[k]);
  if (differences.length > 0) {
    const what = differences.includes('uuids') || differences.includes('index') ? 'for another index (or one deleted and made again)' : `made with other options (${differences.join(', ')} differ)`;
    throw new UserError(`the interrupted dedup run at ${file} is ${what}; run with the same options, or without --resume to start over`);
  }
  if (!Number.isSafeInteger(saved.partitions) || saved.partitions < 1) throw damaged(file, `its partition count ${JSON.stringify(saved.partitions)} is not a whole number`);
  return saved;
}

function pairsFile(file: string): string {
  return `${file}.pairs.jsonl`;
}

function damaged(file: string, why: string): UserError {
  return new UserError(`the interrupted dedup run at ${file} cannot be resumed: ${why}; run dedup without --resume to start over (nothing was written from it)`);
}

/** The pairs of a journal, each checked to be a pair of ids with a similarity. */
function parsePairs(text: string, file: string): VerifiedPair[] {
  const pairs: VerifiedPair[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line === '') continue;
    let pair: VerifiedPair | undefined;
    try {
      pair = JSON.parse(line) as VerifiedPair;
    } catch {
      // said below
    }
    if (typeof pair?.a !== 'string' || typeof pair.b !== 'string' || typeof pair.jaccard !== 'number') throw damaged(file, `line ${i + 1} of its pairs is not a verified pair`);
    pairs.push(pair);
  }
  return pairs;
}
