// The final step of a split dedup (dedup --from-shares N --pairs-index NAME), stage 1: the shares' pairs
// gathered from the pairs index.
//  1. Every share's marker read and checked against this run's identity: when a share is not complete
//     (never started, stopped midway, of another run, damaged), the step refuses, naming each such share and
//     the command that completes it, before it reads a page.
//  2. Each share's pages counted: the engine must hold exactly the pages its marker lists (else the share is
//     named, and its pages are not read: a forged marker may list millions), all before any page is read,
//     so that the pairs announced are those of the shares whose pages are there.
//  3. Every page the markers list read by id and checked (pages.ts): a band's pages full but its last,
//     and as many pairs in them as the marker says; the pairs numbered and kept once (final-parts.ts: in
//     memory, or in parts on the disk when there are more than a part holds), a copy that another share
//     gave with another similarity kept aside to be checked too (final-check.ts).
// Input: the run (identity, name, share count), the pairs index, the numbering. Output: the pairs, what the
// shares counted, and every page or pair that failed a check, named.
import { UserError } from '../../../errors.js';
import type { DocIds } from '../documents/doc-numbers.js';
import { PAIRS_PER_PAGE, type ShareProgress, readMarker, readPage } from './pages.js';
import { PairParts, type PairSpill } from './final-parts.js';
import type { PairsIndex } from './pairs-index.js';
import { identityDifferences, markerId, pageId, type SharePlan, shareName, type ShareRunIdentity } from './plan.js';
import { forCount, plural } from '../../../plural.js';

/** The split run the final step gathers: its identity, its name, and how many shares it has (--from-shares N). */
export interface SharedRun {
  identity: ShareRunIdentity;
  run: string;
  count: number;
}

/** A page or pair that failed a check: the document it is in, and why. */
export interface PairsProblem {
  page: string;
  share: number;
  reason: string;
}

/** What stage 1 read: the pairs in parts, the pages they came from, each share's progress, and the problems found. */
export interface Gathered {
  pairs: PairParts;
  /** The pages read (their ids and shares), in the order the pairs' `page` places point into. */
  pages: Array<{ id: string; share: number }>;
  /** Each share's progress, in share order. */
  shares: ShareProgress[];
  problems: PairsProblem[];
  /** Pairs a compact share took that the whole values put under the bar: left out (final-check.ts). */
  belowBar: number;
}

/** Stage 1: every share complete (or a refusal naming those that are not), and their pairs (split into parts on the disk past `spill.maxPairs`). */
export async function gatherPairs(pairsIndex: PairsIndex, run: SharedRun, numbers: DocIds, spill?: PairSpill): Promise<Gathered> {
  const shares = await completeShares(pairsIndex, run);
  const problems: PairsProblem[] = [];
  const held: boolean[] = [];
  for (let k = 0; k < shares.length; k++) held.push(await pagesMatchMarker(pairsIndex, run, { number: k + 1, count: run.count }, shares[k], problems));
  // (Counted from the shares whose pages the engine holds: a forged marker's count is not taken.)
  const announced = shares.reduce((sum, share, k) => sum + (held[k] ? share.pairs : 0), 0);
  const gathered: Gathered = { pairs: new PairParts(announced, spill), pages: [], shares, problems, belowBar: 0 };
  for (let k = 0; k < shares.length; k++) if (held[k]) await readShare(pairsIndex, run, { number: k + 1, count: run.count }, shares[k], numbers, gathered);
  return gathered;
}

/** Whether the engine holds exactly the pages a share's marker lists (else the share is named, and its pages are not read: a forged marker may list millions). */
async function pagesMatchMarker(pairsIndex: PairsIndex, run: SharedRun, share: SharePlan, progress: ShareProgress, problems: PairsProblem[]): Promise<boolean> {
  const listed = progress.pages.reduce((sum, count) => sum + count, 0);
  const held = await pairsIndex.countPages(run.run, share.number);
  if (held === listed) return true;
  problems.push({ page: markerId(run.run, share), share: share.number, reason: `lists ${plural(listed, 'page')}, where ${pairsIndex.name} holds ${held} of this share (none read)` });
  return false;
}

/** Every share's progress, when each is complete; else a refusal naming those that are not. */
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
  if (missing.length > 0) throw new UserError(await refusal(pairsIndex, run, missing));
  return found;
}

/** The refusal's line: the shares to run, the command, and shares of this index made for another run, if any. */
async function refusal(pairsIndex: PairsIndex, run: SharedRun, missing: string[]): Promise<string> {
  const { index } = run.identity;
  const others = await otherRuns(pairsIndex, run);
  return (
    `${missing.length} of ${plural(run.count, 'share')} ${forCount(missing.length, 'is', 'are')} not complete in ${pairsIndex.name}: ${missing.join('; ')}. ` +
    `Run each (near-dup dedup --index ${index} --share K/${run.count} --pairs-index ${pairsIndex.name}, the same --min-similarity, --params and --prefix), then this again; nothing was written` +
    (others ? `. ${others}` : '')
  );
}

/** What the markers of other runs of the index differ in, with their values and this run's (the options given, or the index changed), or ''. */
async function otherRuns(pairsIndex: PairsIndex, run: SharedRun): Promise<string> {
  const differing = new Map<string, Set<string>>();
  for (const source of await pairsIndex.markersOf(run.identity.index)) {
    const identity = (source as { run?: unknown; identity?: unknown } | undefined)?.identity;
    if ((source as { run?: unknown }).run === run.run || typeof identity !== 'object' || identity === null) continue;
    for (const key of identityDifferences(run.identity, identity as Record<string, unknown>)) {
      const values = differing.get(key) ?? new Set<string>();
      values.add(JSON.stringify((identity as Record<string, unknown>)[key]) ?? 'none');
      differing.set(key, values);
    }
  }
  if (differing.size === 0) return '';
  const what = [...differing].map(([key, there]) => `${key} (${[...there].slice(0, 3).join(' or ')} there, ${JSON.stringify(run.identity[key as keyof ShareRunIdentity])} here)`);
  const changed = ['documents', 'lastAnnotatedAt', 'uuids'].some((k) => differing.has(k));
  return `${pairsIndex.name} holds shares of another run of ${run.identity.index}, which differ in ${what.join(', ')}: ${changed ? 'the index changed since they ran (run every share again)' : 'give the options they ran with, or run the shares with these'}`;
}

/** One share's pages (the engine holds as many as its marker lists) read in order, checked, their pairs added. */
async function readShare(pairsIndex: PairsIndex, run: SharedRun, share: SharePlan, progress: ShareProgress, numbers: DocIds, into: Gathered): Promise<void> {
  const places = progress.pages.flatMap((count, band) => Array.from({ length: count }, (_, page) => ({ band, page, last: page === count - 1, id: pageId(run.run, share, band, page) })));
  const where = new Map(places.map((p) => [p.id, p]));
  let pairs = 0;
  for await (const { id, source } of pairsIndex.sources(places.map((p) => p.id))) {
    const { band, page, last } = where.get(id) as (typeof places)[number];
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
