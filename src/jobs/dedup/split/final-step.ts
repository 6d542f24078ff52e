// The find of a split dedup's final step (--from-shares N): every share's pairs read from the pairs index,
// checked as untrusted (pages.ts), then against the stored signatures they name, and recorded by the verifier
// as if this process had verified them, so that the cut and the write-back are one process's. When a page or
// a pair fails, nothing is written: each is named in the errors file, the shares they came from are reset (run
// again, they do their work again instead of finding it complete), and the step refuses with the commands.
import { UserError } from '../../../errors.js';
import type { ErrorsFile } from '../../errors-file.js';
import type { DocIds } from '../documents/doc-numbers.js';
import type { SignatureStore } from '../documents/signature-store.js';
import { namedPairs, type PairVerifier } from '../verify/pair-verifier.js';
import { type PagedPair, type PairPart, PairParts, type PairSpill } from './final-pairs.js';
import { checkPair, PAIRS_PER_PAGE, readMarker, readPage, type ShareProgress } from './pages.js';
import type { PairsIndex } from './pairs-index.js';
import { identityDifferences, markerId, type SharePlan, shareName, type ShareRunIdentity } from './plan.js';
import { forCount, plural } from '../../../plural.js';

/** Problems named one by one in the errors file; past that, counted. */
const MAX_NAMED = 10_000;
/** Pairs checked together: their documents' signatures read in one go (at most twice as many documents). */
const PAIRS_PER_CHECK = 5000;

/** The split run the final step gathers: its identity, its name, and how many shares it has (--from-shares N). */
export interface SharedRun {
  identity: ShareRunIdentity;
  run: string;
  count: number;
}

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

/** A page or pair that failed a check: the document it is in, and why. */
interface Problem {
  page: string;
  share: number;
  reason: string;
}

/** The pairs read, the pages they came from (where a pair's `page` points), and the problems found. */
interface Gathered {
  pairs: PairParts;
  pages: Array<{ id: string; share: number }>;
  problems: Problem[];
}

/**
 * Every share's pairs, checked and recorded by `verifier`; a refusal when a share is not complete or a page or pair
 * fails. `dryRun`: the shares of a problem are left as they are. `spill`: where the pairs go in parts when many.
 */
export async function sharedPairs(pairsIndex: PairsIndex, run: SharedRun, store: SignatureStore, verifier: PairVerifier, errors: ErrorsFile, settings: { dryRun?: boolean; spill?: PairSpill } = {}): Promise<SharedPairs> {
  const shares = await completeShares(pairsIndex, run);
  const gathered = await gather(pairsIndex, run, shares, verifier.clusters.documents, settings.spill);
  for (const part of gathered.pairs.parts()) await checkPart(gathered, part, store, verifier, run.identity.minSimilarity);
  if (gathered.problems.length > 0) await refuse(pairsIndex, run, gathered.problems, errors, settings.dryRun ?? false);
  // The counts of the shares together: every bucket is one share's, a pair two found counted once.
  verifier.buckets = shares.reduce((sum, s) => sum + s.buckets, 0);
  verifier.candidatePairs = shares.reduce((sum, s) => sum + s.candidatePairs, 0);
  verifier.verifiedPairs = gathered.pairs.count;
  return { shares, pages: gathered.pages.length, pairs: gathered.pairs.count, duplicates: gathered.pairs.duplicates };
}

/** Every share's progress, when each is complete; else a refusal naming those that are not, before a page is read. */
async function completeShares(pairsIndex: PairsIndex, run: SharedRun): Promise<ShareProgress[]> {
  const found: ShareProgress[] = [];
  const missing: string[] = [];
  for (let number = 1; number <= run.count; number++) {
    const share = { number, count: run.count };
    const source = await pairsIndex.source(markerId(run.run, share));
    const progress = source === undefined ? 'never started' : readMarker(source, { run: run.run, share, identity: run.identity });
    if (typeof progress === 'string') missing.push(`${shareName(share)} (${source === undefined ? progress : `marker damaged: ${progress}`})`);
    else if (!progress.complete) missing.push(`${shareName(share)} (${progress.bandsDone} of ${plural(progress.bandCount, 'band')} done, last on ${progress.host || 'an unnamed host'} at ${progress.updatedAt || 'an unknown time'})`);
    else found.push(progress);
  }
  if (missing.length === 0) return found;
  const { index } = run.identity;
  const others = await otherRuns(pairsIndex, run);
  throw new UserError(
    `${missing.length} of ${plural(run.count, 'share')} ${forCount(missing.length, 'is', 'are')} not complete in ${pairsIndex.name}: ${missing.join('; ')}. ` +
      `Run each (near-dup dedup --index ${index} --share K/${run.count} --pairs-index ${pairsIndex.name}, the same --min-similarity, --params and --prefix), then this again; nothing was written` +
      (others ? `. ${others}` : ''),
  );
}

/** What the markers of other runs of the index differ in, with their values and this run's (the options given, or the index changed), or ''. */
async function otherRuns(pairsIndex: PairsIndex, run: SharedRun): Promise<string> {
  const differing = new Map<string, Set<string>>();
  for (const source of await pairsIndex.markersOf(run.identity.index)) {
    const { run: name, identity } = source as { run?: unknown; identity?: unknown };
    if (name === run.run || typeof identity !== 'object' || identity === null) continue;
    for (const key of identityDifferences(run.identity, identity as Record<string, unknown>)) {
      const values = differing.get(key) ?? new Set<string>();
      differing.set(key, values.add(JSON.stringify((identity as Record<string, unknown>)[key]) ?? 'none'));
    }
  }
  if (differing.size === 0) return '';
  const what = [...differing].map(([key, there]) => `${key} (${[...there].slice(0, 3).join(' or ')} there, ${JSON.stringify(run.identity[key as keyof ShareRunIdentity])} here)`);
  const changed = ['documents', 'lastAnnotatedAt', 'uuids'].some((k) => differing.has(k));
  return `${pairsIndex.name} holds shares of another run of ${run.identity.index}, which differ in ${what.join(', ')}: ${changed ? 'the index changed since they ran (run every share again)' : 'give the options they ran with, or run the shares with these'}`;
}

/**
 * The pairs of every share whose pages the engine holds exactly as its marker lists (counted before any is read, so
 * that a forged marker's count is not taken, nor its pages read: it may list millions), numbered and kept once.
 */
async function gather(pairsIndex: PairsIndex, run: SharedRun, shares: ShareProgress[], numbers: DocIds, spill?: PairSpill): Promise<Gathered> {
  const problems: Problem[] = [];
  const held: boolean[] = [];
  for (const [k, progress] of shares.entries()) {
    const share = { number: k + 1, count: run.count };
    const listed = progress.pages.reduce((sum, count) => sum + count, 0);
    const count = await pairsIndex.countPages(run.run, share.number);
    held.push(count === listed);
    if (count !== listed) problems.push({ page: markerId(run.run, share), share: share.number, reason: `lists ${plural(listed, 'page')}, where ${pairsIndex.name} holds ${count} of this share (none read)` });
  }
  const announced = shares.reduce((sum, share, k) => sum + (held[k] ? share.pairs : 0), 0);
  const gathered: Gathered = { pairs: new PairParts(announced, spill), pages: [], problems };
  for (const [k, progress] of shares.entries()) if (held[k]) await readShare(pairsIndex, run, { number: k + 1, count: run.count }, progress, numbers, gathered);
  return gathered;
}

/** One share's pages read in order and checked (a band's pages full but its last), their pairs added; then their count. */
async function readShare(pairsIndex: PairsIndex, run: SharedRun, share: SharePlan, progress: ShareProgress, numbers: DocIds, into: Gathered): Promise<void> {
  let pairs = 0;
  for await (const { id, band, page, last, source } of pairsIndex.pages(run.run, share, progress.pages)) {
    const read = readPage(source, { run: run.run, share, band, page, minSimilarity: run.identity.minSimilarity });
    if (typeof read === 'string' || (!last && read.length !== PAIRS_PER_PAGE)) {
      const reason = typeof read !== 'string' ? `holds ${plural(read.length, 'pair')}, where a page before a band's last holds ${PAIRS_PER_PAGE}` : source === undefined ? 'is missing' : read;
      into.problems.push({ page: id, share: share.number, reason });
      continue;
    }
    pairs += read.length;
    const at = into.pages.push({ id, share: share.number }) - 1;
    for (const pair of read) into.pairs.add(numbers.numberOf(pair.a), numbers.numberOf(pair.b), pair.jaccard, pair.hamming, at);
  }
  if (pairs !== progress.pairs && !into.problems.some((p) => p.share === share.number)) {
    into.problems.push({ page: markerId(run.run, share), share: share.number, reason: `says its share wrote ${plural(progress.pairs, 'pair')}, where its pages hold ${pairs}` });
  }
}

/**
 * One part's pairs checked against their stored signatures, a few thousand at a time (read through the store, so
 * that the cut finds them in its cache), each that passes recorded with the similarity the signatures give; then
 * the copies that disagree with them checked the same way, and dropped (the first copy is the one recorded).
 */
async function checkPart(gathered: Gathered, { pairs, copies }: PairPart, store: SignatureStore, verifier: PairVerifier, minSimilarity: number): Promise<void> {
  for (let from = 0; from < pairs.count; from += PAIRS_PER_CHECK) {
    const chunk = Array.from({ length: Math.min(PAIRS_PER_CHECK, pairs.count - from) }, (_, k) => {
      const i = from + k;
      return { na: pairs.na[i], nb: pairs.nb[i], jaccard: pairs.jaccard[i], hamming: pairs.hamming[i], page: pairs.page[i] };
    });
    await checkChunk(gathered, chunk, store, verifier, minSimilarity, true);
  }
  for (let from = 0; from < copies.length; from += PAIRS_PER_CHECK) await checkChunk(gathered, copies.slice(from, from + PAIRS_PER_CHECK), store, verifier, minSimilarity, false);
}

/**
 * Pairs checked against the signatures they name, read in one go; with `record`, each that passes recorded by its
 * numbers (looking each id up again would cost two reads a pair when the ids are on disk). A compact share's pair
 * that the whole values put under the bar is left out; any other that fails is a problem, named with its page.
 */
async function checkChunk(gathered: Gathered, chunk: PagedPair[], store: SignatureStore, verifier: PairVerifier, minSimilarity: number, record: boolean): Promise<void> {
  const named = namedPairs(chunk, verifier.clusters.documents);
  const signatures = await store.load([...new Set(named.flatMap((pair) => [pair.a, pair.b]))]);
  for (const [i, pair] of named.entries()) {
    const checked = checkPair(pair, signatures.get(pair.a), signatures.get(pair.b), minSimilarity, verifier.comparing);
    const { na, nb, page } = chunk[i];
    if ('pair' in checked && record) verifier.recordChecked({ na, nb, jaccard: checked.pair.jaccard, hamming: checked.pair.hamming }, checked.pair);
    if ('problem' in checked) gathered.problems.push({ page: gathered.pages[page].id, share: gathered.pages[page].share, reason: `pair ${JSON.stringify(pair.a)} ${JSON.stringify(pair.b)} ${checked.problem}` });
  }
}

/** Names every problem, resets the shares they came from (not in a dry run), and refuses. */
async function refuse(pairsIndex: PairsIndex, run: SharedRun, problems: readonly Problem[], errors: ErrorsFile, dryRun: boolean): Promise<never> {
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
