// Issue 48, on real engines: the proxy's limits against clients that would take it over. Slow writers
// holding every write slot (a byte a second), large documents all at once (memory), and bodies in a coding
// the proxy cannot read, which the engine would index unsigned or fail on. What must hold: a slow client
// is answered 408 and its slot freed within the body timeouts, and one address cannot take every slot;
// the bodies held at once stay within --max-buffered-mb (a request past it waits, or is answered 413 or
// 429 naming the setting); and a write the proxy signs is never sent on in a coding it could not read.
import http from 'node:http';
import net from 'node:net';
import zlib from 'node:zlib';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ProxyOptions, type RunningProxy, startProxy } from '../../src/proxy/server.js';
import { startProxyProcess } from '../support/proxy-process.js';
import { rawRequest } from '../support/raw-request.js';
import { type EngineContext, forEachEngine } from './harness.js';

const ND = { 'content-type': 'application/x-ndjson' };
const JSON_TYPE = { 'content-type': 'application/json' };
const ndjson = (lines: unknown[]) => `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;

/** The ids of the documents of `index`, and those without the near-dup fields. */
async function stored(ctx: EngineContext, index: string): Promise<{ ids: string[]; unsigned: string[] }> {
  await ctx.client.request('POST', `/${index}/_refresh`).catch(() => undefined);
  const found = await ctx.client.request<any>('POST', `/${index}/_search`, { size: 100, query: { match_all: {} } }, { ignore_unavailable: true, allow_no_indices: true });
  const hits = found.hits.hits as Array<{ _id: string; _source: Record<string, unknown> }>;
  return { ids: hits.map((h) => h._id).sort(), unsigned: hits.filter((h) => h._source.near_dup === undefined).map((h) => h._id).sort() };
}

/** The proxy options every block starts from: signs "text" of `index` on one thread, the rest as `extra` says. */
const proxyOptions = (url: string, index: string, extra: Partial<ProxyOptions>): ProxyOptions => ({
  upstream: { url },
  host: '127.0.0.1',
  port: 0,
  index,
  fields: ['text'],
  prefix: 'near_dup',
  signer: {},
  maxChars: 1e7,
  threads: 1,
  warn: () => undefined,
  onError: 'pass',
  maxUpstreamBytes: 16 * 1024 * 1024,
  ...extra,
});

forEachEngine('proxy limits: codings', (ctx) => {
  const index = ctx.index('codings');
  let proxy: RunningProxy;

  /** Signs "text" of `index`; --on-error pass, the default, which sends on what it cannot sign. */
  const options = (extra: Partial<ProxyOptions> = {}): ProxyOptions => proxyOptions(ctx.engine.url, index, extra);

  beforeAll(async () => {
    proxy = await startProxy(options());
    await ctx.client.request('PUT', `/${index}`, {});
    // A document for the update path to change.
    expect((await rawRequest(proxy.url, 'PUT', `/${index}/_doc/u?refresh=true`, JSON_TYPE, JSON.stringify({ text: 'a document the update path changes' }))).status).toBe(201);
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it('a write in a coding the proxy cannot decode is refused (415 naming those it takes), on every path it signs, with --on-error pass too; nothing lands unsigned', async () => {
    const writes = (id: string) => [
      ['POST', '/_bulk', ND, ndjson([{ index: { _index: index, _id: `${id}-bulk` } }, { text: 'a bulk item' }])],
      ['POST', `/${index}/_bulk`, ND, ndjson([{ create: { _id: `${id}-pathbulk` } }, { text: 'a bulk item under its index' }])],
      ['PUT', `/${index}/_doc/${id}-doc`, JSON_TYPE, JSON.stringify({ text: 'a document' })],
      ['PUT', `/${index}/_create/${id}-create`, JSON_TYPE, JSON.stringify({ text: 'a created document' })],
      ['POST', `/${index}/_update/u`, JSON_TYPE, JSON.stringify({ doc: { text: `an update in ${id}` } })],
    ] as const;
    for (const coding of ['bogus', 'zstd', 'compress', 'gzip, gzip']) {
      const id = coding.replace(/\W+/g, '');
      for (const [method, path, type, body] of writes(id)) {
        const answer = await rawRequest(proxy.url, method, path, { ...type, 'content-encoding': coding }, body);
        expect([coding, method, path, answer.status, answer.json.error?.reason]).toEqual([
          coding,
          method,
          path,
          415,
          expect.stringMatching(/Content-Encoding .* takes identity, gzip, x-gzip, deflate, x-deflate and br/),
        ]);
      }
    }
    const { ids, unsigned } = await stored(ctx, index);
    expect(ids).toEqual(['u']);
    expect(unsigned).toEqual([]);
    const doc = await ctx.client.request<any>('GET', `/${index}/_doc/u`);
    expect(doc._source.text).toBe('a document the update path changes');
  });

  it('x-deflate, which the engines decode, is decoded and signed (it went on unsigned)', async () => {
    const body = zlib.deflateSync(ndjson([{ index: { _index: index, _id: 'xdeflate' } }, { text: 'a bulk item sent with x-deflate' }]));
    const answer = await rawRequest(proxy.url, 'POST', '/_bulk?refresh=true', { ...ND, 'content-encoding': 'x-deflate' }, body);
    expect([answer.status, answer.json.errors]).toEqual([200, false]);
    const doc = await ctx.client.request<any>('GET', `/${index}/_doc/xdeflate`);
    expect(doc._source.near_dup).toBeDefined();
  });

  it('a transfer coding other than chunked is refused on any path: passed on, it would be dropped with the hop-by-hop headers', async () => {
    const bulk = ndjson([{ index: { _index: index, _id: 'te' } }, { text: 'a bulk item sent with a transfer coding' }]);
    for (const [method, path, body] of [
      ['POST', '/_bulk', zlib.gzipSync(bulk)],
      ['POST', `/${index}/_search`, zlib.gzipSync(JSON.stringify({ query: { match_all: {} } }))],
    ] as const) {
      const answer = await rawRequest(proxy.url, method, path, { ...ND, 'transfer-encoding': 'gzip, chunked' }, body);
      expect([path, answer.status, answer.json.error?.reason]).toEqual([path, 501, expect.stringMatching(/Transfer-Encoding "gzip, chunked"/)]);
    }
    expect((await stored(ctx, index)).ids).not.toContain('te');
  });

  it('a request the proxy only passes on keeps its coding, and a cluster that drops the connection over it is said', async () => {
    const gz = await rawRequest(proxy.url, 'POST', `/${index}/_search`, { ...JSON_TYPE, 'content-encoding': 'gzip' }, zlib.gzipSync(JSON.stringify({ query: { ids: { values: ['u'] } } })));
    expect([gz.status, gz.json.hits?.hits?.length]).toEqual([200, 1]);
    const zstd = await rawRequest(proxy.url, 'POST', `/${index}/_search`, { ...JSON_TYPE, 'content-encoding': 'zstd' }, JSON.stringify({ query: { match_all: {} } }));
    // Elasticsearch ignores a coding it does not know; OpenSearch drops the connection.
    if (zstd.status === 502) expect(zstd.json.error.reason).toMatch(/Content-Encoding "zstd"/);
    else expect(zstd.status).toBe(200);
  });
});

/** What a raw-socket client got back: the status and the error's reason (undefined until the proxy answers or closes). */
interface SlowAnswer {
  status: number;
  reason?: string;
}

/**
 * A client from `localAddress` (any 127.x.y.z reaches the proxy on loopback, from its own address) that
 * sends the head of `path` with a Content-Length of `body`, then one byte of it every `everyMs` (none with
 * `everyMs` 0): the slow writer of issue 48. `answer` settles when the proxy answers or closes.
 */
function slowClient(base: string, localAddress: string, path: string, body: Buffer, everyMs: number, sentFirst = 0): { answer: Promise<SlowAnswer>; stop(): void } {
  const url = new URL(base);
  const socket = net.connect({ port: Number(url.port), host: url.hostname, localAddress });
  socket.on('error', () => undefined);
  socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\nContent-Length: ${body.length}\r\n\r\n`);
  socket.write(body.subarray(0, sentFirst));
  let at = sentFirst;
  const timer = everyMs > 0 ? setInterval(() => at < body.length && socket.write(body.subarray(at, ++at)), everyMs) : undefined;
  let text = '';
  socket.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  const answer = new Promise<SlowAnswer>((resolve) => {
    socket.on('close', () => {
      clearInterval(timer);
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0);
      let reason: string | undefined;
      try {
        reason = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)).error?.reason;
      } catch {
        // no JSON answer
      }
      resolve({ status, reason });
    });
  });
  return {
    answer,
    stop: () => {
      clearInterval(timer);
      socket.destroy();
    },
  };
}

/** A whole request from `localAddress`, answered within `withinMs` or failed. */
function requestFrom(base: string, localAddress: string, method: string, path: string, body: string, withinMs: number): Promise<{ status: number; json: any }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request({ hostname: url.hostname, port: url.port, method, path, localAddress, headers: ND }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString('utf8');
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.setTimeout(withinMs, () => {
      req.destroy();
      reject(new Error(`no answer within ${withinMs} ms`));
    });
    req.on('error', reject);
    req.end(body);
  });
}

forEachEngine('proxy limits: slow clients', (ctx) => {
  const index = ctx.index('slow');
  const slowBody = Buffer.from(ndjson([{ index: { _index: index, _id: 'slow' } }, { text: 'x'.repeat(1_000_000) }]));
  const bulk = (id: string) => ndjson([{ index: { _index: index, _id: id } }, { text: `a document from a client that sends it at once (${id})` }]);
  const proxies: RunningProxy[] = [];
  const clients: Array<{ stop(): void }> = [];

  /** Four write slots (fixed, the cluster's choice aside); the timeouts long unless the test sets them. */
  const start = async (extra: Partial<ProxyOptions>) => {
    const proxy = await startProxy(proxyOptions(ctx.engine.url, index, { onError: 'reject', maxConcurrentWrites: 4, ...extra }));
    proxies.push(proxy);
    return proxy;
  };
  const slow = (...args: Parameters<typeof slowClient>) => {
    const client = slowClient(...args);
    clients.push(client);
    return client;
  };
  const stats = async (proxy: RunningProxy) => (await rawRequest(proxy.url, 'GET', '/_near_dup/stats', {})).json;

  afterAll(async () => {
    for (const client of clients) client.stop();
    for (const proxy of proxies) await proxy.close();
  });

  it('four slow writers from one address hold half the write slots, not all: another client writes at once', async () => {
    const proxy = await start({});
    for (let i = 0; i < 4; i++) slow(proxy.url, '127.0.0.2', '/_bulk', slowBody, 200);
    await expect.poll(async () => (await stats(proxy)).requests.bulk, { timeout: 10_000 }).toBe(2);
    const answer = await requestFrom(proxy.url, '127.0.0.3', 'POST', '/_bulk?refresh=true', bulk('fifth'), 10_000);
    expect([answer.status, answer.json.errors]).toEqual([200, false]);
    // The slow ones still hold only their two: the other two wait behind them.
    expect((await stats(proxy)).requests.bulk).toBe(3);
  }, 60_000);

  it('four slow writers from four addresses hold every slot until --body-timeout: each is answered 408, and a fifth client writes within the timeout', async () => {
    const proxy = await start({ bodyTimeoutMs: 3000 });
    const writers = [2, 3, 4, 5].map((n) => slow(proxy.url, `127.0.0.${n}`, '/_bulk', slowBody, 200));
    await expect.poll(async () => (await stats(proxy)).requests.bulk, { timeout: 10_000 }).toBe(4);
    const started = Date.now();
    const answer = await requestFrom(proxy.url, '127.0.0.6', 'POST', '/_bulk?refresh=true', bulk('after-timeout'), 15_000);
    expect([answer.status, answer.json.errors]).toEqual([200, false]);
    expect(Date.now() - started).toBeLessThan(10_000);
    for (const writer of writers) {
      expect(await writer.answer).toEqual({ status: 408, reason: expect.stringMatching(/--body-timeout.*nothing was applied/) });
    }
    const doc = await ctx.client.request<any>('GET', `/${index}/_doc/after-timeout`);
    expect(doc._source.near_dup).toBeDefined();
    await expect.poll(async () => (await stats(proxy)).upstream_sockets.in_use, { timeout: 10_000 }).toBe(0);
  }, 60_000);

  it('a client that stops in the middle of its body is answered 408 after --body-idle-timeout (a write, and a request passed on), its upstream request aborted', async () => {
    const proxy = await start({ bodyIdleTimeoutMs: 1500 });
    const write = slow(proxy.url, '127.0.0.2', '/_bulk', slowBody, 0, slowBody.length / 2);
    const search = slow(proxy.url, '127.0.0.3', `/${index}/_search`, Buffer.from(JSON.stringify({ query: { match: { text: 'x'.repeat(100_000) } } })), 0, 1000);
    const started = Date.now();
    expect(await write.answer).toEqual({ status: 408, reason: expect.stringMatching(/--body-idle-timeout/) });
    expect(await search.answer).toEqual({ status: 408, reason: expect.stringMatching(/--body-idle-timeout/) });
    expect(Date.now() - started).toBeLessThan(10_000);
    await expect.poll(async () => (await stats(proxy)).upstream_sockets.in_use, { timeout: 10_000 }).toBe(0);
  }, 60_000);
});

/**
 * A document sent in steps: the head of `PUT path` (with Content-Length `declared`, else chunked), then
 * each `send(bytes)` when the test says; `answer` settles with the proxy's answer.
 */
function steppedDocument(base: string, path: string, declared?: number): { send(bytes: string): void; end(bytes?: string): void; answer: Promise<{ status: number; json: any; retryAfter?: string }> } {
  const url = new URL(base);
  const headers: Record<string, string | number> = { ...JSON_TYPE, ...(declared === undefined ? {} : { 'content-length': declared }) };
  const req = http.request({ hostname: url.hostname, port: url.port, method: 'PUT', path, headers });
  const answer = new Promise<{ status: number; json: any; retryAfter?: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let text = '';
      res.on('data', (c: Buffer) => {
        text += c.toString('utf8');
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text), retryAfter: res.headers['retry-after'] }));
    });
    req.on('error', reject);
  });
  req.flushHeaders();
  return { send: (bytes) => void req.write(bytes), end: (bytes) => void req.end(bytes), answer };
}

forEachEngine('proxy limits: memory', (ctx) => {
  const index = ctx.index('memory');
  const MB = 1024 * 1024;
  let proxy: RunningProxy;
  const stats = async () => (await rawRequest(proxy.url, 'GET', '/_near_dup/stats', {})).json;

  beforeAll(async () => {
    // Four writes at once from this one address; room for 4 MB of large documents.
    proxy = await startProxy({ upstream: { url: ctx.engine.url }, host: '127.0.0.1', port: 0, index, fields: ['text'], prefix: 'near_dup', signer: {}, maxChars: 1e7, threads: 1, warn: () => undefined, onError: 'reject', maxUpstreamBytes: 16 * MB, maxConcurrentWrites: 4, maxWritesPerClient: 4, maxBufferedBytes: 4 * MB });
  });
  afterAll(async () => {
    await proxy?.close();
  });

  it('a document larger than --max-buffered-mb, or a bulk line, is answered 413 naming it; nothing is applied', async () => {
    const big = JSON.stringify({ text: 'word '.repeat(MB) }); // 5 MB
    const doc = await rawRequest(proxy.url, 'PUT', `/${index}/_doc/too-large`, JSON_TYPE, big);
    expect([doc.status, doc.json.error?.reason]).toEqual([413, expect.stringMatching(/--max-buffered-mb.*nothing was applied/)]);
    const bulk = await rawRequest(proxy.url, 'POST', '/_bulk', ND, `${JSON.stringify({ index: { _index: index, _id: 'small' } })}\n{"text":"a small one first"}\n${JSON.stringify({ index: { _index: index, _id: 'too-large-line' } })}\n${big}\n`);
    expect([bulk.status, bulk.json.error?.reason]).toEqual([413, expect.stringMatching(/--max-buffered-mb.*nothing was applied/)]);
    expect((await stored(ctx, index)).ids).toEqual([]);
    expect((await stats()).buffered).toMatchObject({ held_bytes: 0, waiting: 0 });
  });

  it('a document whose size is said waits for the room held by another, then goes', async () => {
    const body = (n: number) => JSON.stringify({ text: `${'word '.repeat((3 * MB) / 5)}${n}` });
    const first = steppedDocument(proxy.url, `/${index}/_doc/first?refresh=true`, body(1).length);
    first.send(body(1).slice(0, MB));
    await expect.poll(async () => (await stats()).buffered.held_bytes).toBe(body(1).length);
    const second = steppedDocument(proxy.url, `/${index}/_doc/second?refresh=true`, body(2).length);
    second.end(body(2));
    await expect.poll(async () => (await stats()).buffered.waiting).toBe(1);
    first.end(body(1).slice(MB));
    expect((await first.answer).status).toBe(201);
    expect((await second.answer).status).toBe(201);
    const after = (await stats()).buffered;
    expect(after).toMatchObject({ held_bytes: 0, waiting: 0, limit_bytes: 4 * MB });
    expect(after.peak_bytes).toBeLessThanOrEqual(4 * MB);
    expect((await stored(ctx, index)).unsigned).toEqual([]);
  });

  it('documents of unsaid size that each hold half the room and want more: the newest is answered 429 with Retry-After naming the setting, the other goes on', async () => {
    const a = steppedDocument(proxy.url, `/${index}/_doc/chunked-a?refresh=true`);
    const b = steppedDocument(proxy.url, `/${index}/_doc/chunked-b?refresh=true`);
    const head = '{"text":"';
    a.send(head + 'a'.repeat(2 * MB - head.length));
    await expect.poll(async () => (await stats()).buffered.held_bytes).toBe(2 * MB);
    b.send(head + 'b'.repeat(2 * MB - head.length));
    await expect.poll(async () => (await stats()).buffered.held_bytes).toBe(4 * MB);
    a.send(' more words');
    await expect.poll(async () => (await stats()).buffered.waiting).toBe(1);
    b.send(' more words');
    const refused = await b.answer;
    expect([refused.status, refused.retryAfter, refused.json.error?.reason]).toEqual([429, '1', expect.stringMatching(/--max-buffered-mb.*nothing was applied/)]);
    a.end('"}');
    expect((await a.answer).status).toBe(201);
    expect((await stored(ctx, index)).ids).toContain('chunked-a');
    expect((await stored(ctx, index)).ids).not.toContain('chunked-b');
    expect((await stats()).buffered).toMatchObject({ held_bytes: 0, waiting: 0 });
  });
});

forEachEngine('proxy limits: memory of a process', (ctx) => {
  it('four 48 MB documents at once on four signing threads: held one at a time within --max-buffered-mb, the proxy growing by a third of what four at once cost', async () => {
    const index = ctx.index('memory-process');
    // The text stored, not indexed: the engine's work is not what is measured.
    await ctx.client.request('PUT', `/${index}`, { mappings: { properties: { text: { type: 'text', index: false } } } });
    const { url, run, memory } = await startProxyProcess(['--url', ctx.engine.url, '--index', index, '--field', 'text', '--threads', '4', '--max-buffered-mb', '50']);
    try {
      const words = Array.from({ length: 100_000 }, (_, i) => `w${((i * 7919) % 4000).toString(36)}`).join(' ');
      const text = words.repeat(Math.ceil((48 * 1024 * 1024) / words.length)).slice(0, 48 * 1024 * 1024);
      const body = Buffer.from(JSON.stringify({ text }));
      const before = memory('VmRSS');
      const answers = await Promise.all([0, 1, 2, 3].map((i) => rawRequest(url, 'PUT', `/${index}/_doc/${i}`, JSON_TYPE, body)));
      const peak = memory('VmHWM');
      const counters = (await rawRequest(url, 'GET', '/_near_dup/stats', {})).json;
      // Signed and sent on each: the engine's answer (it may refuse so large a document for its own memory).
      for (const answer of answers) expect(answer.json.error?.type ?? 'stored').not.toMatch(/near_dup/);
      expect(counters.buffered.peak_bytes).toBeLessThanOrEqual(50 * 1024 * 1024);
      expect(counters.documents.signed + counters.refused_by_cluster.documents).toBe(4);
      // One at a time costs about 10 times a document (its copies as it is signed: 0.5 GB); four at once, on four threads, 1.6 GB.
      expect(peak - before, `peak ${peak.toFixed(0)} MB, ${before.toFixed(0)} MB before`).toBeLessThan(800);
    } finally {
      run.child.kill('SIGTERM');
      await run.done;
    }
  }, 300_000);
});
