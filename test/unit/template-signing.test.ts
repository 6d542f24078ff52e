// Signing with template tokens (SignerOptions.template): the MinHash is made as if the template tokens were
// not in the document (unless too few of its own would remain), everything else is signed as without them,
// on every path of the signer (the WebAssembly kernels' whole-text and token paths, the JavaScript
// MinHash, the kernels turned off), and the params keyword says which set it was.
import { describe, expect, it, vi } from 'vitest';
import { createSigner, resolveSignerSettings, type SignerOptions, signerOptionsFromParams } from '../../src/signature.js';
import { emptyMinhash, minhashPermutations, updateMinhash } from '../../src/sketch/minhash.js';
import { type TemplateTokens, templateTokens } from '../../src/sketch/template-tokens.js';
import { tokenHash } from '../../src/sketch/token-hash.js';
import { parseParams } from '../../src/stored/params.js';
import { normalizer } from '../../src/text/normalize.js';
import { TOKENIZERS } from '../../src/text/tokenize.js';

const OWN = 'the quick brown fox jumps over the lazy dog near a riverbank at dawn while ducks watch quietly';
const BOILER = 'usage flags global options see also copyright notice all rights reserved';

/** The distinct token hashes of a text, by the reference (string) tokenizer of a condenser. */
function distinctHashes(options: SignerOptions, text: string): number[] {
  const { spec } = resolveSignerSettings(options);
  const tokens = TOKENIZERS.get(spec.tokenizer)!.tokenize(normalizer(spec.normalizer)(text));
  return [...new Set(tokens.map((t) => tokenHash(spec.hash, t)))];
}

/** The template set of the tokens BOILER makes under a condenser. */
function boilerTemplate(options: SignerOptions): TemplateTokens {
  return templateTokens(distinctHashes(options, BOILER), { share: 0.05, minCount: 3, sample: 100 });
}

/** The MinHash of just these hashes. */
function minhashOf(options: SignerOptions, hashes: number[]): Uint32Array {
  const { spec, seed, scheme } = resolveSignerSettings(options);
  const values = emptyMinhash(spec.numPerm);
  updateMinhash(values, minhashPermutations(spec.numPerm, seed, scheme), hashes);
  return values;
}

// Each reaches another path: ASCII text (the kernels sign it whole), non-ASCII (token ranges), shingles
// (tokens that are not the words), the legacy scheme and mmh3 (MinHash in JavaScript), a character n-gram.
const CONDENSERS: SignerOptions[] = [
  {},
  { condenser: 'white-space-4-grams' },
  { condenser: 'white-space:norm-html:mmh3:64', scheme: 'legacy' },
  { condenser: 'white-space-3-grams:norm-html:crc32:256' },
  { condenser: '5-grams' },
];
const TEXTS = [`${BOILER} ${OWN} ${BOILER}`, `${BOILER} Grüße aus Köln, ${OWN} ${BOILER}`];

describe.each(CONDENSERS)('a signer with template tokens, %o', (base) => {
  const template = boilerTemplate(base);
  const plain = createSigner(base);
  const signer = createSigner({ ...base, template });

  it.each(TEXTS)('makes the MinHash of the tokens that are not template tokens, and the rest as without them: %s', (text) => {
    const set = new Set(template.hashes);
    const all = distinctHashes(base, text);
    const own = all.filter((h) => !set.has(h));
    expect(own.length).toBeGreaterThanOrEqual(5);
    expect(own.length).toBeLessThan(all.length);
    const sig = signer(text);
    expect(Array.from(sig.minhash)).toEqual(Array.from(minhashOf(base, own)));
    const without = plain(text);
    expect(Array.from(sig.minhash)).not.toEqual(Array.from(without.minhash));
    expect({ ...sig, minhash: [], bands: [] }).toEqual({ ...without, minhash: [], bands: [] });
    expect(Array.from(signer.signParts(text).minhash)).toEqual(Array.from(sig.minhash));
    expect(Array.from(signer.signNormalized(signer.normalize(text)).minhash)).toEqual(Array.from(sig.minhash));
  });

  it.each(TEXTS)('gives every distinct token hash of a text, template ones too, to draw a template from: %s', (text) => {
    const sorted = (hashes: Iterable<number>) => Array.from(hashes).sort((a, b) => a - b);
    expect(sorted(signer.tokenHashes(text))).toEqual(sorted(distinctHashes(base, text)));
    expect(sorted(plain.tokenHashes(text))).toEqual(sorted(distinctHashes(base, text)));
    expect(signer.tokenHashes('   ')).toEqual(new Uint32Array(0));
    expect(Array.from(signer(text).minhash)).toEqual(Array.from(minhashOf(base, distinctHashes(base, text).filter((h) => !template.hashes.includes(h)))));
  });

  it('keeps every token of a document that is nearly all template', () => {
    const text = `${BOILER} ok`;
    expect(Array.from(signer(text).minhash)).toEqual(Array.from(plain(text).minhash));
  });
});

describe('a signer with template tokens and the kernels turned off', () => {
  it('signs as with them', async () => {
    vi.resetModules();
    vi.stubEnv('NEAR_DUP_WASM', '0');
    try {
      const js = await import('../../src/signature.js');
      for (const base of CONDENSERS) {
        const template = boilerTemplate(base);
        for (const text of TEXTS) {
          expect(Array.from(js.createSigner({ ...base, template })(text).minhash)).toEqual(Array.from(createSigner({ ...base, template })(text).minhash));
        }
      }
    } finally {
      vi.unstubAllEnvs();
      vi.resetModules();
    }
  });
});

describe('the params keyword of template tokens', () => {
  const template = boilerTemplate({});

  it('names the set as tpl=<digest>, and reads back to options that need that set', () => {
    const { params } = resolveSignerSettings({ template });
    expect(params).toBe(`${resolveSignerSettings().params};tpl=${template.digest}`);
    expect(parseParams(params)?.template).toBe(template.digest);
    const back = signerOptionsFromParams(params)!;
    expect(back.templateDigest).toBe(template.digest);
    expect(resolveSignerSettings(back).params).toBe(params);
    expect(() => createSigner(back)).toThrow(`leave out the template tokens ${template.digest} (params tpl=${template.digest})`);
    const again = createSigner({ ...back, template });
    expect(again.settings.params).toBe(params);
    expect(again(TEXTS[0])).toEqual(createSigner({ template })(TEXTS[0]));
  });

  it('is left out without a template', () => {
    const { params } = resolveSignerSettings({});
    expect(params).not.toContain('tpl=');
    expect(parseParams(params)).not.toHaveProperty('template');
    expect(signerOptionsFromParams(params)).not.toHaveProperty('templateDigest');
  });

  it('refuses a set of another digest than asked, a digest that is not one, and a set whose digest is not its own', () => {
    const other = templateTokens([1, 2, 3], template);
    expect(() => resolveSignerSettings({ template: other, templateDigest: template.digest })).toThrow(`asks for the template tokens ${template.digest}, but the set given is ${other.digest}`);
    expect(() => resolveSignerSettings({ templateDigest: 'ABC' })).toThrow('template digest "ABC" must be 12 lowercase hex digits');
    expect(() => resolveSignerSettings({ template: { ...other, digest: template.digest } })).toThrow(`are not that set (their digest is ${other.digest})`);
    expect(signerOptionsFromParams(`${resolveSignerSettings().params};tpl=xyz`)).toBeUndefined();
  });
});

describe('the explorer on signatures made with template tokens', () => {
  it('normalizes their text as the signer did, without the set', async () => {
    const { normalizerOf } = await import('../../src/explore/compared-text.js');
    const template = boilerTemplate({});
    const { params } = resolveSignerSettings({ template });
    const normalize = normalizerOf(params);
    expect(normalize).toBeDefined();
    expect(normalize!(TEXTS[1])).toBe(createSigner({ template }).normalize(TEXTS[1]));
  });
});
