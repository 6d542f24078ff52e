// ingest into a data stream, built as users build it (an index template with data_stream: {}, lines with
// an @timestamp): every document written is counted indexed and is there (the final check looked them up by
// the stream's name, which the engines refuse for a get, and failed every one); with --id-field the
// documents go in with `create`, the only write a stream takes, and a second run of the same file finds
// them already there, unchanged, not failed.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { forEachEngine } from './harness.js';
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

  async function newStream(label: string): Promise<string> {
    const stream = ctx.name(label);
    const template = ctx.name(`${label}-template`);
    await ctx.client.putIndexTemplate(template, { index_patterns: [`${stream}*`], data_stream: {}, priority: 600, template: { mappings: { properties: { text: { type: 'text' } } } } });
    ctx.cleanup(() => ctx.client.request('DELETE', `/_index_template/${template}`));
    ctx.cleanup(() => ctx.client.request('DELETE', `/_data_stream/${stream}`));
    return stream;
  }

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
});
