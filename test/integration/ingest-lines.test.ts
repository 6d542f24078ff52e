// ingest of a file with lines longer than --max-line-bytes beside good ones: each long line fails alone,
// named in the errors file and the summary with its number and length, and every good line is indexed
// (a 1 GB line ended the whole run at 3.1 GB of memory, "Cannot create a string longer than 0x1fffffe8
// characters", with neither good line indexed).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { forEachEngine } from './harness.js';
import { runCliJson as cli, sourcesById } from '../support/documents.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-ingest-lines-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const line = (id: string, text: string) => JSON.stringify({ id, text });

forEachEngine('ingest: lines over --max-line-bytes', (ctx) => {
  it('fail alone, named with their number and length; the good lines beside them are indexed', async () => {
    const index = ctx.index('long-lines');
    const file = path.join(tmp, `${index}.ndjson`);
    const errorsFile = path.join(tmp, `${index}-errors.jsonl`);
    const long = line('long', 'lorem ipsum '.repeat(2000)); // 24,025 bytes
    const last = line('last-long', 'dolor sit amet '.repeat(1000));
    const lines = [line('g1', 'the quick brown fox jumps over the lazy dog'), long, line('g2', 'pack my box with five dozen liquor jugs'), '', line('g3', 'sphinx of black quartz judge my vow'), last];
    writeFileSync(file, lines.join('\n')); // the last line, too long, ends the file without a line feed
    const url = ['--url', ctx.engine.url];
    const run = await cli(['ingest', ...url, '--index', index, '--field', 'text', '--id-field', 'id', '--file', file, '--errors-file', errorsFile, '--max-line-bytes', '4096']);
    expect(run.code, run.stderr).toBe(1);
    const bytes = (text: string) => Buffer.byteLength(text);
    expect(run.json).toMatchObject({ seen: 5, indexed: 3, failed: 2, blank: 1, tooLong: 2, firstTooLong: { line: 2, bytes: bytes(long) } });
    expect(run.stderr).toContain(`2 lines longer than --max-line-bytes passed over unread (the first: line 2, ${bytes(long)} bytes)`);
    const failed = readFileSync(errorsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(failed.map((f) => [f.line, f.bytes])).toEqual([[2, bytes(long)], [6, bytes(last)]]);
    expect(failed[0].reason).toBe(`the line is ${bytes(long)} bytes, longer than the 4096 bytes of maxLineBytes (--max-line-bytes): not read; split the document, or raise the limit`);
    const sources = await sourcesById(ctx.client, index);
    expect([...sources.keys()].sort()).toEqual(['g1', 'g2', 'g3']);
    for (const source of sources.values()) expect(source.near_dup?.params).toEqual(expect.any(String));
  });
});
