// The CPU side of annotating: a batch of scanned documents in, the fields to write (or why not) out.
// Runs in worker threads; pure apart from the clock.
import { DocumentTextError, extractText, nearDupFields, type NearDupFields } from '../annotation.js';
import { StoredLayout } from '../stored/layout.js';
import type { KeyLists } from '../stored/write.js';
import { checkStored, SIGNATURE_FIELDS, StoredProblem, storedIn } from '../stored/read.js';
import { contentHash, type Signer } from '../signature.js';

/** A scanned document as annotate hands it to a thread. */
export interface AnnotateInput {
  id: string;
  source?: Record<string, unknown>;
}

/** What annotating one document gave: the fields to write, nothing to do, or why not. */
export type AnnotateResult =
  | { id: string; status: 'annotated'; fields: NearDupFields; empty: boolean; cut: number }
  | { id: string; status: 'unchanged' }
  | { id: string; status: 'failed'; reason: string };

/**
 * How a batch is annotated: the text fields, the prefix, the cap, whether to sign again what is up to date, and how
 * the index takes lists.
 */
export interface AnnotateBatchOptions {
  fields: readonly string[];
  prefix: string;
  maxChars: number;
  /** Re-sign even when the stored content hash and params match. */
  force: boolean;
  /** How the index takes the SimHash blocks and the sample. */
  keyLists: KeyLists;
}

/**
 * The fields to write for each document of a batch, or why not; a document already signed with these params and this
 * content is left unchanged.
 */
export function annotateBatch(signer: Signer, docs: AnnotateInput[], options: AnnotateBatchOptions): AnnotateResult[] {
  const now = new Date();
  return docs.map((doc): AnnotateResult => {
    try {
      const { text, cut } = extractText(doc.source ?? {}, options.fields, options.maxChars);
      const clean = signer.normalize(text);
      if (!options.force && storedIsCurrent(doc.source, new StoredLayout(options.prefix), signer.settings.params, contentHash(clean))) {
        return { id: doc.id, status: 'unchanged' };
      }
      const sig = signer.signNormalized(clean);
      return { id: doc.id, status: 'annotated', fields: nearDupFields(sig, signer.settings, now, options.keyLists), empty: sig.tokens === 0, cut };
    } catch (err) {
      const reason = err instanceof DocumentTextError ? err.message : `could not sign: ${(err as Error).message}`;
      return { id: doc.id, status: 'failed', reason };
    }
  });
}

/**
 * Whether a document's stored signature is whole, of these params and of this text: then it is left as it
 * is. A damaged one (a MinHash that does not decode, a SimHash that is not 16 hex digits, ...) is not
 * current, whatever its content hash says: it is signed again.
 */
function storedIsCurrent(source: unknown, layout: StoredLayout, params: string, hash: string): boolean {
  const raw = storedIn(source, layout);
  if (raw instanceof StoredProblem || raw.content_hash !== hash) return false;
  return checkStored(raw, SIGNATURE_FIELDS, params) === undefined;
}
