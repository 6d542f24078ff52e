import anyAscii from 'any-ascii';
import fc from 'fast-check';
import { Parser, Tokenizer } from 'htmlparser2';
import { describe, expect, it, vi } from 'vitest';
import { decodeLines } from '../../src/text/decode.js';
import { escapeUnclosedTags, htmlParserClasses, stripHtml } from '../../src/text/html.js';
import { normalizer, normalizeText } from '../../src/text/normalize.js';
import { createSigner } from '../../src/signature.js';
import { minhashJaccard } from '../../src/sketch/minhash.js';
import { simhashDocTokens } from '../../src/text/simhash-doc.js';
import { fixMojibake, normalizeBounded, repairUnicode } from '../../src/text/repair.js';
import { characterShingles, segmentPieces, sentenceCutBefore, splitSentences, splitWhiteSpace, splitWords, tokenizer, wordCutBefore, wordShingles } from '../../src/text/tokenize.js';

const { LinearParser, TextSkippingTokenizer } = htmlParserClasses();

describe('normalizers', () => {
  it('norm transliterates, lowercases, drops punctuation and currency, joins lines', () => {
    expect(normalizeText('Crème Brûlée costs €5.50!\nNaïve   façade — “quoted”')).toBe('creme brulee costs 550 naive facade quoted');
  });

  it('norm repairs UTF-8 read as Windows-1252 before transliterating', () => {
    expect(fixMojibake('cafÃ© and donâ€™t')).toBe('café and don’t');
    expect(normalizeText('cafÃ© Ã¼ber')).toBe(normalizeText('café über'));
  });

  it('norm makes each character of a script written without spaces a word (Chinese, Japanese, Thai, ...), and only those', () => {
    expect(normalizeText('東京都 日本語のテキスト')).toBe('dong jing dou ri ben yu no te ki su to');
    expect(normalizeText('ภาษาไทย and ລາວ')).toBe('ph a s a ai th y and l a v');
    expect(normalizeText('한국어 텍스트 naïve')).toBe('hangugeo tegseuteu naive'); // Korean has spaces between words
    expect(normalizeText('价格100€，好')).toBe('jia ge 100 hao');
  });

  it('a Chinese paragraph and its copy with a character changed are near-duplicates at the defaults; another paragraph is not', () => {
    const signer = createSigner({});
    const estimate = (a: string, b: string) => minhashJaccard(signer(a).minhash, signer(b).minhash);
    const news = '近日，国家统计局发布了最新的经济数据。数据显示，今年前三季度国内生产总值同比增长百分之五点二，增速比上半年加快零点一个百分点。专家表示，经济运行总体回升向好，但仍面临一些挑战。';
    const edited = news.replace('五点二', '五点三');
    const other = '昨天下午，市气象台发布暴雨蓝色预警信号。预计未来六小时内，本市大部分地区将出现强降雨天气，局部地区伴有雷电和短时大风。请市民注意防范，尽量减少外出。';
    expect(signer(news).tokens).toBeGreaterThan(50); // a shingle per character, not one per paragraph
    expect(estimate(news, edited)).toBeGreaterThanOrEqual(0.8); // (0 when a paragraph was one word)
    expect(estimate(news, other)).toBeLessThan(0.2);
  });

  it('half-width katakana is read as the full-width, its voiced sound marks with the letter they mark', () => {
    expect(normalizeText('ｶﾞｲﾄﾞﾌﾞｯｸ ﾊﾟｰﾃｨｰ｡')).toBe(normalizeText('ガイドブック パーティー。'));
    expect(normalizeText('ｶﾞｲﾄﾞ')).not.toBe(normalizeText('カイト')); // (the marks were dropped: guide read as kite)
  });

  it('a word hyphenated at a line end is one word again, so that a reflowed copy signs as its original', () => {
    for (const name of ['norm', 'norm-html'] as const) {
      const norm = normalizer(name);
      expect(norm('an exam-\nple of well-\r\n  known text')).toBe(norm('an example of well-known text'));
      expect(norm('Ünter-\nsuchung')).toBe(norm('Üntersuchung'));
      // A blank line ends a paragraph, and a dash that is no hyphen stays a break.
      expect(norm('first-\n\nsecond and a --\nb and x -\ny')).toBe('first second and a b and x y');
    }
    const text = 'Near-duplicate detection finds docu-\nments whose text was re-\nflowed or extrac-\nted from print.\n'.repeat(20);
    const reflowed = text.replace(/-\n/g, '').replace(/\n/g, ' ');
    const signer = createSigner({ condenser: 'white-space-4-grams' });
    expect(minhashJaccard(signer(text).minhash, signer(reflowed).minhash)).toBe(1); // (0.47 with the words split)
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
    expect(stripHtml('a &amp; b <p>c</p> d &lt e')).toBe('a & b \n\nc\n\n d < e');
  });

  it('the linear parser gives the stock Parser\'s callbacks, in order, on any nesting of elements', () => {
    const events = (Kind: typeof Parser, html: string): unknown[][] => {
      const seen: unknown[][] = [];
      const record = (name: string) => (...args: unknown[]) => seen.push([name, ...args]);
      const names = ['onopentagname', 'onopentag', 'onattribute', 'onclosetag', 'ontext', 'oncomment', 'oncdatastart', 'oncdataend', 'onprocessinginstruction', 'onend'];
      const parser = new Kind(Object.fromEntries(names.map((n) => [n, record(n)])), { decodeEntities: true, lowerCaseTags: true, recognizeSelfClosing: true });
      parser.write(html);
      parser.end();
      parser.parseComplete(html); // and again, after a reset
      return seen;
    };
    const pieces = ['<div>', '</div>', '<p>', '</p>', '<b>', '</b>', '<br>', '</br>', '<br/>', '<hr>', '<li>', '<ul>', '</ul>', '<table>', '<tr>', '<td>', '</tr>',
      '<form>', '</form>', '<select>', '<option>', '<input>', '<svg>', '</svg>', '<math>', '</math>', '<mi>', '</mi>', '<foreignObject>', '</foreignobject>',
      '<clipPath>', '</clippath>', '<title>', '</title>', '<desc>', '<image>', '<img/>', '<script>', '</script>', '<style>', '<x/>', '</x>', '<div/>',
      '<![CDATA[c]]>', '<!-- c -->', '<?pi?>', '<a href="u">', '</a>', 'text', ' ', '&amp;', '<', '>'];
    // Deep documents too: past 64 open elements (or foreign contexts) the linear parser keeps them its own way.
    const deep = ['', '<span>'.repeat(70), `<math>${'<mi>'.repeat(70)}`, `<svg>${'<g>'.repeat(70)}`, `${'<div>'.repeat(40)}<svg><foreignObject>${'<div>'.repeat(40)}`];
    fc.assert(
      fc.property(fc.constantFrom(...deep), fc.array(fc.constantFrom(...pieces), { maxLength: 60 }), (prefix, parts) => {
        const html = prefix + parts.join('');
        expect(events(LinearParser, html)).toEqual(events(Parser, html));
      }),
      { numRuns: 3000 },
    );
  });

  it('unclosed tags are escaped as before, searching each stretch once', () => {
    // The earlier search, from every opener: quadratic, but plainly right.
    const reference = (html: string): string => {
      const out: string[] = [];
      let last = 0;
      let close = html.indexOf('>');
      for (let i = html.indexOf('<'); i >= 0; ) {
        if (html.startsWith('<!--', i)) {
          const end = html.indexOf('-->', i + 4);
          if (end >= 0) {
            i = html.indexOf('<', end + 3);
            continue;
          }
        }
        if (close !== -1 && close < i) close = html.indexOf('>', i);
        const next = html.indexOf('<', i + 1);
        // A name of letters that is not an element's (of the names these pieces make, only a and b are HTML's, and
        // a-... a custom element's), or `</` before no letter.
        const name = /^<\/?([A-Za-z][^\s/>]*)/.exec(html.slice(i, next === -1 ? undefined : next))?.[1];
        const notHtml = (name !== undefined && !['a', 'b'].includes(name.toLowerCase()) && !/^[a-z][a-z0-9._]*(?:-[a-z0-9._-]*|:[a-z][a-z0-9._-]*)$/i.test(name)) || /^<\/(?![A-Za-z])/.test(html.slice(i));
        if (close === -1 || (next !== -1 && next < close) || notHtml) {
          out.push(html.slice(last, i), '&lt;');
          last = i + 1;
        }
        i = next;
      }
      return last === 0 ? html : out.join('') + html.slice(last);
    };
    fc.assert(
      fc.property(fc.array(fc.constantFrom('<', '>', '<!--', '-->', '--', '-', '!', 'a', 'B', ' ', '<b>', '</b>', '<x>', '</'), { maxLength: 40 }), (parts) => {
        const html = parts.join('');
        expect(escapeUnclosedTags(html)).toBe(reference(html));
      }),
      { numRuns: 5000 },
    );
  });

  it('a run of more than 30 combining marks is normalized 30 at a time; other text as String.normalize does', () => {
    const marks = ['\u0301', '\u0316', '\u0308', '\u0327', '\u093c', '\u0bbe', '\uff9e', '\u{1d165}', '\u{e0100}'];
    const pieces = [...marks, 'a', 'e', 'ﬁ', 'ｶ', '\u1100', '\u1161', '한', '🙂', ' ', 'Å'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 80 }), (parts) => {
        const text = parts.join('');
        const longRun = /[\p{M}\uff9e\uff9f]{31}/u.test(text);
        for (const form of ['NFC', 'NFKC'] as const) {
          if (!longRun) expect(normalizeBounded(text, form)).toBe(text.normalize(form));
          else expect(normalizeBounded(text, form).normalize('NFD')).toHaveLength(text.normalize('NFD').length);
        }
      }),
      { numRuns: 3000 },
    );
    const zalgo = 'Z' + '\u0301\u0316'.repeat(40) + 'end';
    expect(normalizeBounded(zalgo, 'NFC')).toBe([zalgo.slice(0, 31), zalgo.slice(31, 61), zalgo.slice(61)].map((p) => p.normalize('NFC')).join(''));
    expect(normalizeBounded('a' + '\u0301'.repeat(30) + 'b', 'NFC')).toBe(('a' + '\u0301'.repeat(30) + 'b').normalize('NFC'));
  });

  it('simhash-doc keeps a token of any length whole (matched in parts, the parts that touch joined)', () => {
    const long = 'é'.repeat(10000) + '\u{1d400}'.repeat(5000);
    expect(simhashDocTokens(`${long} ab été 東京都 ${long}x`)).toEqual([long.normalize('NFKC').toLowerCase(), 'été', '東京都', `${long.normalize('NFKC').toLowerCase()}x`]);
  });

  it('decodes a batch line by line: ASCII lines, others, invalid UTF-8 counted in its line only', () => {
    const bytes = Buffer.concat([Buffer.from('plain\ncafé\n\n'), Buffer.from([0x61, 0xff, 0x0a]), Buffer.from('\ufffd kept\nlast')]);
    expect(decodeLines(bytes)).toEqual({ lines: ['plain', 'café', '', 'a\ufffd', '\ufffd kept', 'last'], replaced: 1 });
    expect(decodeLines(Buffer.from('one\n'))).toEqual({ lines: ['one'], replaced: 0 });
    expect(decodeLines(new Uint8Array(0))).toEqual({ lines: [], replaced: 0 });
  });

  it('norm on non-ASCII text equals its definition: repair, currency to spaces, half-width katakana to full, spaceless scripts spaced, transliteration, then the ASCII pass', () => {
    // The definition written out plainly, with the ASCII pass's table from its description.
    const fold = (text: string) =>
      Array.from(text, (c) => (c <= ' ' || c === '\x7f' ? ' ' : /[!-/:-@[-`{-~]/.test(c) ? '' : c.toLowerCase()))
        .join('')
        .trim()
        .replace(/ +/g, ' ');
    const spaceless = /[\p{sc=Han}\p{sc=Hiragana}\p{sc=Katakana}\p{sc=Thai}\p{sc=Lao}\p{sc=Khmer}\p{sc=Myanmar}]/gu;
    const reference = (text: string) =>
      fold(repairUnicode(text).replace(/\p{Sc}/gu, ' ').replace(/[\uff61-\uff9f]+/g, (k) => k.normalize('NFKC')).replace(spaceless, (c) => ` ${c} `).replace(/[^\x00-\x7f]+/g, (run) => anyAscii(run)));
    const pieces = ['a', 'Word', ' ', '  ', '\n', '.', ',', '$', '€', '£', '¥', '₹', '＄', '\u{1ECB0}', 'é', 'ü', 'e\u0301', 'Ã©', 'â€™', '日本', 'のテ', 'ｶﾞｰ', 'ﾞ', 'ｶ', 'ﾊﾟ｡', 'ไทย', '🙂',
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

  it('words and sentences are cut the same whatever the locale of the machine (a query signed elsewhere matches)', async () => {
    // A machine whose locale is Greek (LANG=el_GR.UTF-8), where ';' is a question mark that ends a sentence.
    const Stock = Intl.Segmenter;
    class GreekByDefault extends Stock {
      constructor(locales?: Intl.LocalesArgument, options?: Intl.SegmenterOptions) {
        super(locales ?? 'el', options);
      }
    }
    const text = 'Τι κάνεις; Καλά. Hello:world';
    const here = { sentences: splitSentences(text), words: splitWords(text) };
    vi.resetModules();
    vi.stubGlobal('Intl', { ...Intl, Segmenter: GreekByDefault });
    try {
      const there = await import('../../src/text/tokenize.js');
      expect({ sentences: there.splitSentences(text), words: there.splitWords(text) }).toEqual(here);
    } finally {
      vi.unstubAllGlobals();
      vi.resetModules();
    }
  });

  it('a long text is segmented in pieces, cut only where the segments are those of the whole text', () => {
    const whole = (segmenter: Intl.Segmenter, text: string) => Array.from(segmenter.segment(text), (s) => [s.segment, s.isWordLike]);
    const inPieces = (segmenter: Intl.Segmenter, text: string, cut: (text: string, i: number) => boolean) =>
      // Pieces of 2 characters at least, a cut looked for as far as the text goes: every place the rule allows is used.
      segmentPieces(segmenter, text, cut, 2, 1e9).flatMap((piece) => whole(segmenter, piece));
    const words = new Intl.Segmenter(undefined, { granularity: 'word' });
    const sentences = new Intl.Segmenter(undefined, { granularity: 'sentence' });
    const pieces = ['a', 'Word', 'x1', '42', '3.5', ' ', '  ', '\t', '\n', '\r', '\r\n', '\u3000', '\u00a0', '\u202f', '.', ',', '!', '?', "'", '"', ')', '(',
      ':', '-', '_', '\u0301', '\u200d', '\u200b', '\u00ad', '日本語', '我喜欢吃苹果', '。', '、', '！', '？', '「', '」', '，', '．', 'ｶﾞ', '\uff9e', 'カタカナ', 'ひらがな',
      'ខ្មែរ', '។', 'မြန်မာ', '။', 'ລາວ', 'ไทย', '한국어', 'עברית', '״', 'العربية', '🙂', '👍🏽', '👨‍👩‍👧', '🇫🇷', '🇩🇪', 'U.S.', 'etc.', 'Mr.', 'É', 'é', 'Ω'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), (parts) => {
        const text = parts.join('');
        expect(inPieces(words, text, wordCutBefore)).toEqual(whole(words, text));
        expect(inPieces(sentences, text, sentenceCutBefore)).toEqual(whole(sentences, text));
      }),
      { numRuns: 3000 },
    );
    // Past the longest stretch without a cut, the window's boundaries: the pieces are still the whole text.
    const blob = 'x'.repeat(20000) + ' tail';
    expect(segmentPieces(words, blob, wordCutBefore).join('')).toBe(blob);
    expect(splitWords(blob)).toEqual(['x'.repeat(20000), 'tail']);
    const prose = 'The quick brown fox jumps over the lazy dog. Then it rests!\n'.repeat(400);
    expect(splitWords(prose)).toEqual(whole(words, prose).filter(([, w]) => w).map(([s]) => s));
    expect(splitSentences(prose)).toEqual(whole(sentences, prose).map(([s]) => (s as string).trim()).filter(Boolean));
  });

  it('resolves every named tokenizer', () => {
    expect(tokenizer('white-space-3-grams')('a b c d')).toEqual(['a b c', 'b c d']);
    expect(tokenizer('1-grams')('ab')).toEqual(['a', 'b']);
  });
});
