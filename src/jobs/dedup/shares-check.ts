// The final step of a split dedup, stage 2: every gathered pair checked against the two stored signatures
// it names (pair-check.ts), read through the signature store a few thousand documents at a time (so that
// the cut finds them in its cache after), and every pair that passes recorded by the verifier: families,
// best similarities and partners, as one process's verifier records the pairs it verifies, with the
// similarity the stored signatures give. A pair that fails is named with its page; none of them joins
// anything. A copy of a pair that another share gave with another similarity is checked the same way (and
// then dropped: the first copy is the one recorded).
// The pairs come a part at a time (pair-parts.ts), each part checked and recorded before the next is read.
// Input: the gathered pairs, the store, the verifier. Output: the problems, added to the gathered ones.
import type { DocIds } from './doc-numbers.js';
import { checkPair } from './pair-check.js';
import { namedPair, type PairVerifier, type VerifiedPair } from './pair-verifier.js';
import type { PairPart } from './pair-parts.js';
import type { Gathered } from './shares-gather.js';
import type { SignatureStore, StoredSignature } from './signature-store.js';

/** Pairs checked together: their documents' signatures read in one go (at most twice as many documents). */
const PAIRS_PER_CHECK = 5000;

export async function checkAndRecord(gathered: Gathered, store: SignatureStore, verifier: PairVerifier, minSimilarity: number): Promise<void> {
  for (const part of gathered.pairs.parts()) {
    await checkPart(gathered, part, store, verifier, minSimilarity);
  }
}

/** One part's pairs checked and recorded, a few thousand at a time; then its disagreeing copies checked. */
async function checkPart(gathered: Gathered, part: PairPart, store: SignatureStore, verifier: PairVerifier, minSimilarity: number): Promise<void> {
  const { pairs, copies } = part;
  const documents: DocIds = verifier.clusters.documents;
  for (let from = 0; from < pairs.count; from += PAIRS_PER_CHECK) {
    const to = Math.min(pairs.count, from + PAIRS_PER_CHECK);
    const numbers = Int32Array.from(new Set(Array.from({ length: 2 * (to - from) }, (_, k) => (k % 2 === 0 ? pairs.na : pairs.nb)[from + (k >> 1)]))).sort();
    const ids = documents.idsOf(numbers);
    const idOf = new Map(Array.from(numbers, (n, i) => [n, ids[i]]));
    const signatures = await store.load(ids);
    for (let i = from; i < to; i++) {
      const pair = namedPair({ na: pairs.na[i], nb: pairs.nb[i], jaccard: pairs.jaccard[i], hamming: pairs.hamming[i] }, idOf.get(pairs.na[i]) as string, idOf.get(pairs.nb[i]) as string);
      const checked = check(gathered, pairs.page[i], pair, signatures, minSimilarity);
      // (By the numbers it has: looking each id up again would cost two reads a pair when the ids are on disk.)
      if (checked) verifier.recordChecked({ na: pairs.na[i], nb: pairs.nb[i], jaccard: checked.jaccard, hamming: checked.hamming }, checked);
    }
  }
  for (let from = 0; from < copies.length; from += PAIRS_PER_CHECK) {
    const some = copies.slice(from, from + PAIRS_PER_CHECK);
    const named = some.map((copy) => ({ pair: namedPair(copy, documents.idOf(copy.na), documents.idOf(copy.nb)), page: copy.page }));
    const signatures = await store.load([...new Set(named.flatMap(({ pair }) => [pair.a, pair.b]))]);
    for (const { pair, page } of named) check(gathered, page, pair, signatures, minSimilarity);
  }
}

/** One pair checked: as its signatures give it, or undefined (a problem named, or a compact share's pair under the bar counted). */
function check(gathered: Gathered, page: number, pair: VerifiedPair, signatures: ReadonlyMap<string, StoredSignature>, minSimilarity: number): VerifiedPair | undefined {
  const checked = checkPair(pair, signatures.get(pair.a), signatures.get(pair.b), minSimilarity);
  if ('pair' in checked) return checked.pair;
  if ('belowBar' in checked) gathered.belowBar++;
  else gathered.problems.push({ page: gathered.pages[page].id, share: gathered.pages[page].share, reason: `pair ${JSON.stringify(pair.a)} ${JSON.stringify(pair.b)} ${checked.problem}` });
  return undefined;
}
