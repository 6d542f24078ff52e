// ingest into a data stream, built as users build it (an index template with data_stream: {}, lines with
// an @timestamp): every document written is counted indexed and is there (the final check looked them up by
// the stream's name, which the engines refuse for a get, and failed every one); with --id-field the
// documents go in with `create`, the only write a stream takes, and a second run of the same file finds
// them already there, unchanged, not failed.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { dataStream, forEachEngine } from './harness.js';
import { runCliJson as cli } from '../support/documents.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-ingest-streams-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const WORDS = ['alpha', 'bravo', 'charlie', 'delta', 'echo', 'foxtrot', 'golf', 'hotel', 'india', 'juliet', 'kilo', 'lima'];
/** N lines with an @timestamp and an id, over more than one bulk request and one check of a thousand. */
function streamLines(n: number): string[] {
  return Array.from({ length: n }, (_, i) =>
    JSON.stringify({ '@timestamp': new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), id: `doc-${i}`, text: `${WORDS[i % 12]} ${WORDS[(i * 7) % 12]} number ${i} of the stream` }),
  );
}

forEachEngine('ingest into a data stream', (ctx) => {
  const N = 1500;

  const newStream = (label: string) => dataStream(ctx, label, { priority: 600 });

  async function count(stream: string): Promise<number> {
    await ctx.client.refresh(stream);
    return (await ctx.client.request<{ count: number }>('GET', `/${stream}/_count`)).count;
  }

  function ingest(stream: string, file: string, ...more: string[]) {
    return cli(['ingest', '--url', ctx.engine.url, '--index', stream, '--field', 'text', '--file', file, '--errors-file', path.join(tmp, `${stream}-errors.jsonl`), ...more]);
  }

  it('with ids near-dup chooses: every line indexed, confirmed where it was written, and counted on the stream', async () => {
    const stream = await newStream('stream-ids');
    const file = path.join(tmp, `${stream}.ndjson`);
    writeFileSync(file, `${streamLines(N).join('\n')}\n`);
    const run = await ingest(stream, file);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ seen: N, indexed: N, failed: 0, confirmed: N });
    expect(await count(stream)).toBe(N);
  });

  it('with --id-field: written with create; a second run of the same file finds every line already there, unchanged; a changed line at a taken id fails, named', async () => {
    const stream = await newStream('stream-user-ids');
    const file = path.join(tmp, `${stream}.ndjson`);
    const lines = streamLines(N);
    writeFileSync(file, `${lines.join('\n')}\n`);
    const first = await ingest(stream, file, '--id-field', 'id');
    expect(first.code, first.stderr).toBe(0);
    expect(first.json).toMatchObject({ seen: N, indexed: N, unchanged: 0, failed: 0, confirmed: N });
    expect(await count(stream)).toBe(N);

    const again = await ingest(stream, file, '--id-field', 'id');
    expect(again.code, again.stderr).toBe(0);
    expect(again.json).toMatchObject({ seen: N, indexed: 0, unchanged: N, failed: 0 });
    expect(again.stderr).toContain(`${N} documents already in the data stream, the same, not written again`);
    expect(await count(stream)).toBe(N);

    // One line edited under the same id, one new line: the edit cannot overwrite in a stream, and says so.
    const changed = JSON.stringify({ ...JSON.parse(lines[7]), text: 'an edited text' });
    const added = JSON.stringify({ '@timestamp': '2026-02-01T00:00:00Z', id: 'doc-new', text: 'a line the first runs did not have' });
    const third = path.join(tmp, `${stream}-third.ndjson`);
    writeFileSync(third, [...lines.slice(0, 7), changed, ...lines.slice(8), added].join('\n'));
    const errorsFile = path.join(tmp, `${stream}-errors.jsonl`);
    const run = await ingest(stream, third, '--id-field', 'id');
    expect(run.code, run.stderr).toBe(1);
    expect(run.json).toMatchObject({ seen: N + 1, indexed: 1, unchanged: N - 1, failed: 1 });
    const failed = readFileSync(errorsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ id: 'doc-7', line: 8, status: 409 });
    expect(failed[0].reason).toMatch(/^another document with this id is already in \.ds-.+ \(a data stream never overwrites a document, it only creates\): delete that one, or give this line another id/);
    expect(await count(stream)).toBe(N + 1);
  });
});
