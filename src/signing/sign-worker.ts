// Worker thread body: signs batches of JSON lines, or annotates batches of scanned documents. One
// signer per distinct set of options is kept, so its permutations, buffers and token-hash memo are made
// once per thread.
import { createSigner, type Signer, type SignerOptions } from '../signature.js';
import { annotateBatch, type AnnotateBatchOptions, type AnnotateInput, type AnnotateResult } from './annotate-batch.js';
import { ingestBytes, type IngestLineOptions, type IngestResult } from './ingest-lines.js';
import { type LineFields, signBytes, type SignedBytes } from './sign-lines.js';
import { type SignedSource, type SignSourcesOptions, type SourceKind, signSources } from './sign-sources.js';

const signers = new Map<string, Signer>();

function signerFor(options: SignerOptions): Signer {
  // A template set is known by its digest (createSigner checks that it is that set): its 10,000 hashes
  // written out for every batch would cost more than the batch's signing.
  const key = JSON.stringify(options, (name, value) => (name === 'template' && value ? value.digest : value));
  let signer = signers.get(key);
  if (!signer) {
    signer = createSigner(options);
    signers.set(key, signer);
  }
  return signer;
}

/** A batch of JSON lines to sign (`sign --jsonl`). */
export interface SignTask {
  kind: 'bytes';
  options: SignerOptions;
  fields: LineFields;
  /** Whole lines, UTF-8. */
  bytes: Uint8Array;
  firstLineNumber: number;
}

/** A batch of scanned documents to annotate. */
export interface AnnotateTask {
  kind: 'annotate';
  options: SignerOptions;
  batch: AnnotateBatchOptions;
  docs: AnnotateInput[];
}

/** A batch of NDJSON lines to annotate for ingest. */
export interface IngestTask {
  kind: 'ingest';
  options: SignerOptions;
  ingest: IngestLineOptions;
  /** Whole NDJSON lines, raw bytes. */
  bytes: Uint8Array;
  firstLineNumber: number;
}

/** A batch of the proxy's sources to sign. */
export interface SourcesTask {
  kind: 'sources';
  options: SignerOptions;
  sources: SignSourcesOptions;
  kinds: SourceKind[];
  /** The sources packed one after the other; item i ends at ends[i]. */
  bytes: Uint8Array;
  ends: number[];
}

/** A thread's work: one task, by its kind, with the signer of its options (made once a thread). */
export default function run(task: SignTask | AnnotateTask | IngestTask | SourcesTask): SignedBytes | AnnotateResult[] | IngestResult[] | SignedSource[] {
  if (task.kind === 'sources') return signSources(signerFor(task.options), task.kinds, task.bytes, task.ends, task.sources);
  if (task.kind === 'annotate') return annotateBatch(signerFor(task.options), task.docs, task.batch);
  if (task.kind === 'ingest') return ingestBytes(signerFor(task.options), task.bytes, task.firstLineNumber, task.ingest);
  return signBytes(signerFor(task.options), task.bytes, task.firstLineNumber, task.fields);
}
