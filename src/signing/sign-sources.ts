// The signing step of the proxy, run in worker threads: document sources (of index and create actions) and
// update bodies in, the same JSON with the near-dup fields out.
//
// A source without the prefix object keeps its bytes: the fields are written in before its closing brace,
// so numbers beyond 2^53, key order and spacing reach the engine as the client wrote them. A source that
// already has the prefix object (a document read back and indexed again) is parsed and written anew.
import { DocumentTextError, extractText, mergeUnderPrefix, nearDupFields, underPrefix, valueAt } from '../annotation.js';
import type { Signer } from '../signature.js';

export type SourceKind = 'index' | 'update';

export interface SignSourcesOptions {
  fields: readonly string[];
  prefix: string;
  maxChars: number;
}

/** The outcome of one source, its new text still a string (as made here). */
type Outcome =
  | { outcome: 'signed'; source: string; cut: number }
  | { outcome: 'cleared'; source: string }
  | { outcome: 'untouched' }
  | { outcome: 'failed'; reason: string };

export type SignedSource =
  /** Signed: the new source line as UTF-8 (without its newline). */
  | { outcome: 'signed'; source: Uint8Array; cut: number }
  /** A partial update that changes some text fields but not all: the stored signature is removed, not left stale. */
  | { outcome: 'cleared'; source: Uint8Array }
  /** Nothing to sign (an update that leaves the text alone, a script): forward the bytes as they are. */
  | { outcome: 'untouched' }
  | { outcome: 'failed'; reason: string };

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Signs the sources packed in `bytes` (item i is bytes[ends[i-1] .. ends[i]]). The new sources come back as
 * views of one buffer, so handing them to another thread copies one block of bytes, not many strings.
 */
export function signSources(signer: Signer, kinds: readonly SourceKind[], bytes: Uint8Array, ends: readonly number[], options: SignSourcesOptions): SignedSource[] {
  return asBytes(signEach(signer, kinds, bytes, ends, options));
}

function asBytes(outcomes: Outcome[]): SignedSource[] {
  const total = outcomes.reduce((sum, o) => sum + ('source' in o ? Buffer.byteLength(o.source) : 0), 0);
  const block = Buffer.allocUnsafe(total);
  let at = 0;
  return outcomes.map((o) => {
    if (!('source' in o)) return o;
    const length = block.write(o.source, at);
    const source = block.subarray(at, at + length);
    at += length;
    return { ...o, source };
  });
}

function signEach(signer: Signer, kinds: readonly SourceKind[], bytes: Uint8Array, ends: readonly number[], options: SignSourcesOptions): Outcome[] {
  const now = new Date();
  return kinds.map((kind, i) => {
    const raw = bytes.subarray(i === 0 ? 0 : ends[i - 1], ends[i]);
    try {
      const text = decodeStrict(raw);
      const sign = (doc: Record<string, unknown>) => signedFields(signer, doc, options, now);
      return kind === 'index' ? signDocument(text, sign, options.prefix) : signUpdate(text, sign, options);
    } catch (err) {
      return { outcome: 'failed', reason: err instanceof DocumentTextError ? err.message : `could not sign: ${(err as Error).message}` };
    }
  });
}

function decodeStrict(raw: Uint8Array): string {
  try {
    return decoder.decode(raw);
  } catch {
    throw new DocumentTextError('not valid UTF-8; send the document as UTF-8');
  }
}

interface Fields {
  fields: Record<string, unknown>;
  cut: number;
}

function signedFields(signer: Signer, doc: Record<string, unknown>, options: SignSourcesOptions, now: Date): Fields {
  const { text, cut } = extractText(doc, options.fields, options.maxChars);
  return { fields: nearDupFields(signer(text), signer.settings, now) as unknown as Record<string, unknown>, cut };
}

function parseObject(text: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new DocumentTextError(`${what} is not valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new DocumentTextError(`${what} is not a JSON object`);
  return value as Record<string, unknown>;
}

function signDocument(text: string, sign: (doc: Record<string, unknown>) => Fields, prefix: string): Outcome {
  const doc = parseObject(text, 'the document');
  const { fields, cut } = sign(doc);
  const top = prefix.split('.')[0];
  if (top in doc) return { outcome: 'signed', source: JSON.stringify(mergeUnderPrefix(doc, prefix, fields)), cut };
  return { outcome: 'signed', source: spliceMembers(text, underPrefix(prefix, fields)), cut };
}

/** The object text with `members` added before its closing brace; the rest of its bytes unchanged. */
export function spliceMembers(objectText: string, members: Record<string, unknown>): string {
  const close = objectText.lastIndexOf('}');
  const head = objectText.slice(0, close).trimEnd();
  const inner = JSON.stringify(members).slice(1, -1);
  return `${head}${head.endsWith('{') ? '' : ','}${inner}}`;
}

/**
 * An update body: `doc` is signed when it holds every text field, left alone when it holds none (the text
 * does not change), and its stored signature removed when it holds only some (the new signature would need
 * text the proxy does not have; `annotate` signs the document again). An `upsert` is a whole document and
 * is signed like one. Scripts are not run here, so a scripted update is forwarded as it is.
 */
function signUpdate(text: string, sign: (doc: Record<string, unknown>) => Fields, options: SignSourcesOptions): Outcome {
  const body = parseObject(text, 'the update body');
  let changed = false;
  let cleared = false;
  let cut = 0;
  const doc = body.doc;
  if (doc !== undefined && doc !== null) {
    if (typeof doc !== 'object' || Array.isArray(doc)) throw new DocumentTextError('"doc" of the update is not a JSON object');
    const present = options.fields.filter((f) => valueAt(doc, f) !== undefined).length;
    if (present === options.fields.length) {
      const signed = sign(doc as Record<string, unknown>);
      body.doc = mergeUnderPrefix(doc as Record<string, unknown>, options.prefix, signed.fields);
      cut = signed.cut;
      changed = true;
    } else if (present > 0) {
      body.doc = withNullAt(doc as Record<string, unknown>, options.prefix);
      changed = cleared = true;
    }
  }
  if (body.upsert !== undefined && body.upsert !== null) {
    if (typeof body.upsert !== 'object' || Array.isArray(body.upsert)) throw new DocumentTextError('"upsert" of the update is not a JSON object');
    const signed = sign(body.upsert as Record<string, unknown>);
    body.upsert = mergeUnderPrefix(body.upsert as Record<string, unknown>, options.prefix, signed.fields);
    cut = Math.max(cut, signed.cut);
    changed = true;
  }
  if (!changed) return { outcome: 'untouched' };
  const source = JSON.stringify(body);
  return cleared ? { outcome: 'cleared', source } : { outcome: 'signed', source, cut };
}

/** A copy of doc whose object at the prefix is null: a partial update that removes it. */
function withNullAt(doc: Record<string, unknown>, prefix: string): Record<string, unknown> {
  const cut = prefix.lastIndexOf('.');
  if (cut < 0) return { ...doc, [prefix]: null };
  return mergeUnderPrefix(doc, prefix.slice(0, cut), { [prefix.slice(cut + 1)]: null });
}
