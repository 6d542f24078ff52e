// A document's near-dup fields: what annotate, ingest and the library API write under the prefix.
import { prototypeKeyUnder } from './own-keys.js';
import { createSigner, type Signer, type SignerOptions } from './signature.js';
import { DEFAULT_PREFIX, mergeUnderPrefix } from './stored/layout.js';
import { nearDupFields } from './stored/write.js';

export { DEFAULT_PREFIX, mergeUnderPrefix, underPrefix } from './stored/layout.js';
export { type NearDupFields, nearDupFields } from './stored/write.js';
/** Longer texts are cut to this many characters (and the cut is reported), so one document cannot exhaust memory. */
export const DEFAULT_MAX_CHARS = 10_000_000;

/**
 * The value at a dotted path of a source object ("body", "meta.title"), also through flattened keys and,
 * as the engines read field paths, through arrays: "comments.text" of a list of comments is the list of
 * their texts (arrays met on the way are flattened; undefined when no item has the field). Only own keys
 * are followed: a field named "constructor" or "__proto__" is the document's own, or it is not there.
 */
export function valueAt(source: unknown, path: string): unknown {
  if (Array.isArray(source)) {
    const values = source.flatMap((item) => {
      const value = valueAt(item, path);
      return value === undefined ? [] : Array.isArray(value) ? value : [value];
    });
    return values.length > 0 ? values : undefined;
  }
  if (source === null || typeof source !== 'object') return undefined;
  const record = source as Record<string, unknown>;
  if (Object.hasOwn(record, path)) return record[path];
  const dot = path.indexOf('.');
  if (dot < 0) return undefined;
  // Try every split, so both {"a": {"b.c": ...}} and {"a.b": {"c": ...}} are found.
  for (let i = dot; i >= 0; i = path.indexOf('.', i + 1)) {
    const head = path.slice(0, i);
    if (Object.hasOwn(record, head)) {
      const found = valueAt(record[head], path.slice(i + 1));
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/** A document whose text cannot be signed (no such field, not text): one document's problem, reported and skipped, never the job's. */
export class DocumentTextError extends Error {
  override name = 'DocumentTextError';
}

/** One line of JSON lines input as a document: a JSON object, else refused with the reason. */
export function parseDocumentLine(line: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = JSON.parse(line);
  } catch {
    throw new DocumentTextError('not valid JSON');
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new DocumentTextError('not a JSON object');
  return doc as Record<string, unknown>;
}

/** A document's text as signed: its fields joined, cut at the cap, and how much was cut (for the job's count). */
export interface ExtractedText {
  text: string;
  /** Characters dropped by the cap. */
  cut: number;
}

/**
 * The text to sign from a document's fields: strings as they are, arrays of strings joined by newlines,
 * several fields joined by a blank line; a field that is missing is passed over, but if none has text,
 * or one holds something other than text, the document is refused with the reason (`option` names the
 * option that chooses the fields, for the fix).
 */
export function extractText(source: unknown, fields: readonly string[], maxChars = DEFAULT_MAX_CHARS, option = '--field'): ExtractedText {
  const parts: string[] = [];
  for (const field of fields) {
    const value = valueAt(source, field);
    if (value === undefined || value === null) continue;
    const flat = Array.isArray(value) ? value.flat(Number.POSITIVE_INFINITY) : undefined;
    if (typeof value === 'string') parts.push(value);
    else if (flat?.every((v) => typeof v === 'string' || v === null)) parts.push(flat.filter((v) => v !== null).join('\n'));
    else {
      const kind = Array.isArray(value) ? 'an array with items that are not strings' : typeof value === 'object' ? 'an object' : `a ${typeof value}`;
      throw new DocumentTextError(`field "${field}" holds ${kind}, not text; name a text field with ${option}`);
    }
  }
  if (parts.length === 0) {
    throw new DocumentTextError(`no text: ${fields.length > 1 ? `none of the fields ${fields.map((f) => `"${f}"`).join(', ')} is` : `field "${fields[0]}" is not`} in the document`);
  }
  const text = parts.join('\n\n');
  if (text.length <= maxChars) return { text, cut: 0 };
  return { text: text.slice(0, maxChars), cut: text.length - maxChars };
}

/** What `annotateDocument` needs beyond the signer's options: the text fields, the prefix and the cap on characters. */
export interface AnnotateDocumentOptions extends SignerOptions {
  /** Text fields (dotted paths for nested ones). */
  fields: readonly string[];
  prefix?: string;
  maxChars?: number;
}

/**
 * Library API: returns a copy of `doc` with the near-dup fields under the prefix (other fields as they
 * were). Make a signer once with {@link createDocumentAnnotator} when annotating many documents.
 */
export function annotateDocument<T extends Record<string, unknown>>(doc: T, options: AnnotateDocumentOptions): T {
  return createDocumentAnnotator(options)(doc);
}

/** A reusable annotator: one signer (permutations, buffers) for every document it is given. */
export function createDocumentAnnotator(options: AnnotateDocumentOptions): <T extends Record<string, unknown>>(doc: T) => T {
  const signer: Signer = createSigner(options);
  const prefix = options.prefix ?? DEFAULT_PREFIX;
  return <T extends Record<string, unknown>>(doc: T): T => {
    refusePrototypeKeys(doc, prefix);
    const { text } = extractText(doc, options.fields, options.maxChars);
    const fields = nearDupFields(signer(text), signer.settings);
    return mergeUnderPrefix(doc, prefix, fields as unknown as Record<string, unknown>);
  };
}

/**
 * Refuses (DocumentTextError) a document that holds, at or under the prefix, a key that names an object's
 * prototype ("__proto__", or "constructor" then "prototype", also as a dotted name): near-dup owns the
 * fields there and stores no such key among them. Such keys elsewhere are the document's own fields.
 */
export function refusePrototypeKeys(doc: Record<string, unknown>, prefix: string): void {
  const found = prototypeKeyUnder(doc, prefix.split('.'));
  if (found === undefined) return;
  throw new DocumentTextError(
    `the key "${found}" names an object's prototype, under the near-dup fields ("${prefix}"); near-dup stores no such key there: remove it from the document`,
  );
}

/**
 * Library API for indexing: wraps a stream of documents so each comes out annotated. Feed it to the
 * bulk helper of either official client:
 *   client.helpers.bulk({ datasource: annotateDocuments(docs, { fields: ['body'] }), onDocument: () => ({ index: { _index: 'news' } }) })
 * A document without usable text, or with a key naming a prototype under the prefix (see refusePrototypeKeys),
 * is passed to `onError` (default: thrown) and left out.
 */
export async function* annotateDocuments<T extends Record<string, unknown>>(
  docs: Iterable<T> | AsyncIterable<T>,
  options: AnnotateDocumentOptions & { onError?: (doc: T, error: Error) => void },
): AsyncGenerator<T> {
  const annotate = createDocumentAnnotator(options);
  for await (const doc of docs) {
    try {
      yield annotate(doc);
    } catch (err) {
      if (!options.onError || !(err instanceof DocumentTextError)) throw err;
      options.onError(doc, err);
    }
  }
}
