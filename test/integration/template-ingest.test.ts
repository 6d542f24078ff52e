// ingest --template-share on the real engines: the set drawn from the first documents of the input (a file
// read twice; a stream whose sample lines are held and then ingested), kept with the index before the first
// write and named by every params; a second ingest into the index signs with the same set; `similar` by
// text finds a page's copy and not the other pages of its template.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, expect, it } from 'vitest';
import { loadTemplate } from '../../src/indices/template-store.js';
import { ingestStream } from '../../src/jobs/ingest.js';
import { findSimilar } from '../../src/jobs/similar.js';
import { createSigner, resolveSignerSettings } from '../../src/signature.js';
import { minhashValues } from '../../src/sketch/lean-minhash.js';
import { runCli, runCliJson as cli } from '../support/documents.js';
import { keptDigests } from '../support/templates-kept.js';
import { TEMPLATE_TEXT, templatedPages } from '../support/templated-pages.js';
import { forEachEngine } from './harness.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-template-ingest-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const DOCS = templatedPages(40);
/** The documents as NDJSON, with a line that is not a document and a blank one among them (left out of the sample). */
const ndjson = (docs: ReadonlyArray<{ id: string; text: string }>) => ['not a document', '', ...docs.map((d) => JSON.stringify(d))].join('\n');
const PLAIN = resolveSignerSettings().params;

forEachEngine('ingest --template-share', (ctx) => {
  /** Every stored document's params, and whether its MinHash is the signer's with `digest`'s set. */
  async function checkSigned(index: string, digest: string, count: number): Promise<void> {
    const signer = createSigner({ template: await loadTemplate(ctx.client, index, digest) });
    const found = await ctx.client.search(index, { size: 200, _source: ['text', 'near_dup.params', 'near_dup.minhash'] });
    expect(found.hits.hits).toHaveLength(count);
    for (const hit of found.hits.hits) {
      const source = hit._source as { text: string; near_dup: { params: string; minhash: string } };
      expect(source.near_dup.params).toBe(`${PLAIN};core=${digest}`);
      expect(Array.from(minhashValues(source.near_dup.minhash))).toEqual(Array.from(signer(source.text).minhash));
    }
  }

  it('draws the set from a file read twice, keeps it with the index, and a second ingest signs with it', async () => {
    const index = ctx.index('tpl-ingest');
    const file = path.join(tmp, `${index}.ndjson`);
    writeFileSync(file, ndjson(DOCS));
    const url = ['--url', ctx.engine.url];
    const run = await cli(['ingest', ...url, '--index', index, '--field', 'text', '--id-field', 'id', '--file', file, '--template-share', '0.05', '--template-sample', '1000', '--errors-file', path.join(tmp, 'e1.jsonl')]);
    expect(run.json).toMatchObject({ seen: DOCS.length + 1, indexed: DOCS.length, failed: 1 });
    const digest = String(run.json.params).split(';core=')[1];
    expect(run.json.params).toBe(`${PLAIN};core=${digest}`);
    expect(await keptDigests(ctx.client, index)).toEqual([digest]);
    const template = await loadTemplate(ctx.client, index, digest);
    expect(new Set(template.hashes)).toEqual(new Set(createSigner().tokenHashes(TEMPLATE_TEXT)));
    expect(template.sample).toBe(DOCS.length);
    await checkSigned(index, digest, DOCS.length);

    // More pages of the template, from a stream: the index's set, not one drawn from them.
    const more = templatedPages(10, 'q', 100).slice(0, 10);
    const again = await ingestStream(ctx.client, Readable.from([ndjson(more)]), { index, fields: ['text'], output: { idField: 'id', errorsFile: path.join(tmp, 'e2.jsonl') }, template: { share: 0.05, sample: 1000 } });
    expect(again).toMatchObject({ params: `${PLAIN};core=${digest}`, indexed: more.length });
    expect(await keptDigests(ctx.client, index)).toEqual([digest]);
    await checkSigned(index, digest, DOCS.length + more.length);

    const similar = await findSimilar(ctx.client, { index, text: DOCS[2].text, minSimilarity: 0.5, method: 'minhash' });
    expect(similar.hits.map((h) => h.id).sort()).toEqual(['p2', 'p2-edit']);
  });

  it('holds the sample lines of a stream read once, and ingests them all after the draw', async () => {
    const index = ctx.index('tpl-ingest-stream');
    // Lines given a few at a time, as standard input gives them.
    const chunks = ndjson(DOCS).match(/[\s\S]{1,700}/g) as string[];
    const summary = await ingestStream(ctx.client, Readable.from(chunks), { index, fields: ['text'], output: { idField: 'id', errorsFile: path.join(tmp, 'e3.jsonl') }, template: { share: 0.05, sample: 20 } });
    expect(summary).toMatchObject({ seen: DOCS.length + 1, indexed: DOCS.length, failed: 1 });
    const digest = summary.params.split(';core=')[1];
    expect(await keptDigests(ctx.client, index)).toEqual([digest]);
    const template = await loadTemplate(ctx.client, index, digest);
    expect(template.sample).toBe(20);
    expect(new Set(template.hashes)).toEqual(new Set(createSigner().tokenHashes(TEMPLATE_TEXT)));
    await checkSigned(index, digest, DOCS.length);
  });

  it('reads a --file that is a FIFO once: the sample lines are held and every line indexed', async () => {
    const index = ctx.index('tpl-ingest-fifo');
    // Enough pages that the sample and the read-ahead are a small part of the input: read again, a FIFO
    // would go on from where the first pass stopped and the lines before it would never be indexed.
    const docs = templatedPages(2000);
    const source = path.join(tmp, `${index}.ndjson`);
    writeFileSync(source, ndjson(docs));
    const fifo = path.join(tmp, `${index}.fifo`);
    expect(spawnSync('mkfifo', [fifo]).status).toBe(0);
    const writer = spawn('sh', ['-c', 'cat "$1" > "$2"', 'sh', source, fifo], { stdio: 'ignore' });
    const run = runCli(['ingest', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--id-field', 'id', '--file', fifo, '--template-share', '0.05', '--template-sample', '50', '--errors-file', path.join(tmp, 'e4.jsonl')]);
    const result = await run.done;
    writer.kill();
    const summary = JSON.parse(result.stdout.trim().split('\n').pop() ?? '{}');
    expect(summary, result.stderr).toMatchObject({ seen: docs.length + 1, indexed: docs.length, failed: 1 });
    await ctx.client.refresh(index);
    expect(await ctx.client.count(index)).toBe(docs.length);
  }, 120_000);
});
