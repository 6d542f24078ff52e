// NDJSON documents in, annotated documents out (serialized, ready for a bulk index action). Runs in
// worker threads. A line that is not a JSON object, or has no usable text, gives an error in its place.
import { DocumentTextError, extractText, mergeUnderPrefix, nearDupFields, parseDocumentLine } from '../annotation.js';
import type { Signer } from '../signature.js';

export interface IngestLineOptions {
  fields: readonly string[];
  prefix: string;
  idField?: string;
  maxChars: number;
}

export type IngestResult =
  | { line: number; id?: string; json: string; empty: boolean; cut: number }
  | { line: number; id?: string; error: string };

export function ingestLines(signer: Signer, lines: string[], firstLineNumber: number, options: IngestLineOptions): IngestResult[] {
  const results: IngestResult[] = [];
  const now = new Date();
  lines.forEach((text, i) => {
    const line = firstLineNumber + i;
    if (text.trim() === '') return;
    let id: string | undefined;
    try {
      const record = parseDocumentLine(text);
      if (options.idField) {
        const value = record[options.idField];
        if (typeof value === 'string' || typeof value === 'number') id = String(value);
      }
      const { text: body, cut } = extractText(record, options.fields, options.maxChars);
      const sig = signer(body);
      const annotated = mergeUnderPrefix(record, options.prefix, nearDupFields(sig, signer.settings, now) as unknown as Record<string, unknown>);
      results.push({ line, id, json: JSON.stringify(annotated), empty: sig.tokens === 0, cut });
    } catch (err) {
      const reason = err instanceof DocumentTextError ? err.message : `could not sign: ${(err as Error).message}`;
      results.push({ line, id, error: reason });
    }
  });
  return results;
}
