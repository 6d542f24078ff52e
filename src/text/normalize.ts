// Normalizers: what text goes through before it is cut into tokens.
//   none       the text as given
//   norm       Unicode repaired, currency symbols removed, transliterated to ASCII (each character of a
//              script written without spaces, such as Chinese, Japanese or Thai, a word of its own),
//              lowercased, line breaks to spaces (a word hyphenated at a line's end joined), punctuation
//              removed, runs of white space collapsed
//   norm-html  markup removed first (the default: harmless on plain text, essential on web pages)
//   simhash-doc       the tokens of the simhash-doc scheme joined by single spaces (text/simhash-doc.ts):
//                     NFKC, lowercased, letters of every script kept, numbers and short words left out
//   simhash-doc-html  markup removed first (the simhash-doc preset's)
// Each is one entry of NORMALIZER_REGISTRY: its function, and the fast path the signer takes where it has one.
import { createRequire } from 'node:module';
import type AnyAscii from 'any-ascii';
import { stripHtml } from './html.js';
import { Registry } from './registry.js';
import { normalizeBounded, repairUnicode } from './repair.js';
import { simhashDocText } from './simhash-doc.js';

/** The normalizers a condenser spec may name. */
export type NormalizerName = 'none' | 'norm' | 'norm-html' | 'simhash-doc' | 'simhash-doc-html';
/** The normalizer unless given: norm with the markup removed first, harmless on plain text and needed on web pages. */
export const DEFAULT_NORMALIZER: NormalizerName = 'norm-html';

// any-ascii's tables (half a megabyte of source) are loaded at the first text that needs them, so that ASCII
// text never pays for them: synchronously where Node can require an ES module (20.19 and later), before
// that with this module.
let anyAsciiLoaded: typeof AnyAscii | undefined = process.features.require_module ? undefined : (await import('any-ascii')).default;
function anyAscii(text: string): string {
  anyAsciiLoaded ??= (createRequire(import.meta.url)('any-ascii') as { default: typeof AnyAscii }).default;
  return anyAsciiLoaded(text);
}

// Currency symbols become word breaks and other non-ASCII text is transliterated: both are done run by
// run, as a pattern with \p{} scans whole texts several times slower than one for non-ASCII runs. The
// only ASCII currency symbol is "$".
const CURRENCY = /\p{Sc}/u;
const NON_ASCII_RUN_OR_DOLLAR = /[^\x00-\x7f]+|\$/g;

// What the final ASCII pass does with each code: keep, lowercase, drop (punctuation and symbols), or
// turn into a word break (white space and control characters, line breaks included).
const KEEP = 0, LOWER = 1, DROP = 2, BREAK = 3;
const ASCII_ACTION = new Uint8Array(128).map((_, c) =>
  c <= 32 || c === 127 ? BREAK : c >= 65 && c <= 90 ? LOWER : /[!-/:-@[-`{-~]/.test(String.fromCharCode(c)) ? DROP : KEEP,
);
let asciiOut = new Uint8Array(1 << 16);

/** Lowercases, drops punctuation and collapses white space of an all-ASCII string, in one pass. */
function foldAscii(text: string): string {
  if (asciiOut.length < text.length) asciiOut = new Uint8Array(text.length * 2);
  const out = asciiOut;
  // A native copy first: reading bytes is faster than charCodeAt on the strings regex replacement builds.
  const length = Buffer.from(out.buffer, out.byteOffset, out.length).write(text, 0, 'latin1');
  let n = 0;
  let pendingSpace = false;
  for (let i = 0; i < length; i++) {
    const c = out[i];
    const action = ASCII_ACTION[c & 0x7f];
    if (action === KEEP || action === LOWER) {
      if (pendingSpace) {
        if (n > 0) out[n++] = 32;
        pendingSpace = false;
      }
      out[n++] = action === LOWER ? c + 32 : c;
    } else if (action === BREAK) pendingSpace = true;
  }
  return Buffer.from(out.buffer, out.byteOffset, n).toString('latin1');
}

// On ASCII text the whole of normalizeText is one byte-wise pass: repairUnicode only drops the ASCII
// control characters it counts as junk (a drop, like punctuation's), and the only ASCII currency symbol
// is "$" (a word break); transliteration and NFC change nothing.
const ASCII_NORMALIZE = ASCII_ACTION.map((action, c) =>
  (c <= 8 || c === 11 || (c >= 14 && c <= 31) || c === 127) ? DROP : c === 36 ? BREAK : action,
);

// Runs of non-ASCII characters repeat (quotes, dashes, accented letters, a script's common words): their
// transliterations are kept, in a table cleared when it grows large. A currency symbol in a run splits it
// into runs transliterated apart, as if it had been a space from the start.
const transliterations = new Map<string, string>();
function transliterate(run: string): string {
  if (run === '$') return ' ';
  // Only short runs are kept: a longer one may be a view of its whole document (V8 slices from 13 characters).
  if (run.length > 12) return asciiOf(run);
  let ascii = transliterations.get(run);
  if (ascii === undefined) {
    if (transliterations.size >= 4096) transliterations.clear();
    ascii = asciiOf(run);
    transliterations.set(run, ascii);
  }
  return ascii;
}

/**
 * The scripts written without spaces between words: Chinese, Japanese, Thai, Lao, Khmer, Burmese. Each of
 * their characters becomes a word of its own, so that word shingles of such text are character shingles
 * (the usual unit for near-duplicates there); transliterated whole, a paragraph was one word, and a copy
 * with one character changed shared nothing with it.
 */
const SPACELESS_CHAR = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]/gu;

/**
 * Half-width katakana and its punctuation (U+FF61-U+FF9F): its voiced sound marks are characters of their own
 * (ｶﾞ is ｶ and ﾞ), which transliterate to nothing; NFKC makes them the full-width letters they mark (ガ).
 */
const HALF_WIDTH_KATAKANA = /[\uff61-\uff9f]/;
const HALF_WIDTH_KATAKANA_RUN = /[\uff61-\uff9f]+/g;

/** A run of non-ASCII text in ASCII: currency symbols as word breaks, each character of a spaceless script a word. */
function asciiOf(run: string): string {
  const full = HALF_WIDTH_KATAKANA.test(run) ? run.replace(HALF_WIDTH_KATAKANA_RUN, (katakana) => normalizeBounded(katakana, 'NFKC')) : run;
  const spaced = full.replace(SPACELESS_CHAR, (c) => ` ${c} `);
  return CURRENCY.test(spaced) ? spaced.split(CURRENCY).map((part) => anyAscii(part)).join(' ') : anyAscii(spaced);
}

/**
 * A faster fold of the same tables, given by the caller (the WebAssembly kernels, which this module does
 * not know): each byte of `text` is kept, lowercased, dropped or turned into a word break as `table`
 * says. With `asciiOnly`, undefined for a text that is not all ASCII, or, where the table goes on past its
 * 128 actions with stand-ins for non-ASCII punctuation (punctuationStandIns), for a text with a non-ASCII
 * character that has none.
 */
export type AsciiFolder = (text: string, table: Uint8Array, asciiOnly: boolean) => string | undefined;

/**
 * Stand-ins for non-ASCII punctuation, 192 bytes (U+0080-U+00BF, then U+2000-U+207F; 0 for a character that
 * has none): for a character that normalizeText's Unicode path turns into nothing or into a word break,
 * whatever stands beside it, an ASCII byte that the ASCII pass treats the same way. Derived from that path
 * itself: the character is kept as it is by repairUnicode (no control character, unchanged by NFC between
 * letters), is no currency symbol and no mark, and transliterates to punctuation and white space alone.
 * Typographic quotes, dashes, ellipses and no-break spaces get one: a text whose only non-ASCII characters
 * are such punctuation (much of what news sites publish) is then normalized by the kernels in one pass, as
 * an ASCII text is (test/unit/sign-speed.test.ts holds the two paths to the same result).
 */
export function derivePunctuationStandIns(): Uint8Array {
  const standIns = new Uint8Array(192);
  for (let k = 0; k < standIns.length; k++) {
    const c = String.fromCharCode(k < 64 ? 0x80 + k : 0x2000 + (k - 64));
    if (CURRENCY.test(c) || /\p{M}/u.test(c) || repairUnicode(`a${c}a${c}`) !== `a${c}a${c}`) continue;
    let action = DROP;
    for (const ascii of anyAscii(c)) {
      const a = ascii.charCodeAt(0) < 128 ? ASCII_ACTION[ascii.charCodeAt(0)] : KEEP;
      if (a === BREAK) action = BREAK;
      else if (a !== DROP) action = KEEP;
      if (action === KEEP) break;
    }
    if (action !== KEEP) standIns[k] = action === BREAK ? 0x20 : 0x21; // a space breaks, "!" is dropped
  }
  return standIns;
}

/**
 * derivePunctuationStandIns() written out, a character per code point ("." for none): deriving it took 4 ms
 * of every start. test/unit/sign-speed.test.ts derives it again and compares.
 */
export const PUNCTUATION_STAND_INS =
  '................................ !....!.!..!!!.!.!..!..!!..!...!' +
  '..         !!!!!!!!!!!!!!!!!!!!!!!!!!!!!  !!!!! ..!!!!!!!!!!!!!!' +
  '!!!!!!!!!!!.!!!!!!!!!!!!!!!!!!! !!!!!!!!!!!!!!!!..!!......!!!!!.';

let asciiNormalizeTable: Uint8Array | undefined;
/** ASCII_NORMALIZE followed by the punctuation stand-ins: the table the kernels' fold is given (AsciiFolder). */
function asciiNormalizeWithPunctuation(): Uint8Array {
  if (!asciiNormalizeTable) {
    asciiNormalizeTable = new Uint8Array(128 + 192);
    asciiNormalizeTable.set(ASCII_NORMALIZE);
    for (let k = 0; k < 192; k++) {
      const standIn = PUNCTUATION_STAND_INS.charCodeAt(k);
      asciiNormalizeTable[128 + k] = standIn === 0x2e ? 0 : standIn;
    }
  }
  return asciiNormalizeTable;
}

/** The norm normalizer (the file header says what it does), by the kernels' ASCII pass when given one. */
export function normalizeText(text: string, fast?: AsciiFolder): string {
  if (fast) {
    const folded = fast(text, asciiNormalizeWithPunctuation(), true);
    if (folded !== undefined) return folded;
  }
  const out = repairUnicode(text).replace(NON_ASCII_RUN_OR_DOLLAR, transliterate);
  return fast ? fast(out, ASCII_ACTION, false)! : foldAscii(out);
}

/**
 * norm and norm-html in two steps, normalizer(name)(text) = rest(first(text)): `first` is the
 * markup removal of norm-html (none for norm), and on an all-ASCII text (or one whose only non-ASCII
 * characters are punctuation with stand-ins) `rest` is a single pass of `asciiTable` (as AsciiFolder
 * takes it), which a caller that holds the bytes anyway can make itself.
 */
export interface SplitNormalizer {
  first: (text: string) => string;
  asciiTable: Uint8Array;
  rest: (text: string) => string;
}

/** One normalizer. */
export interface NormalizerEntry {
  /** The name a condenser spec and the params keyword write. */
  readonly name: NormalizerName;
  readonly aliases?: readonly string[];
  /** The normalizer, given the kernels' faster ASCII fold where there is one. */
  readonly normalize: (fast?: AsciiFolder) => (text: string) => string;
  /** The fast path: its two steps, when its last is the ASCII pass the kernels can make where they sign. */
  readonly split?: (fast?: AsciiFolder) => SplitNormalizer;
  /** It gives the simhash-doc scheme's tokens, joined by single spaces (the simhash-doc SimHash reads them as they are). */
  readonly simhashDocTokens?: boolean;
}

const HYPHEN_AT_LINE_END = /(\p{L})-\r?\n[ \t]*(?=\p{L})/gu;
/**
 * A word hyphenated at the end of a line (`exam-` then `ple` on the next, as text taken from PDF or print has
 * it) made one word again, as `example` and `well-known` are: a reflowed copy then breaks its lines elsewhere
 * and still signs the same. Only a hyphen between letters followed by one line break joins (a blank line is a
 * paragraph's end). Texts without a hyphen before a line break pay a native search for each line break
 * (0.4 us for 2.5 KB of 30 lines, about 1% of signing it; a pattern or `includes` over the text costs 2x).
 */
export function joinHyphenatedLines(text: string): string {
  return hyphenBeforeLineBreak(text) ? text.replace(HYPHEN_AT_LINE_END, '$1') : text;
}

function hyphenBeforeLineBreak(text: string): boolean {
  for (let i = text.indexOf('\n'); i > 0; i = text.indexOf('\n', i + 1)) {
    const before = text.charCodeAt(i - 1);
    if (before === 0x2d || (before === 0x0d && text.charCodeAt(i - 2) === 0x2d)) return true;
  }
  return false;
}

/** norm, with markup removed first or not; words hyphenated at a line's end joined. */
function asciiFolding(name: 'norm' | 'norm-html', markup: (text: string) => string): NormalizerEntry {
  const first = (text: string) => joinHyphenatedLines(markup(text));
  return {
    name,
    normalize: (fast) => (text) => normalizeText(first(text), fast),
    split: (fast) => ({ first, asciiTable: asciiNormalizeWithPunctuation(), rest: (text) => normalizeText(text, fast) }),
  };
}

/** The normalizers, by name. */
export const NORMALIZER_REGISTRY = new Registry<NormalizerEntry>('normalizers', [
  { name: 'none', normalize: () => (text) => text },
  asciiFolding('norm', (text) => text),
  asciiFolding('norm-html', stripHtml),
  { name: 'simhash-doc', normalize: () => simhashDocText, simhashDocTokens: true },
  { name: 'simhash-doc-html', normalize: () => (text) => simhashDocText(stripHtml(text)), simhashDocTokens: true },
]);
/** Every normalizer, by name, in the order they were registered. */
export const NORMALIZERS = NORMALIZER_REGISTRY.names as readonly NormalizerName[];

/** The entry of a normalizer name; RangeError for an unknown one. */
export function normalizerEntry(name: string): NormalizerEntry {
  const entry = NORMALIZER_REGISTRY.get(name);
  if (!entry) throw new RangeError(`unknown normalizer "${name}"`);
  return entry;
}

/**
 * The normalizer in two steps when it has them (SplitNormalizer), so that the kernels can make the last one over bytes
 * they hold; undefined otherwise.
 */
export function splitNormalizer(name: NormalizerName, fast?: AsciiFolder): SplitNormalizer | undefined {
  return normalizerEntry(name).split?.(fast);
}

/** The normalizer of that name, as one function from text to text. */
export function normalizer(name: NormalizerName, fast?: AsciiFolder): (text: string) => string {
  return normalizerEntry(name).normalize(fast);
}
