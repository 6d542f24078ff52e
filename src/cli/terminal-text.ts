// Text from an index or from the user, made safe to print on a terminal. An id or a field value may hold
// ESC (which starts a terminal escape sequence: colours, cursor moves, window titles, even answers typed
// back), BEL, NUL, a line break (one line printed as two), or a Unicode bidi override that shows the text
// reversed: each is printed as a visible escape (\x1b, \n, \u202e) instead. JSON output stays exact: its
// escapes parse back to the same value.

/**
 * What a terminal would act on rather than show: C0 controls, DEL, C1 controls, bidi embeddings, overrides,
 * isolates and marks (U+061C, U+200E-200F, U+202A-202E, U+2066-2069), line and paragraph separators.
 */
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const UNSAFE_ONE = new RegExp(UNSAFE.source);

const SHORT: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeChar(c: string): string {
  const code = c.charCodeAt(0);
  return SHORT[c] ?? (code < 0x100 ? `\\x${code.toString(16).padStart(2, '0')}` : `\\u${code.toString(16).padStart(4, '0')}`);
}

/** Whether a string holds anything a terminal would act on rather than show. */
export function hasUnsafeChars(text: string): boolean {
  return UNSAFE_ONE.test(text);
}

/** Prose for a terminal: every control, bidi or separator character written as a visible escape; the rest as it is. */
export function escapeTerminal(text: string): string {
  return text.replace(UNSAFE, escapeChar);
}

/**
 * One value (an id, an index name) for a table or a line of text: as it is when it holds nothing to escape
 * (and does not start with a quote), else quoted with its escapes and its quotes and backslashes escaped,
 * so that a printed value reads back as one value only ("a\x1bb" is never a\x1bb typed as such).
 */
export function terminalValue(value: string): string {
  if (!hasUnsafeChars(value) && !value.startsWith('"')) return value;
  return `"${value.replace(/["\\]/g, '\\$&').replace(UNSAFE, escapeChar)}"`;
}

/**
 * A template tag for lines printed on a terminal: every value put into the template is escaped, the
 * template's own text (its line breaks, a leading carriage return of a progress line) is kept.
 * `escaped\`near-dup: ${note}\n\``
 */
export function escaped(strings: TemplateStringsArray, ...values: unknown[]): string {
  let text = strings[0];
  for (let i = 0; i < values.length; i++) text += escapeTerminal(String(values[i])) + strings[i + 1];
  return text;
}

/** Several lines, each escaped, one per line. */
export function escapedLines(lines: readonly string[]): string {
  return lines.map(escapeTerminal).join('\n') + '\n';
}

/**
 * A value as one line of JSON, exact, that a terminal shows as text: JSON.stringify escapes C0 controls but
 * leaves DEL, C1 controls, bidi controls and separators raw; those are escaped too (\u009b), which JSON
 * reads back as the same characters.
 */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value).replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`) + '\n';
}
