// Template sets across a rollover on the real engines: a data stream annotated with --template-share, rolled
// over, and the backing index the set was drawn on deleted (as retention deletes it): what the proxy and
// ingest write to the new backing index is signed with the same set (the same core=), found under the data
// stream's name; the same for the indices of an alias that marks its write index. A plain index keeps its
// set by uuid: made again under its name, it keeps none.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { findTemplate, loadTemplate, TEMPLATE_INDEX, templateDraw } from '../../src/indices/template-store.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { ingestStream } from '../../src/jobs/ingest.js';
import { type RunningProxy, startProxy } from '../../src/proxy/server.js';
import { createSigner } from '../../src/signature.js';
import { minhashValues } from '../../src/sketch/lean-minhash.js';
import { templatedPages } from '../support/templated-pages.js';
import { forEachEngine } from './harness.js';

const ASKED = { share: 0.05, sample: 1000 };
const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-template-rollover-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();

forEachEngine('template sets across a rollover', (ctx) => {
  const warnings: string[] = [];
  let proxy: RunningProxy;
  const stream = ctx.name('tpl-stream');
  const alias = ctx.name('tpl-rollover');

  beforeAll(async () => {
    const template = ctx.name('tpl-stream-template');
    await ctx.client.putIndexTemplate(template, { index_patterns: [`${stream}*`], data_stream: {}, priority: 500, template: { mappings: { properties: { text: { type: 'text' } } } } });
    ctx.cleanup(() => ctx.client.request('DELETE', `/_data_stream/${stream}`));
    ctx.cleanup(() => ctx.client.request('DELETE', `/_index_template/${template}`));
    proxy = await startProxy({
      upstream: { url: ctx.engine.url },
      host: '127.0.0.1',
      port: 0,
      index: `${stream}*,${alias}*`,
      fields: ['text'],
      prefix: 'near_dup',
      signer: {},
      template: ASKED,
      maxChars: 10_000_000,
      onError: 'reject',
      threads: 1,
      maxUpstreamBytes: 16 * 1024 * 1024,
      warn: (line) => warnings.push(line),
    });
    ctx.cleanup(() => proxy.close());
  });

  /** The set's digest annotate signed `name` with. */
  async function annotated(name: string): Promise<string> {
    await annotateIndex(ctx.client, { index: name, fields: ['text'], template: ASKED });
    const stored = await ctx.client.search(name, { size: 1, _source: ['near_dup.params'] });
    return (stored.hits.hits[0]._source as { near_dup: { params: string } }).near_dup.params.split(';core=')[1];
  }

  /** Rolls `name` over and deletes the index the write went to before (retention), giving the new write index. */
  async function rollOverAndDropFirst(name: string): Promise<string> {
    const rolled = await ctx.client.request<{ old_index: string; new_index: string }>('POST', `/${name}/_rollover`);
    await ctx.client.request('DELETE', `/${rolled.old_index}`);
    return rolled.new_index;
  }

  /** Writes a page through the proxy and one by ingest into `name`; each stored with `digest`'s set, in `backing`. */
  async function expectWritesSignedWith(name: string, backing: string, digest: string, op: 'create' | 'index'): Promise<void> {
    const [viaProxy, viaIngest] = templatedPages(2, `${op}-`, 700);
    const bulk = `${JSON.stringify({ [op]: { _index: name, _id: viaProxy.id } })}\n${JSON.stringify({ '@timestamp': at(50), text: viaProxy.text })}\n`;
    const answer = await fetch(`${proxy.url}/_bulk?refresh=true`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: bulk });
    expect(((await answer.json()) as { errors: boolean }).errors).toBe(false);
    // Ingest's own ids (a user's id is written with `index`, which a data stream refuses).
    const line = JSON.stringify({ '@timestamp': at(51), text: viaIngest.text });
    const errorsFile = path.join(tmp, `${name}.errors.jsonl`);
    const ingested = await ingestStream(ctx.client, Readable.from([line]), { index: name, fields: ['text'], output: { errorsFile }, template: ASKED });
    expect(ingested.params.split(';core=')[1]).toBe(digest);
    await ctx.client.refresh(name);
    const signer = createSigner({ template: await loadTemplate(ctx.client, backing, digest) });
    for (const doc of [viaProxy, viaIngest]) {
      const found = await ctx.client.search<{ near_dup: { params: string; minhash: string } }>(name, { query: { match: { text: doc.text.split(' ').at(-1) } }, _source: ['near_dup.params', 'near_dup.minhash'] });
      expect(found.hits.hits.length, doc.id).toBe(1);
      const hit = found.hits.hits[0];
      const signed = hit._source?.near_dup;
      expect(hit._index).toBe(backing);
      expect(signed?.params.split(';core=')[1]).toBe(digest);
      expect(Array.from(minhashValues(signed?.minhash ?? ''))).toEqual(Array.from(signer(doc.text).minhash));
    }
    expect(warnings.filter((w) => w.includes(name))).toEqual([]);
  }

  it("signs a data stream's rolled-over backing index with the set drawn for the stream, through the proxy and by ingest", async () => {
    const pages = templatedPages(40);
    const lines = pages.flatMap((d, i) => [{ create: { _index: stream, _id: d.id } }, { '@timestamp': at(i), text: d.text }]);
    expect((await ctx.client.bulk(lines)).errors).toBe(false);
    await ctx.client.refresh(stream);
    const digest = await annotated(stream);
    // One set for the stream (other tests' indices have sets of the same digest: the same pages).
    const kept = await ctx.client.search(TEMPLATE_INDEX, { size: 1000, query: { term: { digest } } });
    const ours = kept.hits.hits.map((h) => h._source as { index: string; uuid: string }).filter((d) => d.index.includes(stream));
    expect(ours.map((d) => [d.index, d.uuid])).toEqual([[stream, `data-stream:${stream}`]]);
    const backing = await rollOverAndDropFirst(stream);
    expect((await findTemplate(ctx.client, backing, templateDraw({}, ASKED)))?.digest).toBe(digest);
    await expectWritesSignedWith(stream, backing, digest, 'create');
  });

  it('signs the index an alias rolls over to with the set drawn through the alias', async () => {
    const first = `${alias}-000001`;
    ctx.cleanup(() => ctx.client.request('DELETE', `/${alias}-000002`));
    await ctx.client.createIndex(first, { aliases: { [alias]: { is_write_index: true } }, mappings: { properties: { text: { type: 'text' } } } });
    const lines = templatedPages(40).flatMap((d) => [{ index: { _index: alias, _id: d.id } }, { text: d.text }]);
    expect((await ctx.client.bulk(lines)).errors).toBe(false);
    await ctx.client.refresh(alias);
    const digest = await annotated(alias);
    const next = await rollOverAndDropFirst(alias);
    await expectWritesSignedWith(alias, next, digest, 'index');
  });

  it('keeps the set of a plain index by its uuid: the index made again under its name keeps none', async () => {
    const index = ctx.index('tpl-again');
    const lines = templatedPages(40).flatMap((d) => [{ index: { _index: index, _id: d.id } }, { text: d.text }]);
    expect((await ctx.client.bulk(lines)).errors).toBe(false);
    await ctx.client.refresh(index);
    expect(await findTemplate(ctx.client, index, templateDraw({}, ASKED))).toBeUndefined();
    await annotated(index);
    expect(await findTemplate(ctx.client, index, templateDraw({}, ASKED))).toBeDefined();
    await ctx.client.deleteIndex(index);
    await ctx.client.createIndex(index);
    expect(await findTemplate(ctx.client, index, templateDraw({}, ASKED))).toBeUndefined();
  });
});
