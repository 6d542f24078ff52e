// Template tokens (src/sketch/template-tokens.ts): which token hashes a sample makes template text, the
// set's name, and what a document keeps of its tokens without them.
import { describe, expect, it } from 'vitest';
import { coreSimilarity, signWithCore, withCore } from '../../src/sketch/core-similarity.js';
import { minhashPermutations } from '../../src/sketch/minhash.js';
import { keepsEnough, TemplateFilter, TemplateSampler, templateDigest, templateTokens } from '../../src/sketch/template-tokens.js';
import { tokenHash } from '../../src/sketch/token-hash.js';

describe('TemplateSampler', () => {
  it('keeps the hashes in more than the share of the documents and in at least the minimum count', () => {
    const sampler = new TemplateSampler(0.25, 3);
    // 20 documents: 7 in every one, 8 in 6 (30%), 9 in 5 (25%: not more than the share), 10 in 2 only.
    for (let d = 0; d < 20; d++) {
      const doc = [7, 100 + d, 7];
      if (d < 6) doc.push(8);
      if (d < 5) doc.push(9);
      if (d < 2) doc.push(10);
      sampler.add(doc);
    }
    const t = sampler.result();
    expect(Array.from(t.hashes)).toEqual([7, 8]);
    expect(t).toMatchObject({ share: 0.25, minCount: 3, sample: 20 });
  });

  it('counts a text copied many times once: its tokens are not template, a section shared by as many different texts is', () => {
    const sampler = new TemplateSampler(0.05, 3);
    // 100 different texts, 10 of them sharing a notice (hash 5); and one text copied 40 times.
    for (let d = 0; d < 100; d++) sampler.add(d < 10 ? [1000 + d, 5] : [1000 + d, 2000 + d]);
    for (let copy = 0; copy < 40; copy++) sampler.add(copy % 2 ? [7, 8, 9] : [9, 8, 7]); // any order
    const t = sampler.result();
    expect(Array.from(t.hashes)).toEqual([5]); // 10 of 101 distinct texts; 7, 8, 9 in 1
    expect(t.sample).toBe(140); // the documents read
    expect(sampler.documents).toBe(140);
  });

  it('an edited copy of a text copied in more than the share of the sample is near it by the rule', () => {
    const numPerm = 128;
    const words = Array.from({ length: 120 }, (_, i) => `w${i}`);
    const shingles = (ws: string[]) => ws.slice(0, -3).map((_, i) => ws.slice(i, i + 4).join(' '));
    const hashesOf = (ws: string[]) => Uint32Array.from(new Set(shingles(ws)), (s) => tokenHash('sha1', s));
    const original = hashesOf(words);
    const edited = hashesOf(words.map((w, i) => (i % 40 === 5 ? `edit${i}` : w))); // 3 words changed: J 0.81
    const sampler = new TemplateSampler(0.005, 3);
    for (let d = 0; d < 2000; d++) sampler.add(hashesOf(Array.from({ length: 40 }, (_, i) => `d${d}w${i}`)));
    for (let copy = 0; copy < 50; copy++) sampler.add(original); // 2.4% of the documents
    const filter = new TemplateFilter(sampler.result());
    const perms = minhashPermutations(numPerm, 1);
    const signed = (hashes: Uint32Array) => {
      const h = hashes.slice();
      const kept = filter.partition(h, h.length);
      const { values, extension } = signWithCore(perms, h, kept, h.length);
      return withCore(values, extension);
    };
    // (Counted 50 times, every token of the original was template: the edited copy was at 0.)
    expect(coreSimilarity(signed(original), signed(edited), numPerm)).toBeGreaterThan(0.7);
  });

  it('needs the minimum count in a small sample, whatever the share', () => {
    const sampler = new TemplateSampler(0.05, 3);
    sampler.add([1, 2]);
    sampler.add([1, 3]);
    expect(sampler.result().hashes.length).toBe(0);
    sampler.add([1, 4]);
    expect(Array.from(sampler.result().hashes)).toEqual([1]);
  });

  it('counts a hash once per document, and reads only the first `count` values', () => {
    const sampler = new TemplateSampler(0.5, 1);
    sampler.add(new Uint32Array([5, 5, 5, 6]), 3);
    sampler.add([0xffffffff]);
    sampler.add([0xffffffff, 1]);
    expect(Array.from(sampler.result().hashes)).toEqual([0xffffffff]);
  });

  it('refuses a share or a count that cannot be meant', () => {
    expect(() => new TemplateSampler(0)).toThrow(/template share .* got 0/);
    expect(() => new TemplateSampler(5)).toThrow(/above 0 and below 1/);
    expect(() => new TemplateSampler(0.05, 0)).toThrow(/minimum count .* got 0/);
  });
});

describe('templateTokens', () => {
  it('sorts and deduplicates, and names the set by its values only', () => {
    const a = templateTokens([3, 0xfffffffe, 3, 1], { share: 0.05, minCount: 3, sample: 10 });
    const b = templateTokens([1, 0xfffffffe, 3], { share: 0.1, minCount: 2, sample: 99 });
    expect(Array.from(a.hashes)).toEqual([1, 3, 0xfffffffe]);
    expect(a.digest).toMatch(/^[0-9a-f]{12}$/);
    expect(a.digest).toBe(b.digest);
    expect(templateTokens([1, 3], b).digest).not.toBe(a.digest);
    expect(templateDigest(new Uint32Array(0))).toBe('da39a3ee5e6b'); // SHA-1 of nothing
  });
});

describe('TemplateFilter', () => {
  const template = templateTokens([10, 11, 12, 13, 14, 15, 16, 17, 18, 19], { share: 0.05, minCount: 3, sample: 100 });
  const filter = new TemplateFilter(template);

  it('knows its members and nothing else', () => {
    for (const h of template.hashes) expect(filter.has(h)).toBe(true);
    for (const h of [0, 9, 20, 0xffffffff]) expect(filter.has(h)).toBe(false);
  });

  it('drops the template tokens of a document that keeps enough of its own', () => {
    const doc = new Uint32Array([10, 1, 11, 2, 3, 12, 4, 5, 13]);
    const count = filter.narrow(doc, doc.length);
    expect(Array.from(doc.subarray(0, count))).toEqual([1, 2, 3, 4, 5]);
  });

  it('keeps every token when fewer than 5, or fewer than 10% of them, would remain', () => {
    const four = new Uint32Array([10, 1, 2, 3, 4, 11]);
    expect(filter.narrow(four, four.length)).toBe(6);
    expect(Array.from(four).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 10, 11]); // all there, in some order
    // 6 of 70 distinct tokens (8.6%) would remain.
    const mostly = new Uint32Array(70);
    for (let i = 0; i < 64; i++) mostly[i] = 10 + (i % 10); // template tokens; distinct in real use, enough here
    mostly.set([1, 2, 3, 4, 5, 6], 64);
    expect(filter.narrow(mostly, 70)).toBe(70);
    expect(keepsEnough(6, 70)).toBe(false);
    expect(keepsEnough(7, 70)).toBe(true);
    expect(keepsEnough(5, 5)).toBe(true);
    expect(keepsEnough(4, 4)).toBe(false);
  });

  it('leaves a document with no template token as it is', () => {
    const doc = new Uint32Array([1, 2, 3, 4, 5, 6]);
    expect(filter.narrow(doc, 6)).toBe(6);
    expect(Array.from(doc)).toEqual([1, 2, 3, 4, 5, 6]);
  });
});
