// The explorer's API fed malformed parameters (issue 37, item 6): empty, huge, not base64, JSON of the
// wrong shape, negative, NaN, given twice, unknown, ids that cannot exist or exist nowhere. Each is
// answered 4xx with the parameter named, and no answer, whatever went wrong, holds the cluster's address;
// a cluster that fails or stops answering is a 502 that names nothing of it either.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { connect } from '../../src/engine/client.js';
import { type RunningExplorer, startExplorer } from '../../src/explore/server.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { dedupIndex } from '../../src/jobs/dedup.js';
import { fixtureSample } from '../support/corpus.js';
import { indexDocuments } from '../support/documents.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { forEachEngine } from './harness.js';

const docs = fixtureSample(4, { seed: 7 });
const b64 = (text: string) => Buffer.from(text).toString('base64url');

/** [request, the parameter its answer must name, the status (400 unless said)] */
type Case = [string, string, number?];

function listCases(): Case[] {
  const after: Array<[string, string]> = [
    ['empty', ''],
    ['not base64', '!!!***'],
    ['not JSON', b64('not json')],
    ['an object', b64('{"a":1}')],
    ['a string', b64('"size"')],
    ['one value', b64('[1]')],
    ['strings only', b64('["x","y"]')],
    ['numbers only', b64('[1,2]')],
    ['a null size', b64('[null,"x"]')],
    ['three values', b64('[1,"x",3]')],
    ['an infinite size', b64('[1e400,"x"]')],
    ['a fraction', b64('[1.5,"x"]')],
    ['a huge id', b64(JSON.stringify([2, 'x'.repeat(600)]))],
    ['huge', 'A'.repeat(5000)],
  ];
  return [
    ...['', 'abc', '-1', '0', 'NaN', '1.5', '1e2', '201', '99999999999999999999999', ' 5', '0x10'].map((size): Case => [`/api/clusters?size=${encodeURIComponent(size)}`, 'size']),
    ['/api/clusters?size=1&size=2', 'size'],
    ...after.map(([, value]): Case => [`/api/clusters?size=2&after=${encodeURIComponent(value)}`, 'after']),
    [`/api/clusters?after=${b64('[1,"x"]')}&after=${b64('[1,"x"]')}`, 'after'],
    [`/api/clusters?q=${'x'.repeat(5000)}`, 'q'],
    ['/api/clusters?q=a&q=b', 'q'],
    ['/api/clusters?sise=3', 'sise'],
    ['/api/info?verbose=1', 'verbose'],
    ['/api/report?x=1', 'x'],
  ];
}

forEachEngine('explore parameters', (ctx) => {
  const index = ctx.index('explore-params');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-explore-params-'));
  let explorer: RunningExplorer;
  let clusterId: string;
  const engineUrl = new URL(ctx.engine.url);

  /** An answer: its status and body, the body checked to hold nothing of the cluster's address. */
  const ask = async (url: string, p: string) => {
    const res = await fetch(url + p);
    const text = await res.text();
    for (const address of [engineUrl.host, `${engineUrl.hostname}:`, `:${engineUrl.port}`, 'http://', 'https://', 'localhost:', '127.0.0.1:']) {
      expect(text, `${p} answered ${text.slice(0, 300)}`).not.toContain(address);
    }
    return { status: res.status, body: JSON.parse(text) as { error?: string; parameter?: string } };
  };

  const expectRefused = async (url: string, [p, parameter, status = 400]: Case) => {
    const { status: got, body } = await ask(url, p);
    expect([got, body.parameter], `${p.slice(0, 120)}: ${body.error?.slice(0, 300)}`).toEqual([status, parameter]);
    expect(body.error).toContain(parameter);
    expect(body.error!.length).toBeLessThan(600); // a huge value is not echoed whole
  };

  beforeAll(async () => {
    await indexDocuments(ctx.client, index, docs);
    await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, state: { checkpointFile: path.join(tmp, 'cp.json') }, output: { prefix: 'near_dup', errorsFile: path.join(tmp, 'e.jsonl') } });
    await dedupIndex(ctx.client, { index, state: { stateFile: path.join(tmp, 'dedup.json') }, output: { errorsFile: path.join(tmp, 'dedup-errors.jsonl') } });
    await ctx.client.refresh(index);
    explorer = await startExplorer(ctx.client, { index, fields: ['text'], prefix: 'near_dup', host: '127.0.0.1', port: 0 });
    const { body } = await ask(explorer.url, '/api/clusters?size=1');
    clusterId = (body as any).clusters[0].clusterId;
  });
  afterAll(async () => explorer?.close());

  it('the list of clusters: a bad size, position, search or unknown parameter is a 400 that names it', async () => {
    for (const c of listCases()) await expectRefused(explorer.url, c);
    // What the page sends stays accepted: an empty search, a position the explorer gave.
    const first = await ask(explorer.url, '/api/clusters?size=1&q=');
    expect(first.status).toBe(200);
    const next = (first.body as any).next as string | undefined;
    if (next) expect((await ask(explorer.url, `/api/clusters?size=1&q=&after=${encodeURIComponent(next)}`)).status).toBe(200);
  });

  it("a cluster's members, a document, its similar ones and a pair: bad ids, positions and views are refused by name", async () => {
    const members = `/api/clusters/${encodeURIComponent(clusterId)}/members`;
    const member = ((await ask(explorer.url, `${members}?size=1`)).body as any).members[0].id as string;
    const cases: Case[] = [
      ['/api/clusters/%ZZ/members', 'cluster id'],
      [`/api/clusters/${'c'.repeat(600)}/members`, 'cluster id'],
      [`${members}?size=0`, 'size'],
      [`${members}?size=-5`, 'size'],
      [`${members}?size=NaN`, 'size'],
      [`${members}?size=2&size=3`, 'size'],
      [`${members}?after=`, 'after'],
      [`${members}?after=garbage`, 'after'],
      [`${members}?after=${'Z'.repeat(10_000)}`, 'after'],
      [`${members}?after=${b64('[1,"x"]')}`, 'after'],
      [`${members}?after=00000000-0000-0000-0000-000000000000&after=x`, 'after'],
      [`${members}?foo=1`, 'foo'],
      ['/api/documents/%ZZ', 'id'],
      ['/api/documents/%E0%A4%A', 'id'],
      [`/api/documents/${'d'.repeat(600)}`, 'id'],
      ['/api/documents/no-such-document', 'id', 404],
      [`/api/documents/${encodeURIComponent(member)}?size=1`, 'size'],
      ['/api/documents/%ZZ/similar', 'id'],
      ['/api/documents/no-such-document/similar', 'id', 404],
      [`/api/documents/${encodeURIComponent(member)}/similar?limit=5`, 'limit'],
      ['/api/pair', 'a'],
      ['/api/pair?a=&b=x', 'a'],
      [`/api/pair?a=${encodeURIComponent(member)}`, 'b'],
      [`/api/pair?a=1&a=2&b=3`, 'a'],
      [`/api/pair?a=${'a'.repeat(600)}&b=x`, 'a'],
      [`/api/pair?a=${encodeURIComponent(member)}&b=no-such-document`, 'b', 404],
      [`/api/pair?a=${encodeURIComponent(member)}&b=${encodeURIComponent(member)}&view=html`, 'view'],
      [`/api/pair?a=${encodeURIComponent(member)}&b=${encodeURIComponent(member)}&view=${'v'.repeat(5000)}`, 'view'],
      [`/api/pair?a=${encodeURIComponent(member)}&b=${encodeURIComponent(member)}&view=raw&view=raw`, 'view'],
    ];
    for (const c of cases) await expectRefused(explorer.url, c);
    for (const ok of [`${members}?size=1`, `/api/documents/${encodeURIComponent(member)}`, `/api/documents/${encodeURIComponent(member)}/similar`, `/api/pair?a=${encodeURIComponent(member)}&b=${encodeURIComponent(member)}&view=raw`]) {
      expect((await ask(explorer.url, ok)).status, ok).toBe(200);
    }
  });

  it("a cluster that refuses a request is a 400 naming the parameters, one that fails or stops answering a 502, none naming the cluster's address", async () => {
    const proxy = new FaultProxy(ctx.engine.url);
    const proxyUrl = await proxy.start();
    const client = await connect({ ...ctx.connection, url: proxyUrl, maxRetries: 0 });
    const failures: unknown[] = [];
    const viaProxy = await startExplorer(client, { index, fields: ['text'], prefix: 'near_dup', host: '127.0.0.1', port: 0, onError: (err) => failures.push(err) });
    const port = new URL(proxyUrl).port;
    const askVia = async (p: string) => {
      const answer = await ask(viaProxy.url, p);
      expect(JSON.stringify(answer.body)).not.toContain(port);
      return answer;
    };
    try {
      expect((await askVia('/api/clusters?size=2')).status).toBe(200);
      proxy.decide = (r) => (r.kind === 'search' ? { status: 400 } : 'pass');
      const refused = await askVia('/api/clusters?size=2&q=words');
      expect([refused.status, refused.body.error]).toEqual([400, expect.stringMatching(/refused the request made from size, q/)]);
      proxy.decide = (r) => (r.kind === 'search' ? { status: 503 } : 'pass');
      expect((await askVia('/api/clusters?size=2')).status).toBe(502);
      await proxy.stop();
      const gone = await askVia(`/api/documents/${encodeURIComponent(docs[0].id)}`);
      expect([gone.status, gone.body.error]).toEqual([502, expect.stringMatching(/^the cluster did not answer/)]);
      expect(failures.length).toBeGreaterThanOrEqual(2); // the operator is told, in the terminal
    } finally {
      await viaProxy.close();
      await client.close().catch(() => undefined);
      await proxy.stop();
    }
  });
});
