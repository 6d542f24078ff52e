import { Readable, Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { signStream } from '../../src/signing/sign-stream.js';
import { createSigner, signatureToJson } from '../../src/signature.js';

async function run(input: string, options: { threads?: number; batchBytes?: number; chunk?: number } = {}) {
  // Feed the input in small pieces, so that lines (and multi-byte characters) straddle the chunks.
  const bytes = Buffer.from(input);
  const size = options.chunk ?? 97;
  const chunks: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
  let out = '';
  const sink = new Writable({
    write(chunk, _enc, cb) {
      out += chunk.toString();
      cb();
    },
  });
  const summary = await signStream(Readable.from(chunks), sink, {
    signer: {},
    fields: { textField: 'text', idField: 'id' },
    threads: options.threads ?? 2,
    batchBytes: options.batchBytes ?? 300,
  });
  return { summary, lines: out.split('\n').filter(Boolean).map((l) => JSON.parse(l)) };
}

describe('sign --jsonl (signStream)', () => {
  const texts = Array.from({ length: 60 }, (_, i) =>
    i % 7 === 3 ? '   ' : `Document ${i}: déjà vu, naïve café — 東京 ${'lorem ipsum dolor '.repeat(i % 9)} end ${i}`,
  );
  const sign = createSigner();

  it.each([2, 1])('gives one line per document, in input order, equal to signing each text alone, on %i thread(s)', async (threads) => {
    const input = texts.map((text, i) => JSON.stringify({ id: `d${i}`, text })).join('\n') + '\n';
    const { summary, lines } = await run(input, { threads });
    expect(lines.map((l) => l.id)).toEqual(texts.map((_, i) => `d${i}`));
    lines.forEach((line, i) => {
      expect(line).toEqual({ id: `d${i}`, ...signatureToJson(sign(texts[i])), params: sign.settings.params });
    });
    expect(summary).toMatchObject({ documents: 60, failed: 0, empty: texts.filter((t) => t.trim() === '').length });
  });

  it('reports a bad line in its place with its line number and goes on; CRLF, blank lines and no final newline are fine', async () => {
    const input = [
      JSON.stringify({ id: 1, text: 'first document here' }),
      '',
      'not json at all',
      JSON.stringify({ id: 4, body: 'no text field' }),
      JSON.stringify([1, 2]),
      JSON.stringify({ id: 6, text: ['an array', 'of strings'] }),
      JSON.stringify({ id: 7, text: 'last one, no newline after it' }),
    ].join('\r\n');
    const { summary, lines } = await run(input, { batchBytes: 40, chunk: 13 });
    expect(summary).toMatchObject({ documents: 6, failed: 3 });
    expect(lines.map((l) => [l.id ?? null, l.line ?? null, l.error ?? null])).toEqual([
      [1, null, null],
      [null, 3, 'not valid JSON'],
      [4, 4, 'no text: field "text" is not in the document'],
      [null, 5, 'not a JSON object'],
      [6, null, null],
      [7, null, null],
    ]);
    expect(lines[4].minhash).toEqual(signatureToJson(sign('an array\nof strings')).minhash);
    expect(lines[5].content_hash).toBe(sign('last one, no newline after it').content_hash);
  });

  it('reads invalid UTF-8 with replacement and counts it, without failing the line', async () => {
    const good = Buffer.from(JSON.stringify({ id: 'a', text: 'caf' }).slice(0, -2));
    const input = Buffer.concat([good, Buffer.from([0xe9, 0xff]), Buffer.from('"}\n' + JSON.stringify({ id: 'b', text: 'plain' }) + '\n')]);
    let out = '';
    const sink = new Writable({ write: (chunk, _enc, cb) => {
      out += chunk.toString();
      cb();
    } });
    const summary = await signStream(Readable.from([input]), sink, { signer: {}, fields: { textField: 'text', idField: 'id' }, threads: 1 });
    expect(summary).toMatchObject({ documents: 2, failed: 0, replaced: 2 });
    const lines = out.trim().split('\n').map((l) => JSON.parse(l));
    expect(lines[0].content_hash).toBe(sign('caf\ufffd\ufffd').content_hash);
    expect(lines[1].content_hash).toBe(sign('plain').content_hash);
  });

  it('gives the same output on one thread as on two, whatever the batch size', async () => {
    const input = texts.map((text, i) => JSON.stringify({ id: i, text })).join('\n') + '\n';
    const a = await run(input, { threads: 1, batchBytes: 1 << 20, chunk: 4096 });
    const b = await run(input, { threads: 2, batchBytes: 1 });
    expect(b.lines).toEqual(a.lines);
  });
});
