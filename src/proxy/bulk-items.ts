// A _bulk body read as it streams in: action lines paired with their source lines, in order. Nothing holds
// the whole body; lines are cut from batches of about `batchBytes`. An action line that is not a bulk action
// (not JSON, an unknown verb) ends the pairing: from there on the rest of the body is passed on as raw bytes,
// so the engine answers it as it would have without the proxy.
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
}

const NEWLINE = 0x0a;
const VERBS = new Set<string>(['index', 'create', 'update', 'delete']);

interface Action {
  verb: BulkVerb;
  index?: string;
  id?: string;
}

export function readAction(line: Uint8Array, defaultIndex: string | undefined): Action | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(line.buffer, line.byteOffset, line.byteLength).toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const keys = Object.keys(parsed);
  if (keys.length !== 1 || !VERBS.has(keys[0])) return undefined;
  const meta = (parsed as Record<string, unknown>)[keys[0]];
  if (typeof meta !== 'object' || meta === null) return undefined;
  const { _index, _id } = meta as Record<string, unknown>;
  return {
    verb: keys[0] as BulkVerb,
    index: typeof _index === 'string' ? _index : defaultIndex,
    id: typeof _id === 'string' || typeof _id === 'number' ? String(_id) : undefined,
  };
}

function* lines(bytes: Uint8Array): Generator<Uint8Array> {
  let start = 0;
  for (let end = bytes.indexOf(NEWLINE); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
    yield bytes.subarray(start, end);
    start = end + 1;
  }
  if (start < bytes.length) yield bytes.subarray(start);
}

function isBlank(line: Uint8Array): boolean {
  for (const byte of line) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  return true;
}

/** The items of a bulk body, in order. */
export async function* bulkItems(body: Readable, defaultIndex: string | undefined, batchBytes = 256 * 1024): AsyncGenerator<BulkItem | RawBytes> {
  let position = 0;
  let pending: (Action & { actionLine: Uint8Array }) | undefined;
  let raw = false;
  for await (const batch of lineBatches(body, batchBytes)) {
    if (raw) {
      yield { kind: 'raw', bytes: batch.bytes };
      continue;
    }
    for (const line of lines(batch.bytes)) {
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
          yield { kind: 'raw', bytes: withNewline(line) };
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
