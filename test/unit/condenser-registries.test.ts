// The condenser's parts are registries (text/registry.ts): a tokenizer, a normalizer, a token hash and a
// preset are each one entry that the spec parser, the token layout and the kernels look up. Adding a
// tokenizer is one entry: white-space-7-grams and 7-grams are registered here and sign end to end, with the
// WebAssembly kernels and without them, as the reference (the tokenizer's strings, hashed one by one) does.
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { PRESET_REGISTRY, preset } from '../../src/presets.js';
import { CondenserSpecError, createSigner, parseCondenserSpec, resolveSignerSettings, signerOptionsFromParams } from '../../src/signature.js';
import { emptyMinhash, minhashPermutations, updateMinhash } from '../../src/sketch/minhash.js';
import { TOKEN_HASH_REGISTRY, tokenHash } from '../../src/sketch/token-hash.js';
import { createWasmKernels } from '../../src/sketch/wasm-kernels.js';
import { NORMALIZER_REGISTRY, normalizer } from '../../src/text/normalize.js';
import { Registry } from '../../src/text/registry.js';
import { layoutWords, TokenRanges } from '../../src/text/token-ranges.js';
import { characterGramTokenizer, registerTokenizer, TOKENIZERS, tokenizer, tokenLayout, wordGramTokenizer } from '../../src/text/tokenize.js';

const TEXTS = [
  'The quick brown fox jumps over the lazy dog. The dog sleeps, and the fox runs on and on.',
  'Ünïcödé wörds, café crème, 東京 and 🙂 emoji mixed in with a few more words than seven',
  'one two three',
  '',
  Array.from({ length: 400 }, (_, i) => `w${i % 37} x${i % 11}`).join(' '),
];

/** The slow, obviously right MinHash: the tokenizer's strings, each hashed, folded in as datasketch does. */
function referenceMinhash(text: string, condenser: string): number[] {
  const spec = parseCondenserSpec(condenser);
  const tokens = tokenizer(spec.tokenizer)(normalizer(spec.normalizer)(text));
  const values = emptyMinhash(spec.numPerm);
  updateMinhash(values, minhashPermutations(spec.numPerm, 1), tokens.map((t) => tokenHash(spec.hash, t)));
  return Array.from(values);
}

/** The tokens a layout gives, as strings. */
function laidOut(name: string, text: string): string[] {
  const words = new TokenRanges(), out = new TokenRanges();
  layoutWords(text, words);
  const ranges = tokenLayout(name)(text, words, out);
  const decoder = new TextDecoder();
  return Array.from({ length: ranges.count }, (_, i) => decoder.decode(ranges.source.subarray(ranges.starts[i], ranges.ends[i])));
}

describe('adding a tokenizer', () => {
  it('is one entry: white-space-7-grams and 7-grams sign end to end once registered, as the reference does', async () => {
    for (const name of ['white-space-7-grams', '7-grams']) expect(() => parseCondenserSpec(`${name}:norm:sha1:64`)).toThrow(CondenserSpecError);
    registerTokenizer(wordGramTokenizer(7));
    registerTokenizer(characterGramTokenizer(7));
    const jsOnly = await jsOnlySignature();
    for (const name of ['white-space-7-grams', '7-grams']) {
      expect(parseCondenserSpec(`${name}::mmh3:64`).tokenizer).toBe(name);
      for (const hash of ['sha1', 'mmh3', 'crc32']) {
        const condenser = `${name}:norm:${hash}:64`;
        const sign = createSigner({ condenser });
        const signJs = jsOnly.createSigner({ condenser });
        for (const text of TEXTS) {
          expect(Array.from(sign(text).minhash), `${condenser} on ${text.slice(0, 20)}`).toEqual(referenceMinhash(text, condenser));
          expect(signJs(text)).toEqual(sign(text));
        }
        // Its params name it, and read back to the options that sign with it.
        const { params } = sign.settings;
        expect(params.startsWith(`${condenser};`)).toBe(true);
        expect(resolveSignerSettings(signerOptionsFromParams(params)).params).toBe(params);
      }
    }
    expect(wordGramTokenizer(7).tokenize('a b c d e f g h')).toEqual(['a b c d e f g', 'b c d e f g h']);
    expect(TOKENIZERS.valid()).toContain('white-space-7-grams');
  });

  it('refuses a name or alias that is taken', () => {
    expect(() => registerTokenizer(wordGramTokenizer(3))).toThrow(/already one of the tokenizers named "white-space-3-grams"/);
    expect(() => registerTokenizer({ name: 'new', aliases: ['ws'], tokenize: (t) => [t] })).toThrow(/"ws"/);
    expect(TOKENIZERS.get('new')).toBeUndefined();
  });
});

/** A fresh signature module loaded with the WebAssembly kernels off (and the 7-gram tokenizers registered in it). */
async function jsOnlySignature() {
  vi.resetModules();
  vi.stubEnv('NEAR_DUP_WASM', '0');
  try {
    const tokenize = await import('../../src/text/tokenize.js');
    tokenize.registerTokenizer(tokenize.wordGramTokenizer(7));
    tokenize.registerTokenizer(tokenize.characterGramTokenizer(7));
    const kernels = await import('../../src/sketch/wasm-kernels.js');
    expect(kernels.createWasmKernels()).toBeUndefined();
    return await import('../../src/signature.js');
  } finally {
    vi.unstubAllEnvs();
    vi.resetModules();
  }
}

describe('each entry', () => {
  it('lays out the tokens its tokenizer gives, on any text, ASCII or not', () => {
    const text = fc.oneof(fc.string({ maxLength: 60 }), fc.string({ unit: 'grapheme', maxLength: 60 }), fc.array(fc.constantFrom('a', 'bb', 'é', '東', ' ', '  ', '\t', '🙂'), { maxLength: 40 }).map((a) => a.join('')));
    fc.assert(
      fc.property(text, (raw) => {
        const clean = normalizer('none')(raw);
        for (const { name, tokenize } of TOKENIZERS.entries()) expect(laidOut(name, clean), name).toEqual(tokenize(clean));
      }),
      { numRuns: 300 },
    );
  });

  it('normalizes in two steps as in one where it has a fast path', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (text) => {
        for (const { name, normalize, split } of NORMALIZER_REGISTRY.entries()) {
          if (!split) continue;
          const steps = split();
          expect(steps.rest(steps.first(text)), name).toBe(normalize()(text));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('hashes in the WebAssembly kernel as in JavaScript where it has one', () => {
    const wasm = createWasmKernels();
    if (!wasm) return;
    const tokens = ['', 'a', 'café', '東京', 'x'.repeat(100), '🙂 two words'];
    const bytes = new TextEncoder().encode(tokens.join(''));
    const starts = new Int32Array(tokens.length), ends = new Int32Array(tokens.length);
    let at = 0;
    tokens.forEach((t, i) => {
      starts[i] = at;
      at += new TextEncoder().encode(t).length;
      ends[i] = at;
    });
    for (const { name, hash, kernel } of TOKEN_HASH_REGISTRY.entries()) {
      if (!kernel) continue;
      wasm.reset();
      const out = wasm.tokenHashes(name, wasm.copyBytes(bytes, bytes.length), wasm.copyInt32(starts, tokens.length), wasm.copyInt32(ends, tokens.length), tokens.length);
      expect(Array.from(wasm.readUint32(out, tokens.length)), name).toEqual(tokens.map((_, i) => hash(bytes, starts[i], ends[i])));
    }
  });

  it('is found by its name and aliases alone, and an unknown name is answered with the valid ones', () => {
    expect(parseCondenserSpec('ws:norm:crc32:16')).toEqual({ tokenizer: 'white-space', normalizer: 'norm', hash: 'crc32', numPerm: 16 });
    expect(() => parseCondenserSpec('constructor')).toThrow(/unknown tokenizer "constructor".*valid tokenizers: white-space, .*, ws \(= white-space\)/);
    expect(() => parseCondenserSpec(':toString')).toThrow(/unknown normalizer "toString".*valid normalizers: none, norm, norm-html, simhash-doc, simhash-doc-html$/);
    expect(() => parseCondenserSpec('::md5')).toThrow(/unknown hash "md5".*valid hashes: sha1, mmh3, crc32$/);
    expect(() => preset('__proto__')).toThrow(/unknown preset "__proto__"; valid presets: simhash-doc$/);
    expect(PRESET_REGISTRY.get('simhash-doc')?.simhash).toBe('simhash-doc');
    const colours = new Registry<{ name: string; aliases?: string[] }>('colours', [{ name: 'red', aliases: ['r'] }]);
    expect([colours.get('r')?.name, colours.valid()]).toEqual(['red', 'valid colours: red, r (= red)']);
  });
});
