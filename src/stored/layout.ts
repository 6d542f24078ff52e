// The stored fields: one table of everything near-dup writes under the prefix, and the one place that puts
// fields there. Each entry says who writes the field, whether reading a signature back needs it, its mapping
// and what its value is checked against; the mapping bodies (indices/mapping.ts, and the JSON in mappings/ a
// test holds equal to them), the writer's type (write.ts), the reader's checks and lists (read.ts) and
// Dashboards' field list all come from it. Adding a stored field is an entry here, plus its use.
import { ownValue, setOwn } from '../own-keys.js';

/** The object the near-dup fields live under unless `--prefix` says otherwise. */
export const DEFAULT_PREFIX = 'near_dup';

/** A field's mapping, as the engine takes it. */
export interface FieldMapping {
  type: string;
  [parameter: string]: unknown;
}

/** What reading a field checks its value against (read.ts CHECKS holds one check per name). */
export type CheckName = 'minhash' | 'core' | 'simhash' | 'bandKeys' | 'blockKeys' | 'sampleTerms' | 'text' | 'wholeNumber' | 'strings' | 'date';

/** One stored field; `T` is its value as written. */
export interface FieldSpec<T = unknown> {
  /**
   * For a signature's fields: whether reading a signature back needs it (`needed`), or reads it when it is
   * there (`when-there`: versions before it did not write it). Undefined for a field a signature is not read from.
   */
  read?: 'needed' | 'when-there';
  mapping: FieldMapping;
  /** What its value is checked against when it is read; unchecked when undefined. */
  check?: CheckName;
  /** Only a carrier of `T` for the types below: never set. */
  readonly value?: T;
}

/** A table entry whose value, as written, is of type T. */
const field = <T>(spec: FieldSpec<T>): FieldSpec<T> => spec;

/** The key lists (SimHash blocks, containment sample): terms in one string split on white space, or a list. */
const KEY_LIST: FieldMapping = { type: 'text', analyzer: 'whitespace', index_options: 'docs', norms: false };
const KEYWORD: FieldMapping = { type: 'keyword' };
const INTEGER: FieldMapping = { type: 'integer' };
const FLOAT: FieldMapping = { type: 'float' };

/** The signature: annotate, ingest, the proxy and the library write these, all of them at once. */
const SIGNATURE = {
  /** LSH band keys: a terms query on them finds the candidates (the inverted index; no doc values needed). */
  bands: field<string[]>({ read: 'needed', mapping: { type: 'keyword', doc_values: false }, check: 'bandKeys' }),
  /** The 64-bit SimHash (hex, or base32 for the simhash-doc preset): read from _source, never searched. */
  simhash: field<string>({ read: 'needed', mapping: { type: 'keyword', index: false, doc_values: false }, check: 'simhash' }),
  /** SimHash block keys: a bool/should over them finds fingerprints a few bits apart. */
  simhash_blocks: field<string[] | string>({ read: 'needed', mapping: KEY_LIST, check: 'blockKeys' }),
  /** datasketch's LeanMinHash buffer, base64. */
  minhash: field<string>({ read: 'needed', mapping: { type: 'binary' }, check: 'minhash' }),
  /** With `;core=` params: the template bits of the MinHash's values and the core's size (sketch/core-similarity.ts). */
  core: field<string>({ read: 'when-there', mapping: { type: 'binary' }, check: 'core' }),
  /** The params keyword (params.ts): checked before any other field, against the codec. */
  params: field<string>({ read: 'needed', mapping: KEYWORD }),
  /** SHA-1 of the normalized text. */
  content_hash: field<string>({ read: 'needed', mapping: KEYWORD, check: 'text' }),
  token_count: field<number>({ read: 'needed', mapping: INTEGER, check: 'wholeNumber' }),
  /** Distinct tokens, and the containment sample (sampled token hashes) with its size. */
  distinct_tokens: field<number>({ read: 'when-there', mapping: INTEGER, check: 'wholeNumber' }),
  sample: field<string[] | string>({ read: 'when-there', mapping: KEY_LIST, check: 'sampleTerms' }),
  sample_size: field<number>({ read: 'when-there', mapping: INTEGER, check: 'wholeNumber' }),
  annotated_at: field<string>({ mapping: { type: 'date' }, check: 'date' }),
};

/** The clusters: dedup writes these, and clears them together when a document leaves its cluster. */
const CLUSTERS = {
  cluster_id: field<string>({ mapping: KEYWORD, check: 'text' }),
  duplicate_of: field<string>({ mapping: KEYWORD }),
  is_canonical: field<boolean>({ mapping: { type: 'boolean' } }),
  cluster_size: field<number>({ mapping: INTEGER }),
  max_similarity: field<number>({ mapping: FLOAT }),
  canonical_similarity: field<number>({ mapping: FLOAT }),
  best_match: field<string>({ mapping: KEYWORD }),
};

/** Partial copies: dedup --containment writes these. */
const CONTAINMENT = {
  contained_in: field<string[]>({ mapping: KEYWORD, check: 'strings' }),
  max_containment: field<number>({ mapping: FLOAT }),
};

/** Every field near-dup writes under the prefix, in the order of the mapping. */
export const STORED: Readonly<typeof SIGNATURE & typeof CLUSTERS & typeof CONTAINMENT> = { ...SIGNATURE, ...CLUSTERS, ...CONTAINMENT };

/** The name of a stored field (without the prefix). */
export type StoredField = keyof typeof STORED;
/** The name of a field that makes up a signature, as opposed to those dedup and containment write. */
export type SignatureField = keyof typeof SIGNATURE;

/** The value of a stored field as written. */
export type StoredValue<K extends StoredField> = (typeof STORED)[K] extends FieldSpec<infer T> ? T : never;

/** The fields of a signature as written, each with its value (write.ts fills every one). */
/** A signature's stored values; `core` only with `;core=` params. */
export type SignatureValues = { [K in Exclude<SignatureField, 'core'>]: StoredValue<K> } & { core?: string };

const names = <T extends object>(table: T) => Object.keys(table) as Array<keyof T & string>;

/** Every field near-dup writes under the prefix. */
export const STORED_FIELDS: readonly StoredField[] = names(STORED);

/** The fields dedup writes; cleared together when a document leaves its cluster. */
export const CLUSTER_FIELDS: ReadonlyArray<keyof typeof CLUSTERS> = names(CLUSTERS);

/**
 * The key lists (SimHash blocks, containment sample): mapped as text split on white space, so that they can
 * be written as one string of terms or as a list (write.ts KeyLists).
 */
export const KEY_LIST_FIELDS: readonly StoredField[] = STORED_FIELDS.filter((name) => STORED[name].mapping === KEY_LIST);

/** The fields of a signature that reading it back needs (`needed`), or that it reads when there (`when-there`). */
export function signatureFields(read: 'needed' | 'when-there'): SignatureField[] {
  return names(SIGNATURE).filter((name) => SIGNATURE[name].read === read);
}

/** The dotted path of a stored field under a prefix: `storedPath('near_dup', 'bands')` is `near_dup.bands`. */
export function storedPath(prefix: string, name: StoredField): string {
  return `${prefix}.${name}`;
}

/** Where the stored fields are in a document: the prefix, and each field's dotted path. */
export class StoredLayout {
  constructor(readonly prefix: string = DEFAULT_PREFIX) {}

  /** The dotted path of a field: `near_dup.bands`. */
  path(name: StoredField): string {
    return storedPath(this.prefix, name);
  }

  paths(...names: StoredField[]): string[] {
    return names.map((name) => this.path(name));
  }

  /**
   * The mapping `properties` that put these fields (all by default) under the prefix, an object mapping
   * for each of its levels: {near_dup: {type: 'object', properties: {bands: ...}}}.
   */
  mappingProperties(fieldNames: readonly string[] = STORED_FIELDS): Record<string, unknown> {
    const fields: Record<string, FieldMapping> = {};
    for (const name of fieldNames) {
      const spec = ownValue(STORED, name) as FieldSpec | undefined;
      if (!spec) throw new RangeError(`no near-dup field "${name}"`);
      fields[name] = { ...spec.mapping };
    }
    return this.prefix.split('.').reduceRight<Record<string, unknown>>((properties, segment) => ({ [segment]: { type: 'object', properties } }), fields);
  }
}

/**
 * A copy of doc with `fields` set at the prefix path ("a.b": {a: {b: fields}}), keeping whatever else the
 * objects on that path held: the one way near-dup puts fields under the prefix. Keys are copied as own
 * properties (spread), and the objects on the path are read and set as own keys only.
 */
export function mergeUnderPrefix<T extends Record<string, unknown>>(doc: T, prefix: string, fields: Record<string, unknown>): T {
  const segments = prefix.split('.');
  const out: Record<string, unknown> = { ...doc };
  const objectAt = (target: Record<string, unknown>, key: string): Record<string, unknown> => {
    const existing = ownValue(target, key);
    return existing && typeof existing === 'object' && !Array.isArray(existing) ? (existing as Record<string, unknown>) : {};
  };
  let target = out;
  for (const segment of segments.slice(0, -1)) {
    const copy = { ...objectAt(target, segment) };
    setOwn(target, segment, copy);
    target = copy;
  }
  const last = segments[segments.length - 1];
  setOwn(target, last, { ...objectAt(target, last), ...fields });
  return out as T;
}

/** `fields` alone under the prefix, in objects of their own: {a: {b: fields}} for "a.b". */
export function underPrefix(prefix: string, fields: Record<string, unknown>): Record<string, unknown> {
  return mergeUnderPrefix({}, prefix, fields);
}
