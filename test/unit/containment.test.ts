import { describe, expect, it } from 'vitest';
import { createSigner, DEFAULT_CONDENSER, resolveSignerSettings, signerOptionsFromParams } from '../../src/signature.js';
import { containmentFromJaccard, containmentSample, estimateShare, hashOfRank, sampleCut, sampleRank, sampleTerm } from '../../src/sketch/containment.js';
import { minhashJaccard } from '../../src/sketch/minhash.js';
import { tokenHash } from '../../src/sketch/token-hash.js';
import { TOKENIZER_NAMES, tokenizer } from '../../src/text/tokenize.js';
import { seededRandom } from '../support/corpus.js';

const texts = [
  'The quick brown fox jumps over the lazy dog. The dog sleeps.',
  'Ünïcödé wörds, café crème, 東京 and 🙂 emoji mixed in',
  Array.from({ length: 3000 }, (_, i) => `w${(i * 7919) % 1500} x${i % 11}`).join(' '),
];

/** Distinct words w0..w(n-1) of one seeded vocabulary. */
function words(from: number, to: number): string[] {
  return Array.from({ length: to - from }, (_, i) => `token${from + i}`);
}

describe('the containment sample', () => {
  it('is the sampled distinct token hashes, for every tokenizer and hash, with the WebAssembly and JavaScript kernels alike', () => {
    for (const tok of TOKENIZER_NAMES) {
      for (const hash of ['sha1', 'mmh3', 'crc32'] as const) {
        const sign = createSigner({ condenser: `${tok}:norm:${hash}:64`, containmentSample: 2 });
        for (const text of texts) {
          const distinct = [...new Set(tokenizer(tok)(sign.normalize(text)).map((t) => tokenHash(hash, t)))];
          const sig = sign(text);
          expect(sig.distinct_tokens, `${tok}:${hash}`).toBe(distinct.length);
          expect(sig.sample).toEqual(containmentSample(distinct, distinct.length, 2, 2));
        }
      }
    }
  });

  it('compact terms (the default) are the top 24 bits of the same sampled hashes, in the same order', () => {
    const text = words(0, 3_000).join(' ');
    const hex = createSigner({ keyEncoding: 1 })(text).sample;
    const compact = createSigner()(text).sample;
    expect(compact).toEqual(hex.map((t) => Buffer.from(t.slice(0, 6), 'hex').toString('base64url')));
    expect(compact.every((t) => /^[A-Za-z0-9_-]{4}$/.test(t))).toBe(true);
  });

  it('keeps about 1 distinct token in N, the same tokens in every document, lowest rank first', () => {
    // The first key encoding keeps whole hashes (8 hex digits), so the ranks can be read back from the terms.
    const sig = createSigner({ containmentSample: 4, keyEncoding: 1 })(words(0, 20_000).join(' '));
    // Binomial(20,000, 1/4): mean 5,000, standard deviation 61.
    expect(Math.abs(sig.sample.length - 5000)).toBeLessThan(250);
    const ranks = sig.sample.map((t) => sampleRank(Number.parseInt(t, 16)));
    expect(ranks.every((r, i) => r < sampleCut(4) && (i === 0 || ranks[i - 1] <= r))).toBe(true);
    // An excerpt's sample is exactly the part of the whole's sample that falls in the excerpt.
    const excerpt = createSigner({ containmentSample: 4, keyEncoding: 1 })(words(5_000, 6_000).join(' '));
    const whole = new Set(sig.sample);
    expect(excerpt.sample.every((t) => whole.has(t))).toBe(true);
    expect(excerpt.sample.length).toBeGreaterThan(200);
  });

  it('is every sampled hash, in rank order, for any number of distinct tokens and any rate (the sort of its ranks)', () => {
    const random = seededRandom(7);
    for (const every of [1, 2, 3, 4, 7, 1024]) {
      for (let n = 0; n <= 5000; n += n < 80 ? 1 : 97) {
        const hashes = Uint32Array.from({ length: n }, () => Math.floor(random() * 2 ** 32));
        const cut = sampleCut(every);
        const expected = [...hashes].filter((h) => sampleRank(h) < cut).sort((a, b) => sampleRank(a) - sampleRank(b));
        expect(containmentSample(hashes, n, every), `${n} tokens, 1 in ${every}`).toEqual(expected.map((h) => sampleTerm(h)));
      }
    }
  });

  it('keeps every token with 1, none with 0, and 0 leaves the params of signatures made before the sample', () => {
    const text = words(0, 500).join(' ');
    const all = createSigner({ containmentSample: 1 });
    // Every token of the default tokenizer, all distinct here (500 words make 497 word 4-shingles).
    const distinct = new Set(tokenizer(all.settings.spec.tokenizer)(all.normalize(text))).size;
    expect(distinct).toBeGreaterThan(400);
    expect(all(text).sample).toHaveLength(distinct);
    const none = createSigner({ containmentSample: 0 });
    expect(none(text).sample).toEqual([]);
    expect(none(text).distinct_tokens).toBe(distinct);
    expect(none.settings.params).toBe(`${DEFAULT_CONDENSER};seed=1;scheme=affine32;b=26;r=4;simhash=w4m8;k=2`);
    expect(resolveSignerSettings().params).toBe(`${DEFAULT_CONDENSER};seed=1;scheme=affine32;b=26;r=4;simhash=w4m8;k=2;sample=4`);
    // The first layout's params, unchanged, for indices signed before the compact keys.
    expect(resolveSignerSettings({ keyEncoding: 1 }).params).toBe(`${DEFAULT_CONDENSER};seed=1;scheme=affine32;b=26;r=4;simhash=w4m8;sample=4`);
    expect(resolveSignerSettings({ keyEncoding: 1, containmentSample: 0 }).params).toBe(`${DEFAULT_CONDENSER};seed=1;scheme=affine32;b=26;r=4;simhash=w4m8`);
    for (const containmentSample of [0, 1, 4, 64]) {
      const params = resolveSignerSettings({ containmentSample }).params;
      expect(resolveSignerSettings(signerOptionsFromParams(params)).params).toBe(params);
    }
    expect(() => resolveSignerSettings({ containmentSample: -1 })).toThrow(/containment sample must be a whole number from 0 to 1024.*got -1/);
    expect(() => resolveSignerSettings({ containmentSample: 2.5 })).toThrow(/got 2.5/);
  });

  it('reads a token hash back from its rank (the rank is a bijection), so the sample sorts ranks alone', () => {
    const random = seededRandom(3);
    for (let i = 0; i < 10_000; i++) {
      const hash = Math.floor(random() * 2 ** 32);
      expect(hashOfRank(sampleRank(hash))).toBe(hash);
    }
    for (const hash of [0, 1, 0x9e3779b9, 0xffffffff]) expect(hashOfRank(sampleRank(hash))).toBe(hash);
  });

  it('stores a sampled token as the 8 hex digits of its token hash', () => {
    expect(sampleTerm(0)).toBe('00000000');
    expect(sampleTerm(0xdeadbeef)).toBe('deadbeef');
  });
});

describe('containment estimates', () => {
  it('find excerpts whole inside documents 30 times larger exactly, where the estimate through MinHash Jaccard is far off', () => {
    const sign = createSigner({ containmentSample: 4 });
    let viaJaccardError = 0;
    const trials = 20;
    for (let t = 0; t < trials; t++) {
      const big = sign(words(t * 10_000, t * 10_000 + 9_000).join(' '));
      const part = sign(words(t * 10_000 + 3_000, t * 10_000 + 3_300).join(' '));
      const inBig = new Set(big.sample);
      const found = part.sample.filter((term) => inBig.has(term)).length;
      expect(estimateShare(found, part.sample.length).value).toBe(1);
      viaJaccardError += Math.abs(containmentFromJaccard(minhashJaccard(part.minhash, big.minhash), part.distinct_tokens, big.distinct_tokens) - 1);
    }
    // True Jaccard 1/30 from 128 values: a standard error of about 0.016, times about 29 on the way to containment (above 1 cut to 1).
    expect(viaJaccardError / trials).toBeGreaterThan(0.1);
  });

  it('estimate a share within the Wilson interval, which holds the true share about 95% of the time', () => {
    const random = seededRandom(7);
    let covered = 0;
    const trials = 400;
    for (let trial = 0; trial < trials; trial++) {
      // A query of 200 sampled tokens, 70% of them in the document.
      let found = 0;
      for (let i = 0; i < 200; i++) if (random() < 0.7) found++;
      const e = estimateShare(found, 200);
      expect(e.low).toBeLessThanOrEqual(e.value);
      expect(e.high).toBeGreaterThanOrEqual(e.value);
      if (e.low <= 0.7 && 0.7 <= e.high) covered++;
    }
    expect(covered / trials).toBeGreaterThan(0.9);
    expect(estimateShare(0, 0)).toEqual({ value: 0, low: 0, high: 1 });
    expect(estimateShare(10, 10).high).toBe(1);
    expect(estimateShare(10, 10).low).toBeGreaterThan(0.6);
    expect(estimateShare(10, 10).low).toBeLessThan(0.8);
  });

  it('derive containment from Jaccard and the set sizes exactly when the Jaccard is exact', () => {
    // |Q| = 300, |D| = 700, |Q ∩ D| = 300: J = 300 / 700.
    expect(containmentFromJaccard(300 / 700, 300, 700)).toBeCloseTo(1, 10);
    // |Q ∩ D| = 150: J = 150 / 850.
    expect(containmentFromJaccard(150 / 850, 300, 700)).toBeCloseTo(0.5, 10);
    expect(containmentFromJaccard(0.5, 0, 10)).toBe(0);
  });
});
