// A pair read back from the pairs index, checked against the two stored signatures it names: both
// documents have a signature in scope, they share a band key (LSH made them candidates), and the
// similarity and SimHash distance the page says are the ones the signatures give, at the bar or above.
// A pair that passes is a pair the verifier would have found; one that fails was damaged or forged. Pure.
import { minhashJaccard } from '../../sketch/minhash.js';
import { hammingDistance } from '../../sketch/simhash.js';
import type { VerifiedPair } from './pair-verifier.js';
import type { StoredSignature } from './signature-store.js';

/** Why a pair is not what its signatures give, or undefined when it is. */
export function pairMismatch(pair: VerifiedPair, a: StoredSignature | undefined, b: StoredSignature | undefined, minSimilarity: number): string | undefined {
  for (const [id, signature] of [[pair.a, a], [pair.b, b]] as const) {
    if (!signature) return `names "${id}", which has no signature in scope (deleted, damaged or signed again since)`;
  }
  const x = a as StoredSignature, y = b as StoredSignature;
  if (x.values.length !== y.values.length) return 'names two signatures of different lengths';
  if (!shareABand(x.bands, y.bands)) return 'names two documents that share no band key (no bucket made them candidates)';
  const jaccard = minhashJaccard(x.values, y.values);
  if (jaccard !== pair.jaccard) return `says similarity ${pair.jaccard}, their signatures give ${jaccard}`;
  if (jaccard < minSimilarity) return `is below --min-similarity ${minSimilarity}`;
  const hamming = hammingDistance(x.simhash, y.simhash);
  if (hamming !== pair.hamming) return `says SimHash distance ${pair.hamming}, their signatures give ${hamming}`;
  return undefined;
}

function shareABand(a: Int32Array, b: Int32Array): boolean {
  for (let j = 0; j < a.length && j < b.length; j++) if (a[j] === b[j]) return true;
  return false;
}
