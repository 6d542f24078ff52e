// A stream of lines cut into batches of whole lines, as raw bytes: what `sign --jsonl` and `ingest` hand to
// their worker threads (decoding happens there). Each batch is a private copy, so its memory can be moved
// to a worker without copying it again.
import type { Readable } from 'node:stream';

const NEWLINE = 0x0a;

/**
 * The longest line a reader may be asked to hold: the longest string V8 makes (0x1fffffe8 characters, just
 * under 512 MiB) less room for the lines batched beside it, so that a batch still decodes to one string.
 */
export const MAX_LINE_BYTES = 500 * 1024 * 1024;

export interface LineBatch {
  /** Whole lines, the last one ending in a newline unless it ends the input. */
  bytes: Uint8Array;
  /** Line number (1-based) of the batch's first line. */
  firstLineNumber: number;
}

function countNewlines(bytes: Uint8Array): number {
  let n = 0;
  for (let i = bytes.indexOf(NEWLINE); i !== -1; i = bytes.indexOf(NEWLINE, i + 1)) n++;
  return n;
}

/** A line longer than the reader's limit: nothing of it is kept. */
export class LineTooLongError extends Error {
  override name = 'LineTooLongError';
  constructor(readonly limit: number, readonly lineNumber: number) {
    super(`line ${lineNumber} is longer than ${limit} bytes`);
  }
}

/**
 * Batches of about `batchBytes` (a batch closes at the first line end after that many bytes). A line longer
 * than `maxLineBytes` throws a LineTooLongError as soon as that many bytes of it have come, so memory holds
 * at most one line of that size.
 */
export async function* lineBatches(input: Readable, batchBytes: number, maxLineBytes = Number.POSITIVE_INFINITY): AsyncGenerator<LineBatch> {
  let parts: Buffer[] = [];
  let size = 0;
  // Where the last (unfinished) line of the held parts starts, in bytes from their start: kept as each
  // part comes (one search of that part), so a long line held over many parts is never searched again.
  let lineStart = 0;
  let firstLineNumber = 1;
  const batch = (bytes: Uint8Array): LineBatch => {
    const copy = new Uint8Array(bytes);
    const result = { bytes: copy, firstLineNumber };
    firstLineNumber += countNewlines(copy);
    return result;
  };
  for await (const chunk of input) {
    const buffer: Buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const cut = buffer.lastIndexOf(NEWLINE);
    if (cut !== -1) lineStart = size + cut + 1;
    parts.push(buffer);
    size += buffer.length;
    if (size < batchBytes && size <= maxLineBytes) continue;
    if (cut === -1) {
      if (size - lineStart > maxLineBytes) throw new LineTooLongError(maxLineBytes, firstLineNumber + countNewlinesIn(parts));
      continue; // the line goes on: wait for its end
    }
    const joined = Buffer.concat(parts, size);
    const end = size - buffer.length + cut + 1;
    yield batch(joined.subarray(0, end));
    parts = [joined.subarray(end)];
    size = parts[0].length;
    lineStart = 0;
  }
  if (size > 0) yield batch(Buffer.concat(parts, size));
}

/** Newlines in the held parts: counted once, for the error that ends the reading. */
function countNewlinesIn(parts: readonly Buffer[]): number {
  return parts.reduce((n, part) => n + countNewlines(part), 0);
}
