// The full pass of dedup: every LSH bucket of two or more documents in the index, in stages the data goes
// through in one direction:
//  1. scan: every signature in scope read once (one point-in-time scan) into a table, in memory when the
//     documents are at most --max-cached-signatures, else spilled to local disk (dedup/scan/signature-spill.ts);
//  2. bucket and verify, band by band: the band's key hashes sorted into buckets, each bucket's pairs
//     verified, a group of buckets' signatures loaded at a time (dedup/bands/band-pass.ts);
// then the table is handed on, to cut the clusters with (cluster-cut.ts). Each finished band is journaled
// with its verified pairs, so that --resume goes on from there. Memory holds the table's columns of one band
// and a group's signatures when the table is on disk, whatever the size of the index.
import type { EngineClient } from '../../engine/client.js';
import type { DocIds } from './documents/doc-numbers.js';
import { DedupJournal, type DedupRunIdentity } from './state/journal.js';
import { verifyBands } from './bands/band-pass.js';
import type { PairVerifier } from './verify/pair-verifier.js';
import type { SignatureStore } from './documents/signature-store.js';
import { type ReadTable, readTable } from './scan/table-read.js';

/**
 * What a full pass reads and how: the index (and its uuids, to resume only its own journal), the params and bar, the
 * scan, where the signatures are held, and the progress to tell.
 */
export interface FullPassSettings {
  index: string;
  /** The uuids of the concrete indices read: a journal of another index (or one made anew) is not resumed. */
  uuids: string[];
  prefix: string;
  params: string;
  minSimilarity: number;
  /** The documents compared: this params value, at least one token. */
  scope: Record<string, unknown>;
  /** Documents of one band key verified at once; a key held by more is a large key. */
  bucketChunk: number;
  /** Documents per scan page. */
  pageSize: number;
  /** Whether every signature is held in memory; else they are spilled to local disk under `spillDir`. */
  everythingCached: boolean;
  /** Where the signatures are spilled when they are not held in memory (default: the system's temporary folder). */
  spillDir?: string;
  /** The stored fields a signature and its facts come from. */
  storedFields: string[];
  /** Documents in scope. */
  documents: number;
  /** The numbering shared with the store and the verifier (to find a signature by id). */
  numbers?: DocIds;
  /** Where the journal lives (--resume), or undefined for a dry run (nothing to resume). */
  journalFile?: string;
  resume: boolean;
  /** Signatures read, then bands done. */
  onProgress?: (stage: 'signatures' | 'bands', done: number, total: number) => void;
}

/**
 * The full pass over every bucket of the index (scan, then bucket and verify band by band, as the file header says),
 * each band journaled so that --resume goes on from there.
 */
export class FullPass {
  /** Bands taken over from the interrupted run that --resume continues. */
  resumedPartitions = 0;
  /** The journal of this run: verified pairs go in as they are found; closed once the clusters are written. */
  journal?: DedupJournal;

  constructor(
    private readonly client: EngineClient,
    private readonly store: SignatureStore,
    private readonly verifier: PairVerifier,
    private readonly settings: FullPassSettings,
  ) {}

  /**
   * Every signature read once, then the buckets of each band in turn, each band journaled. Resolves to the table
   * read, for the cut (the caller closes it); undefined when the run resumed had done every band.
   */
  async run(): Promise<ReadTable | undefined> {
    const { bucketChunk, onProgress } = this.settings;
    const resumed = await this.resumeJournal();
    const startAt = resumed?.journal.partitionsDone ?? 0;
    this.resumedPartitions = startAt;
    if (resumed && startAt === resumed.partitions) {
      this.journal = resumed.journal; // every band was done: the replayed pairs are the families (cut with signatures read again)
      return undefined;
    }
    const table = await readTable(this.client, this.store, { ...this.settings, onDocuments: (done, total) => onProgress?.('signatures', done, total) });
    try {
      this.journal = resumed?.journal ?? (await this.startJournal(table.bandCount));
      await verifyBands(table, this.verifier, {
        bucketChunk,
        startAt,
        onBand: async (band) => {
          const { buckets, candidatePairs, verifiedPairs } = this.verifier;
          await this.journal?.checkpoint(band + 1, { buckets, candidatePairs, verifiedPairs });
          onProgress?.('bands', band + 1, table.bandCount);
        },
      });
      return table;
    } catch (err) {
      table.close?.();
      throw err;
    }
  }

  private identity(): DedupRunIdentity {
    const { index, params, prefix, minSimilarity, bucketChunk, uuids } = this.settings;
    return { index, uuids: uuids.join(','), params, prefix, minSimilarity, bucketChunk, pass: 'bands' };
  }

  /** With --resume, the killed run's journal, its pairs replayed; undefined for a new run. */
  private async resumeJournal(): Promise<{ journal: DedupJournal; partitions: number } | undefined> {
    if (!this.settings.resume || !this.settings.journalFile) return undefined;
    const { journal, pairs, partitions } = await DedupJournal.resume(this.settings.journalFile, this.identity());
    journal.namesBy(this.verifier.clusters.documents);
    for (const pair of pairs) this.verifier.record(pair);
    Object.assign(this.verifier, journal.counters);
    return { journal, partitions };
  }

  private async startJournal(partitions: number): Promise<DedupJournal | undefined> {
    if (!this.settings.journalFile) return undefined;
    return (await DedupJournal.start(this.settings.journalFile, { ...this.identity(), partitions })).namesBy(this.verifier.clusters.documents);
  }
}
