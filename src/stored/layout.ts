// The stored signature's fields: their names under the prefix, in one place. Every other module asks here
// for a field's path; renaming a stored field changes this file (and the mapping JSON the engine gets).

export const DEFAULT_PREFIX = 'near_dup';

/** Every field near-dup writes under the prefix. */
export const STORED_FIELDS = [
  // The signature (annotate, ingest, the proxy).
  'bands',
  'simhash',
  'simhash_blocks',
  'minhash',
  'params',
  'content_hash',
  'token_count',
  'distinct_tokens',
  'sample',
  'sample_size',
  'annotated_at',
  // The clusters (dedup).
  'cluster_id',
  'duplicate_of',
  'is_canonical',
  'cluster_size',
  'max_similarity',
  'canonical_similarity',
  'best_match',
  // Partial copies (dedup --containment).
  'contained_in',
  'max_containment',
] as const;

export type StoredField = (typeof STORED_FIELDS)[number];

/** The fields dedup writes; cleared together when a document leaves its cluster. */
export const CLUSTER_FIELDS = ['cluster_id', 'duplicate_of', 'is_canonical', 'cluster_size', 'max_similarity', 'canonical_similarity', 'best_match'] as const satisfies readonly StoredField[];

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

  /** Wraps fields in the objects of the prefix path: "a.b" -> {a: {b: fields}}. */
  nest(fields: Record<string, unknown>): Record<string, unknown> {
    return this.prefix.split('.').reduceRight<Record<string, unknown>>((inner, segment) => ({ [segment]: inner }), fields);
  }
}
