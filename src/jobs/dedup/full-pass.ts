// The full pass of dedup over every LSH bucket of the index: the scan reads every signature in scope once into
// a table (in memory, or spilled past --max-cached-signatures: scan/), then band by band the buckets are
// sorted and their pairs verified (bands/band-pass.ts); the table is handed on to the cut. Each band done is
// journaled with its verified pairs, so that --resume goes on from there. With the table on disk, memory holds
// one band's columns and a group's signatures, whatever the size of the index.
import type { EngineClient } from '../../engine/client.js';
import { DedupJournal, type DedupRunIdentity } from './state/journal.js';
import { verifyBands } from './bands/band-pass.js';
import type { PairVerifier, VerifierFor } from './verify/pair-verifier.js';
import type { SignatureStore } from './documents/signature-store.js';
import { type ReadTable, readTable, type TableRead } from './scan/table-read.js';

/** What a full pass reads, and how. */
export interface FullPassSettings extends Omit<TableRead, 'onDocuments'> {
  /** The uuids of the concrete indices read: a journal of another index (or one made anew) is not resumed. */
  uuids: string[];
  params: string;
  minSimilarity: number;
  /** Documents of one band key verified at once; a key held by more is a large key. */
  bucketChunk: number;
  /** Where the journal lives (--resume), or undefined for a dry run (nothing to resume). */
  journalFile?: string;
  resume: boolean;
  /** Signatures read, then bands done. */
  onProgress?: (stage: 'signatures' | 'bands', done: number, total: number) => void;
}

/** What the full pass hands on: its verified pairs, their journal, and the table of every signature. */
export interface FullPassOutput {
  /** The verify stage, every pair recorded: its families and best matches. */
  verifier: PairVerifier;
  /** The journal of this run (none in a dry run), finished once the clusters are written. */
  journal?: DedupJournal;
  /** Bands taken over from the interrupted run that --resume continues. */
  resumedPartitions: number;
  /** Every signature, for the cut (the caller closes it); none when the run resumed had done every band. */
  table?: ReadTable;
}

/** The full pass (the file header says how); the verifier is made with the journal it writes to. */
export async function fullPass(client: EngineClient, store: SignatureStore, verifierFor: VerifierFor, settings: FullPassSettings): Promise<FullPassOutput> {
  const { bucketChunk, onProgress } = settings;
  const resumed = await resumeJournal(verifierFor, settings);
  const resumedPartitions = resumed?.journal.partitionsDone ?? 0;
  // Every band was done: the replayed pairs are the families (cut with signatures read again).
  if (resumed && resumedPartitions === resumed.partitions) return { verifier: resumed.verifier, journal: resumed.journal, resumedPartitions };
  const table = await readTable(client, store, { ...settings, onDocuments: (done, total) => onProgress?.('signatures', done, total) });
  try {
    const journal = resumed?.journal ?? (settings.journalFile ? await DedupJournal.start(settings.journalFile, { ...identity(settings), partitions: table.bandCount }) : undefined);
    const verifier = resumed?.verifier ?? verifierFor(journal && ((pair) => journal.add(pair)));
    journal?.namesBy(verifier.clusters.documents);
    await verifyBands(table, verifier, {
      bucketChunk,
      startAt: resumedPartitions,
      onBand: async (band) => {
        const { buckets, candidatePairs, verifiedPairs } = verifier;
        await journal?.checkpoint(band + 1, { buckets, candidatePairs, verifiedPairs });
        onProgress?.('bands', band + 1, table.bandCount);
      },
    });
    return { verifier, journal, resumedPartitions, table };
  } catch (err) {
    table.close?.();
    throw err;
  }
}

function identity(settings: FullPassSettings): DedupRunIdentity {
  const { index, params, prefix, minSimilarity, bucketChunk, uuids } = settings;
  return { index, uuids: uuids.join(','), params, prefix, minSimilarity, bucketChunk, pass: 'bands' };
}

/** With --resume, the killed run's journal, and a verifier made with it, its pairs replayed; undefined for a new run. */
async function resumeJournal(verifierFor: VerifierFor, settings: FullPassSettings): Promise<{ journal: DedupJournal; verifier: PairVerifier; partitions: number } | undefined> {
  if (!settings.resume || !settings.journalFile) return undefined;
  const { journal, pairs, partitions } = await DedupJournal.resume(settings.journalFile, identity(settings));
  const verifier = verifierFor((pair) => journal.add(pair));
  for (const pair of pairs) verifier.record(pair);
  Object.assign(verifier, journal.counters);
  return { journal, verifier, partitions };
}
