// The explorer's API parameters, read and checked before anything is asked of the cluster: a malformed one
// (empty, too long, not a number, a position the explorer did not give, given twice, unknown) is answered
// 400 with a message that names it and says what to give, never passed on for the engine to fail on.
import { UserError } from '../errors.js';

/** A parameter the explorer cannot use: answered with `status` (400, or 404 for an id that names nothing). */
export class ParamError extends UserError {
  override name = 'ParamError';
  constructor(
    readonly parameter: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** The engines refuse ids (and so cluster ids, which are ids) longer than this many UTF-8 bytes. */
export const MAX_ID_BYTES = 512;
/** Longest search text: a passage to look for, not a document. */
export const MAX_QUERY_CHARS = 4096;
/** Longest list position the explorer gives (a size and an id of at most 512 bytes, in base64url). */
const MAX_POSITION_CHARS = 2048;
/** The fewest entries a page of the explorer's API may ask for (`size`). */
export const MIN_PAGE_SIZE = 1;
/** The most entries a page may ask for, so that one request stays one bounded search. */
export const MAX_PAGE_SIZE = 200;
/** Entries a page holds unless it asks for another `size`. */
export const DEFAULT_PAGE_SIZE = 25;

/** A value as a message shows it: quoted, and cut when long (a message never echoes a huge value whole). */
export function shown(value: string): string {
  return value.length > 60 ? `${JSON.stringify(value.slice(0, 60))}... (${value.length} characters)` : JSON.stringify(value);
}

/** The query parameters of a request: each known and given at most once. */
export function queryParams(search: URLSearchParams, allowed: readonly string[]): Map<string, string> {
  const found = new Map<string, string>();
  for (const [name, value] of search) {
    if (!allowed.includes(name)) {
      throw new ParamError(name, `unknown parameter ${shown(name)}: this API takes ${allowed.length ? allowed.join(', ') : 'no parameters'}`);
    }
    if (found.has(name)) throw new ParamError(name, `${name} is given more than once: give it once`);
    found.set(name, value);
  }
  return found;
}

/** `size`: a whole number of entries per page, 1 to 200 (25 when not given). */
export function pageSize(value: string | undefined): number {
  if (value === undefined) return DEFAULT_PAGE_SIZE;
  const size = /^[0-9]{1,4}$/.test(value) ? Number(value) : Number.NaN;
  if (!(size >= MIN_PAGE_SIZE && size <= MAX_PAGE_SIZE)) {
    throw new ParamError('size', `size must be a whole number from ${MIN_PAGE_SIZE} to ${MAX_PAGE_SIZE}, got ${shown(value)}`);
  }
  return size;
}

/** An id (a document's or a cluster's) given as a query parameter: not empty, and not longer than any id can be. */
export function idParam(name: string, value: string | undefined): string {
  if (value === undefined || value === '') throw new ParamError(name, `${name} is missing: give a document id, e.g. ?${name}=ID`);
  const bytes = Buffer.byteLength(value);
  if (bytes > MAX_ID_BYTES) throw new ParamError(name, `${name} is ${bytes} bytes long; no id is longer than ${MAX_ID_BYTES} bytes`);
  return value;
}

/** An id given in the path, percent-encoded (/api/documents/ID). */
export function idInPath(name: string, encoded: string): string {
  let value: string;
  try {
    value = decodeURIComponent(encoded);
  } catch {
    throw new ParamError(name, `the ${name} in the path is not valid percent-encoding (${shown(encoded)}); encode it with encodeURIComponent`);
  }
  return idParam(name, value);
}

/** `q`: the text (or id) to look for; empty means every cluster. */
export function searchText(value: string | undefined): string | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  if (value.length > MAX_QUERY_CHARS) throw new ParamError('q', `q is ${value.length} characters long; search for at most ${MAX_QUERY_CHARS} (a passage, not a document)`);
  return value;
}

/** `after` of the list of clusters: the `next` of the page before, as the explorer gave it. */
export function listPosition(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === '' || value.length > MAX_POSITION_CHARS || !/^[A-Za-z0-9_-]+={0,2}$/.test(value)) throw notAPosition(value);
  return value;
}

/** The error for an `after` that is not a position a page gave, with what to give instead. */
export function notAPosition(value: string): ParamError {
  return new ParamError('after', `after ${shown(value)} is not a position in the list: give the "next" of the page before, or leave after out for the first page`);
}

/** `after` of a cluster's members: a token the explorer gave (a UUID); whether it is still open is the scrolls' to say. */
export function membersPosition(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (value === '') throw new ParamError('after', 'after is empty: give the "next" of the page before, or leave after out for the first page');
  return value;
}
