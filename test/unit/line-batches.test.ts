// lineBatches with onLongLine 'skip' (ingest): a line over the limit is passed over as it is read, never
// held whole, and listed with its number and length in its batch, an empty line in its place; every other
// line comes through as it was, with its own number, whatever the chunks and the batch size.
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type LineBatch, lineBatches, type LongLine } from '../../src/signing/line-batches.js';

async function readAll(chunks: Iterable<Buffer> | AsyncIterable<Buffer>, batchBytes: number, max: number): Promise<LineBatch[]> {
  const batches: LineBatch[] = [];
  for await (const batch of lineBatches(Readable.from(chunks), batchBytes, max, 'skip')) batches.push(batch);
  return batches;
}

function chunked(text: Buffer, sizes: number[]): Buffer[] {
  const chunks: Buffer[] = [];
  for (let at = 0, k = 0; at < text.length; k++) {
    chunks.push(text.subarray(at, at + sizes[k % sizes.length]));
    at += sizes[k % sizes.length];
  }
  return chunks;
}

describe('lineBatches, passing over lines longer than the limit', () => {
  it('a long line among good ones, at the start, at the end without a line feed', async () => {
    const text = Buffer.from(`${'a'.repeat(30)}\nok 1\n${'b'.repeat(25)}\nok 2\n\n${'c'.repeat(40)}`);
    const batches = await readAll(chunked(text, [7]), 8, 20);
    const joined = Buffer.concat(batches.map((b) => b.bytes)).toString();
    expect(joined).toBe('\nok 1\n\nok 2\n\n\n');
    expect(batches.flatMap((b) => b.longLines ?? [])).toEqual([{ line: 1, bytes: 30 }, { line: 3, bytes: 25 }, { line: 6, bytes: 40 }]);
  });

  it('on any lines, chunks, batch size and limit: the lines as they were, the long ones emptied and listed, each batch numbered', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string({ maxLength: 20 }), fc.string({ minLength: 50, maxLength: 300 })), { maxLength: 30 }),
        fc.array(fc.integer({ min: 1, max: 120 }), { minLength: 1, maxLength: 10 }),
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 0, max: 200 }),
        fc.boolean(),
        async (texts, sizes, batchBytes, max, endsInNewline) => {
          const text = Buffer.from(texts.join('\n') + (endsInNewline ? '\n' : ''), 'latin1');
          const lines = text.toString('latin1').split('\n');
          if (lines[lines.length - 1] === '') lines.pop();
          const batches = await readAll(chunked(text, sizes), batchBytes, max);
          const long: LongLine[] = lines.flatMap((l, i) => (l.length > max ? [{ line: i + 1, bytes: l.length }] : []));
          expect(batches.flatMap((b) => b.longLines ?? [])).toEqual(long);
          const kept = lines.map((l) => (l.length > max ? '' : l));
          const unterminated = text.at(-1) !== 0x0a && lines.length > 0 && lines[lines.length - 1].length <= max;
          const joined = Buffer.concat(batches.map((b) => b.bytes)).toString('latin1');
          expect(joined).toBe(kept.join('\n') + (kept.length > 0 && !unterminated ? '\n' : ''));
          let next = 1;
          for (const batch of batches) {
            expect(batch.firstLineNumber).toBe(next);
            const count = Buffer.from(batch.bytes).toString('latin1').split('\n').length - (batch.bytes.at(-1) === 0x0a ? 1 : 0);
            for (const { line } of batch.longLines ?? []) expect(line >= next && line < next + count).toBe(true);
            next += count;
          }
        },
      ),
      { numRuns: 1000 },
    );
  });

  it('a line of 512 MB read in 1 MB chunks: memory holds about the limit of it, never the line', async () => {
    const MB = 1024 * 1024;
    let peak = 0;
    async function* input(): AsyncGenerator<Buffer> {
      yield Buffer.from('{"id":"before"}\n');
      for (let i = 0; i < 512; i++) {
        peak = Math.max(peak, process.memoryUsage().arrayBuffers);
        yield Buffer.alloc(MB, 0x61); // a new buffer each time: a reader holding them would hold 512 MB
      }
      yield Buffer.from('\n{"id":"after"}\n');
    }
    const start = process.memoryUsage().arrayBuffers;
    const batches = await readAll(input(), 256 * 1024, 4 * MB);
    expect(Buffer.concat(batches.map((b) => b.bytes)).toString()).toBe('{"id":"before"}\n\n{"id":"after"}\n');
    expect(batches.flatMap((b) => b.longLines ?? [])).toEqual([{ line: 2, bytes: 512 * MB }]);
    expect(peak - start).toBeLessThan(192 * MB);
  });
});
