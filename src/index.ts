// near-dup's library API. The CLI is built on the same functions.
export {
  createSigner,
  contentHash,
  parseCondenserSpec,
  resolveSignerSettings,
  signatureToJson,
  DEFAULT_CONDENSER,
  type Signature,
  type Signer,
  type SignerOptions,
  type SignerSettings,
} from './signature.js';
export {
  annotateDocument,
  annotateDocuments,
  createDocumentAnnotator,
  extractText,
  nearDupFields,
  DEFAULT_PREFIX,
  type AnnotateDocumentOptions,
  type NearDupFields,
} from './annotation.js';
export { minhashJaccard, minhashPermutations, emptyMinhash, updateMinhash, type MinhashScheme } from './sketch/minhash.js';
export { deserializeLeanMinhash, serializeLeanMinhash } from './sketch/lean-minhash.js';
export { optimalBandsRows, bandKeys, falsePositiveProbability, falseNegativeProbability } from './sketch/lsh.js';
export { computeSimhash, hammingDistance, shingle, simhashBlockKeys, simhashHex, unsignedHash } from './sketch/simhash.js';
export { connect, EngineClient } from './engine/client.js';
export { annotateIndex, type AnnotateOptions, type AnnotateSummary } from './jobs/annotate.js';
export { ingestStream, type IngestOptions, type IngestSummary } from './jobs/ingest.js';
export { initIndex } from './engine/init.js';
export { findSimilar, type SimilarOptions, type SimilarResult, type SimilarHit } from './jobs/similar.js';
export { dedupIndex, type DedupOptions, type DedupSummary } from './jobs/dedup.js';
