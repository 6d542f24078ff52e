// The token sets evaluate --truth-field measures with, whatever the index was signed with: one notion of
// similarity for every index and for bench:quality, the word 4-shingles of the text as near-dup normalizes
// it (norm-html, white-space-4-grams), each shingle hashed to 32 bits (mmh3; two sets of 1,000 shingles
// share a false one about once in 4,000 pairs, a Jaccard off by 0.001 then). They are the signer's own
// distinct token hashes (its containment sample at 1 in 1, made by the WebAssembly kernels: ten times
// faster than hashing each shingle's string here), as ranks, one to one with the hashes. And how many
// documents hold each shingle, counted in a fixed table: prefix filtering takes its rarest shingles first,
// and leaves out those one document holds.
import { createSigner } from '../../signature.js';
import type { DocumentFrequency } from './truth-scores.js';

/**
 * The condenser whose distinct token hashes are the truth's sets: word 4-shingles, hashed with mmh3 (the file header
 * says why).
 */
export const TRUTH_CONDENSER = 'white-space-4-grams:norm-html:mmh3:2';
/** The truth's notion of similarity in words, for the report. */
export const TRUTH_SIMILARITY = 'exact Jaccard of the word 4-shingles (normalizer norm-html, tokenizer white-space-4-grams, each shingle hashed to 32 bits with mmh3)';

/** A maker of shingle sets: one signer, reused. */
export function shingleSets(): (text: string) => Uint32Array {
  const signer = createSigner({ condenser: TRUTH_CONDENSER, containmentSample: 1, bands: 1, rows: 2 });
  return (text) => {
    const { sample } = signer.signParts(text);
    return sample.values.slice(0, sample.count); // distinct and ascending already
  };
}

const MIN_SLOTS_LOG2 = 16;
const MAX_SLOTS_LOG2 = 26;

/**
 * Documents per shingle, counted in a table of 2 bytes a slot (a count never too low: shingles that share a
 * slot add up, at most 65,535): twice as many slots as shingles held, from 64 K to 64 M (128 MB).
 */
export function documentFrequency(sets: readonly Uint32Array[]): { df: DocumentFrequency; bytes: number } {
  const held = sets.reduce((n, s) => n + s.length, 0);
  const log2 = Math.min(MAX_SLOTS_LOG2, Math.max(MIN_SLOTS_LOG2, Math.ceil(Math.log2(2 * held + 1))));
  const mask = 2 ** log2 - 1;
  const counts = new Uint16Array(2 ** log2);
  for (const set of sets) {
    for (const token of set) {
      const slot = token & mask;
      if (counts[slot] < 0xffff) counts[slot]++;
    }
  }
  return { df: (token) => counts[token & mask], bytes: counts.byteLength };
}
