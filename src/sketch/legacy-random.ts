// The part of numpy's legacy `RandomState` that datasketch uses to draw MinHash permutations:
// MT19937 seeded with an integer, and `randint(low, high, dtype=np.uint64)` by masked rejection
// sampling over 64-bit draws (high word first). Reproducing it bit for bit is what makes our MinHash
// values equal to datasketch's.

const N = 624;
const M = 397;

/** numpy's legacy RandomState, as much of it as datasketch draws its permutations with. */
export class LegacyRandomState {
  private readonly mt = new Uint32Array(N);
  private index = N;

  constructor(seed: number) {
    if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
      throw new RangeError(`seed must be an integer from 0 to 4294967295, got ${seed}`);
    }
    const mt = this.mt;
    mt[0] = seed >>> 0;
    for (let i = 1; i < N; i++) {
      const prev = mt[i - 1] ^ (mt[i - 1] >>> 30);
      // 1812433253 * prev + i, modulo 2^32, computed in 16-bit halves to stay exact.
      mt[i] = ((((prev >>> 16) * 1812433253) << 16) + (prev & 0xffff) * 1812433253 + i) >>> 0;
    }
  }

  /** The next 32-bit output of MT19937 (genrand_int32). */
  nextUint32(): number {
    const mt = this.mt;
    if (this.index >= N) {
      for (let k = 0; k < N; k++) {
        const y = (mt[k] & 0x80000000) | (mt[(k + 1) % N] & 0x7fffffff);
        mt[k] = mt[(k + M) % N] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0);
      }
      this.index = 0;
    }
    let y = mt[this.index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  }

  /**
   * `randint(low, high, size, dtype=np.uint32)`: `size` uniform integers in [low, high). A range of
   * exactly 2^32 takes raw 32-bit draws; smaller ones mask and reject, as numpy's legacy path does.
   */
  randintUint32(low: number, high: number, size: number): Uint32Array {
    const rng = high - 1 - low;
    if (rng < 0 || high > 0x100000000) throw new RangeError(`bad uint32 range [${low}, ${high})`);
    const out = new Uint32Array(size);
    let mask = rng;
    for (let shift = 1; shift <= 16; shift <<= 1) mask = (mask | (mask >>> shift)) >>> 0;
    for (let i = 0; i < size; i++) {
      if (rng === 0) out[i] = low;
      else if (rng === 0xffffffff) out[i] = low + this.nextUint32();
      else {
        let value: number;
        do value = (this.nextUint32() & mask) >>> 0;
        while (value > rng);
        out[i] = low + value;
      }
    }
    return out;
  }

  /** `randint(low, high, dtype=np.uint64)`: a uniform integer in [low, high), as a BigInt. */
  randintUint64(low: bigint, high: bigint): bigint {
    const rng = high - 1n - low;
    if (rng < 0n) throw new RangeError(`empty range [${low}, ${high})`);
    if (rng === 0n) return low;
    if (rng <= 0xffffffffn) {
      // numpy draws 32-bit values for ranges that fit in 32 bits; datasketch never asks for one.
      throw new RangeError('ranges of 32 bits or less are not needed by MinHash and not implemented');
    }
    let mask = rng;
    for (let shift = 1n; shift <= 32n; shift <<= 1n) mask |= mask >> shift;
    for (;;) {
      const hi = BigInt(this.nextUint32());
      const lo = BigInt(this.nextUint32());
      const value = ((hi << 32n) | lo) & mask;
      if (value <= rng) return low + value;
    }
  }
}
