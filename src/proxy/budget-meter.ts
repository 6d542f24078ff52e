// What a write holds of --max-buffered-mb, counted as its body is read: each bulk line (or a document's
// whole body) longer than LARGE_BYTES counts whole, its room taken from the request's lease before its
// bytes pass on, so that reading waits (the client held back) while the room is held by others. Shorter
// lines are a write slot's own, bounded by --max-concurrent-writes and --max-upstream-mb, and not counted.
import { Transform, type TransformCallback } from 'node:stream';
import type { Lease } from './byte-budget.js';

/** A line or document longer than this counts against --max-buffered-mb. */
export const LARGE_BYTES = 1024 * 1024;

const NEWLINE = 0x0a;

/**
 * Counts a write's large lines against its lease as the body passes through, holding the body back until there is
 * room.
 */
export class BudgetMeter extends Transform {
  /** Bytes of the line being read. */
  private current = 0;
  /** Room taken for the lines that have ended, until the reader gives it back. */
  private ended = 0;

  /** `lines`: a bulk body, counted line by line; else a document, counted whole. */
  constructor(
    private readonly lease: Lease,
    private readonly lines: boolean,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    const { need, ended } = this.count(chunk);
    this.lease.take(need).then(() => {
      this.ended += ended;
      done(null, chunk);
    }, done);
  }

  /**
   * Gives back the room of the lines that have ended: call it when they are done with (signed, sent and
   * answered). The reader reads ahead by less than LARGE_BYTES, so a large line that has ended is one it
   * has seen.
   */
  releaseEnded(): void {
    this.lease.give(this.ended);
    this.ended = 0;
  }

  /** The room this chunk needs, and the room of the large lines that end in it. */
  private count(chunk: Buffer): { need: number; ended: number } {
    let need = 0;
    let ended = 0;
    for (let at = 0; at < chunk.length; ) {
      const newline = this.lines ? chunk.indexOf(NEWLINE, at) : -1;
      const end = newline === -1 ? chunk.length : newline + 1;
      const before = this.current;
      this.current += end - at;
      // Once a line passes the size, all of it counts.
      if (before > LARGE_BYTES) need += end - at;
      else if (this.current > LARGE_BYTES) need += this.current;
      if (newline !== -1) {
        if (this.current > LARGE_BYTES) ended += this.current;
        this.current = 0;
      }
      at = end;
    }
    return { need, ended };
  }
}
