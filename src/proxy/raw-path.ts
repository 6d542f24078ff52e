// A request's target (path and query) as the client sent it, read the way the engines read it, so the
// proxy never sees a different index than the engine will:
//
// - the path is not normalized (`.` and `..` are names to the engines, not steps); each segment is
//   percent-decoded as UTF-8 (a byte that is not UTF-8 read as U+FFFD), `%%` is a `%`, `+` stays a `+`; a
//   `%` not followed by two hex digits makes the engines refuse the request (undefined here);
// - the query string runs from the first `?` to the first `#` of the whole target; parameters are split on
//   `&` and on `;`, a name from its value on the first `=`, `+` is a space, the same percent-decoding; a
//   parameter given twice counts by its last value (the engines' `params.put`, and Elasticsearch 9's
//   last-of-list, alike: tested on OpenSearch 2 and 3 and Elasticsearch 9).

/**
 * Percent-decoding as the engines do it (their RestUtils.decodeComponent): the bytes as UTF-8, `%%` a
 * `%`, `+` a space only in a query string. Undefined where the engines refuse the request (a `%` not
 * followed by two hex digits).
 */
export function decodeSegment(segment: string, plusAsSpace = false): string | undefined {
  if (!segment.includes('%') && !(plusAsSpace && segment.includes('+'))) return segment;
  const bytes: number[] = [];
  for (let i = 0; i < segment.length; i++) {
    const c = segment[i];
    if (c === '+' && plusAsSpace) bytes.push(0x20);
    else if (c === '%') {
      if (segment[i + 1] === '%') {
        bytes.push(0x25);
        i++;
        continue;
      }
      const hex = segment.slice(i + 1, i + 3);
      if (!/^[0-9a-fA-F]{2}$/.test(hex)) return undefined;
      bytes.push(Number.parseInt(hex, 16));
      i += 2;
    } else bytes.push(c.charCodeAt(0) & 0xff); // as the engines keep a char of the target: its low byte
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The path of a request as the client sent it (the path of an absolute-form target), without the query. */
export function rawPath(target: string): string {
  const path = target.split('?')[0];
  if (path.startsWith('/')) return path;
  try {
    return new URL(path).pathname;
  } catch {
    return path;
  }
}

/** One query parameter: its raw text (for sending on as it came) and its decoded name and value. */
export interface QueryParam {
  raw: string;
  name: string;
  value: string;
}

/**
 * The query of a target as the engines read it (RestUtils.decodeQueryString, step for step: `a&b=` are
 * two parameters with empty values, `=x` is a parameter named x); undefined when they refuse it (a bad
 * percent escape).
 */
export function queryParams(target: string): QueryParam[] | undefined {
  const start = target.indexOf('?');
  if (start === -1) return [];
  const hash = target.indexOf('#');
  const end = hash === -1 ? target.length : hash;
  const params: QueryParam[] = [];
  let segment = start + 1; // where the raw text of the current parameter starts
  let pos = start + 1;
  let name: string | undefined;
  let failed = false;
  const add = (rawEnd: number, decodedName: string | undefined, value: string | undefined) => {
    if (decodedName === undefined || value === undefined) failed = true;
    else params.push({ raw: target.slice(segment, rawEnd), name: decodedName, value });
  };
  let i = start + 1;
  for (; i < end; i++) {
    const c = target[i];
    if (c === '=' && name === undefined) {
      if (pos !== i) {
        name = decodeSegment(target.slice(pos, i), true);
        if (name === undefined) return undefined;
      }
      pos = i + 1;
    } else if (c === '&' || c === ';') {
      if (name === undefined && pos !== i) add(i, decodeSegment(target.slice(pos, i), true), '');
      else if (name !== undefined) add(i, name, decodeSegment(target.slice(pos, i), true));
      name = undefined;
      pos = i + 1;
      segment = i + 1;
    }
  }
  if (pos !== i) {
    if (name === undefined) add(i, decodeSegment(target.slice(pos, i), true), '');
    else add(i, name, decodeSegment(target.slice(pos, i), true));
  } else if (name !== undefined) add(i, name, '');
  return failed ? undefined : params;
}

/** The value the engines take for `name`: the last one given. */
export function lastParam(params: readonly QueryParam[], name: string): string | undefined {
  for (let i = params.length - 1; i >= 0; i--) if (params[i].name === name) return params[i].value;
  return undefined;
}

/** A query string (with its `?`, or empty) of the parameters as they came, with those named in `drop` left out and `add` (raw) appended. */
export function queryString(params: readonly QueryParam[], drop: readonly string[] = [], add: readonly string[] = []): string {
  const kept = params.filter((p) => !drop.includes(p.name)).map((p) => p.raw);
  const all = [...kept, ...add];
  return all.length > 0 ? `?${all.join('&')}` : '';
}

/** A target (path and query as sent) with its first path segment, the index, replaced by `index` (percent-encoded). */
export function withFirstSegment(target: string, index: string): string {
  const query = target.indexOf('?');
  const path = rawPath(target);
  const rest = query === -1 ? '' : target.slice(query);
  const segments = path.split('/');
  const first = segments.findIndex((s) => s !== '');
  if (first === -1) return target;
  segments[first] = encodeURIComponent(index);
  return segments.join('/') + rest;
}
