// The tests' one seeded random number generator (mulberry32): small, fast, the same draws on every machine,
// so that a failure replays. The benchmarks' corpora draw from the same one (scripts/bench/corpus.mjs).
// @ts-expect-error a plain ES module of the scripts, untyped
import { seededRandom as random, seededUint32 as uint32 } from '../../scripts/bench/corpus.mjs';

/** Uniform 32-bit unsigned integers, seeded. */
export const seededUint32: (seed: number) => () => number = uint32;

/** Uniform numbers in [0, 1), seeded: the integers of `seededUint32` over 2^32. */
export const seededRandom: (seed: number) => () => number = random;
