// The WebAssembly SIMD kernels against the JavaScript reference functions, bit for bit.
import { randomBytes } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import { md5First64, sha1FirstWord, byteSwap } from '../../src/sketch/digests.js';
import { emptyMinhash, minhashPermutations, updateMinhash } from '../../src/sketch/minhash.js';
import { computeSimhash, type Hash64 } from '../../src/sketch/simhash.js';
import { byteHash } from '../../src/sketch/token-hash.js';
import { bandDigests } from '../../src/sketch/lsh.js';
import { createWasmKernels, type WasmKernels } from '../../src/sketch/wasm-kernels.js';
import { layoutWords, TokenRanges } from '../../src/text/token-ranges.js';
import { seededUint32 } from '../support/seeded-random.js';

function kernels(): WasmKernels {
  const k = createWasmKernels();
  if (!k) throw new Error('the wasm kernels did not load: run `npm run build` first');
  return k;
}

/** Random ranges of every length 0..maxLen (several of each) over one random buffer. */
function randomRanges(seed: number, maxLen: number, perLength: number) {
  const next = seededUint32(seed);
  const bytes = randomBytes(4096 + maxLen);
  const starts: number[] = [], ends: number[] = [];
  for (let len = 0; len <= maxLen; len++) {
    for (let r = 0; r < perLength; r++) {
      const start = next() % 4096;
      starts.push(start);
      ends.push(start + len);
    }
  }
  // Shuffle, so that lanes mix lengths (short and long, one and several blocks).
  for (let i = starts.length - 1; i > 0; i--) {
    const j = next() % (i + 1);
    [starts[i], starts[j]] = [starts[j], starts[i]];
    [ends[i], ends[j]] = [ends[j], ends[i]];
  }
  return { bytes, starts: Int32Array.from(starts), ends: Int32Array.from(ends) };
}

describe('wasm kernels', () => {
  it('load (WebAssembly SIMD is available)', () => {
    expect(createWasmKernels()).toBeDefined();
  });

  it('MD5: equal md5First64 on random inputs of every length 0..300, in every lane position', () => {
    const k = kernels();
    for (const seed of [1, 2, 3]) {
      const { bytes, starts, ends } = randomRanges(seed, 300, 3);
      // Odd counts leave partly filled lane groups.
      for (const count of [starts.length, starts.length - 1, starts.length - 2, starts.length - 3]) {
        k.reset();
        const src = k.copyBytes(bytes, bytes.length);
        const got = k.md5Ranges(src, k.copyInt32(starts, count), k.copyInt32(ends, count), count);
        const out = new Uint32Array(2);
        for (let i = 0; i < count; i++) {
          md5First64(bytes, starts[i], ends[i], out);
          if (got[2 * i] !== out[0] || got[2 * i + 1] !== out[1]) {
            throw new Error(`md5 of ${ends[i] - starts[i]} bytes differs: ${got[2 * i]},${got[2 * i + 1]} vs ${out[0]},${out[1]}`);
          }
        }
      }
    }
  });

  it('SHA-1: equal sha1FirstWord on random inputs of every length 0..300', () => {
    const k = kernels();
    for (const seed of [4, 5, 6]) {
      const { bytes, starts, ends } = randomRanges(seed, 300, 3);
      const count = starts.length - (seed % 4);
      k.reset();
      const src = k.copyBytes(bytes, bytes.length);
      const got = k.sha1Ranges(src, k.copyInt32(starts, count), k.copyInt32(ends, count), count);
      for (let i = 0; i < count; i++) expect(got[i]).toBe(sha1FirstWord(bytes, starts[i], ends[i]));
    }
  });

  it('token hashes (memoized): datasketch sha1_hash32, on first sight, on repeats and after slot reuse', () => {
    const k = kernels();
    const next = seededUint32(7);
    // A small alphabet makes many repeats and many equal-length tokens; lengths cross the memo's 24.
    const alphabet = Buffer.from('abcdefghij');
    for (let round = 0; round < 6; round++) {
      const bytes = new Uint8Array(200_000);
      for (let i = 0; i < bytes.length; i++) bytes[i] = alphabet[next() % (round < 3 ? 3 : 10)];
      const starts: number[] = [], ends: number[] = [];
      for (let i = 0; i < 5000; i++) {
        const len = next() % 40;
        const start = next() % (bytes.length - 64);
        starts.push(start);
        ends.push(start + len);
      }
      k.reset();
      const src = k.copyBytes(bytes, bytes.length);
      const ptr = k.tokenHashes('sha1', src, k.copyInt32(Int32Array.from(starts), 5000), k.copyInt32(Int32Array.from(ends), 5000), 5000);
      const got = k.readUint32(ptr, 5000);
      for (let i = 0; i < 5000; i++) expect(got[i]).toBe(byteSwap(sha1FirstWord(bytes, starts[i], ends[i])));
    }
  });

  it('token hashes mmh3 and crc32: equal the JavaScript ones (Python mmh3, zlib) on every length 0..300', () => {
    const k = kernels();
    for (const hash of ['mmh3', 'crc32'] as const) {
      const reference = byteHash(hash);
      for (const seed of [10, 11]) {
        const { bytes, starts, ends } = randomRanges(seed, 300, 3);
        k.reset();
        const src = k.copyBytes(bytes, bytes.length);
        const ptr = k.tokenHashes(hash, src, k.copyInt32(starts, starts.length), k.copyInt32(ends, ends.length), starts.length);
        const got = k.readUint32(ptr, starts.length);
        for (let i = 0; i < starts.length; i++) {
          if (got[i] !== reference(bytes, starts[i], ends[i])) throw new Error(`${hash} of ${ends[i] - starts[i]} bytes differs`);
        }
      }
    }
  });

  it('band digests: equal lsh.ts bandDigests for bands of one and of several MD5 blocks, the arena kept', () => {
    const k = kernels();
    const next = seededUint32(13);
    for (const [b, r] of [[26, 4], [1, 1], [9, 13], [4, 14], [3, 40], [2, 300]]) {
      const values = Uint32Array.from({ length: b * r + 3 }, () => next());
      k.reset();
      const held = k.copyBytes(Buffer.from('kept'), 4);
      expect(Array.from(k.bandDigests(values, b, r))).toEqual(Array.from(bandDigests(values, { b, r })));
      expect(Buffer.from(k.readBytes(held, 4)).toString()).toBe('kept');
    }
  });

  it('MinHash affine32: equal updateMinhash, for several permutation counts and hash counts', () => {
    const k = kernels();
    const next = seededUint32(8);
    for (const numPerm of [2, 3, 16, 17, 128, 200, 256]) {
      for (const count of [0, 1, 3, 4, 5, 64, 1000]) {
        const hashes = new Uint32Array(count);
        for (let i = 0; i < count; i++) hashes[i] = next() % 8 === 0 && i > 0 ? hashes[next() % i] : next();
        const perms = minhashPermutations(numPerm, count + 1);
        const expected = emptyMinhash(numPerm);
        updateMinhash(expected, perms, hashes, count);
        // Starting from a signature that is not empty, too: the kernel folds into what is there.
        const got = emptyMinhash(numPerm);
        k.reset();
        k.minhashAffine32(got, perms, k.copyUint32(hashes, count), count);
        expect(Array.from(got)).toEqual(Array.from(expected));
        const more = Array.from({ length: 7 }, () => next());
        updateMinhash(expected, perms, more);
        k.reset();
        k.minhashAffine32(got, perms, k.copyUint32(more, more.length), more.length);
        expect(Array.from(got)).toEqual(Array.from(expected));
      }
    }
  });

  it('SimHash: equal computeSimhash over md5First64 of word shingles, ties included', () => {
    const k = kernels();
    const next = seededUint32(9);
    const out = new Uint32Array(2);
    for (let doc = 0; doc < 200; doc++) {
      // Words joined by single spaces; few distinct words make repeated features and exact ties.
      const vocabulary = 1 + (next() % (doc % 5 === 0 ? 2 : 50));
      const wordCount = doc < 20 ? doc : next() % 400;
      const words = Array.from({ length: wordCount }, () => `w${next() % vocabulary}${'x'.repeat(next() % (doc % 3 === 0 ? 90 : 8))}`);
      const bytes = Buffer.from(words.join(' '));
      const starts = new Int32Array(wordCount), ends = new Int32Array(wordCount);
      let pos = 0;
      words.forEach((w, i) => {
        starts[i] = pos;
        ends[i] = pos + w.length;
        pos += w.length + 1;
      });
      for (const window of [1, 4]) {
        const hashes: Hash64[] = [];
        if (wordCount > 0) {
          const features = wordCount <= window ? 1 : wordCount - window + 1;
          const last = Math.min(window, wordCount) - 1;
          for (let i = 0; i < features; i++) {
            md5First64(bytes, starts[i], ends[i + last], out);
            hashes.push({ hi: out[0], lo: out[1] });
          }
        }
        k.reset();
        const src = k.copyBytes(bytes, bytes.length);
        const got = k.simhashShingles(src, k.copyInt32(starts, wordCount), k.copyInt32(ends, wordCount), wordCount, window);
        expect(got).toEqual(computeSimhash(hashes));
      }
    }
  });

  it('word layout: equal layoutWords on ASCII text with every kind of white space', () => {
    const k = kernels();
    const next = seededUint32(11);
    const pieces = ['a', 'bc', 'word', 'x'.repeat(70), ' ', '  ', '\t', '\n', '\r\n', '\x0b', '\x0c', '\x1c', '\x1d', '\x1e', '\x1f',
      '\x00', '\x01', '\x7f', '\x08', '\x0e', '!', '.'];
    const words = new TokenRanges();
    const wordPool = ['a', 'to', 'the', 'word', 'longer', 'x'.repeat(15), 'y'.repeat(16), 'z'.repeat(17), 'Caps9'];
    const flaws = ['', '', '', ' ', '  ', '\t', '\x1f', '\n'];
    for (let doc = 0; doc < 1500; doc++) {
      let text: string;
      if (doc % 3 === 2) {
        // Laid out already (the normalizers' output), and the same with one flaw somewhere.
        const n = next() % 120;
        text = Array.from({ length: n }, () => wordPool[next() % wordPool.length]).join(' ');
        const at = next() % (text.length + 1);
        text = text.slice(0, at) + flaws[next() % flaws.length] + text.slice(at);
      } else {
        const n = doc < 30 ? doc : next() % 300;
        text = Array.from({ length: n }, () => pieces[next() % pieces.length]).join('');
      }
      layoutWords(text, words);
      k.reset();
      const laid = k.layoutAsciiWords(text);
      if (!laid) throw new Error('an ASCII text was not laid out');
      expect(laid.count).toBe(words.count);
      expect(Array.from(k.readInt32(laid.starts, laid.count))).toEqual(Array.from(words.starts.subarray(0, words.count)));
      expect(Array.from(k.readInt32(laid.ends, laid.count))).toEqual(Array.from(words.ends.subarray(0, words.count)));
      expect(Buffer.from(k.readBytes(laid.src, words.length))).toEqual(Buffer.from(words.bytes.subarray(0, words.length)));
    }
    k.reset();
    expect(k.layoutAsciiWords('café au lait')).toBeUndefined();
    expect(k.layoutAsciiWords('\u2003x')).toBeUndefined();
  });

  it('grows its memory for large inputs', () => {
    const k = kernels();
    const bytes = randomBytes(5_000_000);
    const starts = Int32Array.from({ length: 1000 }, (_, i) => i * 4999);
    const ends = starts.map((s, i) => s + (i % 300));
    k.reset();
    const src = k.copyBytes(bytes, bytes.length);
    const got = k.sha1Ranges(src, k.copyInt32(starts, 1000), k.copyInt32(ends, 1000), 1000);
    for (let i = 0; i < 1000; i++) expect(got[i]).toBe(sha1FirstWord(bytes, starts[i], ends[i]));
  });
});

// The same modules with the kernels turned off (fresh module instances, loaded under NEAR_DUP_WASM=0).
async function jsOnlyModules() {
  vi.resetModules();
  vi.stubEnv('NEAR_DUP_WASM', '0');
  try {
    const signature = await import('../../src/signature.js');
    const normalize = await import('../../src/text/normalize.js');
    const kernelsModule = await import('../../src/sketch/wasm-kernels.js'); // the instance those use
    expect(kernelsModule.createWasmKernels()).toBeUndefined();
    return { signature, normalize };
  } finally {
    vi.unstubAllEnvs();
    vi.resetModules();
  }
}

describe('normalizer with and without the wasm kernels', () => {
  it('gives identical text on ASCII and non-ASCII input, control characters and currency included', async () => {
    const { normalizeText: plain, normalizer: plainNormalizer } = await import('../../src/text/normalize.js');
    const wasm = createWasmKernels()!;
    const fold = (text: string, table: Uint8Array, asciiOnly: boolean) => wasm.foldAscii(text, table, asciiOnly);
    const normalizeText = (text: string) => plain(text, fold);
    const normalizer = (name: 'norm-html') => plainNormalizer(name, fold);
    const js = { normalizeText: (text: string) => plain(text), normalizer: (name: 'norm-html') => plainNormalizer(name) };
    const next = seededUint32(12);
    const ascii = Array.from({ length: 128 }, (_, c) => String.fromCharCode(c));
    const other = ['é', 'Ã©', 'â€™', '€', '£', '¥', '\u0080', '\u009f', '\ufeff', '\ud800', '\udc00', '🙂', '日本', 'ﬁ', 'Å', 'A\u030a', '＄', '\u2003'];
    for (let doc = 0; doc < 400; doc++) {
      const n = next() % 300;
      const text = Array.from({ length: n }, () => {
        const r = next() % 100;
        return r < 60 ? ascii[32 + (next() % 96)] : r < 80 ? ascii[next() % 128] : r < 90 && doc % 2 ? other[next() % other.length] : 'Word';
      }).join('');
      expect(normalizeText(text)).toBe(js.normalizeText(text));
      expect(normalizer('norm-html')(text)).toBe(js.normalizer('norm-html')(text));
    }
    // Prose: words and single spaces, in blocks of 16 bytes most of the time, with a punctuation mark,
    // a line break or a double space here and there, at every offset from the start.
    const words = ['The', 'quick', 'brown', 'fox', 'a', 'I', 'PEP', '8', '2026', 'jumps', 'over', 'LAZY', 'dogs', 'x'.repeat(20)];
    const gaps = [' ', ' ', ' ', ' ', ' ', ' ', '  ', '\n', ', ', '. ', ' - ', '\t'];
    for (let doc = 0; doc < 300; doc++) {
      const lead = [' ', '', '  ', '.'][doc % 4].repeat(doc % 7);
      const text = lead + Array.from({ length: next() % 200 }, () => words[next() % words.length] + gaps[next() % (doc % 3 ? 6 : gaps.length)]).join('');
      expect(normalizeText(text)).toBe(js.normalizeText(text));
    }
    // Each state the fold can be in where a block starts: nothing written yet, a word written with a break
    // owed or not, a break just read.
    for (const first of ['', 'a', 'ab', 'I.', '.', ' ']) {
      for (let pad = 0; pad <= 17; pad++) {
        for (const filler of [' ', '.', '\n', 'x']) {
          const text = first + filler.repeat(pad) + 'plain words in a block and more words Then some';
          expect(normalizeText(text)).toBe(js.normalizeText(text));
          expect(normalizeText(`${text} `)).toBe(js.normalizeText(`${text} `));
        }
      }
    }
    // Every ASCII character alone and between letters.
    for (const c of ascii) {
      for (const text of [c, `a${c}b`, `A${c}${c}B `, ` ${c}`]) expect(normalizeText(text)).toBe(js.normalizeText(text));
    }
  });
});

describe('signer with and without the wasm kernels', () => {
  it('gives identical signatures for every tokenizer, hash and scheme', async () => {
    const { createSigner } = await import('../../src/signature.js');
    const { TOKENIZER_NAMES } = await import('../../src/text/tokenize.js');
    const jsModule = (await jsOnlyModules()).signature;
    const next = seededUint32(10);
    const vocabulary = ['the', 'Python', 'café', 'naïve', 'PEP', '<b>bold</b>', '&amp;', 'über', '日本語', 'x'.repeat(30),
      'enhancement', 'proposal', '', 'a', 'https://example.org/some/long/path/that/is/longer/than/a/block/of/md5/and/sha1'];
    const separators = [' ', '\n', '  ', '\t\r\n', '\x1f', '\u2003', ' \x00 '];
    const docs = Array.from({ length: 80 }, (_, d) => {
      const n = d < 5 ? d : next() % 600;
      const words = Array.from({ length: n }, () => vocabulary[next() % vocabulary.length]);
      if (d % 2 === 0) return words.join(separators[d % separators.length]);
      return words.map((w) => w + separators[next() % separators.length]).join('');
    });
    docs.push('', ' ', '\n\t', 'one', 'one two three', 'one two three four', 'one two three four five');
    // All-ASCII texts, which the kernels sign in one go from the normalizer's fold on.
    const ascii = vocabulary.filter((w) => /^[\x00-\x7f]*$/.test(w));
    for (let d = 0; d < 40; d++) docs.push(Array.from({ length: next() % 500 }, () => ascii[next() % ascii.length] + separators[next() % 5]).join(''));
    const combos = [
      ...TOKENIZER_NAMES.map((t) => ({ condenser: `${t}:norm-html:sha1:128` })),
      { condenser: 'white-space:norm:mmh3:64' },
      { condenser: 'white-space:none:crc32:20' },
      { condenser: 'white-space:none:sha1:128' },
      { condenser: 'white-space:none:sha1:128', simhashBlocks: 4 },
      { condenser: 'white-space-3-grams:norm-html:sha1:100', seed: 7 },
      { condenser: 'white-space:norm-html:sha1:128', scheme: 'legacy' as const },
    ];
    for (const options of combos) {
      const wasmSign = createSigner(options), jsSign = jsModule.createSigner(options);
      for (const text of docs) expect(wasmSign(text)).toEqual(jsSign(text));
    }
  });
});
