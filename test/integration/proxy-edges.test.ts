// The proxy against hostile and careless clients, on real sockets in front of a real engine: clients that
// vanish in the middle of a gzip body, decompression bombs, content types with parameters, date math in
// index names, action lines the engines read more leniently than JSON, one id the engine refuses among a
// thousand. What must hold: every write that reaches a signed index is signed or refused (and counted),
// nothing the client did leaves sockets or memory behind, and one bad document costs only itself.
import net from 'node:net';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rawRequest } from '../support/raw-request.js';
import { type ProxyOptions, type RunningProxy, startProxy } from '../../src/proxy/server.js';
import { fixtureSample } from '../support/corpus.js';
import { startProxyProcess } from '../support/proxy-process.js';
import { type EngineContext, forEachEngine } from './harness.js';

const docs = fixtureSample(6, { seed: 5 });

const send = rawRequest;

/** Bulk lines of `count` distinct documents for `index`, ids `${idPrefix}0`, `${idPrefix}1`, ... */
const distinctDocs = (count: number, index: string, idPrefix: string) =>
  Array.from({ length: count }, (_, i) => [{ index: { _index: index, _id: `${idPrefix}${i}` } }, { text: `${docs[i % docs.length].text} ${i}` }]).flat();

/**
 * A raw-socket client that sends the head of a bulk request and `share` of its body, then neither sends
 * more nor reads: the proxy holds its request until the client leaves or times out.
 */
function stallingBulk(base: string, body: Buffer, share: number, encoding?: string): net.Socket {
  const url = new URL(base);
  const socket = net.connect(Number(url.port), url.hostname);
  socket.on('error', () => undefined);
  const coding = encoding ? `Content-Encoding: ${encoding}\r\n` : '';
  socket.write(`POST /_bulk HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n${coding}Content-Length: ${body.length}\r\n\r\n`);
  socket.write(body.subarray(0, Math.floor(body.length * share)));
  return socket;
}

const ndjson = (lines: unknown[]) => lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n') + '\n';
const stats = async (proxy: RunningProxy) => (await send(proxy.url, 'GET', '/_near_dup/stats', {})).json;

/** The documents of the indices matching `pattern`, by index then id; and how many lack the near-dup fields. */
async function stored(ctx: EngineContext, pattern: string): Promise<{ count: number; unsigned: string[] }> {
  await ctx.client.request('POST', `/${pattern}/_refresh`).catch(() => undefined);
  const found = await ctx.client.request<any>('POST', `/${pattern}/_search`, { size: 1000, query: { match_all: {} } }, { ignore_unavailable: true, allow_no_indices: true });
  const hits = found.hits.hits as Array<{ _index: string; _id: string; _source: Record<string, unknown> }>;
  return { count: hits.length, unsigned: hits.filter((h) => h._source.near_dup === undefined).map((h) => `${h._index}/${h._id}`) };
}

forEachEngine('proxy at the edges', (ctx) => {
  let proxy: RunningProxy;
  let passing: RunningProxy;
  const prefix = ctx.name('edge');
  const signed = `${prefix}-*`;

  /** A proxy on a free loopback port signing "text" of the test's indices, one thread, parts of 64 KB, refusing what it cannot sign. */
  const startEdgeProxy = (extra: Partial<ProxyOptions> = {}) =>
    startProxy({ upstream: { url: ctx.engine.url }, host: '127.0.0.1', port: 0, index: signed, fields: ['text'], prefix: 'near_dup', signer: {}, maxChars: 1e7, threads: 1, warn: () => undefined, onError: 'reject', maxUpstreamBytes: 64 * 1024, ...extra });

  beforeAll(async () => {
    // Twelve clients at once in the vanishing-clients test: writes in flight fixed above the cluster's choice,
    // every slot open to one address (the clients all come from 127.0.0.1).
    proxy = await startEdgeProxy({ maxConcurrentWrites: 16, maxWritesPerClient: 16 });
    passing = await startEdgeProxy({ onError: 'pass' });
  });
  afterAll(async () => {
    await proxy?.close();
    await passing?.close();
    await ctx.client.request('DELETE', `/${prefix}-*`).catch(() => undefined);
  });

  it('clients that vanish in the middle of a gzip body leave no request open upstream; the proxy goes on serving', async () => {
    const index = `${prefix}-vanish`;
    const lines = distinctDocs(1500, index, 'v');
    const gz = zlib.gzipSync(ndjson(lines));
    const clients = 12;
    const sockets = Array.from({ length: clients }, () => stallingBulk(proxy.url, gz, 0.7, 'gzip'));
    // Each has had parts of its body signed and sent upstream: the situation that leaked.
    await expect.poll(async () => (await stats(proxy)).upstream_sockets.in_use, { timeout: 30_000 }).toBeGreaterThanOrEqual(clients);
    for (const socket of sockets) socket.destroy();
    // Each request goes on until the proxy has read what its client had sent before it went (the socket's
    // buffers), then stops: its upstream request aborted, its socket released.
    await expect.poll(async () => (await stats(proxy)).upstream_sockets.in_use, { timeout: 60_000, interval: 500 }).toBe(0);
    expect((await stats(proxy)).requests.failed).toBe(clients);
    // The engine agrees: the connections still open to it are the proxy's idle ones, at most.
    const open = async () => {
      const nodes = await ctx.client.request<any>('GET', '/_nodes/stats/http');
      return Object.values(nodes.nodes).reduce((n: number, node: any) => n + node.http.current_open, 0);
    };
    const { idle } = (await stats(proxy)).upstream_sockets;
    expect(await open()).toBeLessThanOrEqual(idle + 4); // + the test's own client connections
    const after = await send(proxy.url, 'POST', '/_bulk', { 'content-type': 'application/x-ndjson' }, ndjson([{ index: { _index: index, _id: 'after' } }, { text: docs[0].text }]));
    expect([after.status, after.json.errors]).toEqual([200, false]);
  }, 120_000);

  it('paths, query strings and names the engines read their own way; updates that index a document; forged near-dup fields: every write to a signed index is signed or refused', async () => {
    const index = `${prefix}-paths`;
    const json = { 'content-type': 'application/json' };
    const nd = { 'content-type': 'application/x-ndjson' };
    const text = { text: docs[0].text };
    // Not normalized (`..` is an id to the engines) and decoded as they decode (%FF is U+FFFD).
    for (const id of ['..', '.', '%FF']) {
      const answer = await send(proxy.url, 'PUT', `/${index}/_doc/${id}`, json, JSON.stringify(text));
      expect([id, answer.status]).toEqual([id, 201]);
    }
    // The default index of a bulk given in the query string.
    const viaQuery = await send(proxy.url, 'POST', `/_bulk?index=${index}`, nd, ndjson([{ index: { _id: 'q1' } }, text, { index: { _id: 'q2' } }, { title: 'no text' }]));
    expect(viaQuery.json.items.map((i: any) => i.index.status)).toEqual([201, 400]);
    // A name with a line separator still matches the pattern, as on the engine.
    const odd = `${index}\u2028x`;
    const oddName = await send(proxy.url, 'POST', '/_bulk', nd, ndjson([{ index: { _index: odd, _id: 'o1' } }, text]));
    expect(oddName.json.items[0].index.status).toBe(201);
    // doc_as_upsert: the doc may become the document, so it is signed as one, or refused without text.
    const upsert = await send(proxy.url, 'POST', `/${index}/_update/u1`, json, JSON.stringify({ doc: text, doc_as_upsert: true }));
    expect(upsert.status).toBe(201);
    const bare = await send(proxy.url, 'POST', `/${index}/_update/u2`, json, JSON.stringify({ doc: { other: 1 }, doc_as_upsert: true }));
    expect([bare.status, bare.json.error.reason]).toEqual([400, expect.stringContaining('doc_as_upsert')]);
    // Forged fields: a dotted name beside the object, an update of the signature alone.
    const forged = await send(proxy.url, 'PUT', `/${index}/_doc/f1?refresh=true`, json, JSON.stringify({ ...text, 'near_dup.simhash': '0000000000000000', 'near_dup.bands': ['0:forged'] }));
    expect(forged.status).toBe(201);
    const overwrite = await send(proxy.url, 'POST', `/${index}/_update/f1?refresh=true`, json, JSON.stringify({ doc: { near_dup: { simhash: 'ffffffffffffffff' } } }));
    expect(overwrite.status).toBe(200);
    const { count, unsigned } = await stored(ctx, `${prefix}-paths*`);
    expect([count, unsigned]).toEqual([7, []]);
    const inOdd = await ctx.client.request<any>('GET', `/${encodeURIComponent(odd)}/_doc/o1`);
    expect(inOdd._source.near_dup.simhash).toMatch(/^[0-9a-f]{16}$/);
    const kept = await ctx.client.request<any>('GET', `/${index}/_doc/f1`);
    expect(kept._source.near_dup.simhash).not.toMatch(/^(0|f)+$/);
    expect(JSON.stringify(kept._source)).not.toContain('forged');
    const byBand = await ctx.client.request<any>('POST', `/${index}/_search`, { query: { term: { 'near_dup.bands': '0:forged' } } });
    expect(byBand.hits.hits).toEqual([]);
  });

  it('writes are read a few at a time (--max-concurrent-writes): many clients at once cost the memory and upstream sockets of that many', async () => {
    const few = await startEdgeProxy({ maxConcurrentWrites: 2, maxWritesPerClient: 2 });
    try {
      const lines = distinctDocs(1500, `${prefix}-few`, 'w');
      const body = Buffer.from(ndjson(lines));
      const sockets = Array.from({ length: 8 }, () => stallingBulk(few.url, body, 0.6));
      await expect.poll(async () => (await stats(few)).requests.bulk, { timeout: 30_000 }).toBe(2);
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const held = await stats(few);
      expect(held.requests.bulk).toBe(2);
      expect(held.upstream_sockets.in_use).toBeLessThanOrEqual(2);
      for (const socket of sockets) socket.destroy();
      // Each waiting write, its client gone, is dropped without being read.
      await expect.poll(async () => (await stats(few)).requests.failed, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
      await expect.poll(async () => (await stats(few)).upstream_sockets.in_use, { timeout: 30_000 }).toBe(0);
      expect((await stats(few)).requests.bulk).toBeLessThanOrEqual(8);
    } finally {
      await few.close();
    }
  }, 90_000);

  it('a client that stops sending its body (or reading its answer) is cut off after the idle timeout, its upstream request aborted', async () => {
    const idle = await startEdgeProxy({ idleTimeoutMs: 1500 });
    try {
      const lines = distinctDocs(1500, `${prefix}-idle`, 'i');
      const body = Buffer.from(ndjson(lines));
      const socket = stallingBulk(idle.url, body, 0.6);
      await expect.poll(async () => (await stats(idle)).upstream_sockets.in_use, { timeout: 30_000 }).toBeGreaterThan(0);
      // The client stays connected and sends nothing more.
      await expect.poll(async () => (await stats(idle)).upstream_sockets.in_use, { timeout: 15_000, interval: 250 }).toBe(0);
      socket.destroy();
    } finally {
      await idle.close();
    }
  }, 60_000);

  it('content types with parameters are read by their media type and signed; one the proxy cannot read is refused (reject) or passed and counted (pass)', async () => {
    const index = `${prefix}-types`;
    const before = (await stats(proxy)).requests;
    const bulk = (id: string) => ndjson([{ index: { _index: index, _id: id } }, { text: docs[1].text }]);
    for (const [type, id] of [['application/x-ndjson; x=smile', 'p1'], ['application/json; charset=utf-8; x=y', 'p2']] as const) {
      const answer = await send(proxy.url, 'POST', '/_bulk', { 'content-type': type }, bulk(id));
      expect([type, answer.status, answer.json.errors]).toEqual([type, 200, false]);
    }
    const doc = await send(proxy.url, 'PUT', `/${index}/_doc/p4`, { 'content-type': 'application/json; charset=utf-8; x=smile' }, JSON.stringify({ text: docs[2].text }));
    expect(doc.status).toBe(201);
    // YAML: JSON is YAML, so the engine would index this document; the proxy cannot sign it.
    const yaml = await send(proxy.url, 'PUT', `/${index}/_doc/y1`, { 'content-type': 'application/yaml' }, JSON.stringify({ text: docs[3].text }));
    expect([yaml.status, yaml.json.error.reason]).toEqual([415, expect.stringContaining('Content-Type "application/yaml"')]);
    const zstd = await send(proxy.url, 'POST', '/_bulk', { 'content-type': 'application/x-ndjson', 'content-encoding': 'zstd' }, bulk('z1'));
    expect([zstd.status, zstd.json.error.reason]).toEqual([415, expect.stringContaining('Content-Encoding "zstd"')]);
    expect((await stats(proxy)).requests.refused - before.refused).toBe(2);
    const through = await send(passing.url, 'PUT', `/${index}/_doc/y2`, { 'content-type': 'application/yaml' }, JSON.stringify({ text: docs[3].text }));
    expect(through.status).toBe(201);
    expect((await stats(passing)).requests.unread).toBeGreaterThanOrEqual(1);
    const { count, unsigned } = await stored(ctx, index);
    expect(count).toBe(4);
    expect(unsigned).toEqual([`${index}/y2`]); // only the one let through by --on-error pass, and counted
  });

  it('date math in index names is resolved as the engine resolves it: those writes are signed', async () => {
    const dated = `<${prefix}-dated-{now/d}>`;
    const bulk = await send(proxy.url, 'POST', '/_bulk', { 'content-type': 'application/x-ndjson' }, ndjson([{ index: { _index: dated, _id: 'd1' } }, { text: docs[0].text }, { create: { _index: dated, _id: 'd2' } }, { title: 'no text' }]));
    expect(bulk.status).toBe(200);
    expect(bulk.json.items.map((i: any) => (Object.values(i)[0] as any).status)).toEqual([201, 400]);
    const doc = await send(proxy.url, 'PUT', `/${encodeURIComponent(dated)}/_doc/d3`, { 'content-type': 'application/json' }, JSON.stringify({ text: docs[1].text }));
    expect(doc.status).toBe(201);
    const landed = `${prefix}-dated-${new Date().toISOString().slice(0, 10).replaceAll('-', '.')}`;
    expect(doc.json._index).toBe(landed);
    const { count, unsigned } = await stored(ctx, landed);
    expect([count, unsigned]).toEqual([2, []]);
    const mapping = await ctx.client.request<any>('GET', `/${landed}/_mapping`);
    expect(mapping[landed].mappings.properties.near_dup.properties.minhash.type).toBe('binary');
  });

  it('action lines with comments or trailing content are read as the engine reads them: signed, or refused by the engine; one the proxy cannot read stops the request (reject)', async () => {
    const index = `${prefix}-lenient`;
    const body = [`/* from a script */ {"index":{"_index":"${index}","_id":"c1"}}`, JSON.stringify({ text: docs[2].text }), `{"index":{"_index":"${index}","_id":"c2"}} {"trailing":true}`, JSON.stringify({ text: docs[3].text })].join('\n') + '\n';
    const answer = await send(proxy.url, 'POST', '/_bulk', { 'content-type': 'application/x-ndjson' }, body);
    // OpenSearch ignores what follows the object; Elasticsearch refuses the request whole.
    expect([200, 400]).toContain(answer.status);
    const { unsigned } = await stored(ctx, index);
    expect(unsigned).toEqual([]);
    const before = (await stats(proxy)).requests.refused;
    const bad = ndjson([{ index: { _index: index, _id: 'r1' } }, { text: docs[0].text }, `{"index":{"_index":["${index}"]}}`, { text: docs[1].text }, { index: { _index: index, _id: 'r3' } }, { text: docs[2].text }]);
    const refused = await send(proxy.url, 'POST', '/_bulk', { 'content-type': 'application/x-ndjson' }, bad);
    expect([refused.status, refused.json.error.reason]).toEqual([400, expect.stringContaining('line 3')]);
    expect((await stats(proxy)).requests.refused).toBe(before + 1);
    expect((await stored(ctx, index)).unsigned).toEqual([]);
    const passedBefore = (await stats(passing)).requests.unread;
    await send(passing.url, 'POST', '/_bulk', { 'content-type': 'application/x-ndjson' }, bad);
    expect((await stats(passing)).requests.unread).toBe(passedBefore + 1);
  });

  it('one id the engine refuses among a thousand documents: only that one fails, named in its place; the rest are signed', async () => {
    const index = `${prefix}-oneid`;
    const long = 'x'.repeat(600);
    const lines = Array.from({ length: 1000 }, (_, i) => [{ index: { _index: index, _id: i === 417 ? long : `k${i}` } }, { text: `${docs[i % docs.length].text} ${i}` }]).flat();
    const answer = await send(proxy.url, 'POST', '/_bulk', { 'content-type': 'application/x-ndjson' }, ndjson(lines));
    expect(answer.status).toBe(200);
    const items = answer.json.items.map((i: any) => i.index);
    expect(items.length).toBe(1000);
    const failed = items.filter((i: any) => i.status >= 300);
    expect(failed.length).toBe(1);
    expect([failed[0]._id, failed[0].status, failed[0].error.reason]).toEqual([long, 400, expect.stringMatching(/too long/)]);
    expect(items.indexOf(failed[0])).toBe(417);
    const { count, unsigned } = await stored(ctx, index);
    expect([count, unsigned]).toEqual([999, []]);
  }, 120_000);

  it('a body over the limit: 413 with the reason before anything is sent (Content-Length), or as soon as the decompressed bytes pass it, saying what was applied', async () => {
    const small = await startEdgeProxy({ maxBodyBytes: 3 * 1024 * 1024 });
    try {
      const index = `${prefix}-limit`;
      const lines = distinctDocs(5000, index, 'l');
      const body = ndjson(lines);
      expect(body.length).toBeGreaterThan(6 * 1024 * 1024);
      const declared = await send(small.url, 'POST', '/_bulk', { 'content-type': 'application/x-ndjson' }, body);
      expect([declared.status, declared.json.error.reason]).toEqual([413, expect.stringMatching(/Content-Length \d+\) is larger than 3145728 bytes; nothing was applied/)]);
      const compressed = await send(small.url, 'POST', '/_bulk', { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' }, zlib.gzipSync(body));
      expect([compressed.status, compressed.json.error.reason]).toEqual([413, expect.stringMatching(/decompressed, is larger than 3145728 bytes; the first \d+ items .* were applied/)]);
      const applied = Number(/the first (\d+) items/.exec(compressed.json.error.reason)?.[1]);
      const { count, unsigned } = await stored(ctx, index);
      expect([count, unsigned]).toEqual([applied, []]);
      expect((await stats(small)).requests.refused).toBe(2);
    } finally {
      await small.close();
    }
  }, 120_000);
});

let bomb: Buffer | undefined;

forEachEngine('proxy: a decompression bomb', (ctx) => {
  it('0.5 MB of gzip that expands to 500 MB: 413 with the reason, the proxy (its own process) growing by far less than the body', async () => {
    const index = ctx.index('bomb');
    const { url, run, memory } = await startProxyProcess(['--url', ctx.engine.url, '--index', index, '--field', 'text', '--threads', '1']);
    const before = memory('VmRSS');
    bomb ??= await gzipBomb(500 * 1024 * 1024);
    expect(bomb.length).toBeLessThan(1024 * 1024);
    const answer = await send(url, 'POST', `/${index}/_bulk`, { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' }, bomb);
    expect([answer.status, answer.json.error?.reason]).toEqual([413, expect.stringMatching(/(is longer|decompressed, is larger) than 104857600 bytes; nothing was applied; send smaller requests, or raise --max-(line|body)-mb/)]);
    const peak = memory('VmHWM');
    const counters = (await send(url, 'GET', '/_near_dup/stats', {})).json;
    run.child.kill('SIGTERM');
    await run.done;
    expect(counters.requests.refused).toBe(1);
    expect(await ctx.client.count(index).catch(() => 0)).toBe(0);
    // The engine's own limit is 100 MB, and one line may be that long: memory holds it at most, not 500 MB.
    expect(peak - before, `peak ${peak.toFixed(0)} MB, ${before.toFixed(0)} MB before`).toBeLessThan(400);
  }, 300_000);
});

/** A gzip bulk body that expands to `size` bytes: one document whose text never ends. (A bomb of many lines is cut at the body's limit: the test above.) */
async function gzipBomb(size: number): Promise<Buffer> {
  const block = Buffer.alloc(1024 * 1024, 0x61);
  const head = Buffer.from('{"index":{}}\n{"text":"');
  async function* body() {
    yield head;
    for (let sent = 0; sent < size; sent += block.length) yield block;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of Readable.from(body()).pipe(zlib.createGzip({ level: 9 }))) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

