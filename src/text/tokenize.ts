// Tokenizers: normalized text to the list of tokens MinHash sees.
//   white-space (ws)             runs of white space split words, exactly as Python's str.split()
//   white-space-N-grams, N=2..6  word shingles: N consecutive words joined by one space
//   N-grams, N=1..6              character shingles of N Unicode code points
//   split-words (words)          Unicode word segmentation (ICU, language-aware, no model download)
//   split-sents (sents)          Unicode sentence segmentation
// A text with fewer words or characters than N (but some) yields one token, the whole of it, so that a
// short document still has a signature.

export type Tokenizer = (text: string) => string[];

// The characters Python's str.isspace() accepts, which str.split() splits on.
const PY_WHITE_SPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

export function splitWhiteSpace(text: string): string[] {
  const words = text.split(PY_WHITE_SPACE);
  if (words.length > 0 && words[0] === '') words.shift();
  if (words.length > 0 && words[words.length - 1] === '') words.pop();
  return words;
}

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

const wordSegmenter = new Intl.Segmenter(undefined, { granularity: 'word' });
const sentenceSegmenter = new Intl.Segmenter(undefined, { granularity: 'sentence' });

export function splitWords(text: string): string[] {
  const out: string[] = [];
  for (const s of wordSegmenter.segment(text)) if (s.isWordLike) out.push(s.segment);
  return out;
}

export function splitSentences(text: string): string[] {
  const out: string[] = [];
  for (const s of sentenceSegmenter.segment(text)) {
    const sentence = s.segment.trim();
    if (sentence) out.push(sentence);
  }
  return out;
}

/** Canonical tokenizer names, then the aliases that resolve to them. */
export const TOKENIZER_NAMES: readonly string[] = [
  'white-space',
  ...[2, 3, 4, 5, 6].map((n) => `white-space-${n}-grams`),
  ...[1, 2, 3, 4, 5, 6].map((n) => `${n}-grams`),
  'split-words',
  'split-sents',
];
export const TOKENIZER_ALIASES: Readonly<Record<string, string>> = { ws: 'white-space', words: 'split-words', sents: 'split-sents' };
export const DEFAULT_TOKENIZER = 'white-space';

/** The canonical name for a tokenizer name or alias, or undefined if there is none. */
export function canonicalTokenizerName(name: string): string | undefined {
  const canonical = TOKENIZER_ALIASES[name] ?? name;
  return TOKENIZER_NAMES.includes(canonical) ? canonical : undefined;
}

export function tokenizer(canonicalName: string): Tokenizer {
  if (canonicalName === 'white-space') return splitWhiteSpace;
  if (canonicalName === 'split-words') return splitWords;
  if (canonicalName === 'split-sents') return splitSentences;
  let m = /^white-space-([2-6])-grams$/.exec(canonicalName);
  if (m) {
    const n = Number(m[1]);
    return (text) => wordShingles(splitWhiteSpace(text), n);
  }
  m = /^([1-6])-grams$/.exec(canonicalName);
  if (m) {
    const n = Number(m[1]);
    return (text) => characterShingles(text, n);
  }
  throw new RangeError(`unknown tokenizer "${canonicalName}"`);
}
