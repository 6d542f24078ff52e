// The signing step of the proxy, run in worker threads: document sources (of index and create actions) and
// update bodies in, the same JSON with the near-dup fields out.
//
// Every source keeps its bytes outside near-dup's fields (source-text.ts): numbers beyond 2^53, key order and
// spacing reach the engine as the client wrote them, in documents, update bodies and upserts alike.
import { DocumentTextError, extractText, nearDupFields, refusePrototypeKeys, valueAt } from '../annotation.js';
import { ownValue, setOwn } from '../own-keys.js';
import { prefixKeyPaths, SourceText, setUnderPrefix, sourceWithFields } from './source-text.js';
import type { Signer } from '../signature.js';
import type { KeyLists } from '../stored/write.js';

/** What a source is: an index or create action's document, or an update body. */
export type SourceKind = 'index' | 'update';

/** How the proxy's sources are signed: the text fields, the prefix, the cap, and how the index takes lists. */
export interface SignSourcesOptions {
  fields: readonly string[];
  prefix: string;
  maxChars: number;
  /** How the target index takes the SimHash blocks and the sample (lists unless the index is known to take them joined). */
  keyLists?: KeyLists;
}

/** The outcome of one source, its new text still a string (as made here). */
type Outcome =
  | { outcome: 'signed'; source: string; cut: number }
  | { outcome: 'cleared'; source: string }
  | { outcome: 'untouched'; source?: string }
  /** `source`: the document without the near-dup fields a client put there, to pass on unsigned (--on-error pass); none when it had none. */
  | { outcome: 'failed'; reason: string; source?: string };

/** What signing one source gave, as the proxy sends it on. */
export type SignedSource =
  /** Signed: the new source line as UTF-8 (without its newline). */
  | { outcome: 'signed'; source: Uint8Array; cut: number }
  /** A partial update that changes some text fields but not all: the stored signature is removed, not left stale. */
  | { outcome: 'cleared'; source: Uint8Array }
  /** Nothing to sign (an update that leaves the text alone, a script): forward the bytes as they are, or `source` when keys near-dup owns were dropped. */
  | { outcome: 'untouched'; source?: Uint8Array }
  | { outcome: 'failed'; reason: string; source?: Uint8Array };

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * Signs the sources packed in `bytes` (item i is bytes[ends[i-1] .. ends[i]]). The new sources come back as
 * views of one buffer, so handing them to another thread copies one block of bytes, not many strings.
 */
export function signSources(signer: Signer, kinds: readonly SourceKind[], bytes: Uint8Array, ends: readonly number[], options: SignSourcesOptions): SignedSource[] {
  return asBytes(signEach(signer, kinds, bytes, ends, options));
}

function asBytes(outcomes: Outcome[]): SignedSource[] {
  const total = outcomes.reduce((sum, o) => sum + ('source' in o && o.source !== undefined ? Buffer.byteLength(o.source) : 0), 0);
  const block = Buffer.allocUnsafe(total);
  let at = 0;
  return outcomes.map((o): SignedSource => {
    if (!('source' in o) || o.source === undefined) return o as SignedSource;
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
      const reason = err instanceof DocumentTextError ? err.message : `could not sign: ${(err as Error).message}`;
      return { outcome: 'failed', reason, source: withoutClientFields(raw, kind, options.prefix) };
    }
  });
}

/**
 * A document that cannot be signed, without the near-dup fields its client put there (a forged signature, a
 * key naming a prototype), for --on-error pass, which sends it on unsigned: near-dup's fields are only ever
 * near-dup's. Undefined when it holds none, or cannot be read (the engine then says why).
 */
function withoutClientFields(raw: Uint8Array, kind: SourceKind, prefix: string): string | undefined {
  let text: string;
  let body: Record<string, unknown>;
  try {
    text = decodeStrict(raw);
    body = parseObject(text, 'the document');
  } catch {
    return undefined;
  }
  const path = prefix.split('.');
  const parts = kind === 'index' ? [[] as string[]] : [['doc'], ['upsert']];
  const source = new SourceText(text);
  let removed = false;
  for (const base of parts) {
    const member = base.length === 0 ? body : ownValue(body, base[0]);
    if (member === null || typeof member !== 'object' || Array.isArray(member)) continue;
    for (const keyPath of prefixKeyPaths(member as Record<string, unknown>, path, true)) {
      source.remove([...base, ...keyPath]);
      removed = true;
    }
  }
  return removed ? source.text : undefined;
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
  return { fields: nearDupFields(signer(text), signer.settings, now, options.keyLists) as unknown as Record<string, unknown>, cut };
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
  refusePrototypeKeys(doc, prefix);
  const { fields, cut } = sign(doc);
  return { outcome: 'signed', source: sourceWithFields(text, doc, prefix, fields), cut };
}

/**
 * `obj` without the keys a client could set near-dup's fields by: dotted names that reach the prefix or
 * below it ("near_dup.simhash", {"meta": {"near_dup.bands": ...}}, which the engines merge into the
 * object), and with `all` the object at the prefix itself. Whether any was there. Every other key is kept as
 * an own key, "__proto__" too (assigned, it would become the copy's prototype and its fields the copy's).
 */
export function withoutPrefixKeys(obj: Record<string, unknown>, path: readonly string[], all: boolean): { value: Record<string, unknown>; removed: boolean } {
  const value: Record<string, unknown> = {};
  let removed = false;
  for (const [key, member] of Object.entries(obj)) {
    const segments = key.split('.');
    const leads = segments.every((segment, i) => i >= path.length || segment === path[i]);
    if (leads && segments.length >= path.length && (all || segments.length > 1)) {
      removed = true;
      continue;
    }
    if (leads && segments.length < path.length && member !== null && typeof member === 'object' && !Array.isArray(member)) {
      const inner = withoutPrefixKeys(member as Record<string, unknown>, path.slice(segments.length), all);
      setOwn(value, key, inner.value);
      removed ||= inner.removed;
      continue;
    }
    setOwn(value, key, member);
  }
  return { value, removed };
}

/**
 * An update body: `doc` is signed when it holds every text field, left alone when it holds none (the text
 * does not change), and its stored signature removed when it holds only some (the new signature would need
 * text the proxy does not have; `annotate` signs the document again). An `upsert` is a whole document and
 * is signed like one; so is `doc` with `doc_as_upsert` (sent on as an explicit upsert, which the engines
 * apply the same way), and one without text is refused like a document without text. Keys of `doc` at or
 * under the prefix are dropped: near-dup writes those fields; one there that names an object's prototype
 * refuses the update, as it refuses such a document. Scripts are not run here, so a scripted update is
 * forwarded as it is, and the upsert of a scripted upsert (the source the script starts from, not the
 * document it makes) is not signed: its near-dup keys are dropped, and annotate signs the result. The
 * engines read "true" as true in these flags.
 */
function signUpdate(text: string, sign: (doc: Record<string, unknown>) => Fields, options: SignSourcesOptions): Outcome {
  const body = parseObject(text, 'the update body');
  for (const part of [body.doc, body.upsert]) if (part !== null && typeof part === 'object' && !Array.isArray(part)) refusePrototypeKeys(part as Record<string, unknown>, options.prefix);
  const source = new SourceText(text);
  const rewritten = dropOwnFields(body, source, options.prefix);
  if (isTrue(body.scripted_upsert) && body.script !== undefined) return scriptedUpsert(body, source, rewritten, options.prefix);
  const fromDoc = signUpdateDoc(body, source, sign, options);
  let cut = fromDoc.cut;
  let signed = fromDoc.signed;
  if (isTrue(body.doc_as_upsert) && body.doc !== null && typeof body.doc === 'object') {
    // The doc becomes the document when there is none: sign it as one, sent on as an explicit upsert.
    const upsert = new SourceText(source.valueText(['doc']) as string);
    if (!fromDoc.signed) signWhole(body.doc as Record<string, unknown>, upsert, sign, options.prefix, 'with doc_as_upsert, the doc is indexed as a new document when there is none, and it');
    source.setText(['upsert'], upsert.text);
    source.remove(['doc_as_upsert']);
    signed = true;
  } else if (body.upsert !== undefined && body.upsert !== null) {
    if (typeof body.upsert !== 'object' || Array.isArray(body.upsert)) throw new DocumentTextError('"upsert" of the update is not a JSON object');
    const upsert = new SourceText(source.valueText(['upsert']) as string);
    cut = Math.max(cut, signWhole(body.upsert as Record<string, unknown>, upsert, sign, options.prefix, 'the upsert'));
    source.setText(['upsert'], upsert.text);
    signed = true;
  }
  if (fromDoc.cleared) return { outcome: 'cleared', source: source.text };
  if (signed) return { outcome: 'signed', source: source.text, cut };
  return rewritten ? { outcome: 'untouched', source: source.text } : { outcome: 'untouched' };
}

/** A boolean flag of an update as the engines read it: true, or the string "true". */
function isTrue(value: unknown): boolean {
  return value === true || value === 'true';
}

/** A scripted upsert: the script makes the document, so nothing is signed; near-dup's keys in the upsert are dropped. */
function scriptedUpsert(body: Record<string, unknown>, source: SourceText, rewritten: boolean, prefix: string): Outcome {
  const upsert = body.upsert;
  if (upsert !== null && typeof upsert === 'object' && !Array.isArray(upsert)) {
    for (const path of prefixKeyPaths(upsert as Record<string, unknown>, prefix.split('.'), true)) {
      source.remove(['upsert', ...path]);
      rewritten = true;
    }
  }
  return rewritten ? { outcome: 'untouched', source: source.text } : { outcome: 'untouched' };
}

/**
 * Drops every key of the update's doc at or under the prefix, from the text and from `body.doc`: near-dup
 * writes those fields (a client could forge a signature). Whether any was there.
 */
function dropOwnFields(body: Record<string, unknown>, source: SourceText, prefix: string): boolean {
  if (body.doc === undefined || body.doc === null) return false;
  if (typeof body.doc !== 'object' || Array.isArray(body.doc)) throw new DocumentTextError('"doc" of the update is not a JSON object');
  const paths = prefixKeyPaths(body.doc as Record<string, unknown>, prefix.split('.'), true);
  for (const path of paths) source.remove(['doc', ...path]);
  body.doc = withoutPrefixKeys(body.doc as Record<string, unknown>, prefix.split('.'), true).value;
  return paths.length > 0;
}

/** The update's doc signed when it holds every text field, its signature removed (null) when it holds some. */
function signUpdateDoc(body: Record<string, unknown>, source: SourceText, sign: (doc: Record<string, unknown>) => Fields, options: SignSourcesOptions): { signed: boolean; cleared: boolean; cut: number } {
  const doc = body.doc as Record<string, unknown> | undefined | null;
  if (doc === undefined || doc === null) return { signed: false, cleared: false, cut: 0 };
  const present = options.fields.filter((f) => valueAt(doc, f) !== undefined).length;
  if (present === options.fields.length) {
    const signed = sign(doc);
    setUnderPrefix(source, ['doc'], options.prefix, signed.fields);
    return { signed: true, cleared: false, cut: signed.cut };
  }
  if (present === 0) return { signed: false, cleared: false, cut: 0 };
  // A partial update that removes the object at the prefix.
  source.set(['doc', ...options.prefix.split('.')], null);
  return { signed: false, cleared: true, cut: 0 };
}

/** A whole document (`doc`, its text in `source`) signed, the keys that would reach the prefix by a dotted name removed first. The cut. */
function signWhole(doc: Record<string, unknown>, source: SourceText, sign: (doc: Record<string, unknown>) => Fields, prefix: string, what: string): number {
  for (const path of prefixKeyPaths(doc, prefix.split('.'), false)) source.remove(path);
  try {
    const signed = sign(withoutPrefixKeys(doc, prefix.split('.'), false).value);
    setUnderPrefix(source, [], prefix, signed.fields);
    return signed.cut;
  } catch (err) {
    if (err instanceof DocumentTextError && what !== 'the upsert') throw new DocumentTextError(`${what} cannot be signed: ${err.message}`);
    throw err;
  }
}
