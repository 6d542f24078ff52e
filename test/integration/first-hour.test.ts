// A user's first hour (issue 35), tried through the CLI and the library against each real engine: closed
// pipes end quietly, a wrongly mapped index is named with the way out, no option is ignored in silence,
// one damaged params value costs one document, the proxy answers a body that is not what its headers say
// with a 4xx, and the messages of a first run say what the index holds and what exists.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { annotateDocuments } from '../../src/annotation.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { dedupIndex } from '../../src/jobs/dedup.js';
import { findSimilar } from '../../src/jobs/similar.js';
import { startProxy } from '../../src/proxy/server.js';
import { fixtureSample } from '../support/corpus.js';
import { CLI, indexDocuments, runCli } from '../support/documents.js';
import { rawRequest } from '../support/raw-request.js';
import { forEachEngine } from './harness.js';

const docs = fixtureSample(40, { seed: 35 });

/**
 * near-dup with its stdout read by a reader that closes after the first chunk (as head does), or, with
 * `atOnce`, before anything is written (a command that prints only at its end, read by head -0 or true).
 */
function cliIntoClosingReader(args: string[], cwd: string, stdin?: string, atOnce = false) {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'], env: { ...process.env, NEAR_DUP_PROGRESS_SECONDS: '' } });
  let stderr = '';
  let first = '';
  child.stderr!.on('data', (b) => (stderr += b));
  if (atOnce) child.stdout!.destroy();
  else
    child.stdout!.once('data', (b: Buffer) => {
      first = b.toString('utf8');
      child.stdout!.destroy(); // the reader goes away: the next write finds the pipe closed
    });
  if (stdin !== undefined) {
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(stdin);
  }
  return new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string; first: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stderr, first })),
  );
}

/** A run ended as a tool piped to head ends: by SIGPIPE (or its status), with no trace and no EPIPE. */
function expectQuietEnd(run: { code: number | null; signal: NodeJS.Signals | null; stderr: string; first: string }, atOnce = false) {
  if (!atOnce) expect(run.first.length).toBeGreaterThan(0);
  expect(run.signal === 'SIGPIPE' || run.code === 141 || run.code === 0).toBe(true);
  expect(run.stderr).not.toMatch(/EPIPE|\n\s+at |unexpected error/);
}

it('sign --jsonl into a reader that closes early ends quietly (no EPIPE, no stack trace)', async () => {
  const lines = Array.from({ length: 4000 }, (_, i) => JSON.stringify({ id: `d${i}`, text: `${docs[i % docs.length].text} ${i}` })).join('\n') + '\n';
  const run = await cliIntoClosingReader(['sign', '--jsonl', '--threads', '1'], os.tmpdir(), lines);
  expectQuietEnd(run);
  expect(run.signal ?? run.code).not.toBe(1);
});

forEachEngine('first hour', (ctx) => {
  const index = ctx.index('first-hour');
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'nd-first-hour-'));
  const url = () => ctx.engine.url;
  const cli = (args: string[]) => runCli([...args, '--url', url()], { cwd, env: { NEAR_DUP_PROGRESS_SECONDS: '' } }).done;

  beforeAll(async () => {
    await indexDocuments(ctx.client, index, docs.map((d) => ({ id: d.id, title: d.family, body: d.text })));
    await annotateIndex(ctx.client, { index, fields: ['body'], signer: {}, output: { prefix: 'near_dup' } });
  });

  it('dedup --format text --full --dry-run into a reader that closes early ends quietly', async () => {
    const run = await cliIntoClosingReader(['dedup', '--url', url(), '--index', index, '--format', 'text', '--full', '--dry-run'], cwd, undefined, true);
    expectQuietEnd(run, true);
    expect(run.stderr).toMatch(/clusters holding/); // the run itself went to its end
  });

  it('a short dedup without a terminal writes no progress lines, only its summary', async () => {
    const run = await cli(['dedup', '--index', index, '--full', '--dry-run']);
    expect(run.code).toBe(0);
    expect(run.stderr).not.toMatch(/"job":"dedup"/);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
  });

  it('an incremental dedup with nothing new says what the index holds and how to recompute it', async () => {
    const full = await cli(['dedup', '--index', index, '--full']);
    expect(full.code).toBe(0);
    const written = JSON.parse(full.stdout);
    expect(written.clusters).toBeGreaterThan(0);
    const again = await cli(['dedup', '--index', index]);
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(new RegExp(`nothing annotated since the last run, nothing to do: the index already holds ${written.clusters} clusters with ${written.duplicates} duplicates .*--full recomputes`));
    expect(again.stderr).not.toMatch(/0 clusters holding 0 duplicates/);
  });

  it('similar --condenser that does not match the stored signatures is refused with the reason, not ignored', async () => {
    const byId = await cli(['similar', '--index', index, '--id', docs[0].id, '--condenser', 'ws:none:sha1:64']);
    expect(byId.code).toBe(2);
    expect(byId.stderr).toMatch(/a lookup by --id uses the signature stored with document .* leave them out/);
    const byText = await cli(['similar', '--index', index, '--text', docs[0].text, '--seed', '7']);
    expect(byText.code).toBe(2);
    expect(byText.stderr).toMatch(/seed=7.*could never match; leave the signature options out/);
    // Without options the text is signed as the index was; with the index's own options too.
    const plain = await cli(['similar', '--index', index, '--text', docs[0].text]);
    expect(JSON.parse(plain.stdout).hits[0].id).toBe(docs[0].id);
    const same = await cli(['similar', '--index', index, '--id', docs[0].id, '--seed', '1']);
    expect(same.code).toBe(0);
  });

  it('a garbage params value is one damaged document, named in the errors file, not a second parameter set', async () => {
    const other = ctx.index('garbage-params');
    await indexDocuments(ctx.client, other, docs.slice(0, 12).map((d) => ({ id: d.id, body: d.text })));
    await annotateIndex(ctx.client, { index: other, fields: ['body'], signer: {}, output: { prefix: 'near_dup' } });
    await ctx.client.request('POST', `/${other}/_update/${encodeURIComponent(docs[3].id)}`, { doc: { near_dup: { params: 'not a parameter set' } } }, { refresh: 'true' });
    const errorsFile = path.join(cwd, `errors-${other}.jsonl`);
    const summary = await dedupIndex(ctx.client, { index: other, state: { full: true }, output: { dryRun: true, errorsFile } });
    expect(summary.damaged).toBe(1);
    expect(summary.documents).toBe(11);
    const listed = readFileSync(errorsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ id: docs[3].id });
    expect(listed[0].reason).toMatch(/not a parameter set/);
    // A lookup counts it as damaged too, not as "signed with other params".
    const found = await findSimilar(ctx.client, { index: other, id: docs[2].id, minSimilarity: 0, limit: 100 });
    expect(found.excludedParams).toBe(0);
  });

  it('a lookup on an index the library wrote without near-dup init names the wrongly mapped field and the way out', async () => {
    const unprepared = ctx.index('unprepared');
    const annotated: Array<Record<string, unknown>> = [];
    for await (const doc of annotateDocuments(docs.slice(0, 6).map((d) => ({ id: d.id, body: d.text })), { fields: ['body'] })) annotated.push(doc);
    await indexDocuments(ctx.client, unprepared, annotated);
    const run = await cli(['similar', '--index', unprepared, '--id', docs[0].id]);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/near_dup\.bands is mapped as text, a lookup needs keyword.*near-dup init --index NEW_INDEX/);
    expect(run.stderr).not.toMatch(/search_phase_execution_exception/);
  });

  it('ingest --field that no document has is refused before the index is created', async () => {
    const target = ctx.index('ingest-typo');
    const input = docs.slice(0, 5).map((d) => JSON.stringify({ id: d.id, body: d.text })).join('\n') + '\n';
    const child = spawn(process.execPath, [CLI, 'ingest', '--url', url(), '--index', target, '--field', 'bdy', '--id-field', 'id'], { cwd, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b) => (stderr += b));
    child.stdin.end(input);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(2);
    expect(stderr).toMatch(/none of the first 5 documents has the field "bdy"; their fields are "id", "body"/);
    expect(await ctx.client.indexExists(target)).toBe(false);
  });

  it('"index does not exist" names an index of a similar name', async () => {
    const run = await cli(['similar', '--index', index.slice(0, -1), '--text', 'some words']);
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(new RegExp(`does not exist .*near-dup init.*similar name exists: "${index}"`));
  });

  it('the proxy answers a body that does not decode as its Content-Encoding says with a 400 naming it, never a 5xx', async () => {
    const proxy = await startProxy({ upstream: { url: url() }, host: '127.0.0.1', port: 0, index: `${index}-p*`, fields: ['text'], prefix: 'near_dup', signer: {}, maxChars: 1e7, threads: 1, warn: () => undefined, onError: 'pass', maxUpstreamBytes: 64 * 1024 });
    try {
      const plain = Buffer.from(JSON.stringify({ text: 'hello world' }));
      for (const coding of ['gzip', 'deflate', 'br']) {
        const doc = await rawRequest(proxy.url, 'PUT', `/${index}-p1/_doc/1`, { 'content-type': 'application/json', 'content-encoding': coding }, plain);
        expect(doc.status, coding).toBe(400);
        expect(JSON.stringify(doc.json)).toMatch(new RegExp(`not what its Content-Encoding \\\\"${coding}\\\\" says`));
      }
      const bulk = await rawRequest(proxy.url, 'POST', '/_bulk', { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' }, `${JSON.stringify({ index: { _index: `${index}-p1` } })}\n{"text":"a"}\n`);
      expect(bulk.status).toBe(400);
    } finally {
      await proxy.close();
      await ctx.client.request('DELETE', `/${index}-p*`).catch(() => undefined);
    }
  });
});
