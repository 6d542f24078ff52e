// ingest's unit of work: a batch of NDJSON lines as raw bytes, in a worker. A line that is not valid UTF-8
// is refused alone, with where it goes wrong; the lines around it are annotated as usual.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ingestBytes } from '../../src/signing/ingest-lines.js';
import { lineBatches } from '../../src/signing/line-batches.js';
import { createSigner } from '../../src/signature.js';
import { utf8Lines } from '../../src/text/decode.js';

const signer = createSigner();
const options = { fields: ['text'], prefix: 'near_dup', idField: 'id', maxChars: 1_000_000, keyLists: 'lists' as const };
const line = (id: string, text: string) => Buffer.from(JSON.stringify({ id, text }));

describe('utf8Lines', () => {
  it('splits at line feeds and drops only a final empty line', () => {
    expect(utf8Lines(Buffer.from('a\nb\n\nc\n'))).toEqual(['a', 'b', '', 'c']);
    expect(utf8Lines(Buffer.from('a\r\nb'))).toEqual(['a\r', 'b']);
    expect(utf8Lines(new Uint8Array(0))).toEqual([]);
  });

  it('gives the byte offset and value of the first invalid sequence, past a U+FFFD that was in the input', () => {
    const bad = Buffer.concat([Buffer.from('ok\nzé\ufffd'), Buffer.from([0xe9]), Buffer.from('t\nfine\n')]);
    expect(utf8Lines(bad)).toEqual(['ok', { offset: 6, byte: 0xe9 }, 'fine']);
    expect(utf8Lines(Buffer.from([0x61, 0xc3]))).toEqual([{ offset: 1, byte: 0xc3 }]); // cut mid-character
  });
});

describe('ingestBytes', () => {
  it('refuses a line that is not valid UTF-8 with its line number, and annotates the lines around it', () => {
    const latin1 = Buffer.from('{"id": "b", "text": "caf\xe9 cr\xe8me"}', 'latin1');
    const bytes = Buffer.concat([line('a', 'first text'), Buffer.from('\n'), latin1, Buffer.from('\n\n'), line('c', 'third text'), Buffer.from('\n')]);
    const results = ingestBytes(signer, bytes, 10, options);
    expect(results.map((r) => r.line)).toEqual([10, 11, 12, 13]);
    const [a, b, blank, c] = results;
    expect(blank).toEqual({ line: 12, blank: true });
    expect('json' in a && JSON.parse(a.json).near_dup.content_hash).toBe(signer('first text').content_hash);
    expect('error' in b && b.error).toMatch(/^not valid UTF-8: byte 0xe9 at byte 24 of the line; convert the input to UTF-8/);
    expect('json' in c && c.id).toBe('c');
  });

  it('refuses an id that is a number JSON cannot carry exactly (two lines would share an _id), takes one that is safe', () => {
    const bytes = Buffer.from('{"id":1234567890123456789,"text":"one"}\n{"id":1234567890123456790,"text":"two"}\n{"id":42,"text":"three"}\n');
    const [first, second, third] = ingestBytes(signer, bytes, 1, options);
    expect('error' in first && first.error).toMatch(/^the id in "id" is a number JSON cannot carry exactly \(read as 1234567890123456800\); write it as a string/);
    expect('error' in second).toBe(true);
    expect('json' in third && third.id).toBe('42');
  });

  it('gives the same documents from batches cut anywhere as from one batch', async () => {
    const texts = Array.from({ length: 40 }, (_, i) => `text ${i} — déjà vu ${'東京 '.repeat(i % 5)}`);
    const ndjson = Buffer.from(texts.map((t, i) => JSON.stringify({ id: `d${i}`, text: t })).join('\r\n') + '\r\n');
    const whole = ingestBytes(signer, ndjson, 1, options);
    const chunks: Buffer[] = [];
    for (let i = 0; i < ndjson.length; i += 13) chunks.push(ndjson.subarray(i, i + 13));
    const pieces = [];
    for await (const batch of lineBatches(Readable.from(chunks), 100)) pieces.push(...ingestBytes(signer, batch.bytes, batch.firstLineNumber, options));
    const withoutTime = (r: (typeof whole)[number]) => ('json' in r ? { ...r, json: r.json.replace(/"annotated_at":"[^"]+"/, '') } : r);
    expect(pieces.map(withoutTime)).toEqual(whole.map(withoutTime));
    expect(whole.map((r) => r.line)).toEqual(texts.map((_, i) => i + 1));
  });
});
