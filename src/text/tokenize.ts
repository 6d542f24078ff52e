// Tokenizers: normalized text to the list of tokens MinHash sees, one registry entry each (TOKENIZERS).
//   white-space (ws)             runs of white space split words, exactly as Python's str.split()
//   white-space-N-grams, N=2..6  word shingles: N consecutive words joined by one space
//   N-grams, N=1..6              character shingles of N Unicode code points
//   split-words (words)          Unicode word segmentation (ICU, language-aware, no model download)
//   split-sents (sents)          Unicode sentence segmentation
// A text with fewer words or characters than N (but some) yields one token, the whole of it, so that a
// short document still has a signature. An entry gives its tokens as strings (the reference) and, where it
// can, straight as byte ranges (the signer's path); a test holds the two to the same tokens.
import { Registry } from './registry.js';
import { asciiCharacterShingles, layoutStrings, shingleRanges, type TokenRanges } from './token-ranges.js';
import { splitWhiteSpace } from './white-space.js';

export { splitWhiteSpace };

/** One tokenizer: a text's tokens, as strings. */
export type Tokenizer = (text: string) => string[];

/** Every run of n consecutive words, joined by single spaces; a text of n words or fewer is one shingle. */
export function wordShingles(words: readonly string[], n: number): string[] {
  if (words.length === 0) return [];
  if (words.length <= n) return [words.join(' ')];
  const out = new Array<string>(words.length - n + 1);
  for (let i = 0; i + n <= words.length; i++) {
    let s = words[i];
    for (let j = 1; j < n; j++) s += ' ' + words[i + j];
    out[i] = s;
  }
  return out;
}

const SURROGATE = /[\ud800-\udfff]/;

/** Every run of n consecutive code points (never half a surrogate pair); a text of n or fewer is one shingle. */
export function characterShingles(text: string, n: number): string[] {
  if (text.length === 0) return [];
  if (!SURROGATE.test(text)) {
    // Every code point is one UTF-16 unit: slice directly.
    if (text.length <= n) return [text];
    const out = new Array<string>(text.length - n + 1);
    for (let i = 0; i + n <= text.length; i++) out[i] = text.slice(i, i + n);
    return out;
  }
  const points = Array.from(text);
  if (points.length <= n) return [points.join('')];
  const out = new Array<string>(points.length - n + 1);
  for (let i = 0; i + n <= points.length; i++) out[i] = points.slice(i, i + n).join('');
  return out;
}

// Made on first use: the first Intl.Segmenter of a process loads ICU's break rules, about 9 ms that every
// start of the command line paid, the default white-space tokenizer included. Of one locale, whatever the
// machine's (LANG): ICU tailors its rules by locale (in Greek, ';' ends a sentence), and a text must be cut
// alike wherever it is signed, its query by the proxy or `similar` as its document by annotate. English,
// which the usual machine (C, en_US) had: the same tokens as before there.
const SEGMENTER_LOCALE = 'en';
let segmenters: { word: Intl.Segmenter; sentence: Intl.Segmenter } | undefined;
function segmenterOf(granularity: 'word' | 'sentence'): Intl.Segmenter {
  segmenters ??= {
    word: new Intl.Segmenter(SEGMENTER_LOCALE, { granularity: 'word' }),
    sentence: new Intl.Segmenter(SEGMENTER_LOCALE, { granularity: 'sentence' }),
  };
  return segmenters[granularity];
}

/** The words of a text by Unicode word boundaries (Intl.Segmenter), punctuation and spaces left out. */
export function splitWords(text: string): string[] {
  const out: string[] = [];
  const wordSegmenter = segmenterOf('word');
  for (const piece of segmentPieces(wordSegmenter, text, wordCutBefore)) {
    for (const s of wordSegmenter.segment(piece)) if (s.isWordLike) out.push(s.segment);
  }
  return out;
}

/** The sentences of a text by Unicode sentence boundaries (Intl.Segmenter), trimmed, empty ones left out. */
export function splitSentences(text: string): string[] {
  const out: string[] = [];
  const sentenceSegmenter = segmenterOf('sentence');
  for (const piece of segmentPieces(sentenceSegmenter, text, sentenceCutBefore)) {
    for (const s of sentenceSegmenter.segment(piece)) {
      const sentence = s.segment.trim();
      if (sentence) out.push(sentence);
    }
  }
  return out;
}

/**
 * A text's line breaks as its sentences are cut before its stops are dropped: a line break alone is where a
 * line was wrapped, white space inside a sentence (Unicode's rules end a sentence at each one, so the same
 * text wrapped at another width, or HTML wrapped in its source, had other sentences and nothing in common);
 * a blank line or a paragraph separator ends a paragraph, and stays a line break.
 */
export function unwrapLines(text: string): string {
  return text.replace(LINE_BREAK_RUN, (run) => (endsParagraph(run) ? '\n' : ' '));
}

/** A line break and the white space after it (which may hold more line breaks). */
const LINE_BREAK_RUN = /[\n\r\x85\u2028\u2029]\s*/g;

/** Whether a run of white space holds two line breaks (CR LF is one) or a paragraph separator. */
function endsParagraph(run: string): boolean {
  let breaks = 0;
  for (let i = 0; i < run.length; i++) {
    const c = run.charCodeAt(i);
    if (c === 0x2029) return true;
    if (c === 0x0d && run.charCodeAt(i + 1) === 0x0a) continue;
    if ((c === 0x0a || c === 0x0d || c === 0x85 || c === 0x2028) && ++breaks > 1) return true;
  }
  return false;
}

// Intl.Segmenter in the V8 of Node 20 does work in proportion to the whole text for every segment it gives
// (crbug.com/326176949, fixed in later V8s), so a text of n characters takes time n^2: 84,000 characters of
// prose took 0.6 s to cut into words, and a megabyte would take minutes. A long text is segmented in pieces
// of about PIECE characters, each cut where no rule of the segmentation (Unicode's UAX #29, as ICU has it)
// looks across, so that the segments are those of the whole text.
const PIECE = 1024;
/** How far a cut is looked for; past that, a window with context after it (CUT_WINDOW, CUT_CONTEXT). */
const MAX_PIECE = 4096;
const CUT_WINDOW = 2048, CUT_CONTEXT = 512;

/**
 * The text in pieces to segment one by one: a piece ends at the first place after `piece` characters where
 * `cutBefore` says that the segmentation cannot depend on what is on the other side. A stretch of `maxPiece`
 * characters without one (no real text; a crafted one may be) ends at the last boundary the segmenter finds in
 * a window of the text that has CUT_CONTEXT characters after it: there, and only there, the segments may not
 * be exactly those of the whole text.
 */
export function segmentPieces(segmenter: Intl.Segmenter, text: string, cutBefore: (text: string, i: number) => boolean, piece = PIECE, maxPiece = MAX_PIECE): string[] {
  if (text.length <= 2 * piece) return [text];
  const pieces: string[] = [];
  let start = 0;
  while (text.length - start > 2 * piece) {
    const end = pieceEnd(segmenter, text, start, cutBefore, piece, maxPiece);
    pieces.push(text.slice(start, end));
    start = end;
  }
  if (start < text.length) pieces.push(text.slice(start));
  return pieces;
}

function pieceEnd(segmenter: Intl.Segmenter, text: string, start: number, cutBefore: (text: string, i: number) => boolean, piece: number, maxPiece: number): number {
  const limit = Math.min(text.length, start + maxPiece);
  for (let i = start + piece; i < limit; i++) if (cutBefore(text, i)) return i;
  // No safe place: the segmenter's own boundaries, in a window larger each time one segment fills it.
  for (let window = Math.max(CUT_WINDOW, piece); ; window *= 2) {
    if (start + window >= text.length) return text.length;
    const keep = window - Math.min(CUT_CONTEXT, window / 4);
    let end = 0;
    for (const s of segmenter.segment(text.slice(start, start + window))) {
      const e = s.index + s.segment.length;
      if (e > keep) break;
      end = e;
    }
    if (end > 0) return start + end;
  }
}

// A letter or digit that starts a word or sentence on its own (not a mark or other extending character, which
// the rules attach to what comes before it), at one index.
const STARTS_ON_ITS_OWN = /(?!\p{Grapheme_Extend})[\p{L}\p{N}]/uy;
const UPPER_OR_OTHER_LETTER = /(?!\p{Grapheme_Extend})[\p{Lu}\p{Lt}\p{Lo}]/uy;

function startsAt(pattern: RegExp, text: string, i: number): boolean {
  pattern.lastIndex = i;
  return pattern.test(text);
}

/**
 * Word boundaries (UAX #29 WB rules) that nothing on either side changes: after a white space or an
 * ideographic or Khmer/Myanmar stop, before a letter or digit. White space joins no rule but its own run
 * (WB3d) and the extending characters after it (WB4); those stops join none (their word-break class is Other).
 */
export function wordCutBefore(text: string, i: number): boolean {
  const before = text.charCodeAt(i - 1);
  return WORD_CUT_AFTER.has(before) && startsAt(STARTS_ON_ITS_OWN, text, i);
}
const WORD_CUT_AFTER = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2008, 0x2009, 0x200a,
  0x2028, 0x2029, 0x205f, 0x3000, 0x3001, 0x3002, 0xff01, 0xff1f, 0x17d4, 0x17d5, 0x104a, 0x104b,
]);

/**
 * Sentence boundaries (UAX #29 SB rules) that nothing on either side changes: after a paragraph separator
 * (SB4; no rule looks back across one), and after a sentence end (SB11) of a stop, closing punctuation and
 * spaces, before an upper-case or caseless letter (which no rule joins to a sentence before it: SB8 needs a
 * lower-case one). With no space after a stop, the ideographic stops only (after `.`, "U.S" is one sentence).
 */
export function sentenceCutBefore(text: string, i: number): boolean {
  const before = text.charCodeAt(i - 1);
  if (before === 0x0a || before === 0x85 || before === 0x2028 || before === 0x2029) return true;
  if (before === 0x0d) return text.charCodeAt(i) !== 0x0a;
  if (IDEOGRAPHIC_STOPS.has(before)) return startsAt(UPPER_OR_OTHER_LETTER, text, i);
  if (before !== 0x20 && before !== 0x09) return false;
  // Back over the spaces and closing punctuation (a few: a long run is no sentence end worth the search).
  let j = i - 1;
  const floor = Math.max(0, i - 16);
  while (j > floor && (text.charCodeAt(j - 1) === 0x20 || text.charCodeAt(j - 1) === 0x09)) j--;
  while (j > floor && CLOSING.has(text.charCodeAt(j - 1))) j--;
  return j > 0 && SENTENCE_STOPS.has(text.charCodeAt(j - 1)) && startsAt(UPPER_OR_OTHER_LETTER, text, i);
}
const IDEOGRAPHIC_STOPS = new Set([0x3002, 0xff01, 0xff1f]);
const SENTENCE_STOPS = new Set([0x2e, 0x21, 0x3f, 0x3002, 0xff01, 0xff1f]);
const CLOSING = new Set([0x22, 0x27, 0x29, 0x5d, 0x7d, 0xbb, 0x2019, 0x201d, 0x300d, 0x300f, 0xff09]);

/**
 * Normalized text to its tokens as byte ranges: from its words, laid out already (`words`), or into `out`.
 * Undefined when this fast path does not apply to this text (then the tokens' strings are laid out).
 */
export type TokenLayout = (clean: string, words: TokenRanges, out: TokenRanges) => TokenRanges | undefined;

/** One tokenizer. */
export interface TokenizerEntry {
  /** The name a condenser spec and the params keyword write. */
  readonly name: string;
  readonly aliases?: readonly string[];
  /** Normalized text to its tokens: the reference every fast path gives the same tokens as. */
  readonly tokenize: Tokenizer;
  /** The fast path: the tokens as byte ranges without making their strings. */
  readonly layout?: TokenLayout;
  /** The tokens are the words themselves: the kernels sign a text's words where they lay them out. */
  readonly words?: boolean;
  /**
   * Cuts the text into its pieces before a normalizer that drops punctuation sees it (sentences end at
   * punctuation): each piece is normalized apart, one a line, and `tokenize` finds them again.
   */
  readonly cutFirst?: Tokenizer;
}

/** Word shingles of n words: white-space-N-grams. */
export function wordGramTokenizer(n: number): TokenizerEntry {
  return {
    name: `white-space-${n}-grams`,
    tokenize: (text) => wordShingles(splitWhiteSpace(text), n),
    layout: (_clean, words, out) => {
      shingleRanges(words, n, out);
      return out;
    },
  };
}

/** Character shingles of n code points: N-grams (cut as bytes at once when the text is all ASCII). */
export function characterGramTokenizer(n: number): TokenizerEntry {
  return {
    name: `${n}-grams`,
    tokenize: (text) => characterShingles(text, n),
    layout: (clean, _words, out) => (asciiCharacterShingles(clean, n, out) ? out : undefined),
  };
}

/** The tokenizers, by name and alias; registerTokenizer adds one. */
export const TOKENIZERS = new Registry<TokenizerEntry>('tokenizers', [
  { name: 'white-space', aliases: ['ws'], tokenize: splitWhiteSpace, layout: (_clean, words) => words, words: true },
  ...[2, 3, 4, 5, 6].map(wordGramTokenizer),
  ...[1, 2, 3, 4, 5, 6].map(characterGramTokenizer),
  { name: 'split-words', aliases: ['words'], tokenize: splitWords },
  { name: 'split-sents', aliases: ['sents'], tokenize: splitSentences, cutFirst: (text) => splitSentences(unwrapLines(text)) },
]);

/** Canonical tokenizer names (the registry's live list), then the aliases that resolve to them. */
export const TOKENIZER_NAMES: readonly string[] = TOKENIZERS.names;
/** Other names of tokenizers, each with the name it stands for. */
export const TOKENIZER_ALIASES: Readonly<Record<string, string>> = TOKENIZERS.aliases;
/** The tokenizer unless given: words split at white space. */
export const DEFAULT_TOKENIZER = 'white-space';

/** Adds a tokenizer: its name can then be given in a condenser spec, and is read back from params. */
export function registerTokenizer(entry: TokenizerEntry): TokenizerEntry {
  return TOKENIZERS.add(entry);
}

/** The canonical name for a tokenizer name or alias, or undefined if there is none. */
export function canonicalTokenizerName(name: string): string | undefined {
  return TOKENIZERS.get(name)?.name;
}

/** The entry of a tokenizer name (or alias); RangeError for an unknown one. */
export function tokenizerEntry(name: string): TokenizerEntry {
  const entry = TOKENIZERS.get(name);
  if (!entry) throw new RangeError(`unknown tokenizer "${name}"`);
  return entry;
}

/** The tokenizer of that (canonical) name. */
export function tokenizer(canonicalName: string): Tokenizer {
  return tokenizerEntry(canonicalName).tokenize;
}

/**
 * A tokenizer's tokens as byte ranges, always: its fast path where it applies, else its strings laid out.
 * The buffers of `out` are reused between calls.
 */
export function tokenLayout(name: string): (clean: string, words: TokenRanges, out: TokenRanges) => TokenRanges {
  const { tokenize, layout } = tokenizerEntry(name);
  return (clean, words, out) => {
    const laid = layout?.(clean, words, out);
    if (laid) return laid;
    layoutStrings(tokenize(clean), out);
    return out;
  };
}
