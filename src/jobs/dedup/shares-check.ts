// The final step of a split dedup, stage 2: every gathered pair checked against the two stored signatures
// it names (pair-check.ts), read through the signature store a few thousand documents at a time (so that
// the cut finds them in its cache after), and every pair that passes recorded by the verifier: families,
// best similarities and partners, as one process's verifier records the pairs it verifies. A pair that
// fails is named with its page; none of them joins anything.
// Input: the gathered pairs, the store, the verifier. Output: the problems, added to the gathered ones.
import type { DocIds } from './doc-numbers.js';
import { pairMismatch } from './pair-check.js';
import { namedPair, type PairVerifier } from './pair-verifier.js';
import type { Gathered } from './shares-gather.js';
import type { SignatureStore } from './signature-store.js';

/** Pairs checked together: their documents' signatures read in one go (at most twice as many documents). */
const PAIRS_PER_CHECK = 5000;

export async function checkAndRecord(gathered: Gathered, store: SignatureStore, verifier: PairVerifier, minSimilarity: number): Promise<void> {
  const { pairs } = gathered;
  const documents: DocIds = verifier.clusters.documents;
  for (let from = 0; from < pairs.count; from += PAIRS_PER_CHECK) {
    const to = Math.min(pairs.count, from + PAIRS_PER_CHECK);
    const numbers = Int32Array.from(new Set(Array.from({ length: 2 * (to - from) }, (_, k) => (k % 2 === 0 ? pairs.na : pairs.nb)[from + (k >> 1)]))).sort();
    const ids = documents.idsOf(numbers);
    const idOf = new Map(Array.from(numbers, (n, i) => [n, ids[i]]));
    const signatures = await store.load(ids);
    for (let i = from; i < to; i++) {
      const pair = namedPair({ na: pairs.na[i], nb: pairs.nb[i], jaccard: pairs.jaccard[i], hamming: pairs.hamming[i] }, idOf.get(pairs.na[i]) as string, idOf.get(pairs.nb[i]) as string);
      const problem = pairMismatch(pair, signatures.get(pair.a), signatures.get(pair.b), minSimilarity);
      const { id, share } = gathered.pages[pairs.page[i]];
      if (problem) gathered.problems.push({ page: id, share, reason: `pair ${JSON.stringify(pair.a)} ${JSON.stringify(pair.b)} ${problem}` });
      else verifier.record(pair);
    }
  }
}
