// What a full dedup run has done so far, so that a killed run can resume instead of starting over: the
// verified pairs, appended a partition at a time, and how many partitions of the band keys are done. The
// pairs are what the clusters are made of, so replaying them rebuilds the union-find exactly as it was.
import { appendFileSync } from 'node:fs';
import { readFile, rm, truncate } from 'node:fs/promises';
import { UserError } from '../../errors.js';
import { readCheckpoint, writeCheckpoint } from '../checkpoint.js';
import type { VerifiedPair } from './pair-verifier.js';

/** Pairs waiting in memory before they are appended to the file (about 4 MB of text). */
const FLUSH_CHARS = 4 * 1024 * 1024;

/** What must be equal for a run to continue another: the same signatures, bar and partition plan. */
export interface DedupRunIdentity {
  index: string;
  params: string;
  prefix: string;
  minSimilarity: number;
  bucketsPerPartition: number;
  bucketChunk: number;
  /** Buckets found by the engine partition by partition, or here in memory band by band (a partition is then a band). */
  pass: 'partitions' | 'memory';
}

/** The identity, and how many partitions the band keys were split into (a resumed run uses the same). */
export interface DedupRunPlan extends DedupRunIdentity {
  partitions: number;
}

export interface DedupRunCounters {
  buckets: number;
  candidatePairs: number;
  verifiedPairs: number;
}

export class DedupJournal {
  private buffered: string[] = [];
  private bufferedChars = 0;
  /** Bytes of the pairs file written so far. */
  private bytes: number;

  private constructor(
    private readonly file: string,
    private readonly identity: DedupRunPlan,
    private readonly startedAt: string,
    bytes: number,
    /** Partitions done when the run started (0 for a new run). */
    readonly partitionsDone: number,
    /** Counters of the run being resumed. */
    readonly counters: DedupRunCounters,
  ) {
    this.bytes = bytes;
  }

  private static pairsFile(file: string): string {
    return `${file}.pairs.jsonl`;
  }

  /** A new journal (any earlier one for this file is dropped). */
  static async start(file: string, identity: DedupRunPlan): Promise<DedupJournal> {
    await rm(DedupJournal.pairsFile(file), { force: true });
    const journal = new DedupJournal(file, identity, new Date().toISOString(), 0, 0, { buckets: 0, candidatePairs: 0, verifiedPairs: 0 });
    await journal.checkpoint(0, journal.counters);
    return journal;
  }

  /** The journal of a killed run with the same identity, and the pairs it had verified, to replay. */
  static async resume(file: string, identity: DedupRunIdentity): Promise<{ journal: DedupJournal; pairs: VerifiedPair[]; partitions: number }> {
    const saved = await readCheckpoint(file);
    if (saved?.job !== 'dedup-run') throw new UserError(`no interrupted dedup run at ${file} to resume; run without --resume`);
    const savedIdentity = saved.identity as unknown as DedupRunPlan;
    const differences = (Object.keys(identity) as Array<keyof DedupRunIdentity>).filter((k) => savedIdentity[k] !== identity[k]);
    if (differences.length > 0) {
      throw new UserError(`the interrupted dedup run at ${file} was made with other options (${differences.join(', ')} differ); run with the same options, or without --resume`);
    }
    const bytes = saved.counts.pairsBytes ?? 0;
    const pairsFile = DedupJournal.pairsFile(file);
    // A write cut short by the kill leaves a tail past the last checkpoint: it is dropped, and redone.
    const text = bytes > 0 ? (await readFile(pairsFile)).subarray(0, bytes).toString('utf8') : '';
    if (bytes > 0) await truncate(pairsFile, bytes);
    const pairs = text.split('\n').filter(Boolean).map((line) => JSON.parse(line) as VerifiedPair);
    const counters = { buckets: saved.counts.buckets ?? 0, candidatePairs: saved.counts.candidatePairs ?? 0, verifiedPairs: saved.counts.verifiedPairs ?? 0 };
    const journal = new DedupJournal(file, savedIdentity, saved.startedAt, bytes, saved.counts.partitionsDone ?? 0, counters);
    return { journal, pairs, partitions: savedIdentity.partitions };
  }

  /** A verified pair; written to the file once a few MB of them are waiting (what a checkpoint has not covered is dropped on resume). */
  add(pair: VerifiedPair): void {
    const line = JSON.stringify(pair) + '\n';
    this.buffered.push(line);
    this.bufferedChars += line.length;
    if (this.bufferedChars >= FLUSH_CHARS) this.flush();
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
    });
  }

  private flush(): void {
    if (this.buffered.length === 0) return;
    const text = this.buffered.join('');
    this.buffered = [];
    this.bufferedChars = 0;
    appendFileSync(DedupJournal.pairsFile(this.file), text);
    this.bytes += Buffer.byteLength(text);
  }

  /** The run is over: nothing to resume. */
  async finish(): Promise<void> {
    await rm(DedupJournal.pairsFile(this.file), { force: true });
    await rm(this.file, { force: true });
  }
}
