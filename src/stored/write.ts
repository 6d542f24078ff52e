// Writing a stored signature: the fields annotate, ingest, the proxy and the library put under the prefix.
import type { Signature, SignerSettings } from '../signature.js';
import { serializeLeanMinhash } from '../sketch/lean-minhash.js';
import type { SignatureValues } from './layout.js';

/**
 * The signature fields as stored (layout.ts declares each): band keys a keyword array, the MinHash a base64
 * datasketch LeanMinHash buffer, the SimHash blocks and the containment sample either a list of terms or
 * those terms in one string separated by spaces (see KeyLists).
 */
export type NearDupFields = SignatureValues;

/**
 * How the SimHash blocks and the containment sample are written. 'joined': the terms in one string, separated
 * by spaces, for indices that map the two fields as text split on white space (the current mapping): the
 * engine then indexes one value per field instead of one per term, which costs it less CPU and bytes.
 * 'lists': one array element per term, which both that mapping and the older keyword one index correctly;
 * the safe choice wherever the mapping is not known.
 */
export type KeyLists = 'joined' | 'lists';

/** The near-dup fields of a signed document, as written under the prefix (`now`: its annotated_at; `keyLists`: see KeyLists). */
export function nearDupFields(sig: Signature, settings: SignerSettings, now: Date = new Date(), keyLists: KeyLists = 'lists'): NearDupFields {
  const list = keyLists === 'joined' ? (terms: string[]) => terms.join(' ') : (terms: string[]) => terms;
  return {
    bands: sig.bands,
    simhash: sig.simhash,
    simhash_blocks: list(sig.simhash_blocks),
    minhash: Buffer.from(serializeLeanMinhash({ seed: settings.seed, scheme: settings.scheme, values: sig.minhash })).toString('base64'),
    ...(sig.core === undefined ? {} : { core: sig.core }),
    params: settings.params,
    content_hash: sig.content_hash,
    token_count: sig.tokens,
    distinct_tokens: sig.distinct_tokens,
    sample: list(sig.sample),
    sample_size: sig.sample.length,
    annotated_at: now.toISOString(),
  };
}
