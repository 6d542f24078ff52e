// Text from an index printed on a terminal (issue 37, item 6): controls, bidi overrides and separators are
// shown as escapes, one value stays one value on one line, and JSON output stays exact.
import { expect, it } from 'vitest';
import { escaped, escapeTerminal, hasUnsafeChars, jsonLine, terminalValue } from '../../src/cli/terminal-text.js';

const HOSTILE = 'a\x1b]0;owned\x07b\x00c\nd\re\tf\x7fg\x9bh\u202ei\u2066j\u2028k\u2029l\u200fm';

it('escapes C0, DEL, C1, bidi controls and separators visibly, and nothing else', () => {
  expect(escapeTerminal(HOSTILE)).toBe('a\\x1b]0;owned\\x07b\\x00c\\nd\\re\\tf\\x7fg\\x9bh\\u202ei\\u2066j\\u2028k\\u2029l\\u200fm');
  for (let code = 0; code < 0x20; code++) expect(hasUnsafeChars(String.fromCharCode(code)), `U+${code.toString(16)}`).toBe(true);
  for (let code = 0x7f; code < 0xa0; code++) expect(hasUnsafeChars(String.fromCharCode(code)), `U+${code.toString(16)}`).toBe(true);
  for (const c of ['\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069', '\u2028', '\u2029', '\u061c', '\u200e']) expect(hasUnsafeChars(c)).toBe(true);
  const plain = 'doc-42 Ünïcødé 文書 😀 \\x1b "quoted" é';
  expect(escapeTerminal(plain)).toBe(plain);
  expect(escapeTerminal(HOSTILE)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
});

it('a value is printed as it is when safe, else quoted so that it reads back as one value', () => {
  expect(terminalValue('doc-42')).toBe('doc-42');
  expect(terminalValue('C:\\docs\\a')).toBe('C:\\docs\\a');
  expect(terminalValue('a\nb')).toBe('"a\\nb"');
  // A value holding the text of an escape is not confused with one holding the character.
  expect(terminalValue('a\x1bb')).toBe('"a\\x1bb"');
  expect(terminalValue('"a\\x1bb"')).toBe('"\\"a\\\\x1bb\\""');
  expect(terminalValue('a\\x1b\x07')).toBe('"a\\\\x1b\\x07"');
  expect(terminalValue(HOSTILE).split('\n')).toHaveLength(1);
});

it('the template tag escapes the values put in, not the template', () => {
  const id = 'x\ny\x1b[2J';
  expect(escaped`\rnear-dup: no document "${id}" (${3} hits)\n`).toBe('\rnear-dup: no document "x\\ny\\x1b[2J" (3 hits)\n');
});

it('JSON lines stay exact and carry no raw control, bidi or separator character', () => {
  const value = { id: HOSTILE, nested: [{ [HOSTILE]: 1 }], n: 1.5 };
  const line = jsonLine(value);
  expect(line.endsWith('\n')).toBe(true);
  expect(line.slice(0, -1)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200f]/);
  expect(JSON.parse(line)).toEqual(value);
});
