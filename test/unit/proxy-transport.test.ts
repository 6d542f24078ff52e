// The proxy's transport, over real sockets: TLS on both sides, each client's own credentials passed on
// (and never written anywhere), the cluster's answers unchanged, a cluster that is down answered as 502.
// The upstream here is a plain HTTPS server that records what reaches it: these tests are about what the
// proxy forwards, not about engine behaviour (test/integration/proxy.test.ts has the real engines).
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ProxyOptions, type RunningProxy, startProxy } from '../../src/proxy/server.js';
import { runCli } from '../support/documents.js';

const fixture = (name: string) => new URL(`../fixtures/tls/${name}`, import.meta.url).pathname;
const cert = readFileSync(fixture('cert.pem'), 'utf8');
const key = readFileSync(fixture('key.pem'), 'utf8');
const SECRET = 'Basic ' + Buffer.from('ann:s3cret-pass').toString('base64');

/** A proxy on a free loopback port signing "text" of index news, one thread, parts of 1 MB. */
function proxyOptions(upstream: ProxyOptions['upstream'], extra: Partial<ProxyOptions> = {}): ProxyOptions {
  const base = { host: '127.0.0.1', port: 0, index: 'news', fields: ['text'], prefix: 'near_dup', signer: {}, maxChars: 1000, threads: 1 };
  return { ...base, upstream, onError: 'reject', maxUpstreamBytes: 1 << 20, warn: () => undefined, ...extra };
}

interface Seen {
  method: string;
  url: string;
  authorization?: string;
  body: string;
}

describe('proxy transport', () => {
  const seen: Seen[] = [];
  let upstream: https.Server;
  let upstreamUrl: string;
  let proxy: RunningProxy;
  const warnings: string[] = [];

  beforeAll(async () => {
    upstream = https.createServer({ cert, key }, (req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', authorization: req.headers.authorization, body });
        if (req.headers.authorization !== SECRET) {
          res.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Basic realm="security"' });
          res.end('{"error":{"type":"security_exception","reason":"missing authentication credentials"},"status":401}');
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch', 'x-custom': 'kept' });
        if (req.url?.includes('_mapping') && req.method === 'GET') res.end('{"news":{"mappings":{}}}');
        else if (req.url?.includes('_bulk')) res.end(JSON.stringify({ took: 1, errors: false, items: body.trim().split('\n').filter((_, i) => i % 2 === 0).map(() => ({ index: { status: 201 } })) }));
        else res.end('{"acknowledged":true}');
      });
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    upstreamUrl = `https://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    proxy = await startProxy(proxyOptions({ url: upstreamUrl, ca: cert }, { tls: { cert, key }, warn: (line) => warnings.push(line) }));
  });
  afterAll(async () => {
    await proxy?.close();
    upstream?.close();
  });

  const call = (method: string, path: string, body?: string, authorization = SECRET) =>
    new Promise<{ status: number; headers: Record<string, unknown>; body: string }>((resolve, reject) => {
      const req = https.request(`${proxy.url}${path}`, { method, ca: cert, headers: { authorization, 'content-type': 'application/json' } }, (res) => {
        let text = '';
        res.on('data', (c) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });

  it('serves HTTPS, verifies the cluster with the CA file, and passes the client credentials on', async () => {
    expect(proxy.url.startsWith('https://')).toBe(true);
    const put = await call('PUT', '/news/_doc/1', '{"text":"a text to sign"}');
    expect(put.status).toBe(200);
    expect(put.headers['x-custom']).toBe('kept');
    const written = seen.find((s) => s.method === 'PUT' && s.url === '/news/_doc/1');
    expect(written?.authorization).toBe(SECRET);
    expect(JSON.parse(written?.body ?? '{}').near_dup.simhash).toMatch(/^[0-9a-f]{16}$/);
    // The fields were given to the index first, with the same credentials.
    expect(seen.filter((s) => s.url.startsWith('/news/_mapping')).every((s) => s.authorization === SECRET)).toBe(true);
  });

  it('wrong credentials: the cluster refuses, the client gets its answer as it is', async () => {
    const refused = await call('POST', '/_search', '{}', 'Basic d3Jvbmc6d3Jvbmc=');
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Basic realm="security"');
    expect(JSON.parse(refused.body).error.type).toBe('security_exception');
  });

  it('a client that goes away in the middle of a bulk body: the request upstream is cut off too, and the proxy goes on serving', async () => {
    // Resolves when a bulk request reaches the upstream and closes before its body ended.
    const cutOff = new Promise<void>((resolve) => {
      const watch = (req: import('node:http').IncomingMessage) => {
        if (!req.url?.includes('_bulk')) return;
        let ended = false;
        req.on('end', () => (ended = true));
        req.on('close', () => {
          if (ended) return;
          upstream.off('request', watch);
          resolve();
        });
      };
      upstream.on('request', watch);
    });
    const failedBefore = proxy.stats.requests.failed;
    const req = https.request(`${proxy.url}/_bulk`, { method: 'POST', ca: cert, headers: { authorization: SECRET, 'content-type': 'application/x-ndjson' } });
    req.on('error', () => undefined);
    const line = `{"index":{"_index":"news"}}\n{"text":"${'word '.repeat(2000)}"}\n`;
    for (let i = 0; i < 200; i++) req.write(line); // about 2 MB: past the first part of 1 MB, so a part is open upstream
    await new Promise((r) => setTimeout(r, 500));
    req.destroy();
    await cutOff;
    await new Promise((r) => setTimeout(r, 100));
    expect(proxy.stats.requests.failed).toBe(failedBefore + 1);
    expect((await call('PUT', '/news/_doc/3', '{"text":"still serving"}')).status).toBe(200);
  });

  it('a cluster that is down: 502 naming it, without credentials', async () => {
    const down = await startProxy(proxyOptions({ url: 'http://127.0.0.1:1' }));
    try {
      const res = await fetch(`${down.url}/_cluster/health`, { headers: { authorization: SECRET } });
      expect(res.status).toBe(502);
      expect(((await res.json()) as any).error).toMatchObject({ type: 'near_dup_proxy_exception', reason: 'cannot reach http://127.0.0.1:1: connection refused' });
    } finally {
      await down.close();
    }
  });

  it('the command never prints a credential: not from --url, not from the requests it serves', async () => {
    const inUrl = await runCli(['proxy', '--url', 'http://ann:s3cret-pass@127.0.0.1:9', '--index', 'news', '--field', 'text']).done;
    expect(inUrl.code).toBe(2);
    expect(inUrl.stderr).toMatch(/must not carry credentials/);
    expect(inUrl.stderr + inUrl.stdout).not.toContain('s3cret');
    const run = runCli(['proxy', '--url', upstreamUrl, '--ca-file', fixture('cert.pem'), '--listen', '127.0.0.1:0', '--index', 'news', '--field', 'text', '--threads', '1']);
    const url = await new Promise<string>((resolve) => run.child.stderr.on('data', (b: Buffer) => /listening on (\S+),/.exec(b.toString()) && resolve(/listening on (\S+),/.exec(b.toString())![1])));
    for (const authorization of [SECRET, 'Basic ' + Buffer.from('eve:0ther-secret').toString('base64')]) {
      await fetch(`${url}/news/_doc/2`, { method: 'PUT', headers: { authorization, 'content-type': 'application/json' }, body: '{"text":"x y z"}' });
      await fetch(`${url}/_bulk`, { method: 'POST', headers: { authorization, 'content-type': 'application/x-ndjson' }, body: '{"index":{"_index":"news"}}\n{"text":"x"}\n' });
    }
    run.child.kill('SIGTERM');
    const out = await run.done;
    expect(out.stderr).toContain('listening on');
    for (const secret of ['s3cret-pass', '0ther-secret', SECRET.slice(6), 'ZXZlOjB0aGVyLXNlY3JldA==']) expect(out.stderr + out.stdout).not.toContain(secret);
  });
});
