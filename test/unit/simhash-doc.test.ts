import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Base32Error, base32Decode, base32Encode } from '../../src/sketch/base32.js';
import { createSigner, resolveSignerSettings, signerOptionsFromParams } from '../../src/signature.js';
import { hammingDistance, simhashBlockKeys, simhashHex } from '../../src/sketch/simhash.js';
import { parseSimhash, parseSimhashBase32, simhashBase32, simhashDoc } from '../../src/sketch/simhash-doc.js';
import { readSignature, StoredProblem } from '../../src/stored/read.js';
import { nearDupFields } from '../../src/stored/write.js';
import { stripHtml } from '../../src/text/html.js';
import { normalizer } from '../../src/text/normalize.js';
import { simhashDocText, simhashDocTokens } from '../../src/text/simhash-doc.js';

describe('simhash-doc tokens', () => {
  it('leave numbers out unless they are part of an alphanumeric token', () => {
    expect(simhashDocTokens('In 2017, 3.14 or 1,000,000: 42nd abc123 123abc x86_64')).toEqual(['42nd', 'abc123', '123abc', 'x86']);
    expect(simhashDocTokens('2017 12345 0xff')).toEqual(['0xff']);
  });

  it('leave out tokens under 3 characters, counted in code points', () => {
    expect(simhashDocTokens('an ox is by the big sea')).toEqual(['the', 'big', 'sea']);
    expect(simhashDocTokens('ab abc 𝐀𝐁 𝒜𝒷𝒸')).toEqual(['abc', 'abc']); // mathematical letters: NFKC makes them plain
    expect(simhashDocTokens('日本 日本語')).toEqual(['日本語']);
  });

  it('split on what is not a letter, mark or digit: punctuation, symbols, connectors', () => {
    expect(simhashDocTokens("snake_case, e-mail don't kebab-case http://example.org/path")).toEqual(['snake', 'case', 'mail', 'don', 'kebab', 'case', 'http', 'example', 'org', 'path']);
  });

  it('remove zero-width and non-printing characters inside words instead of splitting there', () => {
    const hidden = 'pla\u200Bin te\u200Cxt w\u200Dith in\u00ADvisible mar\uFEFFks and con\u0007trols va\uFE0Friation\u2060s \u202Eright';
    expect(simhashDocTokens(hidden)).toEqual(['plain', 'text', 'with', 'invisible', 'marks', 'and', 'controls', 'variations', 'right']);
    expect(simhashDocTokens('line\nbreaks\tand\u2028separators\u3000stay')).toEqual(['line', 'breaks', 'and', 'separators', 'stay']);
    expect(simhashDocTokens('\u3164\u3164\u3164 \u115F\u1160abc')).toEqual(['abc']); // Hangul fillers: letters, but invisible
  });

  it('keep letters of every script, with their marks, lowercased and NFKC', () => {
    expect(simhashDocTokens('Straße ΟΔΟΣ Ελλάδα Москва किताब नमस्ते عربي 東京都 ﬁle Ｆｕｌｌ')).toEqual([
      'straße', 'οδος', 'ελλάδα', 'москва', 'किताब', 'नमस्ते', 'عربي', '東京都', 'file', 'full',
    ]);
    expect(simhashDocTokens('Cafe\u0301 café')).toEqual(['café', 'café']); // decomposed and composed: one token
  });

  it('the simhash-doc normalizers give the tokens joined by single spaces, which are their own tokens', () => {
    expect(simhashDocText('  Ｈello\u200B  Wor\u00ADld,\t2017\n ﬁne ')).toBe('hello world fine');
    expect(normalizer('simhash-doc')('The 42 quick brown foxes')).toBe('the quick brown foxes');
    expect(normalizer('simhash-doc-html')('<p>Caf&eacute; <b>cr\u00e8me</b></p><p>br\u00FBl\u00E9e</p>')).toBe('café crème brûlée');
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme-composite', maxLength: 60 }), (text) => {
        const clean = simhashDocText(text);
        expect(simhashDocTokens(clean)).toEqual(simhashDocTokens(text));
        expect(clean === '' ? [] : clean.split(' ')).toEqual(simhashDocTokens(text));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('base32 (RFC 4648)', () => {
  const encode = (s: string) => base32Encode(new TextEncoder().encode(s));

  it('gives the RFC 4648 test vectors, without their padding', () => {
    // RFC 4648 section 10: BASE32("f") = "MY======" ... BASE32("foobar") = "MZXW6YTBOI======"
    expect(['', 'f', 'fo', 'foo', 'foob', 'fooba', 'foobar'].map(encode)).toEqual(['', 'MY', 'MZXQ', 'MZXW6', 'MZXW6YQ', 'MZXW6YTB', 'MZXW6YTBOI']);
  });

  it('reads back what it writes, in either case, with or without padding', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        const text = base32Encode(bytes);
        expect(text).toMatch(/^[A-Z2-7]*$/);
        expect(base32Decode(text, bytes.length)).toEqual(bytes);
        expect(base32Decode(text.toLowerCase(), bytes.length)).toEqual(bytes);
        const padded = text.padEnd(Math.ceil(text.length / 8) * 8, '=');
        expect(base32Decode(padded, bytes.length)).toEqual(bytes);
      }),
      { numRuns: 500 },
    );
  });

  it('refuses what is not the base32 of that many bytes, saying what is wrong', () => {
    expect(() => base32Decode('MZXW6YTBO', 6)).toThrow(/"MZXW6YTBO" is 9 characters; the base32 of 6 bytes is 10 \(16 with its = padding\)/);
    expect(() => base32Decode('MZXW6YTB01', 6)).toThrow(/holds "0", not a base32 character/);
    expect(() => base32Decode('MZXW6YTBOJ', 6)).toThrow(/bits set past its last byte/); // J = 9: its last bit is past the 48
    expect(() => base32Decode('MZXW6YTBOI=', 6)).toThrow(Base32Error); // padding, but not the RFC's
  });
});

describe('the SimHash in base32', () => {
  it('is 13 characters of the 8 bytes, most significant first, and reads back in either case', () => {
    const h = { hi: 0xb163c917, lo: 0x2b8230a1 };
    const text = simhashBase32(h);
    expect(text).toBe('WFR4SFZLQIYKC'); // Python: base64.b32encode(bytes.fromhex('b163c9172b8230a1')) without its ===
    expect(text).toBe(base32Encode(Buffer.from(simhashHex(h), 'hex')));
    expect(parseSimhashBase32(text)).toEqual(h);
    expect(parseSimhashBase32(text.toLowerCase())).toEqual(h);
    expect(parseSimhashBase32(`${text}===`)).toEqual(h);
    expect(simhashBase32({ hi: 0, lo: 0 })).toBe('AAAAAAAAAAAAA');
    expect(simhashBase32({ hi: 0xffffffff, lo: 0xffffffff })).toBe('7777777777776');
  });

  it('a stored SimHash reads in either form, and anything else is refused', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: 0, max: 0xffffffff }), (hi, lo) => {
        const h = { hi, lo };
        expect(parseSimhash(simhashHex(h))).toEqual(h);
        expect(parseSimhash(simhashBase32(h))).toEqual(h);
        expect(parseSimhash(simhashBase32(h).toLowerCase())).toEqual(h);
      }),
    );
    expect(() => parseSimhash('b163c9172b8230a')).toThrow(/16 hexadecimal digits or 13 base32 characters/);
    expect(() => parseSimhash('WFR4SFZLQIYKC0')).toThrow(/16 hexadecimal digits or 13 base32 characters/);
  });

  it('is of the tokens, each occurrence a feature: near texts are near, others far', () => {
    const base = 'The licensee may copy, modify and distribute the software provided that this notice appears in every copy of the software and its documentation.';
    const edited = base.replace('distribute', 'redistribute').replace('every', 'each');
    const other = 'Grill the vegetables over medium heat until tender, then season generously with salt, pepper and fresh herbs before serving.';
    expect(simhashDoc(base)).toEqual(simhashDoc(base.toUpperCase().replaceAll(' ', '\u200B ')));
    expect(hammingDistance(simhashDoc(base), simhashDoc(edited))).toBeLessThanOrEqual(12);
    expect(hammingDistance(simhashDoc(base), simhashDoc(other))).toBeGreaterThan(16);
    expect(simhashDoc('12 34 an ox')).toEqual({ hi: 0, lo: 0 }); // no tokens
  });
});

describe('the simhash-doc preset', () => {
  const PARAMS = 'white-space:simhash-doc-html:sha1:128;seed=1;scheme=affine32;b=26;r=4;simhash=simhash-doc:m8;k=2;sample=4';
  const html = '<p>The licensee may <b>copy</b>, modify and distribute the software in 2017, provided that this notice appears.</p>';

  it('says itself in the params, which read back to the options that make them', () => {
    expect(resolveSignerSettings({ preset: 'simhash-doc' }).params).toBe(PARAMS);
    expect(signerOptionsFromParams(PARAMS)).toMatchObject({ preset: 'simhash-doc', condenser: 'white-space:simhash-doc-html:sha1:128' });
    expect(resolveSignerSettings(signerOptionsFromParams(PARAMS)).params).toBe(PARAMS);
    expect(signerOptionsFromParams(PARAMS.replace('simhash-doc:m8', 'other-scheme:m8'))).toBeUndefined();
    expect(resolveSignerSettings().params).toContain(';simhash=w4m8;'); // near-dup's own, unchanged
  });

  it('fills the condenser parts not given; those given win', () => {
    expect(resolveSignerSettings({ preset: 'simhash-doc', condenser: '::mmh3:256' }).condenser).toBe('white-space:simhash-doc-html:mmh3:256');
    const mixed = resolveSignerSettings({ preset: 'simhash-doc', condenser: 'ws:norm-html', simhashBlocks: 6 });
    expect(mixed.params).toBe('white-space:norm-html:sha1:128;seed=1;scheme=affine32;b=26;r=4;simhash=simhash-doc:m6;k=2;sample=4');
    expect(resolveSignerSettings(signerOptionsFromParams(mixed.params)).params).toBe(mixed.params);
    expect(() => resolveSignerSettings({ preset: 'simhash-dok' })).toThrow(/unknown preset "simhash-dok"; valid presets: simhash-doc/);
  });

  it('signs with the draft\'s tokens and writes the SimHash in base32, its blocks from the same 64 bits', () => {
    const sign = createSigner({ preset: 'simhash-doc' });
    const sig = sign(html);
    const tokens = simhashDocTokens(stripHtml(html));
    expect(tokens).not.toContain('2017');
    expect(sig.tokens).toBe(tokens.length);
    expect(sig.simhash).toMatch(/^[A-Z2-7]{13}$/);
    expect(parseSimhash(sig.simhash)).toEqual(simhashDoc(stripHtml(html)));
    expect(sig.simhash_blocks).toEqual(simhashBlockKeys(parseSimhash(sig.simhash), 8));
    expect(sign.normalize(html)).toBe('the licensee may copy modify and distribute the software provided that this notice appears');
    // the MinHash is of the same tokens: the default signer given them as words makes the same one
    expect(sig.minhash).toEqual(createSigner({ condenser: 'ws:none' })(tokens.join(' ')).minhash);
    // annotate signs the normalized text: the same signature
    expect(sign.signNormalized(sign.normalize(html))).toEqual(sig);
    expect(createSigner({ preset: 'simhash-doc' })('12 34 an ox')).toMatchObject({ tokens: 0, bands: [], simhash_blocks: [], simhash: 'AAAAAAAAAAAAA' });
  });

  it('is stored, read back and checked: base32 for its params, hex for near-dup\'s own', () => {
    const sign = createSigner({ preset: 'simhash-doc' });
    const fields = nearDupFields(sign(html), sign.settings) as unknown as Record<string, unknown>;
    const read = readSignature(fields);
    expect(read).not.toBeInstanceOf(StoredProblem);
    expect((read as { simhash: string }).simhash).toBe(fields.simhash);
    expect(readSignature({ ...fields, simhash: (fields.simhash as string).toLowerCase() })).not.toBeInstanceOf(StoredProblem);
    expect((readSignature({ ...fields, simhash: simhashHex(parseSimhash(fields.simhash as string)) }) as StoredProblem).reason).toMatch(/simhash is "[0-9a-f]{16}", not 13 base32 characters/);
    const own = createSigner();
    const ownFields = nearDupFields(own(html), own.settings) as unknown as Record<string, unknown>;
    expect((readSignature({ ...ownFields, simhash: fields.simhash }) as StoredProblem).reason).toMatch(/not 16 hexadecimal digits/);
  });
});

describe('interop: the same tokens and SimHash as a plain Python statement of the rules', () => {
  // test/fixtures/simhash-doc.json, made by scripts/interop/simhash_doc_vectors.py (the regex module,
  // unicodedata, hashlib's MD5 and base64.b32encode).
  const fixture = JSON.parse(readFileSync(new URL('../fixtures/simhash-doc.json', import.meta.url), 'utf8')) as {
    vectors: Array<{ text: string; tokens: string[]; simhash: string; hex: string }>;
  };

  it('tokens, SimHash and its base32, text by text', () => {
    expect(fixture.vectors.length).toBeGreaterThanOrEqual(8);
    const sign = createSigner({ preset: 'simhash-doc' });
    for (const v of fixture.vectors) {
      expect(simhashDocTokens(v.text), v.text).toEqual(v.tokens);
      expect(simhashBase32(simhashDoc(v.text)), v.text).toBe(v.simhash);
      expect(simhashHex(parseSimhash(v.simhash))).toBe(v.hex);
      expect(sign(v.text).simhash, v.text).toBe(v.simhash);
    }
  });
});
