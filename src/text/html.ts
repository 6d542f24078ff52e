// Markup removal with a real HTML parser (htmlparser2): text content only, entities decoded, script,
// style and similar elements dropped with their content, comments dropped, and a space wherever a
// block-level element or <br> separates words, so "<p>one</p><p>two</p>" does not become "onetwo".
import { Parser, Tokenizer } from 'htmlparser2';

const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'iframe', 'object']);
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'caption', 'dd', 'details', 'div', 'dl', 'dt', 'fieldset',
  'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav',
  'ol', 'option', 'p', 'pre', 'section', 'summary', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'title', 'tr',
  'ul', 'body', 'html',
]);

/** The text of an HTML document or fragment. Plain text without markup comes back unchanged. */
export function stripHtml(html: string): string {
  if (html.indexOf('<') === -1 && html.indexOf('&') === -1) return html; // (two searches beat one pattern)
  const parts: string[] = [];
  let skipDepth = 0;
  const parser = new Parser(
    {
      onopentagname(name) {
        if (SKIPPED.has(name)) skipDepth++;
        else if (BLOCK.has(name)) parts.push(' ');
      },
      onclosetag(name, isImplied) {
        if (SKIPPED.has(name)) skipDepth = Math.max(0, skipDepth - 1);
        else if (BLOCK.has(name) && !isImplied) parts.push(' ');
      },
      ontext(text) {
        if (skipDepth === 0) parts.push(text);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, recognizeSelfClosing: true, Tokenizer: TextSkippingTokenizer },
  );
  parser.write(escapeUnclosedTags(html));
  parser.end();
  return parts.join('');
}

/**
 * Plain text holds `<` too: "if a<b then X". An HTML parser takes `<b then X` as a tag left open at the
 * end of input and drops it (a browser does the same), which here would drop the rest of a document and
 * make two different texts equal. So a `<` that opens no tag closed by `>` (there is no `>` after it, or
 * another `<` comes first) is text: written as `&lt;`. Comments are left whole. Linear in the length.
 */
export function escapeUnclosedTags(html: string): string {
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
    if (close === -1 || (next !== -1 && next < close)) {
      out.push(html.slice(last, i), '&lt;');
      last = i + 1;
    }
    i = next;
  }
  if (last === 0) return html;
  out.push(html.slice(last));
  return out.join('');
}

// The tokenizer's own fields that its text state reads (private in its typings).
interface TokenizerPosition {
  buffer: string;
  index: number;
  offset: number;
}
const LT = 0x3c, AMP = 0x26;
type TextState = (this: Tokenizer, c: number) => void;
const stockStateText = (Tokenizer.prototype as unknown as { stateText: TextState }).stateText;

/**
 * htmlparser2's tokenizer, with its text state passing over a run of text in one step. In that state the
 * stock tokenizer looks at one character per turn of its loop and acts only on `<` and `&`, which makes
 * it most of the cost of plain text; this one moves to just before the next of them, where the stock
 * state takes over again (the loop then steps onto it). Same tokens, same callbacks
 * (test/unit/text.test.ts holds it to the stock tokenizer).
 */
export class TextSkippingTokenizer extends Tokenizer {
  // Where the next `<` and `&` are (-1: none), so that a text without one is searched once, not per run.
  nextLt = { buffer: '', at: -1 };
  nextAmp = { buffer: '', at: -1 };
}
Object.defineProperty(TextSkippingTokenizer.prototype, 'stateText', {
  value: function (this: TextSkippingTokenizer, c: number): void {
    if (c === LT || c === AMP) {
      stockStateText.call(this, c);
      return;
    }
    const at = this as unknown as TokenizerPosition;
    const from = at.index - at.offset + 1;
    const lt = nextAt(this.nextLt, at.buffer, '<', from);
    const amp = nextAt(this.nextAmp, at.buffer, '&', from);
    const next = lt === -1 ? amp : amp === -1 ? lt : Math.min(lt, amp);
    at.index = (next === -1 ? at.buffer.length : next) + at.offset - 1;
  },
});

function nextAt(cache: { buffer: string; at: number }, buffer: string, char: string, from: number): number {
  if (cache.buffer !== buffer || (cache.at !== -1 && cache.at < from)) {
    cache.buffer = buffer;
    cache.at = buffer.indexOf(char, from);
  }
  return cache.at;
}
