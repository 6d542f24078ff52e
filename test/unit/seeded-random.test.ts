// The tests' one seeded generator draws what the four copies it replaced drew (figures taken from them).
import { describe, expect, it } from 'vitest';
import { seededRandom, seededUint32 } from '../support/seeded-random.js';

const FIRST_FIVE: Array<[number, number[]]> = [
  [1, [2693262067, 11749833, 2265367787, 4213581821, 4159151403]],
  [7, [50271532, 266108690, 4195786334, 3002305430, 2239590375]],
  [42, [2581720956, 1925393290, 3661312704, 2876485805, 750819978]],
  [0xdeadbeef, [4043151706, 1147597007, 3315858022, 1538288752, 2042435954]],
];

describe('the seeded generator (mulberry32)', () => {
  it('draws the same 32-bit integers for a seed as before', () => {
    for (const [seed, values] of FIRST_FIVE) {
      const next = seededUint32(seed);
      expect(Array.from({ length: 5 }, next)).toEqual(values);
    }
  });

  it('draws the same integers scaled to [0, 1)', () => {
    for (const [seed, values] of FIRST_FIVE) {
      const next = seededRandom(seed);
      expect(Array.from({ length: 5 }, next)).toEqual(values.map((v) => v / 2 ** 32));
    }
  });
});
