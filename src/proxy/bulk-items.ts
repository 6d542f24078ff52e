// A _bulk body read as it streams in: action lines paired with their source lines, in order. Nothing holds
// the whole body; lines are cut from batches of about `batchBytes`, none longer than `maxLineBytes`. Action
// lines are read as leniently as the engines read them (comments, anything after the object). One that is
// still not a bulk action (not JSON, an unknown verb, an _index that is not a name) ends the pairing: from
// there on the rest of the body is raw bytes, the first of them marked `unreadable` (the proxy refuses
// the rest, or passes it on unread, by --on-error).
import type { Readable } from 'node:stream';
import { lineBatches } from '../signing/line-batches.js';

export type BulkVerb = 'index' | 'create' | 'update' | 'delete';

export interface BulkItem {
  kind: 'item';
  /** Position of the item in the client's request (0-based), for its answer. */
  position: number;
  verb: BulkVerb;
  index?: string;
  id?: string;
  actionLine: Uint8Array;
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

interface Action {
  verb: BulkVerb;
  index?: string;
  id?: string;
}

/** An action line longer than this is not read (a real one is a few hundred bytes): no client makes the proxy walk megabytes. */
const MAX_ACTION_BYTES = 64 * 1024;

export function readAction(line: Uint8Array, defaultIndex: string | undefined): Action | undefined {
  if (line.length > MAX_ACTION_BYTES) return undefined;
  const parsed = leadingObject(Buffer.from(line.buffer, line.byteOffset, line.byteLength).toString('utf8'));
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const keys = Object.keys(parsed);
  if (keys.length !== 1 || !VERBS.has(keys[0])) return undefined;
  const meta = (parsed as Record<string, unknown>)[keys[0]];
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) return undefined;
  const { _index, _id } = meta as Record<string, unknown>;
  if (_index !== undefined && typeof _index !== 'string') return undefined;
  if (_id !== undefined && _id !== null && typeof _id !== 'string' && typeof _id !== 'number') return undefined;
  return {
    verb: keys[0] as BulkVerb,
    index: _index ?? defaultIndex,
    id: typeof _id === 'string' || typeof _id === 'number' ? String(_id) : undefined,
  };
}

/**
 * The first JSON object of a line, read as the engines read an action line: comments are allowed, and what
 * follows the object is left aside (OpenSearch ignores it, Elasticsearch refuses the request). Undefined if
 * there is no object to read.
 */
export function leadingObject(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    // not plain JSON: read it the lenient way below
  }
  let out = '';
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end === -1) return undefined;
      i = end + 1;
    } else if (c === '/' && text[i + 1] === '/') {
      break;
    } else {
      out += c;
      if (c === '"') inString = true;
      else if (c === '{') depth++;
      else if (c === '}' && --depth === 0) break;
    }
  }
  try {
    return JSON.parse(out);
  } catch {
    return undefined;
  }
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
        if (!action) {
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
