// Markup removal with a real HTML parser (htmlparser2): text content only, entities decoded, script,
// style and similar elements dropped with their content, comments dropped, and a blank line wherever a
// block-level element begins or ends (a line break at <br>), so "<p>one</p><p>two</p>" does not become
// "onetwo", and its blocks end sentences as a plain text's paragraphs do (split-sents).
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import type { Parser as StockParser, Tokenizer as StockTokenizer } from 'htmlparser2';

interface StockClasses {
  Parser: typeof StockParser;
  Tokenizer: typeof StockTokenizer;
}

/**
 * htmlparser2's Parser and Tokenizer, from their own modules beside the package's index: the index also
 * loads a DOM handler, DOM utilities and feeds, none of which is used here, and which cost 14 ms of CPU
 * at every start (a share of `sign --jsonl` on a few thousand short texts). The same classes either way;
 * the index where the files are not found.
 */
async function importStock(): Promise<StockClasses> {
  try {
    const index = import.meta.resolve('htmlparser2');
    const [parser, tokenizer] = await Promise.all([import(new URL('./Parser.js', index).href), import(new URL('./Tokenizer.js', index).href)]);
    if (typeof parser.Parser === 'function' && typeof tokenizer.default === 'function') return { Parser: parser.Parser, Tokenizer: tokenizer.default };
  } catch {
    // the package's own entry below
  }
  return import('htmlparser2');
}

/** The same, loaded synchronously (require of an ES module). */
function requireStock(): StockClasses {
  const require = createRequire(import.meta.url);
  const index = require.resolve('htmlparser2');
  try {
    const [parser, tokenizer] = [require(join(dirname(index), 'Parser.js')), require(join(dirname(index), 'Tokenizer.js'))];
    if (typeof parser.Parser === 'function' && typeof tokenizer.default === 'function') return { Parser: parser.Parser, Tokenizer: tokenizer.default };
  } catch {
    // the package's own entry below
  }
  return require(index);
}

// The parser (htmlparser2 and its entity tables, about 14 ms of loading) is loaded at the first text with
// markup, so that signing plain text never pays for it: synchronously, where Node can require an ES module
// (20.19 and later); before that, with this module, as it always was.
let stock: StockClasses | undefined = process.features.require_module ? undefined : await importStock();

const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'head', 'svg', 'math', 'iframe', 'object']);
/** What a <head> holds (the HTML standard's "in head" insertion mode): any other element ends it. */
const IN_HEAD = new Set(['base', 'basefont', 'bgsound', 'link', 'meta', 'title', 'noscript', 'noframes', 'style', 'script', 'template', 'head', 'html']);
const BLOCK = new Set([
  'address', 'article', 'aside', 'blockquote', 'br', 'caption', 'dd', 'details', 'div', 'dl', 'dt', 'fieldset',
  'figcaption', 'figure', 'footer', 'form', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'header', 'hr', 'li', 'main', 'nav',
  'ol', 'option', 'p', 'pre', 'section', 'summary', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'title', 'tr',
  'ul', 'body', 'html',
]);

/**
 * The text of an HTML document or fragment. Plain text without markup comes back unchanged. An element
 * whose content is dropped (SKIPPED) and that is never closed, by its end tag or by one that implies it
 * (`<body>` closes `<head>`, as any element or text a head cannot hold does), keeps its content: a browser
 * would drop the rest of the document, but a text that opens `<script>` or `<object ...>` and never closes
 * it is plain text that quotes one ("run <script> to build", Python's `<object object at 0x...>`), and
 * dropping the rest of it would make different texts sign alike. One closed inside it is dropped with its
 * content all the same (the code of a `<script>`).
 */
export function stripHtml(html: string): string {
  if (html.indexOf('<') === -1 && html.indexOf('&') === -1) return html; // (two searches beat one pattern)
  const parts: string[] = [];
  // The open SKIPPED elements, innermost last, and where the content of each starts in `parts`: closed, its
  // content is cut off there; never closed (the input ended first), it stays.
  const skipNames: string[] = [];
  const skipStarts: number[] = [];
  const closeSkipped = () => {
    skipNames.pop();
    parts.length = skipStarts.pop()!;
  };
  let ending = false;
  const { LinearParser, TextSkippingTokenizer } = htmlParserClasses();
  const parser = new LinearParser(
    {
      onopentagname(name) {
        // htmlparser2 keeps <head> open to <body> or </head>; a browser ends it at the first element it cannot hold.
        if (skipNames[skipNames.length - 1] === 'head' && !IN_HEAD.has(name)) closeSkipped();
        if (SKIPPED.has(name)) {
          skipNames.push(name);
          skipStarts.push(parts.length);
        } else if (BLOCK.has(name)) parts.push(name === 'br' ? '\n' : '\n\n');
      },
      onclosetag(name, isImplied) {
        if (SKIPPED.has(name)) {
          if (skipNames[skipNames.length - 1] !== name) return; // a <head> ended already
          if (ending) {
            skipNames.pop();
            skipStarts.pop();
          } else closeSkipped();
        } else if (BLOCK.has(name) && !isImplied) parts.push(name === 'br' ? '\n' : '\n\n');
      },
      ontext(text) {
        // Text in <head> itself (not in its <title>) ends it as an element would.
        if (skipNames[skipNames.length - 1] === 'head' && !tokenizer.inElementText() && /\S/.test(text)) closeSkipped();
        // Raw text (script, style, xmp, ...) reads no entity: the `&lt;` escapeUnclosedTags wrote are put back.
        parts.push(tokenizer.inRawText() && text.includes('&lt;') ? text.replaceAll('&lt;', '<') : text);
      },
    },
    { decodeEntities: true, lowerCaseTags: true, recognizeSelfClosing: true, Tokenizer: TextSkippingTokenizer },
  );
  const tokenizer = (parser as unknown as { tokenizer: InstanceType<typeof TextSkippingTokenizer> }).tokenizer;
  parser.write(escapeUnclosedTags(html));
  // The elements still open are closed by the end of the input (implied closes): those are never closed.
  ending = true;
  parser.end();
  return parts.join('');
}

/**
 * Plain text holds `<` too: "if a<b then X". An HTML parser takes `<b then X` as a tag left open at the
 * end of input and drops it (a browser does the same), which here would drop the rest of a document and
 * make two different texts equal. So a `<` that opens no tag closed by `>` (there is no `>` after it, or
 * another `<` comes first) is text: written as `&lt;`. So is one whose name is not HTML's (`namesElement`):
 * `<file>` in a manual, `List<String>`, `<class 'dict'>`, `<jane@example.com>` are words of the text.
 * Comments are left whole. Linear in the length: each of `<`, `>` and `-->` is searched for from where its
 * last search ended, never again from every opener.
 */
export function escapeUnclosedTags(html: string): string {
  const out: string[] = [];
  let last = 0;
  let close = html.indexOf('>');
  // The first `-->` at or after the last place searched (-1: there is none, -2: not searched yet). A `-->`
  // found stays the answer for every opener before it, and none found stays none: so each stretch of the
  // text is searched once, and a run of `<!--` without an end costs one search, not one per opener.
  let commentEnd = -2;
  for (let i = html.indexOf('<'); i >= 0; ) {
    if (html.startsWith('<!--', i)) {
      if (commentEnd !== -1 && commentEnd < i + 4) commentEnd = html.indexOf('-->', i + 4);
      if (commentEnd >= 0) {
        i = html.indexOf('<', commentEnd + 3);
        continue;
      }
    }
    if (close !== -1 && close < i) close = html.indexOf('>', i);
    const next = html.indexOf('<', i + 1);
    if (close === -1 || (next !== -1 && next < close) || !namesElement(html, i, next)) {
      out.push(html.slice(last, i), '&lt;');
      last = i + 1;
    }
    i = next;
  }
  if (last === 0) return html;
  out.push(html.slice(last));
  return out.join('');
}

/**
 * The names of HTML's elements, current and obsolete (the HTML standard's index of elements and its list of
 * obsolete features), with SVG's and MathML's roots and the `<xml>` islands of Word's and Outlook's HTML: a
 * tag of another name is text, unless it is a custom element's or a prefixed one (below).
 */
const ELEMENTS = new Set(
  ('a abbr acronym address applet area article aside audio b base basefont bdi bdo bgsound big blink blockquote body br ' +
    'button canvas caption center cite code col colgroup data datalist dd del details dfn dialog dir div dl dt em embed ' +
    'fieldset figcaption figure font footer form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe img ' +
    'image input ins isindex kbd keygen label legend li link listing main map mark marquee math menu menuitem meta meter ' +
    'multicol nav nextid nobr noembed noframes noscript object ol optgroup option output p param picture plaintext pre ' +
    'progress q rb rp rt rtc ruby s samp script search section select selectedcontent slot small source spacer span strike ' +
    'strong style sub summary sup svg table tbody td template textarea tfoot th thead time title tr track tt u ul var ' +
    'video wbr xml xmp')
    .split(' '),
);

/** A custom element's name (`<my-widget>`) or a prefixed one (`<o:p>` of Word's HTML, `<v:shape>`). */
const OTHER_ELEMENT = /^[a-z][a-z0-9._]*(?:-[a-z0-9._-]*|:[a-z][a-z0-9._-]*)$/;

/** A name longer than this is no element's. */
const LONGEST_NAME = 64;

/**
 * Whether the `<` at `at` (the next `<` at `next`, or -1) names an element, opening or closing it: its
 * name, up to white space, `/` or `>`, is HTML's. A `<` followed by no letter nor `/` (`<!--`, `<!doctype`,
 * `<?xml`, `< b`) is left to the parser, which knows those. Reads no further than the next `<`.
 */
function namesElement(html: string, at: number, next: number): boolean {
  let from = at + 1;
  const closing = html.charCodeAt(from) === 0x2f; // '/'
  if (closing) from++;
  if (!isAsciiLetter(html.charCodeAt(from))) return !closing; // (`</>` and `</ 3>` are text, not tags the parser drops)
  const limit = Math.min(next === -1 ? html.length : next, from + LONGEST_NAME + 1);
  let end = from;
  while (end < limit && !endsName(html.charCodeAt(end))) end++;
  if (end - from > LONGEST_NAME) return false;
  const name = html.slice(from, end).toLowerCase();
  return ELEMENTS.has(name) || OTHER_ELEMENT.test(name);
}

/** HTML's white space, `/` and `>`: what ends a tag's name. */
function endsName(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d || c === 0x2f || c === 0x3e;
}

function isAsciiLetter(c: number): boolean {
  return (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
}

// The tokenizer's own fields that its text state reads (private in its typings).
interface TokenizerPosition {
  buffer: string;
  index: number;
  offset: number;
}
const LT = 0x3c, AMP = 0x26;
type TextState = (this: StockTokenizer, c: number) => void;

/** The tokenizer stripHtml parses with (TextSkippingTokenizer, below). */
interface RawTextTokenizer extends StockTokenizer {
  /** Whether the text read now is raw text, where no entity is decoded (script, style, xmp, plaintext, ...). */
  inRawText(): boolean;
  /** Whether the text read now is read to an end tag (that of title, textarea, or of raw text). */
  inElementText(): boolean;
}

// The tokenizer's own fields that tell where it reads an element's text to its end tag (private in its typings):
// isSpecial, and the end tag looked for (`</title` and `</textarea` decode entities; none, after <plaintext>).
interface TokenizerSpecial {
  isSpecial: boolean;
  currentSequence: Uint8Array;
}

/** The classes stripHtml parses with: the stock ones' subclasses, below. */
export interface HtmlParserClasses {
  LinearParser: typeof StockParser;
  TextSkippingTokenizer: new (...args: ConstructorParameters<typeof StockTokenizer>) => RawTextTokenizer;
}

/** Subclasses of the stock classes, made when the parser is first needed (with the stock classes loaded then). */
function subclassesOf({ Parser, Tokenizer }: StockClasses): HtmlParserClasses {
  const stockStateText = (Tokenizer.prototype as unknown as { stateText: TextState }).stateText;

  /**
   * htmlparser2's tokenizer, with its text state passing over a run of text in one step. In that state the
   * stock tokenizer looks at one character per turn of its loop and acts only on `<` and `&`, which makes
   * it most of the cost of plain text; this one moves to just before the next of them, where the stock
   * state takes over again (the loop then steps onto it). Same tokens, same callbacks
   * (test/unit/text.test.ts holds it to the stock tokenizer).
   */
  class TextSkippingTokenizer extends Tokenizer {
    // Where the next `<` and `&` are (-1: none), so that a text without one is searched once, not per run.
    nextLt = { buffer: '', at: -1 };
    nextAmp = { buffer: '', at: -1 };

    inElementText(): boolean {
      return (this as unknown as TokenizerSpecial).isSpecial;
    }

    inRawText(): boolean {
      const { isSpecial, currentSequence } = this as unknown as TokenizerSpecial;
      return isSpecial && (currentSequence.length === 0 || currentSequence[2] !== 0x74); // 't': title, textarea
    }
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

  /**
   * htmlparser2's Parser, linear in its input: once more than SHALLOW elements (or foreign contexts) are open,
   * they are moved into OpenElements. Most documents never get there, and keep the arrays, which are faster
   * while they are short. Same callbacks with the same arguments (test/unit/text.test.ts holds it to the stock
   * Parser).
   */
  class LinearParser extends Parser {
    override onopentagname(start: number, endIndex: number): void {
      super.onopentagname(start, endIndex);
      const stacks = this as unknown as ParserStacks;
      if (Array.isArray(stacks.stack) && stacks.stack.length > SHALLOW) stacks.stack = new OpenElements(stacks.stack);
      if (Array.isArray(stacks.foreignContext) && stacks.foreignContext.length > SHALLOW) stacks.foreignContext = new OpenElements(stacks.foreignContext);
    }

    override onend(): void {
      // The stock onend reads every open element by its index, once: it gets them as the array it expects.
      stockArrays(this);
      super.onend();
    }

    override reset(): void {
      super.reset();
      stockArrays(this);
    }
  }
  return { TextSkippingTokenizer, LinearParser };
}

let subclasses: HtmlParserClasses | undefined;
/** htmlparser2's Parser and Tokenizer as stripHtml uses them (below), loaded on the first call. */
export function htmlParserClasses(): HtmlParserClasses {
  subclasses ??= subclassesOf((stock ??= requireStock()));
  return subclasses;
}

function nextAt(cache: { buffer: string; at: number }, buffer: string, char: string, from: number): number {
  if (cache.buffer !== buffer || (cache.at !== -1 && cache.at < from)) {
    cache.buffer = buffer;
    cache.at = buffer.indexOf(char, from);
  }
  return cache.at;
}

/**
 * The elements htmlparser2's Parser holds open (and its stack of foreign contexts), as it reads them: index 0
 * the innermost, `unshift` to open, `shift` to close, `indexOf` and `includes` to look for one. As an array,
 * each open and close moves every element (unshift and shift), and each close tag that matches nothing, each
 * nested <form> and each SVG name looks through all of them: a document of n nested elements took time n^2.
 * Here the elements are kept innermost last, with a count per name: open and close cost O(1), `includes`
 * is a count, and `indexOf` looks only when the name is open, through the elements that the parser then
 * closes anyway. `0` (the innermost) and `length` read as an array's; nothing else of an array is used.
 */
export class OpenElements<T> {
  /** The innermost element, as the array's [0]: an own data property, so reading it is as fast. */
  0: T | undefined = undefined;
  private readonly items: T[] = [];
  private readonly counts = new Map<T, number>();

  /** From the stock array (innermost first). */
  constructor(innermostFirst: readonly T[] = []) {
    for (let i = innermostFirst.length - 1; i >= 0; i--) this.unshift(innermostFirst[i]);
  }

  get length(): number {
    return this.items.length;
  }

  set length(n: number) {
    while (this.items.length > n) this.shift();
  }

  unshift(item: T): number {
    this.items.push(item);
    this.counts.set(item, (this.counts.get(item) ?? 0) + 1);
    this[0] = item;
    return this.items.length;
  }

  shift(): T | undefined {
    const item = this.items.pop();
    if (item !== undefined) {
      const n = this.counts.get(item)! - 1;
      if (n === 0) this.counts.delete(item);
      else this.counts.set(item, n);
    }
    this[0] = this.items[this.items.length - 1];
    return item;
  }

  includes(item: T): boolean {
    return this.counts.has(item);
  }

  /** How many elements are inside the innermost `item` (-1: none is open). */
  indexOf(item: T): number {
    if (!this.counts.has(item)) return -1;
    const top = this.items.length - 1;
    for (let i = top; ; i--) if (this.items[i] === item) return top - i;
  }

  /** As the stock array: innermost first. */
  toArray(): T[] {
    return this.items.slice().reverse();
  }
}

interface ParserStacks {
  stack: OpenElements<string> | string[];
  foreignContext: OpenElements<number> | number[];
}

/** Open elements up to this many stay in the stock arrays, where each operation costs at most this much. */
const SHALLOW = 64;

function stockArrays(parser: StockParser): void {
  const stacks = parser as unknown as ParserStacks;
  if (stacks.stack instanceof OpenElements) stacks.stack = stacks.stack.toArray();
  if (stacks.foreignContext instanceof OpenElements) stacks.foreignContext = stacks.foreignContext.toArray();
}
