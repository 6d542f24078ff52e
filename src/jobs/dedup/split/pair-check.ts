// A pair read back from the pairs index, checked against the two stored signatures it names: both
// documents have a signature in scope, they share a band key (LSH made them candidates), and the
// similarity and SimHash distance the page says are the ones the signatures give, at the bar or above.
// A pair that passes is a pair the verifier would have found; one that fails was damaged or forged.
//
// One exception, which is not damage: a share whose signatures were spilled compact (scan/signature-table.ts,
// 16 bits a value) counts two values equal in their low 16 bits as equal, so it may say a similarity
// above the one the whole values give (never below). Such a similarity is taken when it is exactly what
// the compact values give, and the pair keeps the similarity of the whole values: when that is under the
// bar, the pair is left out (it is one the share took only for its compact values). Under the core rule
// (`;core=` params) the similarities are the rule's, of the whole values and of the values masked to 16
// bits alike. Pure.
import { hammingDistance } from '../../../sketch/simhash.js';
import { type Comparing, compactComparerOf, comparerOf } from '../verify/comparing.js';
import type { VerifiedPair } from '../verify/pair-verifier.js';
import type { StoredSignature } from '../documents/signature-store.js';

/** A pair checked: as the signatures give it, under the bar by its whole values only, or why it cannot be trusted. */
export type PairCheck = { pair: VerifiedPair } | { belowBar: true } | { problem: string };

/** Checks a pair read back against the signatures of its two documents, compared as `comparing` says (the share of equal values when not said). */
export function checkPair(pair: VerifiedPair, a: StoredSignature | undefined, b: StoredSignature | undefined, minSimilarity: number, comparing?: Comparing): PairCheck {
  for (const [id, signature] of [[pair.a, a], [pair.b, b]] as const) {
    if (!signature) return { problem: `names "${id}", which has no signature in scope (deleted, damaged or signed again since)` };
  }
  const x = a as StoredSignature, y = b as StoredSignature;
  if (x.values.length !== y.values.length) return { problem: 'names two signatures of different lengths' };
  if (!shareABand(x.bands, y.bands)) return { problem: 'names two documents that share no band key (no bucket made them candidates)' };
  const hamming = hammingDistance(x.simhash, y.simhash);
  if (hamming !== pair.hamming) return { problem: `says SimHash distance ${pair.hamming}, their signatures give ${hamming}` };
  const jaccard = comparerOf(comparing)(x.values, y.values);
  const compact = pair.jaccard !== jaccard && pair.jaccard === (comparing?.core ? compactComparerOf(comparing) : compactJaccard)(x.values, y.values);
  if (jaccard !== pair.jaccard && !compact) return { problem: `says similarity ${pair.jaccard}, their signatures give ${jaccard}` };
  if (jaccard < minSimilarity) return compact ? { belowBar: true } : { problem: `is below --min-similarity ${minSimilarity}` };
  return { pair: { ...pair, jaccard } };
}

/** The similarity of two signatures as a compact spill estimates it: values equal in their low 16 bits count as equal. */
export function compactJaccard(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let equal = 0;
  for (let i = 0; i < a.length; i++) if (((a[i] ^ b[i]) & 0xffff) === 0) equal++;
  return a.length === 0 ? 0 : equal / a.length;
}

function shareABand(a: Int32Array, b: Int32Array): boolean {
  for (let j = 0; j < a.length && j < b.length; j++) if (a[j] === b[j]) return true;
  return false;
}
