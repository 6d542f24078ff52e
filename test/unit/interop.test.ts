// Interoperability with the Python tools, proven by vectors the real packages produced
// (scripts/interop/generate.sh: datasketch 2.0.0, simhash-py 0.4.0, mmh3, zlib).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createSigner } from '../../src/signature.js';
import { deserializeLeanMinhash, minhashValuesScratch, serializeLeanMinhash } from '../../src/sketch/lean-minhash.js';
import { falseNegativeProbability, falsePositiveProbability, optimalBandsRows } from '../../src/sketch/lsh.js';
import { emptyMinhash, type MinhashScheme, minhashPermutations, updateMinhash } from '../../src/sketch/minhash.js';
import { computeSimhash, hammingDistance, shingle, simhashBlockKeys, simhashHex, unsignedHash } from '../../src/sketch/simhash.js';
import { type TokenHashName, tokenHash } from '../../src/sketch/token-hash.js';
import { splitWhiteSpace } from '../../src/text/tokenize.js';

const vectors = JSON.parse(readFileSync(new URL('../fixtures/interop.json', import.meta.url), 'utf8'));
const hex64 = (decimal: string) => BigInt(decimal).toString(16).padStart(16, '0');

describe('interop with datasketch', () => {
  it('draws the same permutations as numpy RandomState, in both schemes', () => {
    for (const c of vectors.permutations) {
      const p = minhashPermutations(c.num_perm, c.seed, c.scheme as MinhashScheme);
      const a = c.scheme === 'legacy' ? Array.from(p.aHi, (hi, i) => String(BigInt(hi) * 2n ** 32n + BigInt(p.aLo[i]))) : Array.from(p.a32, String);
      const b = c.scheme === 'legacy' ? Array.from(p.bHi, (hi, i) => String(BigInt(hi) * 2n ** 32n + BigInt(p.bLo[i]))) : Array.from(p.b32, String);
      expect(a, `${c.scheme} seed ${c.seed}`).toEqual(c.a);
      expect(b).toEqual(c.b);
    }
  });

  it('hashes tokens as sha1_hash32, mmh3 and zlib.crc32', () => {
    for (const c of vectors.token_hashes) {
      expect(tokenHash('sha1', c.token)).toBe(c.sha1_hash32);
      expect(tokenHash('mmh3', c.token)).toBe(c.mmh3_32);
      expect(tokenHash('crc32', c.token)).toBe(c.crc32);
    }
  });

  it('gives MinHash values identical to MinHash(num_perm, seed, hashfunc).update_batch', () => {
    expect(vectors.minhash.length).toBeGreaterThan(70);
    for (const c of vectors.minhash) {
      const values = emptyMinhash(c.num_perm);
      updateMinhash(values, minhashPermutations(c.num_perm, c.seed, c.scheme), c.tokens.map((t: string) => tokenHash(c.hash as TokenHashName, t)));
      expect(Array.from(values), `${c.scheme} ${c.hash} ${c.num_perm}/${c.seed} (${c.tokens.length} tokens)`).toEqual(c.hashvalues);
    }
  });

  it('tokenizes as Python does and signs to the same values through the whole condenser', () => {
    expect(vectors.tokenizers.length).toBeGreaterThan(150);
    for (const c of vectors.tokenizers) {
      for (const scheme of ['affine32', 'legacy'] as const) {
        const sig = createSigner({ condenser: `${c.tokenizer}:none:sha1:128`, scheme })(c.text);
        const expected = scheme === 'legacy' ? c.minhash_sha1_128_legacy : c.minhash_sha1_128;
        expect(sig.tokens, `${c.tokenizer} on ${JSON.stringify(c.text)}`).toBe(c.tokens.length);
        expect(Array.from(sig.minhash), `${c.tokenizer} ${scheme} on ${JSON.stringify(c.text)}`).toEqual(expected);
      }
    }
  });

  it('splits on exactly the code points Python str.isspace() accepts', () => {
    for (let cp = 0; cp < 0x3100; cp++) {
      const isSpace = vectors.python_whitespace.includes(cp);
      expect(splitWhiteSpace(`a${String.fromCodePoint(cp)}b`).length, `U+${cp.toString(16)}`).toBe(isSpace ? 2 : 1);
    }
  });

  it('picks the same LSH bands and rows as MinHashLSH for a grid of thresholds and weights', () => {
    expect(vectors.lsh_params.length).toBeGreaterThanOrEqual(240);
    for (const c of vectors.lsh_params) {
      const [fp, fn] = c.weights;
      expect(fp + fn).toBeCloseTo(1);
      const got = optimalBandsRows({ threshold: c.threshold, numPerm: c.num_perm, falseNegativeWeight: fn });
      expect(got, `t=${c.threshold} n=${c.num_perm} w=${c.weights}`).toEqual({ b: c.b, r: c.r });
      expect(falsePositiveProbability(c.threshold, c.b, c.r)).toBeCloseTo(c.false_positive, 9);
      expect(falseNegativeProbability(c.threshold, c.b, c.r)).toBeCloseTo(c.false_negative, 9);
    }
  });

  it('reads LeanMinHash buffers in every byte order, and writes the native one', () => {
    for (const c of vectors.lean_minhash) {
      for (const [order, { base64 }] of Object.entries(c.serialized as Record<string, { base64: string }>)) {
        const lean = deserializeLeanMinhash(Buffer.from(base64, 'base64'));
        expect(lean.seed, `${c.scheme} '${order}'`).toBe(c.seed);
        expect(lean.scheme).toBe(c.scheme);
        expect(Array.from(lean.values)).toEqual(c.hashvalues);
        // dedup's reader, which decodes into one reused buffer, reads the same values
        expect(Array.from(minhashValuesScratch(base64)), `${c.scheme} '${order}'`).toEqual(c.hashvalues);
      }
      const written = serializeLeanMinhash({ seed: c.seed, scheme: c.scheme, values: Uint32Array.from(c.hashvalues) });
      expect(Buffer.from(written).toString('base64')).toBe(c.serialized['@'].base64);
    }
  });
});

describe('interop with simhash-py', () => {
  it('compute, unsigned_hash, shingle and num_differing_bits agree', () => {
    for (const c of vectors.simhash.compute) expect(simhashHex(computeSimhash(c.hashes.map(BigInt)))).toBe(hex64(c.result));
    for (const c of vectors.simhash.unsigned_hash) expect(simhashHex(unsignedHash(c.text))).toBe(hex64(c.result));
    for (const c of vectors.simhash.shingle) expect(shingle(c.words, c.window)).toEqual(c.shingles);
    for (const c of vectors.simhash.num_differing_bits) expect(hammingDistance(hex64(c.a), hex64(c.b))).toBe(c.result);
  });

  it('default features: word 4-shingles hashed with unsigned_hash; short texts are one shingle', () => {
    for (const c of vectors.simhash.default_features) {
      const sig = createSigner({ condenser: 'ws:none' })(c.text);
      expect(sig.simhash, JSON.stringify(c.text)).toBe(c.whole_list_if_short.fingerprint);
      if (c.words.length >= 4) expect(sig.simhash).toBe(c.fingerprint);
    }
  });

  it('block keys find exactly the pairs find_all finds', () => {
    const hashes: string[] = [...new Set<string>(vectors.simhash.find_all.hashes)].map(hex64);
    for (const c of vectors.simhash.find_all.cases) {
      const m = c.number_of_blocks, k = c.different_bits;
      const keys = hashes.map((h) => new Set(simhashBlockKeys(h, m)));
      const pairs: string[][] = [];
      for (let i = 0; i < hashes.length; i++) {
        for (let j = i + 1; j < hashes.length; j++) {
          let shared = 0;
          for (const key of keys[j]) if (keys[i].has(key)) shared++;
          // The engine's candidate test (minimum_should_match = m - k), then verification.
          if (shared >= m - k && hammingDistance(hashes[i], hashes[j]) <= k) {
            const [a, b] = [BigInt('0x' + hashes[i]), BigInt('0x' + hashes[j])].sort((x, y) => (x < y ? -1 : 1));
            pairs.push([a.toString(), b.toString()]);
          }
        }
      }
      pairs.sort((x, y) => (BigInt(x[0]) === BigInt(y[0]) ? (BigInt(x[1]) < BigInt(y[1]) ? -1 : 1) : BigInt(x[0]) < BigInt(y[0]) ? -1 : 1));
      expect(pairs, `m=${m} k=${k}`).toEqual(c.pairs);
    }
  });
});
