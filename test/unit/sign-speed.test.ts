// What `sign --jsonl` was made faster with (notes/sign-speed.md) gives the same bytes as before: the
// signature line written from a signer's parts against the line of its Signature (the writer that
// test/unit/signature-lines.test.ts holds to JSON.stringify), the known LSH optima against the search, the
// containment sample's own sort against the typed array's, and the two-way token-hash memo of the
// WebAssembly kernels against SHA-1 itself, across evictions.
import { describe, expect, it } from 'vitest';
import { createSigner, type SignerOptions } from '../../src/signature.js';
import { SignatureLines } from '../../src/signing/signature-lines.js';
import { signLines } from '../../src/signing/sign-lines.js';
import { containmentSample, hashOfRank, sampleCut, sampleRank, sampleTerm } from '../../src/sketch/containment.js';
import { byteSwap, sha1FirstWord } from '../../src/sketch/digests.js';
import { KNOWN_OPTIMA, searchBandsRows } from '../../src/sketch/lsh.js';
import { simhashBlockKeys } from '../../src/sketch/simhash.js';
import { createWasmKernels } from '../../src/sketch/wasm-kernels.js';
import { derivePunctuationStandIns, normalizeText, PUNCTUATION_STAND_INS } from '../../src/text/normalize.js';
import { seededUint32 } from '../support/seeded-random.js';

const TEXTS = [
  'The quick brown fox jumps over the lazy dog.',
  'Ünïcödé wörds, café, 東京 and 🙂 — “quoted” text’s end',
  '<p>Some <b>markup</b> &amp; entities</p><script>x()</script>',
  'one',
  '',
  '   ',
  'w x '.repeat(300),
  Array.from({ length: 2000 }, (_, i) => `word${i % 700}`).join(' '),
];
const IDS = [undefined, 'doc-1', 7, null, 'quote " and 東京'];

describe('signature lines from parts', () => {
  const options: SignerOptions[] = [
    {},
    { keyEncoding: 1 },
    { containmentSample: 0 },
    { containmentSample: 1 },
    { condenser: '3-grams:norm:mmh3:16' },
    { condenser: 'ws:none:crc32:300' },
    { condenser: 'white-space:norm-html:sha1:128', scheme: 'legacy' },
    { preset: 'simhash-doc' },
    ...[2, 3, 5, 7, 13, 33, 64].map((simhashBlocks) => ({ simhashBlocks })),
  ];
  for (const opts of options) {
    it(`are the bytes of the Signature's line (${JSON.stringify(opts)})`, () => {
      const sign = createSigner(opts);
      const fromParts = new SignatureLines();
      const fromSignature = new SignatureLines();
      for (const text of TEXTS) {
        for (const id of IDS) {
          fromSignature.signature(sign(text), sign.settings.params, id);
          fromParts.parts(sign.signParts(text), sign.settings, id);
        }
      }
      expect(Buffer.from(fromParts.bytes()).toString('utf8')).toBe(Buffer.from(fromSignature.bytes()).toString('utf8'));
    });
  }

  it('write every MinHash value as JSON does, at each digit count', () => {
    const sign = createSigner({ condenser: 'ws:none:sha1:24' });
    const values = [0, 1, 9, 10, 99, 100, 12345, 99999, 100000, 999999, 1000000, 9999999, 10000000, 99999999, 100000000, 999999999, 1000000000, 4294967295];
    const parts = sign.signParts('a b c');
    parts.minhash = Uint32Array.from({ length: 24 }, (_, i) => values[i % values.length]);
    const out = new SignatureLines();
    out.parts(parts, sign.settings);
    expect(JSON.parse(Buffer.from(out.bytes()).toString()).minhash).toEqual(Array.from(parts.minhash));
  });

  it('signLines writes what it wrote from Signatures, error lines included', () => {
    const sign = createSigner();
    const lines = [...TEXTS.map((text, i) => JSON.stringify({ id: i, text })), '', 'not json', '{"id": 1, "text": 5}', '{"id": 2}', '{"id": 3, "text": ["a", "b"]}'];
    const got = Buffer.from(signLines(sign, lines, 1, { textField: 'text', idField: 'id' }).out).toString('utf8');
    const expected = new SignatureLines();
    expected.signature(sign(TEXTS[0]), sign.settings.params, 0);
    expect(got.startsWith(Buffer.from(expected.bytes()).toString('utf8'))).toBe(true);
    const parsed = got.trim().split('\n').map((l) => JSON.parse(l));
    expect(parsed.length).toBe(TEXTS.length + 4);
    TEXTS.forEach((text, i) => {
      expect(parsed[i].content_hash).toBe(sign(text).content_hash);
    });
    expect(parsed[TEXTS.length].error).toBe('not valid JSON');
    expect(parsed[TEXTS.length + 3].content_hash).toBe(sign('a\nb').content_hash);
  });

  it('write every SimHash block key as simhashBlockKeys does, for every block count', () => {
    const next = seededUint32(11);
    for (let blocks = 2; blocks <= 64; blocks++) {
      const sign = createSigner({ simhashBlocks: blocks, condenser: 'ws:none:sha1:16' });
      for (let k = 0; k < 20; k++) {
        const parts = sign.signParts('a b c d e');
        parts.fingerprint = k === 0 ? { hi: 0, lo: 0 } : k === 1 ? { hi: 0xffffffff, lo: 0xffffffff } : { hi: next(), lo: next() };
        const out = new SignatureLines();
        out.parts(parts, sign.settings);
        expect(JSON.parse(Buffer.from(out.bytes()).toString()).simhash_blocks).toEqual(simhashBlockKeys(parts.fingerprint, blocks));
      }
    }
  });
});

describe('the known LSH optima', () => {
  it('are what the search finds', () => {
    for (const [key, params] of Object.entries(KNOWN_OPTIMA)) {
      const [threshold, numPerm, weight] = key.split('/').map(Number);
      expect(searchBandsRows(threshold, numPerm, weight), key).toEqual(params);
    }
  });
});

describe('the containment sample', () => {
  it('is in rank order, as a sort of all ranks gives it, below and above the size sorted by insertion', () => {
    const next = seededUint32(5);
    for (const count of [0, 1, 2, 10, 100, 255, 256, 257, 400, 1000, 5000]) {
      for (const every of [1, 2, 4, 16]) {
        const hashes = Uint32Array.from({ length: count }, () => next());
        const cut = sampleCut(every);
        const ranks = Array.from(hashes, sampleRank).filter((r) => r < cut).sort((a, b) => a - b);
        expect(containmentSample(hashes, count, every, 2)).toEqual(ranks.map((r) => sampleTerm(hashOfRank(r), 2)));
        expect(containmentSample(hashes, count, every, 1)).toEqual(ranks.map((r) => sampleTerm(hashOfRank(r), 1)));
      }
    }
  });
});

describe('typographic punctuation in the kernels\' ASCII pass', () => {
  it('has the stand-ins that the Unicode path gives', () => {
    const derived = Array.from(derivePunctuationStandIns(), (b) => (b === 0 ? '.' : String.fromCharCode(b))).join('');
    expect(PUNCTUATION_STAND_INS).toBe(derived);
  });

  it('normalizes as the Unicode path does, every character it knows and those it does not among them', () => {
    const k = createWasmKernels();
    if (!k) return;
    const fast = (text: string, table: Uint8Array, asciiOnly: boolean) => k.foldAscii(text, table, asciiOnly);
    const next = seededUint32(3);
    // Every character of the stand-in table's ranges, and others: letters with accents (and their bytes of
    // mojibake), currency, marks, controls, CJK, an emoji, a lone surrogate.
    const chars = [
      ...Array.from({ length: 64 }, (_, i) => String.fromCharCode(0x80 + i)),
      ...Array.from({ length: 128 }, (_, i) => String.fromCharCode(0x2000 + i)),
      'é', 'Ã', '€', '£', '\u0301', '\u0000', '\u007f', '東', '🙂', '\ud800', '\u00c2', '\u00f4', '\ufeff',
    ];
    const ascii = ['Word', 'x', ' ', '  ', '\n', '$', '-', "'", '"', '.', ',', '\t', 'ABC', '42', '<', '&'];
    for (const c of chars) {
      for (const text of [`a${c}b`, `${c}`, `a ${c} b`, `${c}${c}x${c}`, `Word${c}\u2019s ${c}`]) {
        expect(normalizeText(text, fast), JSON.stringify(text)).toBe(normalizeText(text));
      }
    }
    for (let round = 0; round < 3000; round++) {
      let text = '';
      const n = 1 + (next() % 60);
      for (let i = 0; i < n; i++) text += next() % 3 === 0 ? chars[next() % (round % 2 ? 192 : chars.length)] : ascii[next() % ascii.length];
      expect(normalizeText(text, fast), JSON.stringify(text)).toBe(normalizeText(text));
    }
  });

  it('signs such a text as the JavaScript normalizer and kernels do', () => {
    const sign = createSigner();
    const text = 'The \u201cquick\u201d fox\u2019s jump \u2014 over\u00a0the lazy dog\u2026 \u2018again\u2019 \u2013 and\u2022again';
    const viaJs = sign.signNormalized(normalizeText(text));
    expect(sign(text)).toEqual(viaJs);
    const out = new SignatureLines();
    out.parts(sign.signParts(text), sign.settings);
    const expected = new SignatureLines();
    expected.signature(viaJs, sign.settings.params);
    expect(Buffer.from(out.bytes()).toString()).toBe(Buffer.from(expected.bytes()).toString());
  });
});

describe('the token-hash memo of the WebAssembly kernels', () => {
  it('gives datasketch sha1_hash32 through misses, evictions and promotions from its second way', () => {
    const k = createWasmKernels();
    if (!k) return; // the JavaScript kernels have no memo
    const next = seededUint32(9);
    // 150,000 distinct tokens of up to 24 bytes (over twice the memo's entries), used with Zipf-like repeats
    // and in runs that come back after many others, so entries are evicted, refilled and promoted.
    const vocabulary = Array.from({ length: 150_000 }, (_, i) => `${i.toString(36)}${'x'.repeat(next() % 20)}`.slice(0, 1 + (next() % 24)));
    for (let round = 0; round < 8; round++) {
      const tokens: string[] = [];
      for (let i = 0; i < 20_000; i++) {
        const r = next() % 100;
        tokens.push(vocabulary[r < 50 ? next() % 64 : r < 80 ? next() % 4096 : (round * 20_000 + i) % vocabulary.length]);
      }
      const bytes = Buffer.from(tokens.join(' '), 'latin1');
      const starts = new Int32Array(tokens.length), ends = new Int32Array(tokens.length);
      let at = 0;
      tokens.forEach((t, i) => {
        starts[i] = at;
        ends[i] = at + t.length;
        at += t.length + 1;
      });
      k.reset();
      const src = k.copyBytes(bytes, bytes.length);
      const got = k.readUint32(k.tokenHashes('sha1', src, k.copyInt32(starts, tokens.length), k.copyInt32(ends, tokens.length), tokens.length), tokens.length);
      for (let i = 0; i < tokens.length; i++) {
        if (got[i] !== byteSwap(sha1FirstWord(bytes, starts[i], ends[i]))) expect(`${tokens[i]}: ${got[i]}`).toBe(`${tokens[i]}: ${byteSwap(sha1FirstWord(bytes, starts[i], ends[i]))}`);
      }
    }
  });
});
