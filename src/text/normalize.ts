// Normalizers: what text goes through before it is cut into tokens.
//   none       the text as given
//   norm       Unicode repaired, currency symbols removed, transliterated to ASCII, lowercased, line
//              breaks to spaces, punctuation removed, runs of white space collapsed to one space
//   norm-html  markup removed first (the default: harmless on plain text, essential on web pages)
import anyAscii from 'any-ascii';
import { stripHtml } from './html.js';
import { repairUnicode } from './repair.js';

export type NormalizerName = 'none' | 'norm' | 'norm-html';
export const NORMALIZERS: readonly NormalizerName[] = ['none', 'norm', 'norm-html'];
export const DEFAULT_NORMALIZER: NormalizerName = 'norm-html';

const CURRENCY = /\p{Sc}/gu;
const NON_ASCII = /[^\x00-\x7f]+/g;
// After transliteration only ASCII is left: its punctuation and symbols, and any \p{P} that any-ascii kept.
const PUNCTUATION = /[!-/:-@[-`{-~]/g;
const WHITE_SPACE = /\s+/g;

export function normalizeText(text: string): string {
  let out = repairUnicode(text).replace(CURRENCY, ' ');
  out = out.replace(NON_ASCII, (run) => anyAscii(run));
  return out.toLowerCase().replace(PUNCTUATION, '').replace(WHITE_SPACE, ' ').trim();
}

export function normalizer(name: NormalizerName): (text: string) => string {
  switch (name) {
    case 'none':
      return (text) => text;
    case 'norm':
      return normalizeText;
    case 'norm-html':
      return (text) => normalizeText(stripHtml(text));
  }
}
