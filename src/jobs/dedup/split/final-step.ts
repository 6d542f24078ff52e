// The find of the final step of a split dedup (dedup --from-shares N --pairs-index NAME): the shares'
// pairs gathered (final-gather.ts) and checked against the stored signatures (final-check.ts), recorded
// by the verifier as if this process had verified them. The cut and the write-back that follow are the
// single process's (cluster-cut.ts, write-back.ts), so the clusters are cut alike.
// If any page or pair failed its checks, nothing is written: the problems are named in the errors file,
// the markers of the shares they came from are removed (so that running those shares again does their work
// again instead of finding it complete), and the step refuses with the commands to run.
// Input: the run, the pairs index, the store and verifier. Output: what was read, or a refusal.
import { UserError } from '../../../errors.js';
import type { ErrorsFile } from '../../errors-file.js';
import type { PairSpill } from './final-parts.js';
import type { PairsIndex } from './pairs-index.js';
import type { PairVerifier } from '../verify/pair-verifier.js';
import type { ShareProgress } from './pages.js';
import { checkAndRecord } from './final-check.js';
import { gatherPairs, type PairsProblem, type SharedRun } from './final-gather.js';
import { markerId } from './plan.js';
import type { SignatureStore } from '../documents/signature-store.js';
import { plural } from '../../../plural.js';

/** Problems named one by one in the errors file; past that, counted. */
const MAX_NAMED = 10_000;

/** What the final step read from the shares: their progress, and the pages, distinct pairs and duplicates counted. */
export interface SharedPairs {
  shares: ShareProgress[];
  /** Page documents read. */
  pages: number;
  /** Distinct pairs read (each checked). */
  pairs: number;
  /** Pairs two shares both found, kept once. */
  duplicates: number;
}

/**
 * `dryRun`: a problem found is named, and the shares it came from are left as they are (not reset). `spill`:
 * where the pairs go in parts when there are more than a part holds (else all in memory).
 */
export async function sharedPairs(pairsIndex: PairsIndex, run: SharedRun, store: SignatureStore, verifier: PairVerifier, errors: ErrorsFile, settings: { dryRun?: boolean; spill?: PairSpill } = {}): Promise<SharedPairs> {
  const { dryRun = false, spill } = settings;
  const gathered = await gatherPairs(pairsIndex, run, verifier.clusters.documents, spill);
  await checkAndRecord(gathered, store, verifier, run.identity.minSimilarity);
  if (gathered.problems.length > 0) await refuse(pairsIndex, run, gathered.problems, errors, dryRun);
  // The counts of the shares together: every bucket is one share's, a pair two found counted once.
  verifier.buckets = sum(gathered.shares, (s) => s.buckets);
  verifier.candidatePairs = sum(gathered.shares, (s) => s.candidatePairs);
  verifier.verifiedPairs = gathered.pairs.count;
  return { shares: gathered.shares, pages: gathered.pages.length, pairs: gathered.pairs.count, duplicates: gathered.pairs.duplicates };
}

/** Names every problem, resets the shares they came from (not in a dry run), and refuses. */
async function refuse(pairsIndex: PairsIndex, run: SharedRun, problems: readonly PairsProblem[], errors: ErrorsFile, dryRun: boolean): Promise<never> {
  for (const p of problems.slice(0, MAX_NAMED)) errors.add({ id: p.page, index: pairsIndex.name, reason: `of share ${p.share}/${run.count}: ${p.reason}` });
  await errors.close();
  const shares = [...new Set(problems.map((p) => p.share))].sort((a, b) => a - b);
  if (!dryRun) for (const number of shares) await pairsIndex.deleteMarker(markerId(run.run, { number, count: run.count }));
  const pages = new Set(problems.map((p) => p.page)).size;
  const names = shares.map((n) => `${n}/${run.count}`).join(', ');
  const what = dryRun ? 'would do' : 'will do';
  throw new UserError(
    `${plural(problems.length, 'problem')} in ${plural(pages, 'document')} of ${pairsIndex.name} (damaged or forged; each named in ${errors.file}, the first: ${problems[0].page} ${problems[0].reason}): ` +
      `nothing was written to ${run.identity.index}${dryRun ? ', and the shares were left as they are (a dry run)' : ''}. Share${shares.length > 1 ? 's' : ''} ${names} ${what} ${shares.length > 1 ? 'their' : 'its'} work again${dryRun ? ' once this runs without --dry-run' : ''}: run ` +
      `${shares.map((n) => `near-dup dedup --index ${run.identity.index} --share ${n}/${run.count} --pairs-index ${pairsIndex.name}`).join(' and ')}, then this again`,
  );
}

function sum<T>(items: readonly T[], of: (item: T) => number): number {
  return items.reduce((total, item) => total + of(item), 0);
}
