import { describe, expect, it } from 'vitest';
import { CondenserSpecError, createSigner, parseCondenserSpec } from '../../src/signature.js';
import { emptyMinhash, minhashJaccard, minhashPermutations, updateMinhash } from '../../src/sketch/minhash.js';
import { computeSimhash, hammingDistance, shingle, simhashHex, unsignedHash } from '../../src/sketch/simhash.js';
import { tokenHash } from '../../src/sketch/token-hash.js';
import { stripHtml } from '../../src/text/html.js';
import { normalizer, normalizeText } from '../../src/text/normalize.js';
import { splitSentences, splitWhiteSpace, TOKENIZER_NAMES, tokenizer, unwrapLines } from '../../src/text/tokenize.js';

const samples = [
  'The quick brown fox jumps over the lazy dog. The dog sleeps.',
  '  leading and   trailing\twhite\nspace  ',
  'Ünïcödé wörds, café crème, 東京 and 🙂 emoji mixed in',
  'one',
  'two words',
  '<p>Some <b>HTML</b> &amp; entities</p><script>skip()</script>',
  Array.from({ length: 400 }, (_, i) => `w${i % 37} x${i % 11}`).join(' '),
];

/** The slow, obviously-correct path: strings from the tokenizer, one hash each, datasketch's update. */
function referenceMinhash(text: string, tok: string, norm: 'none' | 'norm' | 'norm-html', hash: 'sha1' | 'mmh3' | 'crc32') {
  // Sentences are cut before the punctuation that ends them is dropped: each normalized apart.
  const cutFirst = tok === 'split-sents' && norm !== 'none';
  const tokens = cutFirst
    ? splitSentences(unwrapLines(norm === 'norm-html' ? stripHtml(text) : text)).map((s) => normalizeText(s)).filter((s) => s !== '')
    : tokenizer(tok)(normalizer(norm)(text));
  const values = emptyMinhash(64);
  updateMinhash(values, minhashPermutations(64, 1), tokens.map((t) => tokenHash(hash, t)));
  return { values: Array.from(values), count: tokens.length };
}

describe('createSigner', () => {
  it('gives the same MinHash as hashing the tokenizer strings one by one, for every tokenizer, normalizer and hash', () => {
    for (const tok of TOKENIZER_NAMES) {
      for (const norm of ['none', 'norm', 'norm-html'] as const) {
        for (const hash of ['sha1', 'mmh3', 'crc32'] as const) {
          const sign = createSigner({ condenser: `${tok}:${norm}:${hash}:64` });
          for (const text of samples) {
            const ref = referenceMinhash(text, tok, norm, hash);
            const sig = sign(text);
            expect(sig.tokens, `${tok}:${norm}:${hash} on ${JSON.stringify(text.slice(0, 30))}`).toBe(ref.count);
            expect(Array.from(sig.minhash)).toEqual(ref.values);
          }
        }
      }
    }
  });

  it('sentences (split-sents) are cut before the normalizer drops their stops, so each is a token', () => {
    const text = 'The first sentence is here. The second one follows it! Is this the third? Yes, and a fourth.';
    for (const norm of ['norm', 'norm-html']) {
      const sign = createSigner({ condenser: `sents:${norm}:sha1:128` });
      expect(sign(text).tokens).toBe(4); // (1 when the stops were dropped first: a text was one sentence)
      expect(sign.normalize(text).split('\n')).toEqual(['the first sentence is here', 'the second one follows it', 'is this the third', 'yes and a fourth']);
      // One sentence of four changed: 3 of the 5 sentences are shared.
      expect(minhashJaccard(sign(text).minhash, sign(text.replace('third', '3rd')).minhash)).toBeGreaterThan(0.4);
    }
  });

  it('sentences (split-sents) run on over a line break: a text wrapped at another width, or HTML wrapped in its source, is the same', () => {
    const prose = 'PEPs describe a new feature for Python. The PEP should provide a concise technical specification of the feature and a rationale for it. The author builds consensus and documents dissenting opinions.';
    const wrap = (width: number) => prose.replace(new RegExp(`(.{1,${width}})( |$)`, 'g'), '$1\n').trim();
    for (const norm of ['norm', 'norm-html']) {
      const sign = createSigner({ condenser: `sents:${norm}:sha1:128` });
      expect(sign(wrap(72)).tokens).toBe(3);
      for (const copy of [wrap(60), wrap(40).replaceAll('\n', '\r\n'), prose]) expect(sign(copy).minhash).toEqual(sign(wrap(72)).minhash);
      // A blank line (or a paragraph separator) ends a paragraph, and with it a sentence without a stop.
      expect(sign.normalize('A Title\n\nThe first sentence.\u2029Second')).toBe('a title\nthe first sentence\nsecond');
    }
    const sign = createSigner({ condenser: 'sents:norm-html:sha1:128' });
    expect(sign(`<p>${wrap(50)}</p>`).minhash).toEqual(sign(`<p>${prose}</p>`).minhash);
  });

  it("sentences (split-sents) end where HTML's blocks do, as where a plain text's paragraphs do", () => {
    const sign = createSigner({ condenser: 'sents:norm-html:sha1:128' });
    const html = '<h1>A Title</h1><p>The first sentence.</p><ul><li>one item</li><li>another item</li></ul><p>Line<br>broken</p>';
    expect(sign.normalize(html).split('\n')).toEqual(['a title', 'the first sentence', 'one item', 'another item', 'line broken']);
    expect(sign(html).minhash).toEqual(sign('A Title\n\nThe first sentence.\n\none item\n\nanother item\n\nLine\nbroken').minhash);
  });

  it('computes SimHash over word 4-shingles of the normalized text as simhash-py does', () => {
    const sign = createSigner({ condenser: '2-grams:norm' });
    for (const text of samples) {
      const words = splitWhiteSpace(normalizer('norm')(text));
      const shingles = words.length > 0 && words.length < 4 ? [words] : shingle(words, 4);
      const expected = computeSimhash(shingles.map((s) => unsignedHash(s.join(' '))));
      expect(sign(text).simhash).toBe(simhashHex(expected));
    }
  });

  it('marks empty and white-space-only text as empty, with no keys that could match anything', () => {
    const sign = createSigner();
    for (const text of ['', '   \n\t ', '<p> </p>', '...!!!']) {
      const sig = sign(text);
      expect(sig.tokens).toBe(0);
      expect(sig.bands).toEqual([]);
      expect(sig.simhash_blocks).toEqual([]);
    }
  });

  it('gives near-duplicates a high estimate and shared band keys, unrelated texts neither', () => {
    const sign = createSigner();
    const base = Array.from({ length: 300 }, (_, i) => `word${(i * 31) % 211}`).join(' ');
    const edited = base.replace('word31', 'changed').replace('word62', 'edited');
    const other = Array.from({ length: 300 }, (_, i) => `other${(i * 17) % 199}`).join(' ');
    const a = sign(base), b = sign(edited), c = sign(other);
    expect(minhashJaccard(a.minhash, b.minhash)).toBeGreaterThan(0.9);
    expect(a.bands.filter((k) => b.bands.includes(k)).length).toBeGreaterThan(10);
    expect(minhashJaccard(a.minhash, c.minhash)).toBeLessThan(0.1);
    expect(a.bands.filter((k) => c.bands.includes(k))).toEqual([]);
    expect(hammingDistance(a.simhash, b.simhash)).toBeLessThan(hammingDistance(a.simhash, c.simhash));
    expect(a.content_hash).not.toBe(b.content_hash);
    expect(sign(`  ${base.toUpperCase()}  `).content_hash).toBe(a.content_hash);
  });

  it('band keys carry the band number, so equal rows in different bands never collide', () => {
    const sig = createSigner({ condenser: '::: 16', bands: 4, rows: 4 })('a b c');
    expect(sig.bands.map((k) => k.split(':')[0])).toEqual(['0', '1', '2', '3']);
    expect(sig.bands.every((k) => /^\d+:[A-Za-z0-9_-]{8}$/.test(k))).toBe(true);
    // The first key encoding, for indices signed before the compact keys: 16 hex digits, the same first 48 bits.
    const first = createSigner({ condenser: '::: 16', bands: 4, rows: 4, keyEncoding: 1 })('a b c');
    expect(first.bands.every((k) => /^\d+:[0-9a-f]{16}$/.test(k))).toBe(true);
    expect(sig.bands).toEqual(first.bands.map((k) => `${k.split(':')[0]}:${Buffer.from(k.split(':')[1].slice(0, 12), 'hex').toString('base64url')}`));
  });

  it('survives NUL bytes, lone surrogates and a 50 MB document', () => {
    const sign = createSigner();
    expect(sign('a\u0000b \ud800 c\udfff d').tokens).toBeGreaterThan(0);
    expect(createSigner({ condenser: 'ws:none' })('a\u0000b \ud800 c').tokens).toBe(3);
    const phrase = 'lorem ipsum dolor sit amet consectetur ';
    const big = phrase.repeat(1_350_000); // ~50 MB, 8,100,000 words
    const sig = sign(big);
    // A shingling tokenizer makes a few tokens fewer than words (n - 1): as many fewer as on 10 phrases.
    const fewer = 60 - tokenizer(sign.settings.spec.tokenizer)(sign.normalize(phrase.repeat(10))).length;
    expect(sig.tokens).toBe(8_100_000 - fewer);
    expect(sig.bands.length).toBe(sig.lsh.b);
  });
});

describe('parseCondenserSpec', () => {
  it('fills empty parts with defaults and accepts aliases', () => {
    expect(parseCondenserSpec('ws:norm-html:sha1:128')).toEqual({ tokenizer: 'white-space', normalizer: 'norm-html', hash: 'sha1', numPerm: 128 });
    expect(parseCondenserSpec('3-grams::mmh3:')).toEqual({ tokenizer: '3-grams', normalizer: 'norm-html', hash: 'mmh3', numPerm: 128 });
    expect(parseCondenserSpec('words')).toMatchObject({ tokenizer: 'split-words' });
  });

  it('rejects wrong names with a message that lists the valid ones', () => {
    expect(() => parseCondenserSpec('7-grams')).toThrow(/unknown tokenizer "7-grams".*white-space-2-grams.*split-sents/);
    expect(() => parseCondenserSpec('ws:lower')).toThrow(/unknown normalizer "lower".*none, norm, norm-html/);
    expect(() => parseCondenserSpec('ws:norm:md5')).toThrow(/unknown hash "md5".*sha1, mmh3, crc32/);
    expect(() => parseCondenserSpec('ws:norm:sha1:lots')).toThrow(CondenserSpecError);
    expect(() => parseCondenserSpec('a:b:c:d:e')).toThrow(/5 parts/);
  });
});

describe('every spec the parser accepts signs', () => {
  it('one band of 2,048 rows (band bytes larger than any fixed scratch): the key is the MD5 of the values', async () => {
    const { createHash } = await import('node:crypto');
    const signer = createSigner({ condenser: 'ws:none:sha1:4096', bands: 1, rows: 2048 });
    const sig = signer('the quick brown fox jumps over the lazy dog');
    const bytes = Buffer.alloc(4 * 2048);
    for (let j = 0; j < 2048; j++) bytes.writeUInt32LE(sig.minhash[j], 4 * j);
    expect(sig.bands).toEqual([`0:${createHash('md5').update(bytes).digest().subarray(0, 6).toString('base64url')}`]);
  });
});
