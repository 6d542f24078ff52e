// A _bulk body read as it streams in: action lines paired with their source lines, in order. Nothing holds
// the whole body; lines are cut from batches of about `batchBytes`, none longer than `maxLineBytes`. Action
// lines are read as the engines read them (readAction). One that is still not a bulk action ends the
// pairing: from there on the rest of the body is raw bytes, the first of them marked `unreadable` (the
// proxy refuses the rest, or passes it on unread, by --on-error).
import type { Readable } from 'node:stream';
import { lineBatches } from '../signing/line-batches.js';

/** The actions a bulk line may name. */
export type BulkVerb = 'index' | 'create' | 'update' | 'delete';

/** One item of a client's bulk body: its action, and its document when it has one. */
export interface BulkItem {
  kind: 'item';
  /** Position of the item in the client's request (0-based), for its answer. */
  position: number;
  verb: BulkVerb;
  index?: string;
  id?: string;
  /** The action line names its index (else it has the request's default). */
  ownIndex: boolean;
  actionLine: Uint8Array;
  /** Where the action line holds its `_index` string, to put another name in (date math resolved). */
  indexSpan?: readonly [number, number];
  /** The source (index, create) or update body; none for delete. */
  sourceLine?: Uint8Array;
}

/** Bytes passed on unread: blank lines between items, or everything after an unreadable action line. */
export interface RawBytes {
  kind: 'raw';
  bytes: Uint8Array;
  /** The action line that could not be read (the first raw bytes after it are not marked). */
  unreadable?: { line: number };
}

const NEWLINE = 0x0a;
const VERBS = new Set<string>(['index', 'create', 'update', 'delete']);
/** Metadata the engines take as an object. */
const OBJECT_FIELDS = new Set(['_source', 'dynamic_templates']);

/** A bulk action line as the engine reads it: the verb, and where the item goes. */
export interface Action {
  verb: BulkVerb;
  index?: string;
  id?: string;
  ownIndex: boolean;
  /** The `_index` string's place in the line, in UTF-16 units of its text. */
  indexSpan?: readonly [number, number];
}

/** An action line longer than this is not read (a real one is a few hundred bytes): no client makes the proxy walk megabytes. */
const MAX_ACTION_BYTES = 64 * 1024;
/** Objects and arrays nested deeper than this are refused, as the engines' JSON reader refuses them (Jackson's maxNestingDepth): a line of 64 KB of `[` must not overflow the proxy's stack. */
const MAX_NESTING = 1000;
const UTF8 = new TextDecoder('utf-8', { fatal: true });

/**
 * An action line read as the engines' bulk parser reads it, with their JSON reader (Jackson: comments
 * allowed, a byte order mark skipped, a key given twice refused): the first member of the object is the
 * verb, its object the metadata, and what follows that object is left aside (OpenSearch ignores it;
 * Elasticsearch refuses the request, so nothing of it is written either). Metadata values are read as
 * their text (`"_index": 42` is index "42"; null leaves the default). Undefined if it is not an action
 * the engines take; `blank` for a line of only white space and comments, which they skip.
 */
export function readAction(line: Uint8Array, defaultIndex: string | undefined): Action | 'blank' | undefined {
  if (line.length > MAX_ACTION_BYTES) return undefined;
  let text: string;
  try {
    text = UTF8.decode(line);
  } catch {
    return undefined; // not UTF-8: the engines refuse it
  }
  const json = new JsonReader(text.startsWith('\uFEFF') ? text.slice(1) : text, text.startsWith('\uFEFF') ? 1 : 0);
  try {
    if (json.atEnd()) return 'blank';
    json.expect('{');
    const verb = json.key();
    if (!VERBS.has(verb)) return undefined;
    const meta = new Map<string, Scalar>();
    if (!json.peek('{')) return undefined;
    json.members((key) => {
      if (meta.has(key)) throw new SyntaxError(`duplicate field ${key}`); // Jackson's strict duplicate detection
      // The engines take an object only for these, and an array for none ("expected a simple value").
      if (json.peek('[') || (json.peek('{') && !OBJECT_FIELDS.has(key))) throw new SyntaxError(`not a simple value: ${key}`);
      const value = json.value();
      if (value !== undefined) meta.set(key, value);
    });
    const index = meta.get('_index');
    const id = meta.get('_id');
    const named = index !== undefined && index.text !== null;
    return {
      verb: verb as BulkVerb,
      index: named ? (index.text as string) : defaultIndex,
      id: id?.text ?? undefined,
      ownIndex: named,
      indexSpan: named && index.string ? index.span : undefined,
    };
  } catch (err) {
    if (err instanceof SyntaxError) return undefined;
    throw err;
  }
}

/** A JSON scalar as the engines take its text: strings decoded, numbers and booleans as written, null as null. */
interface Scalar {
  text: string | null;
  string: boolean;
  span: readonly [number, number];
}

/** Just enough of a strict JSON reader, with comments, for action lines; SyntaxError where Jackson would stop. */
class JsonReader {
  private at = 0;
  /** Objects and arrays open at `at`. */
  private depth = 0;
  constructor(
    private readonly text: string,
    private readonly base: number,
  ) {}

  atEnd(): boolean {
    this.skip();
    return this.at >= this.text.length;
  }

  peek(c: string): boolean {
    this.skip();
    return this.text[this.at] === c;
  }

  expect(c: string): void {
    if (!this.peek(c)) throw new SyntaxError(`expected ${c}`);
    this.at++;
  }

  key(): string {
    this.skip();
    const key = this.string().text as string;
    this.expect(':');
    return key;
  }

  /** The members of an object, each key given to `each`, which reads its value. */
  members(each: (key: string) => void): void {
    this.expect('{');
    this.enter();
    if (this.peek('}')) {
      this.at++;
      this.depth--;
      return;
    }
    for (;;) {
      each(this.key());
      if (!this.peek(',')) break;
      this.at++;
    }
    this.expect('}');
    this.depth--;
  }

  private enter(): void {
    if (++this.depth > MAX_NESTING) throw new SyntaxError(`nested deeper than ${MAX_NESTING}`);
  }

  /** A value: a scalar's text (undefined for an object or an array, read and left aside). */
  value(): Scalar | undefined {
    this.skip();
    const c = this.text[this.at];
    if (c === '"') return this.string();
    if (c === '{') {
      this.members(() => this.value());
      return undefined;
    }
    if (c === '[') {
      this.at++;
      this.enter();
      if (this.peek(']')) {
        this.at++;
        this.depth--;
        return undefined;
      }
      for (;;) {
        this.value();
        if (this.peek(',')) this.at++;
        else {
          this.expect(']');
          this.depth--;
          return undefined;
        }
      }
    }
    const start = this.at;
    const word = /^(?:true|false|null|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)/.exec(this.text.slice(start, start + 400))?.[0];
    if (!word) throw new SyntaxError('expected a value');
    this.at += word.length;
    return { text: word === 'null' ? null : word, string: false, span: [this.base + start, this.base + this.at] };
  }

  private string(): Scalar {
    if (this.text[this.at] !== '"') throw new SyntaxError('expected a string');
    const start = this.at;
    const end = /^"(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"/.exec(this.text.slice(start))?.[0].length;
    if (end === undefined) throw new SyntaxError('bad string');
    this.at += end;
    return { text: JSON.parse(this.text.slice(start, this.at)) as string, string: true, span: [this.base + start, this.base + this.at] };
  }

  /** White space (space, tab, CR, LF only) and comments. */
  private skip(): void {
    for (;;) {
      const c = this.text[this.at];
      if (c === ' ' || c === '\t' || c === '\r' || c === '\n') this.at++;
      else if (c === '/' && this.text[this.at + 1] === '*') {
        const end = this.text.indexOf('*/', this.at + 2);
        if (end === -1) throw new SyntaxError('unclosed comment');
        this.at = end + 2;
      } else if (c === '/' && this.text[this.at + 1] === '/') {
        const end = this.text.indexOf('\n', this.at);
        this.at = end === -1 ? this.text.length : end + 1;
      } else return;
    }
  }
}

/** The action line with another `_index` string in place of the one at `span` (the rest of its bytes as they were). */
export function withIndex(actionLine: Uint8Array, span: readonly [number, number], index: string): Uint8Array {
  const text = Buffer.from(actionLine.buffer, actionLine.byteOffset, actionLine.byteLength).toString('utf8');
  return Buffer.from(text.slice(0, span[0]) + JSON.stringify(index) + text.slice(span[1]));
}

function* lines(bytes: Uint8Array): Generator<Uint8Array> {
  let start = 0;
  for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
    yield bytes.subarray(start, end);
    start = end + 1;
  }
  if (start < bytes.length) yield bytes.subarray(start);
}

/** Only white space (a line, or raw bytes with their line ends): nothing the engine applies. */
export function isBlank(bytes: Uint8Array): boolean {
  for (const byte of bytes) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d && byte !== 0x0a) return false;
  return true;
}

/** The items of a bulk body, in order. */
export async function* bulkItems(body: Readable, defaultIndex: string | undefined, maxLineBytes = Number.POSITIVE_INFINITY, batchBytes = 256 * 1024): AsyncGenerator<BulkItem | RawBytes> {
  let position = 0;
  let lineNumber = 0;
  let pending: (Action & { actionLine: Uint8Array }) | undefined;
  let raw = false;
  for await (const batch of lineBatches(body, batchBytes, maxLineBytes)) {
    if (raw) {
      yield { kind: 'raw', bytes: batch.bytes };
      continue;
    }
    for (const line of lines(batch.bytes)) {
      lineNumber++;
      if (raw) {
        yield { kind: 'raw', bytes: withNewline(line) };
      } else if (pending) {
        yield { kind: 'item', position: position++, ...pending, sourceLine: line };
        pending = undefined;
      } else if (isBlank(line)) {
        yield { kind: 'raw', bytes: withNewline(line) };
      } else {
        const action = readAction(line, defaultIndex);
        if (action === 'blank') {
          yield { kind: 'raw', bytes: withNewline(line) };
        } else if (!action) {
          raw = true;
          yield { kind: 'raw', bytes: withNewline(line), unreadable: { line: lineNumber } };
        } else if (action.verb === 'delete') yield { kind: 'item', position: position++, ...action, actionLine: line };
        else pending = { ...action, actionLine: line };
      }
    }
  }
  // An action whose source never came: the engine says what is wrong with that.
  if (pending) yield { kind: 'item', position: position++, ...pending };
}

function withNewline(line: Uint8Array): Uint8Array {
  const out = new Uint8Array(line.length + 1);
  out.set(line);
  out[line.length] = NEWLINE;
  return out;
}
