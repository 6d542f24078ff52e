// JSON lines in, signature lines out: the unit of work of `near-dup sign --jsonl`. A line that is not a
// JSON object with a text gives an error line in its place; the others go on.
import { type Signer, signatureToJson } from '../signature.js';
import { decodeText } from '../text/decode.js';

export interface LineFields {
  /** Field holding the text; an array of strings is joined with newlines. */
  textField: string;
  idField: string;
}

export interface SignedLines {
  /** Output lines, each ending in a newline, in input order. */
  out: string;
  failed: number;
  empty: number;
}

export interface SignedBytes {
  /** Output lines as UTF-8, each ending in a newline, in input order. */
  out: Uint8Array;
  /** Lines that were not blank. */
  documents: number;
  /** Invalid UTF-8 sequences read as U+FFFD. */
  replaced: number;
  failed: number;
  empty: number;
}

/** The text of a document field: a string, or an array of strings joined by newlines. */
export function documentText(value: unknown, field: string): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.join('\n');
  if (value === undefined || value === null) throw new Error(`field "${field}" is missing`);
  throw new Error(`field "${field}" is ${Array.isArray(value) ? 'an array with non-string items' : typeof value}, not text`);
}

export function signLines(signer: Signer, lines: string[], firstLineNumber: number, fields: LineFields): SignedLines {
  let out = '';
  let failed = 0;
  let empty = 0;
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let id: unknown;
    try {
      let doc: unknown;
      try {
        doc = JSON.parse(line);
      } catch {
        throw new Error('not valid JSON');
      }
      if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('not a JSON object');
      const record = doc as Record<string, unknown>;
      id = record[fields.idField];
      const sig = signer(documentText(record[fields.textField], fields.textField));
      if (sig.tokens === 0) empty++;
      out += JSON.stringify({ id, ...signatureToJson(sig), params: signer.settings.params }) + '\n';
    } catch (err) {
      failed++;
      const reason = err instanceof Error ? err.message : String(err);
      out += JSON.stringify({ id, line: firstLineNumber + i, error: reason }) + '\n';
    }
  });
  return { out, failed, empty };
}

const encoder = new TextEncoder();

/** signLines over a batch of whole lines given as UTF-8 bytes (invalid sequences read as U+FFFD). */
export function signBytes(signer: Signer, bytes: Uint8Array, firstLineNumber: number, fields: LineFields): SignedBytes {
  const { text, replaced } = decodeText(bytes);
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  let documents = 0;
  for (const line of lines) if (line.trim() !== '') documents++;
  const { out, failed, empty } = signLines(signer, lines, firstLineNumber, fields);
  return { out: encoder.encode(out), documents, failed, empty, replaced };
}
