// Words as Python's str.split() finds them: the word layout (token-ranges.ts) and the tokenizers
// (tokenize.ts) both split so, and this module is theirs to share without importing one another.

// The characters Python's str.isspace() accepts, which str.split() splits on.
const PY_WHITE_SPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

/** The words of a text, split on runs of white space exactly as Python's str.split() splits them. */
export function splitWhiteSpace(text: string): string[] {
  const words = text.split(PY_WHITE_SPACE);
  if (words.length > 0 && words[0] === '') words.shift();
  if (words.length > 0 && words[words.length - 1] === '') words.pop();
  return words;
}
