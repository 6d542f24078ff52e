import anyAscii from 'any-ascii';
import fc from 'fast-check';
import { Tokenizer } from 'htmlparser2';
import { describe, expect, it } from 'vitest';
import { decodeLines } from '../../src/text/decode.js';
import { stripHtml, TextSkippingTokenizer } from '../../src/text/html.js';
import { normalizer, normalizeText } from '../../src/text/normalize.js';
import { fixMojibake, repairUnicode } from '../../src/text/repair.js';
import { characterShingles, splitSentences, splitWhiteSpace, splitWords, tokenizer, wordShingles } from '../../src/text/tokenize.js';

describe('normalizers', () => {
  it('norm transliterates, lowercases, drops punctuation and currency, joins lines', () => {
    expect(normalizeText('Crème Brûlée costs €5.50!\nNaïve   façade — “quoted”')).toBe('creme brulee costs 550 naive facade quoted');
  });

  it('norm repairs UTF-8 read as Windows-1252 before transliterating', () => {
    expect(fixMojibake('cafÃ© and donâ€™t')).toBe('café and don’t');
    expect(normalizeText('cafÃ© Ã¼ber')).toBe(normalizeText('café über'));
  });

  it('repair drops NUL bytes, controls and lone surrogates but keeps real text', () => {
    expect(repairUnicode('a\u0000b\u0007c\ud800d\udc00e')).toBe('abcde');
    expect(repairUnicode('emoji 🙂 stays')).toBe('emoji 🙂 stays');
    expect(repairUnicode('e\u0301')).toBe('é'); // NFC
  });

  it('norm-html removes tags, scripts, styles and comments and decodes entities', () => {
    const html = '<html><head><title>T</title><style>p{color:red}</style></head><body><p>Fish &amp; Chips</p>' +
      '<script>var x = "<p>no</p>";</script><!-- hidden --><div>caf&eacute;<br>next</div></body></html>';
    expect(normalizer('norm-html')(html)).toBe('fish chips cafe next');
    expect(stripHtml('<p>one</p><p>two</p>').trim().split(/\s+/)).toEqual(['one', 'two']);
  });

  it('the text-skipping tokenizer gives the stock tokenizer\'s callbacks, in order, on any mix of text and markup', () => {
    // Every callback with its arguments, as the Parser would see them.
    const events = (Kind: typeof Tokenizer, html: string): unknown[][] => {
      const seen: unknown[][] = [];
      const record = new Proxy({}, { get: (_t, name) => (...args: unknown[]) => seen.push([name, ...args]) });
      const tokenizer = new Kind({ decodeEntities: true, recognizeSelfClosing: true }, record as never);
      tokenizer.write(html);
      tokenizer.end();
      return seen;
    };
    const pieces = ['plain words ', 'x', ' ', '\n', '<', '>', '&', ';', '&amp;', '&lt', '&#x3c;', '&#60', '&ampfoo', '&nosuch;', '<p>', '</p>',
      '<br/>', '<a href="x&amp;y">', '</a>', '<!-- c -->', '<!--', '-->', '<script>', '</script>', '<title>', '</title>', '<textarea>',
      '<xmp>', '</xmp>', '<plaintext>', '<![CDATA[', ']]>', '<?pi?>', '<!doctype html>', '< b', 'a<b', '</', '"', "'", '=', 'é', '東'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), (parts) => {
        const html = parts.join('');
        expect(events(TextSkippingTokenizer, html)).toEqual(events(Tokenizer, html));
      }),
      { numRuns: 3000 },
    );
    expect(stripHtml('a &amp; b <p>c</p> d &lt e')).toBe('a & b  c  d < e');
  });

  it('decodes a batch line by line: ASCII lines, others, invalid UTF-8 counted in its line only', () => {
    const bytes = Buffer.concat([Buffer.from('plain\ncafé\n\n'), Buffer.from([0x61, 0xff, 0x0a]), Buffer.from('\ufffd kept\nlast')]);
    expect(decodeLines(bytes)).toEqual({ lines: ['plain', 'café', '', 'a\ufffd', '\ufffd kept', 'last'], replaced: 1 });
    expect(decodeLines(Buffer.from('one\n'))).toEqual({ lines: ['one'], replaced: 0 });
    expect(decodeLines(new Uint8Array(0))).toEqual({ lines: [], replaced: 0 });
  });

  it('norm on non-ASCII text equals its definition: repair, currency to spaces, transliteration, then the ASCII pass', () => {
    // The definition written out plainly, with the ASCII pass's table from its description.
    const fold = (text: string) =>
      Array.from(text, (c) => (c <= ' ' || c === '\x7f' ? ' ' : /[!-/:-@[-`{-~]/.test(c) ? '' : c.toLowerCase()))
        .join('')
        .trim()
        .replace(/ +/g, ' ');
    const reference = (text: string) => fold(repairUnicode(text).replace(/\p{Sc}/gu, ' ').replace(/[^\x00-\x7f]+/g, (run) => anyAscii(run)));
    const pieces = ['a', 'Word', ' ', '  ', '\n', '.', ',', '$', '€', '£', '¥', '₹', '＄', '\u{1ECB0}', 'é', 'ü', 'e\u0301', 'Ã©', 'â€™', '日本', '🙂',
      '\u00a0', '\u2003', '—', '“', '”', 'ﬁ', 'Ω', '\u0000', '\u0085', '\ufeff', '\ud800', '5'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 30 }), (parts) => {
        const text = parts.join('');
        expect(normalizeText(text)).toBe(reference(text));
      }),
      { numRuns: 3000 },
    );
  });

  it('none leaves the text alone', () => {
    expect(normalizer('none')('  A,B  ')).toBe('  A,B  ');
  });
});

describe('tokenizers', () => {
  it('white-space splits like Python str.split()', () => {
    expect(splitWhiteSpace('  a\tb\u00a0c\u3000d\x1ce\u200bf  ')).toEqual(['a', 'b', 'c', 'd', 'e\u200bf']);
    expect(splitWhiteSpace('   ')).toEqual([]);
  });

  it('word shingles join N words by one space; short texts give one shingle', () => {
    expect(wordShingles(['a', 'b', 'c', 'd'], 2)).toEqual(['a b', 'b c', 'c d']);
    expect(wordShingles(['a', 'b'], 3)).toEqual(['a b']);
    expect(wordShingles([], 3)).toEqual([]);
  });

  it('character shingles count code points, not UTF-16 units', () => {
    expect(characterShingles('a🙂b', 2)).toEqual(['a🙂', '🙂b']);
    expect(characterShingles('abcd', 3)).toEqual(['abc', 'bcd']);
    expect(characterShingles('ab', 3)).toEqual(['ab']);
  });

  it('words and sentences segment without a model', () => {
    expect(splitWords('Hello, world! It’s 2024.')).toEqual(['Hello', 'world', 'It’s', '2024']);
    expect(splitSentences('One here. Two there! Three?')).toEqual(['One here.', 'Two there!', 'Three?']);
    expect(splitWords('我喜欢吃苹果').length).toBeGreaterThan(1);
  });

  it('resolves every named tokenizer', () => {
    expect(tokenizer('white-space-3-grams')('a b c d')).toEqual(['a b c', 'b c d']);
    expect(tokenizer('1-grams')('ab')).toEqual(['a', 'b']);
  });
});
