// near-dup proxy between real clients no one here wrote and a real engine: the official JavaScript clients'
// bulk helpers and the Python clients' helpers.bulk index through it; every document then holds exactly the
// fields `near-dup sign` gives its text, similar finds the planted duplicates, documents without text are
// answered as failed items naming the field, and what is not a document write comes back byte for byte.
import { mkdtempSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { Client as ElasticsearchClient } from '@elastic/elasticsearch';
import { Client as OpenSearchClient } from '@opensearch-project/opensearch';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSigner } from '../../src/signature.js';
import { DEFAULT_MIN_SIMILARITY, findSimilar } from '../../src/jobs/similar.js';
import { type RunningProxy, startProxy } from '../../src/proxy/server.js';
import { fixtureSample } from '../support/corpus.js';
import { expectedSignatures, runCli, signatureFields, sourcesById } from '../support/documents.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { exactJaccardOf } from '../support/jaccard.js';
import { pythonBulk, pythonWithClients } from '../support/python-clients.js';
import { startProxyProcess } from '../support/proxy-process.js';
import { forEachEngine } from './harness.js';

const signer = createSigner();
const docs = fixtureSample(10, { seed: 12 });
const textless = [
  { id: 'no-text', title: 'a document without its text field' },
  { id: 'not-text', text: { nested: 'an object where the text should be' } },
];
const expected = expectedSignatures(signer, docs);
const exactJaccard = exactJaccardOf(signer, docs);
// Pairs 0.1 above similar's default bar, which the lookups below use.
const strongPairs = docs.flatMap((a, i) => docs.slice(i + 1).filter((b) => exactJaccard(a.id, b.id) >= DEFAULT_MIN_SIMILARITY.jaccard + 0.1).map((b) => [a.id, b.id] as const));
const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-proxy-'));
const docsFile = path.join(tmp, 'docs.ndjson');
writeFileSync(docsFile, [...docs, ...textless].map((d) => JSON.stringify(d)).join('\n') + '\n');

/** A proxy on a free loopback port signing the field "text" of the indices matching `index`, refusing what it cannot sign. */
function proxyOptions(upstream: string, index: string): Parameters<typeof startProxy>[0] {
  return { upstream: { url: upstream }, host: '127.0.0.1', port: 0, index, fields: ['text'], prefix: 'near_dup', signer: {}, maxChars: 10_000_000, onError: 'reject', threads: 1, maxUpstreamBytes: 16 * 1024 * 1024, warn: () => undefined };
}

/** `near-dup sign --jsonl` of the documents: bands, SimHash and content hash by id. */
async function signedByCli(): Promise<Map<string, { bands: string[]; simhash: string; content_hash: string }>> {
  const file = path.join(tmp, 'texts.ndjson');
  writeFileSync(file, docs.map((d) => JSON.stringify({ id: d.id, text: d.text })).join('\n') + '\n');
  const result = await runCli(['sign', '--jsonl', '--file', file]).done;
  expect(result.code, result.stderr).toBe(0);
  return new Map(result.stdout.trim().split('\n').map((line) => {
    const s = JSON.parse(line);
    return [s.id, s];
  }));
}

forEachEngine('proxy with clients we did not write', (ctx) => {
  let proxy: RunningProxy;
  let viaCli: Awaited<ReturnType<typeof signedByCli>>;
  const prefix = ctx.name('proxied');
  const warnings: string[] = [];

  beforeAll(async () => {
    proxy = await startProxy({
      ...proxyOptions(ctx.engine.url, `${prefix}-*`),
      threads: 2,
      maxUpstreamBytes: 64 * 1024, // several parts per bulk request, as a large bulk would have
      warn: (line) => warnings.push(line),
    });
    viaCli = await signedByCli();
    expect(strongPairs.length).toBeGreaterThan(3);
  });
  afterAll(async () => {
    await proxy?.close();
    for (const suffix of ['js', 'py', 'doc', 'bytes']) await ctx.client.deleteIndex(`${prefix}-${suffix}`).catch(() => undefined);
  });

  /** Every document holds its own fields and exactly the signature near-dup sign gives its text; no textless one got in. */
  async function expectSigned(index: string): Promise<void> {
    const stored = await sourcesById(ctx.client, index);
    expect([...stored.keys()].sort()).toEqual(docs.map((d) => d.id).sort());
    for (const doc of docs) {
      const { near_dup, ...rest } = stored.get(doc.id) as Record<string, any>;
      expect(rest).toEqual(doc);
      expect(signatureFields(near_dup), doc.id).toEqual(expected.get(doc.id));
      const cli = viaCli.get(doc.id);
      expect([near_dup.simhash, near_dup.bands, near_dup.content_hash]).toEqual([cli?.simhash, cli?.bands, cli?.content_hash]);
    }
    for (const [a, b] of strongPairs) {
      const found = await findSimilar(ctx.client, { index, id: a, limit: 100, method: 'minhash' });
      expect(found.hits.map((h) => h.id), `${a} -> ${b} (exact ${exactJaccard(a, b).toFixed(3)})`).toContain(b);
    }
  }

  it("the official JavaScript client's bulk helper", async () => {
    const index = `${prefix}-js`;
    const dropped: Array<{ status: number; error: any; document: any }> = [];
    const options = {
      datasource: [...docs, ...textless],
      onDocument: (doc: { id: string }) => ({ index: { _index: index, _id: doc.id } }),
      onDrop: (item: { status: number; error: any; document: any }) => dropped.push(item),
      refreshOnCompletion: true,
      flushBytes: 40_000,
    };
    const stats =
      ctx.engine.flavour === 'elasticsearch'
        ? await new ElasticsearchClient({ node: proxy.url }).helpers.bulk(options as never)
        : await new OpenSearchClient({ node: proxy.url }).helpers.bulk(options as never);
    expect(stats.successful).toBe(docs.length);
    expect(dropped.map((d) => [d.document.id, d.status, d.error.type, d.error.reason])).toEqual([
      ['no-text', 400, 'near_dup_signing_exception', 'no text: field "text" is not in the document'],
      ['not-text', 400, 'near_dup_signing_exception', 'field "text" holds an object, not text; name a text field with --field'],
    ]);
    await expectSigned(index);
  });

  it("the Python client's helpers.bulk", async () => {
    const python = await pythonWithClients();
    const index = `${prefix}-py`;
    const result = await pythonBulk(python, { flavour: ctx.engine.flavour, url: proxy.url, index, file: docsFile });
    expect(result.success).toBe(docs.length);
    expect(result.errors.map((e) => [e.index._id, e.index.status, e.index.error.type])).toEqual([
      ['no-text', 400, 'near_dup_signing_exception'],
      ['not-text', 400, 'near_dup_signing_exception'],
    ]);
    await expectSigned(index);
  }, 300_000);

  it('single documents: _doc, _create and _update with doc or upsert; a textless one refused with the reason', async () => {
    const index = `${prefix}-doc`;
    const [a, b] = docs;
    const put = (method: string, p: string, body: unknown) =>
      fetch(`${proxy.url}/${index}${p}`, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect((await put('PUT', '/_doc/a?refresh=true', { text: a.text })).status).toBe(201);
    expect((await put('PUT', '/_create/b?refresh=true', { text: b.text, n: 1 })).status).toBe(201);
    const refused = await put('PUT', '/_doc/c', { title: 'no text' });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as any).error).toMatchObject({ type: 'near_dup_signing_exception', reason: expect.stringContaining('field "text" is not in the document') });
    // A change of text re-signs; a change of another field leaves the signature as it was.
    expect((await put('POST', '/_update/a?refresh=true', { doc: { text: b.text } })).status).toBe(200);
    expect((await put('POST', '/_update/b?refresh=true', { doc: { n: 2 } })).status).toBe(200);
    expect((await put('POST', '/_update/d?refresh=true', { doc: { n: 3 }, upsert: { text: a.text } })).status).toBe(201);
    const stored = await sourcesById(ctx.client, index);
    expect(stored.get('c')).toBeUndefined();
    expect(signatureFields(stored.get('a')?.near_dup)).toEqual(expected.get(b.id));
    expect(stored.get('b')?.n).toBe(2);
    expect(signatureFields(stored.get('b')?.near_dup)).toEqual(expected.get(b.id));
    expect(signatureFields(stored.get('d')?.near_dup)).toEqual(expected.get(a.id));
    const mapping = (await ctx.client.getMapping(index))[index].mappings as any;
    expect(mapping.properties.near_dup.properties.minhash.type).toBe('binary');
  });

  it('everything else comes back byte for byte, headers included; the counters add up', async () => {
    const index = `${prefix}-bytes`;
    const other = ctx.index('not-proxied');
    await fetch(`${proxy.url}/${other}/_doc/1?refresh=true`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: '{"text": "not signed here"}' });
    for (const p of [`/${other}/_doc/1`, `/${other}/_search?q=signed`, '/_cluster/health?filter_path=cluster_name', `/${index}/_doc/missing`]) {
      const [direct, proxied] = await Promise.all([fetch(ctx.engine.url + p), fetch(proxy.url + p)]);
      expect(proxied.status, p).toBe(direct.status);
      // The time a search took differs between two runs, and with it the length of its answer.
      const varying = ['date', 'connection', 'keep-alive', ...(p.includes('_search') ? ['content-length'] : [])];
      const headers = (r: Response) => [...r.headers].filter(([name]) => !varying.includes(name));
      expect(headers(proxied), p).toEqual(headers(direct));
      const body = async (r: Response) => (await r.text()).replace(/"took":\d+/, '');
      expect(await body(proxied), p).toBe(await body(direct));
    }
    const stored = (await sourcesById(ctx.client, other)).get('1');
    expect(stored).toEqual({ text: 'not signed here' });
    const head = await fetch(proxy.url + '/', { method: 'HEAD' });
    expect(head.status).toBe((await fetch(ctx.engine.url + '/', { method: 'HEAD' })).status);
    const stats = (await (await fetch(`${proxy.url}/_near_dup/stats`)).json()) as any;
    expect(stats.documents.signed).toBeGreaterThanOrEqual(2 * docs.length + 4);
    expect(stats.documents.rejected).toBeGreaterThanOrEqual(5);
    expect(stats.documents.other_indices).toBeGreaterThanOrEqual(1);
    expect(stats.latency_added_ms.requests).toBeGreaterThan(0);
    expect(warnings).toEqual([]);
  });
});

forEachEngine('proxy: a later part of a bulk body refused as a whole (429)', (ctx) => {
  const faults = new FaultProxy(ctx.engine.url);
  const prefix = ctx.name('refused');
  let proxy: RunningProxy;
  beforeAll(async () => {
    proxy = await startProxy({
      ...proxyOptions(await faults.start(), `${prefix}-*`),
      maxUpstreamBytes: 16 * 1024, // each client request goes up in several parts
    });
  });
  afterAll(async () => {
    await proxy?.close();
    await faults.stop();
    for (const suffix of ['raw', 'helper']) await ctx.client.deleteIndex(`${prefix}-${suffix}`).catch(() => undefined);
  });

  it('the items of the applied parts are answered as applied, the rest as 429 items: the raw answer', async () => {
    const index = `${prefix}-raw`;
    faults.reset();
    faults.decide = (r) => (r.kind === 'bulk' && r.nth === 2 ? { status: 429 } : 'pass');
    const body = docs.map((d) => `${JSON.stringify({ index: { _index: index, _id: d.id } })}\n${JSON.stringify(d)}\n`).join('');
    const response = await fetch(`${proxy.url}/_bulk`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body });
    expect(response.status).toBe(200);
    const items = ((await response.json()) as { errors: boolean; items: Array<{ index: { _id: string; status: number; error?: { type: string } } }> }).items;
    expect(items.map((i) => i.index._id)).toEqual(docs.map((d) => d.id));
    const applied = items.filter((i) => i.index.status === 201).map((i) => i.index._id);
    const notApplied = items.filter((i) => i.index.status === 429);
    expect(applied.length).toBeGreaterThan(0);
    expect(notApplied.length).toBe(docs.length - applied.length);
    expect(new Set(notApplied.map((i) => i.index.error?.type))).toEqual(new Set(['es_rejected_execution_exception']));
    expect(faults.injected.status429).toBe(1);
    const stored = await sourcesById(ctx.client, index);
    expect([...stored.keys()].sort()).toEqual(applied.sort());
    expect([...stored.values()].every((d) => d.near_dup !== undefined)).toBe(true);
  });

  it("the official JavaScript client's bulk helper sends the refused items again, alone: every document once, none lost", async () => {
    const index = `${prefix}-helper`;
    faults.reset();
    faults.decide = (r) => (r.kind === 'bulk' && r.nth === 2 ? { status: 429 } : 'pass');
    const dropped: unknown[] = [];
    const options = {
      datasource: docs,
      onDocument: () => ({ index: { _index: index } }), // ids made by the engine: a document sent twice would be there twice
      onDrop: (item: unknown) => dropped.push(item),
      refreshOnCompletion: true,
      flushBytes: 10_000_000,
      retries: 3,
      wait: 50,
    };
    const stats =
      ctx.engine.flavour === 'elasticsearch'
        ? await new ElasticsearchClient({ node: proxy.url }).helpers.bulk(options as never)
        : await new OpenSearchClient({ node: proxy.url }).helpers.bulk(options as never);
    expect(faults.injected.status429).toBe(1);
    expect(dropped).toEqual([]);
    expect(stats.successful).toBe(docs.length);
    const stored = [...(await sourcesById(ctx.client, index)).values()];
    expect(stored.map((d) => d.id).sort()).toEqual(docs.map((d) => d.id).sort());
    expect(stored.every((d) => d.near_dup !== undefined)).toBe(true);
  });
});

// Larger than the engines' default request limit (100 MB), so the proxy is told to take it (--max-body-mb 200).
forEachEngine('proxy: a 150 MB bulk body streams through', (ctx) => {
  it("the proxy (its own process, each thread's heap capped at 64 MB) passes it whole, its memory growing by far less than the body", async () => {
    const index = ctx.index('streamed');
    // Held whole, the body would not fit in a 64 MB heap; the cap also keeps V8 from growing lazily, so the
    // peak below is what the proxy needs rather than what the collector put off.
    const env = { NODE_OPTIONS: '--max-old-space-size=64 --max-semi-space-size=2' };
    // One signing thread: each thread's heap lets collectable buffers pile up for a while, which is noise here.
    // Parts of 8 MB: the test engines' 512 MB heaps refused 32 MB parts at times (429, parent circuit breaker).
    const { url, run, memory } = await startProxyProcess(['--url', ctx.engine.url, '--index', index, '--field', 'text', '--threads', '1', '--max-upstream-mb', '8', '--max-body-mb', '200'], env);
    const before = memory('VmRSS');
    const { documents: count, bytes, body } = largeBulk(index, 150 * 1024 * 1024);
    const response = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = http.request(`${url}/_bulk`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on('error', reject);
      Readable.from(body).pipe(req);
    });
    const peak = memory('VmHWM');
    const documents = count();
    run.child.kill('SIGTERM');
    const stopped = await run.done;
    expect(response.status, response.text.slice(0, 300)).toBe(200);
    const answer = JSON.parse(response.text);
    expect(answer.errors).toBe(false);
    expect(answer.items.length).toBe(documents);
    expect(answer.items.map((i: any) => i.index._id)).toEqual(Array.from({ length: documents }, (_, i) => `d${i}`));
    expect(bytes()).toBeGreaterThanOrEqual(150 * 1024 * 1024);
    expect(JSON.parse(stopped.stdout.trim()).documents.signed).toBe(documents);
    await ctx.client.refresh(index);
    expect(await ctx.client.count(index)).toBe(documents);
    // Held whole, the body alone would add 150 MB (and its signed copy more); streamed, it adds about 60.
    process.stderr.write(`[proxy memory] ${ctx.engine.flavour}: peak ${peak.toFixed(0)} MB, ${before.toFixed(0)} MB before the body\n`);
    expect(peak - before, `peak ${peak.toFixed(0)} MB, ${before.toFixed(0)} MB before the body`).toBeLessThan(100);
  }, 600_000);
});

/** An NDJSON bulk body of at least `size` bytes of distinct documents, made as it is read. */
function largeBulk(index: string, size: number): { documents: () => number; bytes: () => number; body: Iterable<string> } {
  const words = docs.flatMap((d) => d.text.split(/\s+/)).filter(Boolean);
  let sent = 0;
  let documents = 0;
  function* body(): Generator<string> {
    let seed = 1;
    while (sent < size) {
      let text = '';
      while (text.length < 5000) {
        seed = (seed * 1103515245 + 12345) % 2147483648;
        text += words[seed % words.length] + ' ';
      }
      const lines = `${JSON.stringify({ index: { _index: index, _id: `d${documents++}` } })}\n${JSON.stringify({ text })}\n`;
      sent += Buffer.byteLength(lines);
      yield lines;
    }
  }
  return { documents: () => documents, bytes: () => sent, body: body() };
}
