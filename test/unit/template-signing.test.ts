// Signing with template tokens (SignerOptions.template): the MinHash is made as if the template tokens were
// not in the document (unless too few of its own would remain), everything else is signed as without them,
// on every path of the signer (the WebAssembly kernels' whole-text and token paths, the JavaScript
// MinHash, the kernels turned off), and the params keyword says which set it was.
import { describe, expect, it, vi } from 'vitest';
import { createSigner, resolveSignerSettings, type SignerOptions, signerOptionsFromParams } from '../../src/signature.js';
import { decodeCore } from '../../src/sketch/core-similarity.js';
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
  const signer = createSigner({ ...base, template, templateMode: 'narrow' });

  it.each(TEXTS)('narrow: makes the MinHash of the tokens that are not template tokens, and the rest as without them: %s', (text) => {
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

  it('narrow: keeps every token of a document that is nearly all template', () => {
    const text = `${BOILER} ok`;
    expect(Array.from(signer(text).minhash)).toEqual(Array.from(plain(text).minhash));
  });

  it.each(TEXTS)('core (the default): the MinHash of every token, its values marked where a template token gave them, and the core size: %s', (text) => {
    const core = createSigner({ ...base, template });
    const sig = core(text);
    expect(Array.from(sig.minhash)).toEqual(Array.from(plain(text).minhash));
    const set = new Set(template.hashes);
    const all = distinctHashes(base, text);
    const own = minhashOf(base, all.filter((h) => !set.has(h)));
    const words = decodeCore(sig.core as string, sig.minhash.length) as Uint32Array;
    for (let i = 0; i < sig.minhash.length; i++) {
      const marked = (words[i >>> 4] >>> (i & 15)) & 1;
      expect(marked, `value ${i}`).toBe(own[i] === sig.minhash[i] ? 0 : 1);
    }
    expect(words[words.length - 1]).toBe(all.filter((h) => !set.has(h)).length);
    expect(core.signParts(text).core).toEqual(words);
    expect(core.signNormalized(core.normalize(text)).core).toBe(sig.core);
    expect({ ...sig, core: undefined }).toEqual({ ...plain(text), core: undefined });
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
          for (const templateMode of ['narrow', 'core'] as const) {
            const off = js.createSigner({ ...base, template, templateMode })(text), on = createSigner({ ...base, template, templateMode })(text);
            expect(Array.from(off.minhash)).toEqual(Array.from(on.minhash));
            expect(off.core).toBe(on.core);
          }
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

  it('core (the default) names the set as core=<digest>, and reads back to options that need that set', () => {
    const { params } = resolveSignerSettings({ template });
    expect(params).toBe(`${resolveSignerSettings().params};core=${template.digest}`);
    const back = signerOptionsFromParams(params)!;
    expect(back).toMatchObject({ templateDigest: template.digest, templateMode: 'core' });
    expect(() => createSigner(back)).toThrow(`made with the template tokens ${template.digest} (params core=${template.digest})`);
    expect(createSigner({ ...back, template })(TEXTS[0])).toEqual(createSigner({ template })(TEXTS[0]));
  });

  it('narrow names the set as tpl=<digest>, and reads back to options that need that set', () => {
    const { params } = resolveSignerSettings({ template, templateMode: 'narrow' });
    expect(params).toBe(`${resolveSignerSettings().params};tpl=${template.digest}`);
    expect(parseParams(params)?.template).toBe(template.digest);
    const back = signerOptionsFromParams(params)!;
    expect(back.templateDigest).toBe(template.digest);
    expect(resolveSignerSettings(back).params).toBe(params);
    expect(() => createSigner(back)).toThrow(`made with the template tokens ${template.digest} (params tpl=${template.digest})`);
    const again = createSigner({ ...back, template });
    expect(again.settings.params).toBe(params);
    expect(again(TEXTS[0])).toEqual(createSigner({ template, templateMode: 'narrow' })(TEXTS[0]));
  });

  it('is left out without a template', () => {
    const { params } = resolveSignerSettings({});
    expect(params).not.toContain('tpl=');
    expect(params).not.toContain('core=');
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

describe('sign lines of core signatures', () => {
  it('carry the core field, the same from a Signature and from its parts, as the JSON of the signature', async () => {
    const { SignatureLines } = await import('../../src/signing/signature-lines.js');
    const { signatureToJson } = await import('../../src/signature.js');
    const template = boilerTemplate({});
    const sign = createSigner({ template });
    const fromParts = new SignatureLines(), fromSignature = new SignatureLines();
    for (const text of TEXTS) {
      fromSignature.signature(sign(text), sign.settings.params, 'x');
      fromParts.parts(sign.signParts(text), sign.settings, 'x');
    }
    const lines = Buffer.from(fromParts.bytes()).toString('utf8');
    expect(lines).toBe(Buffer.from(fromSignature.bytes()).toString('utf8'));
    const first = JSON.parse(lines.split('\n')[0]);
    expect(first.core).toBe(sign(TEXTS[0]).core);
    expect(first).toEqual({ id: 'x', ...signatureToJson(sign(TEXTS[0])), params: sign.settings.params });
  });
});
