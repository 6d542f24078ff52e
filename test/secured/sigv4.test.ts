// AWS SigV4 (issue 34 item 4) without AWS: every request near-dup makes with --aws-service is checked by
// botocore (test/support/sigv4_check.py, AWS's own Python implementation) in front of the real secured
// OpenSearch, which it reaches as the near_dup user (as Amazon OpenSearch Service maps an IAM identity to a
// role). The commands, through the OpenSearch client's signer and near-dup's own signed requests, and the
// proxy, whose upstream requests carry bodies it rewrote, must all pass the check. As Serverless ("aoss"),
// near-dup leaves out what a collection does not answer (GET /, refresh) and refuses scroll in one line.
import { spawn, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { awsEnv, botocorePython, type RunningChecker, startChecker, TEST_AWS } from '../support/sigv4-checker.js';
import { fixtureSample } from '../support/corpus.js';
import { CLI, describeSecured, hasStackTrace } from './harness.js';

const inCi = ['true', '1'].includes((process.env.CI ?? '').toLowerCase());
const botocore = botocorePython();
const docs = fixtureSample(4);
const REGION = 'eu-west-1';

describeSecured('AWS SigV4, checked by botocore', (ctx) => {
  let es: RunningChecker | undefined;
  let aoss: RunningChecker | undefined;
  const secrets = [TEST_AWS.secretAccessKey, TEST_AWS.sessionToken, 'Wrong/Secret+Key'];

  beforeAll(async () => {
    if (!botocore.python) {
      if (inCi) throw new Error(`CI=true and no botocore for the SigV4 tests: ${botocore.missing}`);
      return;
    }
    const upstream = { python: botocore.python, upstream: ctx.engine.url, ca: ctx.engine.caFile, region: REGION, upstreamUser: ctx.user('nd_user') };
    es = await startChecker({ ...upstream, service: 'es' });
    // Serverless grants by data access policy (aoss:ReadDocument covers point in time), not by the near_dup
    // role (which has scroll, not point in time): that collection's stand-in reaches the engine as nd_admin.
    aoss = await startChecker({ ...upstream, service: 'aoss', upstreamUser: ctx.user('nd_admin') });
  });
  afterAll(() => {
    es?.close();
    aoss?.close();
  });

  const cli = (checker: RunningChecker, service: 'es' | 'aoss', args: string[], options: { input?: string; secret?: string } = {}) => {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SEARCH_') && !name.startsWith('AWS_')));
    const result = spawnSync(process.execPath, [CLI, ...args, '--url', checker.url, '--aws-service', service, '--aws-region', REGION], {
      cwd: ctx.dir,
      env: awsEnv(clean, options.secret),
      input: options.input,
      encoding: 'utf8',
      timeout: 180_000,
    });
    const out = { code: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
    ctx.printed.push(`${out.stdout}\n${out.stderr}`);
    for (const secret of secrets) expect(`${out.stdout}${out.stderr}`).not.toContain(secret);
    return out;
  };
  const ndjson = (label: string) => {
    const file = path.join(ctx.dir, `${label}.ndjson`);
    writeFileSync(file, docs.map((d) => `${JSON.stringify({ id: d.id, text: d.text })}\n`).join(''));
    return file;
  };
  const skipUnlessBotocore = () => {
    if (!es || !aoss) {
      console.warn(`SigV4 test skipped: ${botocore.missing}`);
      return true;
    }
    return false;
  };

  it('every command signs every request as botocore checks it (the client signer and near-dup\'s own requests)', async () => {
    if (skipUnlessBotocore()) return;
    const checker = es as RunningChecker;
    const index = ctx.index('sigv4');
    const before = (await checker.stats()).checked;
    for (const args of [
      ['init', '--index', index],
      ['ingest', '--index', index, '--field', 'text', '--id-field', 'id', '--file', ndjson('sigv4')],
      ['annotate', '--index', index, '--field', 'text', '--force'],
      ['similar', '--index', index, '--id', docs[0].id],
      ['dedup', '--index', index, '--full'],
    ]) {
      const result = cli(checker, 'es', args);
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(0);
    }
    const stats = await checker.stats();
    expect(stats.failures).toEqual([]);
    expect(stats.checked - before).toBeGreaterThan(20);
    // Near-dup's own GET / and the client's bulk, search and scroll all came through the check.
    const seen = stats.requests.slice(before).map((r) => r.split('?')[0]);
    expect(seen).toEqual(expect.arrayContaining(['GET /', 'POST /_bulk', `POST /${index}/_search`, 'POST /_search/scroll', `PUT /${index}`]));
    await ctx.admin.refresh(index);
    expect(await ctx.admin.count(index, { exists: { field: 'near_dup.cluster_size' } })).toBeGreaterThan(0);
  });

  it('credentials AWS refuses are one line, without the secret, and nothing is written', async () => {
    if (skipUnlessBotocore()) return;
    const index = ctx.index('sigv4-wrong');
    const result = cli(es as RunningChecker, 'es', ['init', '--index', index], { secret: 'Wrong/Secret+Key' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/denied GET \/ \(403: The request signature we calculated does not match/);
    expect(hasStackTrace(result.stderr)).toBe(false);
    expect(await ctx.admin.indexExists(index)).toBe(false);
  });

  it('the proxy signs what it sends upstream, a bulk body it rewrote included, and counts what the engine stored', async () => {
    if (skipUnlessBotocore()) return;
    const checker = es as RunningChecker;
    const index = ctx.index('sigv4-proxy');
    const before = await checker.stats();
    const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SEARCH_') && !name.startsWith('AWS_')));
    const args = ['proxy', '--url', checker.url, '--aws-service', 'es', '--aws-region', REGION, '--index', index, '--field', 'text', '--listen', '127.0.0.1:0'];
    const child = spawn(process.execPath, [CLI, ...args], { cwd: ctx.dir, env: awsEnv(clean), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (c) => (stderr += c));
    try {
      const deadline = Date.now() + 60_000;
      let url: string | undefined;
      while (!(url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stderr)?.[1]) && child.exitCode === null && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
      expect(url, stderr).toBeDefined();
      expect(stderr).toMatch(/signing every request with this process's AWS credentials \(SigV4, es, eu-west-1\)/);
      // One more document the engine refuses (a number field given text): stored nothing, so not counted as signed.
      const refused = [JSON.stringify({ index: { _index: index, _id: 'refused' } }), JSON.stringify({ text: docs[0].text, n: 'not a number' })];
      const lines = docs.flatMap((d) => [JSON.stringify({ index: { _index: index, _id: d.id } }), JSON.stringify({ text: d.text, n: 1 })]);
      const body = [...lines, ...refused].join('\n') + '\n';
      // The client's own Authorization is replaced by the proxy's signature (it would not pass the check).
      const answer = await fetch(`${url}/_bulk?refresh=true`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson', authorization: 'Basic bm90OnVzZWQ=' }, body });
      const parsed = (await answer.json()) as { errors: boolean; items: unknown[] };
      expect(answer.status).toBe(200);
      expect(parsed.errors).toBe(true);
      expect(parsed.items.map((i) => Object.values(i as Record<string, { status: number }>)[0].status)).toEqual([...docs.map(() => 201), 400]);
      // The proxy's counters say what the engine stored (issue 34 item 5).
      const stats = (await (await fetch(`${url}/_near_dup/stats`)).json()) as { documents: { signed: number }; refused_by_cluster: { documents: number } };
      expect(stats.documents.signed).toBe(docs.length);
      expect(stats.refused_by_cluster).toEqual({ documents: 1 });
    } finally {
      child.kill('SIGTERM');
    }
    const after = await checker.stats();
    expect(after.failures).toEqual(before.failures);
    expect(after.requests.slice(before.requests.length)).toEqual(expect.arrayContaining(['POST /_bulk?refresh=true']));
    expect(await ctx.admin.count(index, { exists: { field: 'near_dup.bands' } })).toBe(docs.length);
    for (const secret of secrets) expect(stderr).not.toContain(secret);
  });

  it('as Serverless (aoss): every command works without GET /, refresh or scroll (a point in time instead); a sliced annotate is refused in one line naming scroll', async () => {
    if (skipUnlessBotocore()) return;
    const checker = aoss as RunningChecker;
    const index = ctx.index('aoss');
    const run = (args: string[]) => {
      const result = cli(checker, 'aoss', args);
      expect(result.code, `${args[0]}: ${result.stderr}`).toBe(0);
      return result;
    };
    run(['init', '--index', index]);
    // Serverless refreshes every index.refresh_interval, and near-dup waits that out where it would refresh.
    await ctx.admin.request('PUT', `/${index}/_settings`, { index: { refresh_interval: '1s' } });
    run(['ingest', '--index', index, '--field', 'text', '--id-field', 'id', '--file', ndjson('aoss')]);
    // Pages of 3: search_after carries the scan from page to page (by _id, then _index).
    expect(JSON.parse(run(['annotate', '--index', index, '--field', 'text', '--force', '--page-size', '3']).stdout.trim().split('\n').pop()!)).toMatchObject({ seen: docs.length, annotated: docs.length, failed: 0 });
    run(['similar', '--index', index, '--id', docs[0].id]);
    expect(JSON.parse(run(['dedup', '--index', index, '--full', '--page-size', '3']).stdout.trim().split('\n').pop()!)).toMatchObject({ documents: docs.length, complete: true });
    expect(await ctx.admin.count(index, { exists: { field: 'near_dup.params' } })).toBe(docs.length);
    const before = (await checker.stats()).requests.length;
    const sliced = cli(checker, 'aoss', ['annotate', '--index', index, '--field', 'text', '--force', '--slices', '2', '--slice', '0']);
    expect(sliced.code).toBe(1);
    expect(sliced.stderr).toMatch(/^near-dup: Amazon OpenSearch Serverless does not support scroll \(POST \/[^ ]+\/_search\?scroll=\.\.\.\), which near-dup needs here; Serverless has no scroll, which a sliced scan \(--slices\)/);
    expect(sliced.stderr.trim().split('\n')).toHaveLength(1);
    const stats = await checker.stats();
    expect(stats.failures).toEqual([]);
    const paths = stats.requests.map((r) => r.split('?')[0]);
    expect(paths).toEqual(expect.arrayContaining([`POST /${index}/_search/point_in_time`, 'POST /_search', 'DELETE /_search/point_in_time', 'POST /_bulk']));
    // More than one page per scan: annotate read docs.length documents 3 at a time.
    expect(paths.filter((p) => p === 'POST /_search').length).toBeGreaterThan(docs.length / 3);
    expect(paths).not.toContain('GET /');
    expect(paths.some((p) => p.endsWith('/_refresh') || p.startsWith('/_nodes'))).toBe(false);
    expect(stats.requests.some((r) => r.includes('scroll'))).toBe(false);
    // The sliced annotate wrote nothing before it was refused.
    expect(stats.requests.slice(before).some((r) => r.startsWith('POST /_bulk') || r.startsWith('PUT '))).toBe(false);
  });
});
