// NDJSON documents in, annotated documents out (serialized, ready for a bulk index action). Runs in
// worker threads, on batches of raw bytes. A line that is not valid UTF-8, not a JSON object, has no
// usable text or holds a key naming a prototype under the prefix gives an error in its place; the others go on.
import type { KeyLists } from '../stored/write.js';
import { DocumentTextError, extractText, nearDupFields, parseDocumentLine, refusePrototypeKeys, valueAt } from '../annotation.js';
import type { Signer } from '../signature.js';
import { utf8Lines } from '../text/decode.js';
import { sourceWithFields } from './source-text.js';

/**
 * How NDJSON lines are annotated for ingest: the text fields, the prefix, the id field, the cap, and how the index
 * takes lists.
 */
export interface IngestLineOptions {
  fields: readonly string[];
  prefix: string;
  idField?: string;
  maxChars: number;
  /** How the target index takes the SimHash blocks and the sample. */
  keyLists: KeyLists;
}

/** What one NDJSON line gave: the document to index with its fields, or the error in its place. */
export type IngestResult =
  | { line: number; id?: string; json: string; empty: boolean; cut: number }
  | { line: number; id?: string; error: string }
  | { line: number; blank: true };

/** Annotates a batch of whole NDJSON lines given as bytes. */
export function ingestBytes(signer: Signer, bytes: Uint8Array, firstLineNumber: number, options: IngestLineOptions): IngestResult[] {
  const results: IngestResult[] = [];
  const now = new Date();
  utf8Lines(bytes).forEach((text, i) => {
    const line = firstLineNumber + i;
    if (typeof text !== 'string') {
      // Read with replacement characters, the document would be indexed with text it never had.
      results.push({
        line,
        error:
          `not valid UTF-8: byte 0x${text.byte.toString(16).padStart(2, '0')} at byte ${text.offset} of the line; ` +
          'convert the input to UTF-8 (for example iconv -f windows-1252 -t utf-8) and ingest this line again',
      });
      return;
    }
    if (text.trim() === '') {
      results.push({ line, blank: true });
      return;
    }
    let id: string | undefined;
    try {
      const record = parseDocumentLine(text);
      if (options.idField) {
        const value = valueAt(record, options.idField);
        if (typeof value === 'number' && !Number.isSafeInteger(value)) {
          // Read as a number, 1234567890123456789 is 1234567890123456800: two lines would share an id.
          throw new DocumentTextError(`the id in "${options.idField}" is a number JSON cannot carry exactly (read as ${value}); write it as a string ("${options.idField}": "...")`);
        }
        if (typeof value === 'string' || typeof value === 'number') id = checkedId(String(value), options.idField);
      }
      // near-dup writes the fields under the prefix, and keeps no key there that names a prototype.
      refusePrototypeKeys(record, options.prefix);
      const { text: body, cut } = extractText(record, options.fields, options.maxChars);
      const sig = signer(body);
      // The line's own bytes with the fields written in: nothing else of the document changes (source-text.ts).
      const fields = nearDupFields(sig, signer.settings, now, options.keyLists) as unknown as Record<string, unknown>;
      results.push({ line, id, json: sourceWithFields(text, record, options.prefix, fields), empty: sig.tokens === 0, cut });
    } catch (err) {
      const reason = err instanceof DocumentTextError ? err.message : `could not sign: ${(err as Error).message}`;
      results.push({ line, id, error: reason });
    }
  });
  return results;
}

/** The engines take ids of 1 to 512 bytes; a longer one would make them refuse the whole bulk request it is in. */
const MAX_ID_BYTES = 512;

function checkedId(id: string, field: string): string {
  const bytes = Buffer.byteLength(id);
  if (bytes === 0) throw new DocumentTextError(`the id in "${field}" is empty; the engines take ids of 1 to ${MAX_ID_BYTES} bytes`);
  if (bytes > MAX_ID_BYTES) throw new DocumentTextError(`the id in "${field}" ("${id.slice(0, 40)}...") is ${bytes} bytes; the engines take ids of at most ${MAX_ID_BYTES} bytes`);
  return id;
}
