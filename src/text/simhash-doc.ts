// The text rules of the simhash-doc scheme, proposed for documents by the draft "Interoperability of
// Similarity Hashing Schemes" (Bryan Newbold, github.com/bnewbold/lsh-interop, 2017):
//   - no zero-width or non-printing characters,
//   - tokens of alphanumeric characters only, numbers left out unless part of an alphanumeric token,
//   - tokens of at least 3 characters.
// The draft leaves open how text is compared across case and Unicode forms; near-dup takes NFKC and
// lowercase (so "Ligature" typed with U+FB01, full-width letters from PDFs and capitalised words match their
// plain forms). Every step is one a Python pipeline makes with the `regex` module and str methods.
// As a normalizer (simhash-doc, simhash-doc-html) the text becomes its tokens joined by single spaces: what
// both sketches compare, what the explorer shows, and what white-space tokens split back exactly.

import { normalizeBounded } from './repair.js';

/**
 * What is removed: the characters Unicode calls default ignorable (zero-width space and joiners, soft
 * hyphen, bidirectional marks, variation selectors, BOM, Hangul fillers, tags...) and the control
 * characters that are not white space (to Python's str.isspace). Removed, not a word break: an invisible
 * character planted inside a word leaves the word whole.
 */
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f]/gu;
/**
 * Text that is printable ASCII and white space needs none of the Unicode steps (NFKC and the removals change
 * nothing there, and letters are A-Z): patterns without Unicode property classes, several times faster.
 */
const NOT_PLAIN_ASCII = /[^\t\n\v\f\r\x20-\x7e]/;
const ASCII_SEPARATORS = /[^a-z0-9]+/;
/**
 * A token: a run of letters, marks (accents, the vowel signs of Indic scripts) and decimal digits. Matched
 * TOKEN_PART code points at a time and the parts that touch joined: the pattern engine keeps a place to come
 * back to for each character of an unbounded run, and runs out of stack on a run of some millions.
 */
const TOKEN_PART = /[\p{L}\p{M}\p{Nd}]{1,4096}/gu;
const LETTER = /\p{L}/u;
/** Shorter tokens (in code points) are left out. */
export const SIMHASH_DOC_MIN_TOKEN = 3;

/** NFKC, without invisible characters, lowercased: the character steps of the rules. */
function foldCharacters(text: string): string {
  if (!NOT_PLAIN_ASCII.test(text)) return text.toLowerCase();
  return normalizeBounded(text, 'NFKC').replace(INVISIBLE, '').toLowerCase();
}

/** The simhash-doc normalizer: the tokens joined by single spaces (simhashDocTokens of it are the same). */
export function simhashDocText(text: string): string {
  return simhashDocTokens(text).join(' ');
}

/** The simhash-doc tokens of a text (markup already removed), in order, repeats kept. */
export function simhashDocTokens(text: string): string[] {
  const out: string[] = [];
  const folded = foldCharacters(text);
  if (!NOT_PLAIN_ASCII.test(folded)) {
    for (const token of folded.split(ASCII_SEPARATORS)) if (token.length >= SIMHASH_DOC_MIN_TOKEN && hasAsciiLetter(token)) out.push(token);
    return out;
  }
  let token = '';
  let end = -1;
  for (const part of folded.matchAll(TOKEN_PART)) {
    if (part.index === end) token += part[0];
    else {
      if (token !== '') keepToken(token, out);
      token = part[0];
    }
    end = part.index + part[0].length;
  }
  if (token !== '') keepToken(token, out);
  return out;
}

function keepToken(token: string, out: string[]): void {
  if (codePoints(token) >= SIMHASH_DOC_MIN_TOKEN && LETTER.test(token)) out.push(token);
}

/** Whether a lowercased ASCII token holds a letter (a-z: every code above the digits). */
function hasAsciiLetter(token: string): boolean {
  for (let i = 0; i < token.length; i++) if (token.charCodeAt(i) >= 97) return true;
  return false;
}

/** Code points of a string (a letter outside the BMP is one character, two UTF-16 units). */
function codePoints(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) n--;
  }
  return n;
}
