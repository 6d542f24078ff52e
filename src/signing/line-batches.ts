// A stream of lines cut into batches of whole lines, as raw bytes: what `sign --jsonl`, `ingest` and the
// proxy hand to their worker threads (decoding happens there). Each batch is a private copy, so its memory
// can be moved to a worker without copying it again. Every line is measured as it comes: one longer than
// the reader's limit is never held whole, but ends the reading (the proxy's 413) or is left out and said
// (ingest: the other lines go on).
import type { Readable } from 'node:stream';

const NEWLINE = 0x0a;
const EMPTY_LINE = Buffer.from('\n');

/**
 * The longest line a reader may be asked to hold: the longest string V8 makes (0x1fffffe8 characters, just
 * under 512 MiB) less room for the lines batched beside it, so that a batch still decodes to one string.
 */
export const MAX_LINE_BYTES = 500 * 1024 * 1024;

/** A line left out for its length: its number (1-based) and its length in bytes, without its line feed. */
export interface LongLine {
  line: number;
  bytes: number;
}

/** A batch of whole lines as raw bytes, with the number of its first line and the long lines left out. */
export interface LineBatch {
  /** Whole lines, the last one ending in a newline unless it ends the input. */
  bytes: Uint8Array;
  /** Line number (1-based) of the batch's first line. */
  firstLineNumber: number;
  /** Lines longer than the limit, left out (`onLongLine` 'skip'): each is an empty line in `bytes`, so that the others keep their numbers. */
  longLines?: LongLine[];
}

/** A line longer than the reader's limit: nothing of it is kept. */
export class LineTooLongError extends Error {
  override name = 'LineTooLongError';
  constructor(readonly limit: number, readonly lineNumber: number) {
    super(`line ${lineNumber} is longer than ${limit} bytes`);
  }
}

/**
 * Batches of about `batchBytes` (a batch closes at the last line end of the chunk that brings it past that
 * many bytes, or past `maxLineBytes`). A line longer than `maxLineBytes` is found as soon as that many
 * bytes of it have come, so memory holds at most one line of that size: with `onLongLine` 'throw' a
 * LineTooLongError ends the reading; with 'skip' the rest of the line is passed over as it comes, and the
 * line is listed in the `longLines` of its batch.
 */
export async function* lineBatches(
  input: Readable,
  batchBytes: number,
  maxLineBytes = Number.POSITIVE_INFINITY,
  onLongLine: 'throw' | 'skip' = 'throw',
): AsyncGenerator<LineBatch> {
  const cutter = new LineCutter(batchBytes, maxLineBytes, onLongLine);
  for await (const chunk of input) {
    const batch = cutter.take(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer));
    if (batch) yield batch;
  }
  const last = cutter.end();
  if (last) yield last;
}

/** The lines held between batches, measured line by line as the chunks come. */
class LineCutter {
  private parts: Buffer[] = [];
  /** Bytes held. */
  private size = 0;
  /** Where the unfinished line starts in the bytes held. */
  private lineStart = 0;
  /** Bytes of the unfinished line so far: held, or passed over once it is too long. */
  private lineBytes = 0;
  private skipping = false;
  /** The number of the unfinished line, and of the first line held. */
  private lineNumber = 1;
  private firstLineNumber = 1;
  private longLines: LongLine[] = [];

  constructor(
    private readonly batchBytes: number,
    private readonly maxLineBytes: number,
    private readonly onLongLine: 'throw' | 'skip',
  ) {}

  /** Takes the next chunk of the input; gives the batch it completes, if any. */
  take(chunk: Buffer): LineBatch | undefined {
    let from = 0; // the first byte of the chunk not yet held (or passed over)
    let ended = false;
    for (let pos = 0; ; ) {
      const newline = chunk.indexOf(NEWLINE, pos);
      const end = newline === -1 ? chunk.length : newline;
      this.lineBytes += end - pos;
      if (!this.skipping && this.lineBytes > this.maxLineBytes) {
        if (this.onLongLine === 'throw') throw new LineTooLongError(this.maxLineBytes, this.lineNumber);
        this.hold(chunk.subarray(from, pos));
        this.dropUnfinishedLine();
      }
      if (this.skipping) from = end;
      if (newline === -1) break;
      if (this.skipping) {
        this.endSkipped();
        from = newline + 1;
      }
      this.lineNumber++;
      this.lineBytes = 0;
      this.lineStart = this.size + (newline + 1 - from);
      ended = true;
      pos = newline + 1;
    }
    this.hold(chunk.subarray(from));
    return ended && (this.size >= this.batchBytes || this.size > this.maxLineBytes) ? this.cut() : undefined;
  }

  /** At the end of the input: what is still held, as the last batch. */
  end(): LineBatch | undefined {
    if (this.skipping) this.endSkipped();
    this.lineStart = this.size;
    return this.size > 0 ? this.cut() : undefined;
  }

  private hold(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  /** The unfinished line is too long: what is held of it is let go, and the rest of it will be passed over. */
  private dropUnfinishedLine(): void {
    while (this.size > this.lineStart) {
      const last = this.parts.pop() as Buffer;
      this.size -= last.length;
      if (this.size < this.lineStart) this.hold(last.subarray(0, this.lineStart - this.size));
    }
    this.skipping = true;
  }

  /** The line passed over has ended: listed, an empty line in its place. */
  private endSkipped(): void {
    this.longLines.push({ line: this.lineNumber, bytes: this.lineBytes });
    this.hold(EMPTY_LINE);
    this.skipping = false;
  }

  /** The whole lines held, as a batch of their own bytes; the unfinished line stays held. */
  private cut(): LineBatch {
    const bytes = new Uint8Array(this.lineStart);
    const rest: Buffer[] = [];
    let at = 0;
    for (const part of this.parts) {
      const inBatch = Math.max(0, Math.min(part.length, this.lineStart - at));
      if (inBatch > 0) bytes.set(part.subarray(0, inBatch), at);
      if (inBatch < part.length) rest.push(part.subarray(inBatch));
      at += part.length;
    }
    const batch: LineBatch = { bytes, firstLineNumber: this.firstLineNumber, ...(this.longLines.length > 0 ? { longLines: this.longLines } : {}) };
    this.parts = rest;
    this.size -= this.lineStart;
    this.lineStart = 0;
    this.firstLineNumber = this.lineNumber;
    this.longLines = [];
    return batch;
  }
}
