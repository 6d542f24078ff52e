// The final step of a split dedup, stage 2: every gathered pair checked against the two stored signatures
// it names (pair-check.ts), read through the signature store a few thousand documents at a time (so that
// the cut finds them in its cache after), and every pair that passes recorded by the verifier: families,
// best similarities and partners, as one process's verifier records the pairs it verifies, with the
// similarity the stored signatures give. A pair that fails is named with its page; none of them joins
// anything. A copy of a pair that another share gave with another similarity is checked the same way (and
// then dropped: the first copy is the one recorded).
// The pairs come a part at a time (final-parts.ts), each part checked and recorded before the next is read.
// Input: the gathered pairs, the store, the verifier. Output: the problems, added to the gathered ones.
import { checkPair } from './pair-check.js';
import type { PagedPair, PairPart } from './final-parts.js';
import { namedPairs, type PairVerifier, type VerifiedPair } from '../verify/pair-verifier.js';
import type { Gathered } from './final-gather.js';
import type { SignatureStore, StoredSignature } from '../documents/signature-store.js';

/** Pairs checked together: their documents' signatures read in one go (at most twice as many documents). */
const PAIRS_PER_CHECK = 5000;

/**
 * Stage 2 of the final step: the gathered pairs checked against their stored signatures a part at a time, those that
 * pass recorded by the verifier, the problems added to the gathered ones.
 */
export async function checkAndRecord(gathered: Gathered, store: SignatureStore, verifier: PairVerifier, minSimilarity: number): Promise<void> {
  for (const part of gathered.pairs.parts()) {
    await checkPart(gathered, part, store, verifier, minSimilarity);
  }
}

/** One part's pairs checked and recorded, a few thousand at a time; then its disagreeing copies checked. */
async function checkPart(gathered: Gathered, part: PairPart, store: SignatureStore, verifier: PairVerifier, minSimilarity: number): Promise<void> {
  const { pairs, copies } = part;
  for (let from = 0; from < pairs.count; from += PAIRS_PER_CHECK) {
    const chunk = Array.from({ length: Math.min(PAIRS_PER_CHECK, pairs.count - from) }, (_, k) => {
      const i = from + k;
      return { na: pairs.na[i], nb: pairs.nb[i], jaccard: pairs.jaccard[i], hamming: pairs.hamming[i], page: pairs.page[i] };
    });
    await checkChunk(gathered, chunk, { store, verifier, minSimilarity, record: true });
  }
  for (let from = 0; from < copies.length; from += PAIRS_PER_CHECK) await checkChunk(gathered, copies.slice(from, from + PAIRS_PER_CHECK), { store, verifier, minSimilarity, record: false });
}

/**
 * Pairs checked against the signatures they name, read in one go (their ids read once each, in ascending
 * numbers); with `record`, each that passes recorded by its numbers (looking each id up again would cost two
 * reads a pair when the ids are on disk).
 */
async function checkChunk(gathered: Gathered, chunk: PagedPair[], settings: { store: SignatureStore; verifier: PairVerifier; minSimilarity: number; record: boolean }): Promise<void> {
  const { store, verifier, minSimilarity, record } = settings;
  const named = namedPairs(chunk, verifier.clusters.documents);
  const signatures = await store.load([...new Set(named.flatMap((pair) => [pair.a, pair.b]))]);
  for (const [i, pair] of chunk.entries()) {
    const checked = check(gathered, pair.page, named[i], signatures, minSimilarity, verifier);
    if (checked && record) verifier.recordChecked({ na: pair.na, nb: pair.nb, jaccard: checked.jaccard, hamming: checked.hamming }, checked);
  }
}

/** One pair checked: as its signatures give it, or undefined (a problem named, or a compact share's pair under the bar counted). */
function check(gathered: Gathered, page: number, pair: VerifiedPair, signatures: ReadonlyMap<string, StoredSignature>, minSimilarity: number, verifier: PairVerifier): VerifiedPair | undefined {
  const checked = checkPair(pair, signatures.get(pair.a), signatures.get(pair.b), minSimilarity, verifier.comparing);
  if ('pair' in checked) return checked.pair;
  if ('belowBar' in checked) gathered.belowBar++;
  else gathered.problems.push({ page: gathered.pages[page].id, share: gathered.pages[page].share, reason: `pair ${JSON.stringify(pair.a)} ${JSON.stringify(pair.b)} ${checked.problem}` });
  return undefined;
}
