// near-dup's library API, the one a TypeScript user imports: the CLI is built on the same functions. Every
// function and class here is documented where it is declared (test/unit/public-api.test.ts holds it to that);
// docs/library.md shows them in use.
import { createSigner as signerFor, type Signer, type SignerOptions } from './signature.js';

/**
 * A signer: a function from a text to its signature (MinHash, LSH band keys, SimHash, content hash), made
 * once for a set of options and then called for every document, as `near-dup sign` and `annotate` do.
 *
 * @param options what the command line's signature options set: `condenser` ("tokenizer:normalizer:hash:
 *   permutations", default `DEFAULT_CONDENSER`), `preset`, `seed` (default 1, as datasketch), `scheme`,
 *   `threshold` (default 0.5) or `bands` and `rows` together, `simhashBlocks`, `containmentSample`,
 *   `keyEncoding`. Every option left out takes its default (or the preset's).
 * @returns the signer; `signer.settings.params` is the params keyword stored with each signature.
 * @throws {CondenserSpecError} a spec, preset or value that is not valid, with what is.
 */
export const createSigner: (options?: SignerOptions) => Signer = signerFor;
export {
  contentHash,
  parseCondenserSpec,
  resolveSignerSettings,
  signatureToJson,
  DEFAULT_CONDENSER,
  CondenserSpecError,
  type Signature,
  type Signer,
  type SignerOptions,
  type SignerSettings,
} from './signature.js';
export { NearDupError, UsageError, UserError, type BulkOptions, type OptionMessage } from './errors.js';
export { PresetError } from './presets.js';
export {
  annotateDocument,
  annotateDocuments,
  createDocumentAnnotator,
  extractText,
  nearDupFields,
  DEFAULT_PREFIX,
  DocumentTextError,
  type AnnotateDocumentOptions,
  type NearDupFields,
} from './annotation.js';
export { minhashJaccard, minhashPermutations, emptyMinhash, updateMinhash, type MinhashScheme } from './sketch/minhash.js';
export { deserializeLeanMinhash, serializeLeanMinhash } from './sketch/lean-minhash.js';
export { optimalBandsRows, bandKeys, falsePositiveProbability, falseNegativeProbability } from './sketch/lsh.js';
export { computeSimhash, hammingDistance, shingle, simhashBlockKeys, simhashHex, unsignedHash } from './sketch/simhash.js';
export { Base32Error } from './sketch/base32.js';
export { LineTooLongError } from './signing/line-batches.js';
export { connect, EngineClient } from './engine/client.js';
export { EngineConnectionError, EngineResponseError, ScanLostError } from './engine/errors.js';
export {
  annotateIndex,
  resolveAnnotateOptions,
  ANNOTATE_DEFAULTS,
  type AnnotateCounts,
  type AnnotateLimits,
  type AnnotateOptions,
  type AnnotateOutput,
  type AnnotateProgress,
  type AnnotateProgressListener,
  type AnnotateRead,
  type AnnotateSettings,
  type AnnotateStateFiles,
  type AnnotateSummary,
} from './jobs/annotate.js';
export {
  ingestStream,
  resolveIngestOptions,
  INGEST_DEFAULTS,
  type IngestLimits,
  type IngestOptions,
  type IngestOutput,
  type IngestProgress,
  type IngestSettings,
  type IngestSummary,
} from './jobs/ingest.js';
export { initIndex } from './indices/init.js';
export { findSimilar, DEFAULT_MIN_SIMILARITY, SIMILAR_DEFAULTS, type SimilarOptions, type SimilarResult, type SimilarHit } from './jobs/similar.js';
export {
  dedupIndex,
  dedupShare,
  resolveDedupOptions,
  DEDUP_DEFAULTS,
  type DedupCompare,
  type DedupLimits,
  type DedupOptions,
  type DedupOutput,
  type DedupSettings,
  type DedupShareOptions,
  type DedupStateFiles,
  type DedupSummary,
  type ShareSummary,
} from './jobs/dedup.js';
