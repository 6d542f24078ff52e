import { describe, expect, it } from 'vitest';
import { CORE_MIN_TOKENS, coreEstimate, coreExtension, coreSimilarity, coreWords, decodeCore, encodeCore, shorterHeld, signatureComparer, signWithCore, WHOLE_TEXT_BAR, wholeTextBar, withCore } from '../../src/sketch/core-similarity.js';
import { formatParams, type Params, paramsShape, parseParams } from '../../src/stored/params.js';
import { emptyMinhash, minhashJaccard, minhashPermutations, updateMinhash } from '../../src/sketch/minhash.js';

const perms = minhashPermutations(128, 1, 'affine32');

/** A document of `core` own tokens and `template` template tokens, hashes drawn from disjoint ranges by name. */
function tokens(prefix: string, n: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    let h = 2166136261;
    for (const c of `${prefix}:${i}`) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
    out.push(h);
  }
  return out;
}

function signed(core: number[], template: number[]): Uint32Array {
  const hashes = Uint32Array.from([...core, ...template]);
  const { values, extension } = signWithCore(perms, hashes, core.length, hashes.length);
  const out = new Uint32Array(values.length + extension.length);
  out.set(values);
  out.set(extension, values.length);
  return out;
}

const exact = (a: number[], b: number[]) => {
  const sb = new Set(b);
  const inter = a.filter((x) => sb.has(x)).length;
  return inter / (a.length + b.length - inter);
};

describe('the MinHash of every token with its template bits', () => {
  it('has the values of a plain MinHash of every token (datasketch identity kept)', () => {
    const core = tokens('own', 50), template = tokens('tpl', 200);
    const plain = emptyMinhash(128);
    updateMinhash(plain, perms, Uint32Array.from([...template, ...core]));
    expect(Array.from(signed(core, template).subarray(0, 128))).toEqual(Array.from(plain));
  });

  it('sets a bit where the minimum came from a template token, about in the template share', () => {
    const sig = signed(tokens('own', 50), tokens('tpl', 150));
    let bits = 0;
    for (let i = 0; i < 128; i++) bits += (sig[128 + (i >>> 4)] >>> (i & 15)) & 1;
    expect(bits).toBeGreaterThan(128 * 0.6);
    expect(bits).toBeLessThan(128 * 0.9);
    expect(sig[128 + coreWords(128) - 1]).toBe(50);
  });

  it('estimates the Jaccard of the cores, on average over many pairs, within 0.03', () => {
    let error = 0;
    const pairs = 60;
    for (let p = 0; p < pairs; p++) {
      const shared = tokens(`shared${p}`, 60), a = tokens(`a${p}`, 20 + (p % 7) * 5), b = tokens(`b${p}`, 30);
      const template = tokens(`tpl${p % 3}`, 200);
      const x = signed([...shared, ...a], template), y = signed([...shared, ...b], template);
      const est = coreEstimate(x, y, 128).core as number;
      error += est - exact([...shared, ...a], [...shared, ...b]);
    }
    expect(Math.abs(error / pairs)).toBeLessThan(0.03);
  });
});

describe('the similarity rule', () => {
  const template = tokens('template', 400);
  it('two pages of one template, each with a core of its own, are far apart although their whole texts are near', () => {
    const x = signed(tokens('page-x', 60), template), y = signed(tokens('page-y', 60), template);
    expect(coreEstimate(x, y, 128).whole).toBeGreaterThan(0.6);
    expect(coreSimilarity(x, y, 128)).toBeLessThan(0.3);
  });

  it('an edited copy holds its original core: near, capped by the whole texts', () => {
    const original = tokens('doc', 100);
    const edited = [...original.slice(0, 95), ...tokens('edits', 40)];
    const x = signed(original, template), y = signed(edited, template);
    const { whole, core } = coreEstimate(x, y, 128);
    expect(core as number).toBeLessThan(0.85);
    expect(coreSimilarity(x, y, 128)).toBeGreaterThan(0.8);
    expect(coreSimilarity(x, y, 128)).toBeLessThanOrEqual(whole);
  });

  it('texts nearly identical as a whole are compared whole, whatever their cores', () => {
    const x = signed(tokens('name-x', 3), template), y = signed(tokens('name-y', 3), template);
    expect(coreEstimate(x, y, 128).whole).toBeGreaterThanOrEqual(WHOLE_TEXT_BAR);
    expect(coreSimilarity(x, y, 128)).toBe(coreEstimate(x, y, 128).whole);
  });

  it('small cores are compared by their Jaccard; no core at all, whole', () => {
    const small = tokens('small', CORE_MIN_TOKENS - 5);
    const x = signed(small, tokens('t1', 100)), y = signed(small, tokens('t2', 100));
    expect(coreSimilarity(x, y, 128)).toBeGreaterThan(0.9);
    const bare = signed([], template.slice(0, 300)), bare2 = signed([], template.slice(100));
    expect(coreSimilarity(bare, bare2, 128)).toBe(minhashJaccard(bare.subarray(0, 128), bare2.subarray(0, 128)));
  });

  it('refuses signatures of another width, naming both', () => {
    expect(() => coreSimilarity(new Uint32Array(128), new Uint32Array(128), 128)).toThrow(/128 and 128 words as 128 values with their template bits \(137 words\)/);
  });

  it('the shorter set held, from the Jaccard and the sizes', () => {
    expect(shorterHeld(0.5, 100, 50)).toBeCloseTo(1);
    expect(shorterHeld(1 / 3, 100, 100)).toBeCloseTo(0.5);
    expect(shorterHeld(0.2, 0, 10)).toBe(0);
  });

  it('the extension clamps a large core and packs the bits 16 to a word', () => {
    const ext = coreExtension([1, 0, 0, 1, ...new Array(28).fill(0), 1], 1e9);
    expect(Array.from(ext)).toEqual([0b1001, 0, 1, 0xffff]);
  });
});

describe('the core field and the params that name it', () => {
  it('round-trips the extension through its base64 field, and refuses a damaged one', () => {
    const ext = coreExtension(Array.from({ length: 128 }, (_, i) => i % 3 === 0), 1234);
    const text = encodeCore(ext);
    expect(Array.from(decodeCore(text, 128) as Uint32Array)).toEqual(Array.from(ext));
    expect(decodeCore(text, 256)).toBeUndefined();
    expect(decodeCore(`${text.slice(0, -4)}!!!!`, 128)).toBeUndefined();
  });

  it('the whole-text bar rises by half a standard deviation of the estimate', () => {
    expect(wholeTextBar(128)).toBeCloseTo(0.9133, 3);
    expect(wholeTextBar(256)).toBeLessThan(wholeTextBar(128));
  });

  it('a comparer of plain params is datasketch\'s estimate; of core params, the rule', () => {
    const x = signed(tokens('px', 60), tokens('t', 300)), y = signed(tokens('py', 60), tokens('t', 300));
    expect(signatureComparer(128, false)(x.subarray(0, 128), y.subarray(0, 128))).toBe(minhashJaccard(x.subarray(0, 128), y.subarray(0, 128)));
    expect(signatureComparer(128, true)(x, y)).toBe(coreSimilarity(x, y, 128));
    expect(Array.from(withCore(x.subarray(0, 128), x.subarray(128)))).toEqual(Array.from(x));
  });

  it('params: ;core=D is read and written back, apart from ;tpl=D, and its shape asks for the core field', () => {
    const base = 'white-space-4-grams:norm-html:sha1:128;seed=1;scheme=affine32;b=26;r=4;simhash=w4m8;k=2;sample=4';
    expect(parseParams(`${base};core=0123456789ab`)).toMatchObject({ core: '0123456789ab' });
    expect(parseParams(`${base};core=0123456789ab`)?.template).toBeUndefined();
    expect(formatParams(parseParams(`${base};core=0123456789ab`) as Params)).toBe(`${base};core=0123456789ab`);
    expect(formatParams(parseParams(`${base};tpl=0123456789ab`) as Params)).toBe(`${base};tpl=0123456789ab`);
    expect(paramsShape(`${base};core=0123456789ab`)?.core).toBe(true);
    expect(paramsShape(base)?.core).toBe(false);
    expect(parseParams(`${base};core=0123456789ab;tpl=0123456789ab`)).toBeUndefined();
  });
});
