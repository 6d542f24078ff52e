// The tests' one seeded random number generator (mulberry32): small, fast, the same draws on every machine,
// so that a failure replays.

/** Uniform 32-bit unsigned integers, seeded. */
export function seededUint32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Uniform numbers in [0, 1), seeded: the integers of `seededUint32` over 2^32. */
export function seededRandom(seed: number): () => number {
  const next = seededUint32(seed);
  return () => next() / 2 ** 32;
}
