// How dedup compares two signatures of the run's params: the share of equal values (datasketch's estimate),
// or for `;core=` params the rule of sketch/core-similarity.ts; plain data, which the checking threads rebuild
// the comparer from.
import { signatureComparer, wholeSimilarity } from '../../../sketch/core-similarity.js';
import { minhashJaccard } from '../../../sketch/minhash.js';
import { paramsShape } from '../../../stored/read.js';

/** How two signatures of the run's params are compared, as the file header says. */
export interface Comparing {
  /** The MinHash values of a signature (its core words follow them). */
  numPerm: number;
  /** Whether the values carry core words, compared by the rule. */
  core: boolean;
}

/** How signatures of these params are compared; undefined for params this version cannot read. */
export function comparingOf(params: string): Comparing | undefined {
  const shape = paramsShape(params);
  return shape && { numPerm: shape.numPerm, core: shape.core };
}

/** The similarity of two signatures compared so (the share of equal values when not said). */
export function comparerOf(comparing: Comparing | undefined): (x: Uint32Array, y: Uint32Array) => number {
  return comparing?.core ? signatureComparer(comparing.numPerm, true) : minhashJaccard;
}

/** The whole texts' similarity: the share of equal values, the core words left out (for plain params, the comparer). */
export function wholeComparerOf(comparing: Comparing | undefined): (x: Uint32Array, y: Uint32Array) => number {
  if (!comparing?.core) return comparerOf(comparing);
  const { numPerm } = comparing;
  return (x, y) => wholeSimilarity(x, y, numPerm);
}

/**
 * The similarity of two signatures as a compact spill (16 bits a value: scan/signature-table.ts) gives it: the
 * values masked to their low 16 bits, then compared as above (the core words are 16 bits already).
 */
export function compactComparerOf(comparing: Comparing | undefined): (x: Uint32Array, y: Uint32Array) => number {
  const compare = comparerOf(comparing);
  const low16 = (values: Uint32Array) => values.map((v) => v & 0xffff);
  return (x, y) => compare(low16(x), low16(y));
}
