// Writing a stored signature: the fields annotate, ingest, the proxy and the library put under the prefix.
import type { Signature, SignerSettings } from '../signature.js';
import { serializeLeanMinhash } from '../sketch/lean-minhash.js';
import { StoredLayout } from './layout.js';

/** The signature fields as stored: keyword arrays, the MinHash as a base64 datasketch LeanMinHash buffer. */
export interface NearDupFields {
  bands: string[];
  simhash: string;
  simhash_blocks: string[];
  minhash: string;
  params: string;
  content_hash: string;
  token_count: number;
  /** Distinct tokens, and the containment sample (sampled token hashes) with its size. */
  distinct_tokens: number;
  sample: string[];
  sample_size: number;
  annotated_at: string;
}

export function nearDupFields(sig: Signature, settings: SignerSettings, now: Date = new Date()): NearDupFields {
  return {
    bands: sig.bands,
    simhash: sig.simhash,
    simhash_blocks: sig.simhash_blocks,
    minhash: Buffer.from(serializeLeanMinhash({ seed: settings.seed, scheme: settings.scheme, values: sig.minhash })).toString('base64'),
    params: settings.params,
    content_hash: sig.content_hash,
    token_count: sig.tokens,
    distinct_tokens: sig.distinct_tokens,
    sample: sig.sample,
    sample_size: sig.sample.length,
    annotated_at: now.toISOString(),
  };
}

/** Wraps `fields` in the objects of the prefix path: "a.b" -> {a: {b: fields}}. */
export function underPrefix(prefix: string, fields: Record<string, unknown>): Record<string, unknown> {
  return new StoredLayout(prefix).nest(fields);
}
