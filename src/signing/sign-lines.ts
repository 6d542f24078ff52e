// JSON lines in, signature lines out: the unit of work of `near-dup sign --jsonl`. A line that is not a
// JSON object with a text gives an error line in its place; the others go on.
import { extractText, parseDocumentLine, valueAt } from '../annotation.js';
import type { Signer } from '../signature.js';
import { decodeLines } from '../text/decode.js';
import { SignatureLines } from './signature-lines.js';

/** Where a JSON line holds its text and its id. */
export interface LineFields {
  /** Field holding the text (a dotted path for a nested one); an array of strings is joined with newlines. */
  textField: string;
  idField: string;
}

/** Signature lines made from a batch, with its counts. */
export interface SignedLines {
  /** Output lines as UTF-8, each ending in a newline, in input order. */
  out: Uint8Array;
  /** Lines that were not blank. */
  documents: number;
  failed: number;
  empty: number;
}

/** Signature lines made from a batch of bytes, with how many invalid UTF-8 sequences were replaced. */
export interface SignedBytes extends SignedLines {
  /** Invalid UTF-8 sequences read as U+FFFD. */
  replaced: number;
}

/** The signature line of each JSON line, or an error line in its place. */
export function signLines(signer: Signer, lines: string[], firstLineNumber: number, fields: LineFields): SignedLines {
  const out = new SignatureLines();
  let documents = 0;
  let failed = 0;
  let empty = 0;
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    documents++;
    let id: unknown;
    try {
      const record = parseDocumentLine(line);
      id = valueAt(record, fields.idField);
      // The same reading of a document as annotate and ingest, without their cap on length. Written from
      // the signature's numbers: no Signature object, no strings (signature-lines.ts).
      const parts = signer.signParts(extractText(record, [fields.textField], Number.POSITIVE_INFINITY, '--text-field').text);
      if (parts.tokens === 0) empty++;
      out.parts(parts, signer.settings, id);
    } catch (err) {
      failed++;
      const reason = err instanceof Error ? err.message : String(err);
      out.json({ id, line: firstLineNumber + i, error: reason });
    }
  });
  return { out: out.bytes(), documents, failed, empty };
}

/** signLines over a batch of whole lines given as UTF-8 bytes (invalid sequences read as U+FFFD). */
export function signBytes(signer: Signer, bytes: Uint8Array, firstLineNumber: number, fields: LineFields): SignedBytes {
  const { lines, replaced } = decodeLines(bytes);
  return { ...signLines(signer, lines, firstLineNumber, fields), replaced };
}
