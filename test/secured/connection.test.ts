// The connection options beyond user and password, on the real secured OpenSearch (issue 34 item 3): the
// CA pinned by its SHA-256 fingerprint instead of a CA file, and a client certificate (mutual TLS: the node
// asks for one, clientauth_mode OPTIONAL, and authenticates by its CN, mapped to the near_dup role), each
// through the CLI from dist/ and through the official client, with their refusals in one line.
import { spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
import { connect } from '../../src/engine/client.js';
import { CLI, describeSecured, hasStackTrace, secretForms } from './harness.js';

describeSecured('connection options: CA fingerprint, client certificate', (ctx) => {
  const fingerprint = () => new X509Certificate(readFileSync(ctx.engine.caFile)).fingerprint256;
  const run = (args: string[], env: NodeJS.ProcessEnv = {}) => {
    const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SEARCH_')));
    const result = spawnSync(process.execPath, [CLI, ...args], { cwd: ctx.dir, env: { ...clean, ...env }, encoding: 'utf8', timeout: 180_000 });
    ctx.printed.push(`${result.stdout}\n${result.stderr}`);
    return { code: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
  };

  it('--ca-fingerprint trusts the CA the node presents in its chain, in place of --ca-file (any case, with or without colons)', async () => {
    const user = ctx.user('nd_user');
    const index = ctx.index('fingerprint');
    const plain = fingerprint().replace(/:/g, '').toLowerCase();
    const result = run(['init', '--index', index, '--url', ctx.engine.url, '--ca-fingerprint', plain], { SEARCH_USERNAME: user.username, SEARCH_PASSWORD: user.password });
    expect(result.code, result.stderr).toBe(0);
    expect(await ctx.admin.indexExists(index)).toBe(true);
    // The same through the official client, from the environment variable.
    const client = await connect({ url: ctx.engine.url, username: user.username, password: user.password, caFingerprint: fingerprint() });
    try {
      expect((await client.request<{ count: number }>('POST', `/${index}/_count`)).count).toBe(0);
    } finally {
      await client.close();
    }
  });

  it('a fingerprint no certificate of the chain has is one line naming what was presented; nothing is sent, nothing created', async () => {
    const user = ctx.user('nd_user');
    const index = ctx.index('wrong-fingerprint');
    const wrong = `${'AB:'.repeat(31)}CD`;
    const result = run(['init', '--index', index, '--url', ctx.engine.url, '--ca-fingerprint', wrong], { SEARCH_USERNAME: user.username, SEARCH_PASSWORD: user.password });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/no certificate https:\/\/127\.0\.0\.1:\d+ presents has the SHA-256 fingerprint AB:AB:.*given to --ca-fingerprint \(it presented: .*Root CA/);
    expect(result.stderr).toContain(fingerprint());
    expect(hasStackTrace(result.stderr)).toBe(false);
    for (const secret of secretForms(user)) expect(result.stderr).not.toContain(secret);
    expect(await ctx.admin.indexExists(index)).toBe(false);
    const bad = run(['init', '--index', index, '--url', ctx.engine.url, '--ca-fingerprint', 'abc']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^near-dup: --ca-fingerprint "abc" is not a SHA-256 fingerprint: give the 64 hex digits/);
  });

  it('a client certificate alone authenticates (as its CN, with the near_dup role), for the CLI and the official client', async () => {
    const cert = ctx.engine.certUser;
    expect(cert, 'scripts/engine configures the secured engine for client certificates').toBeDefined();
    if (!cert) return;
    const index = ctx.index('client-cert');
    const tls = ['--url', ctx.engine.url, '--ca-file', ctx.engine.caFile];
    const init = run(['init', '--index', index, ...tls, '--client-cert', cert.cert, '--client-key', cert.key]);
    expect(init.code, init.stderr).toBe(0);
    expect(await ctx.admin.indexExists(index)).toBe(true);
    // Without it (and without other credentials), the engine asks for them: one line.
    const without = run(['init', '--index', ctx.index('no-cert'), ...tls]);
    expect(without.code).toBe(1);
    expect(without.stderr).toMatch(/requires authentication \(401 Unauthorized\)/);
    const client = await connect({ url: ctx.engine.url, caFile: ctx.engine.caFile, clientCert: cert.cert, clientKey: cert.key });
    try {
      const who = await client.request<{ user_name: string; roles: string[] }>('GET', '/_plugins/_security/authinfo');
      expect(who.user_name).toBe(cert.username);
      expect(who.roles).toContain('near_dup');
    } finally {
      await client.close();
    }
  });

  it('a client certificate is refused where it cannot work: with an http URL, a key of another certificate, and by the proxy', () => {
    const cert = ctx.engine.certUser;
    if (!cert) return;
    const http = run(['init', '--index', 'x', '--url', 'http://127.0.0.1:9', '--client-cert', cert.cert, '--client-key', cert.key]);
    expect(http.code).toBe(2);
    expect(http.stderr).toMatch(/^near-dup: --client-cert and --client-key apply to https:\/\/ URLs/);
    const half = run(['init', '--index', 'x', '--url', ctx.engine.url, '--client-cert', cert.cert]);
    expect(half.code).toBe(2);
    expect(half.stderr).toMatch(/give --client-cert and --client-key together/);
    const mismatched = run(['init', '--index', 'x', '--url', ctx.engine.url, '--client-cert', ctx.engine.caFile, '--client-key', cert.key]);
    expect(mismatched.code).toBe(1);
    expect(mismatched.stderr).toMatch(/is not the key of the certificate in/);
    const proxy = run(['proxy', '--url', ctx.engine.url, '--index', 'x', '--field', 'text', '--client-cert', cert.cert, '--client-key', cert.key]);
    expect(proxy.code).toBe(2);
    expect(proxy.stderr).toMatch(/the proxy passes each client's own identity to the cluster, and a client certificate of its own/);
    for (const result of [http, half, mismatched, proxy]) expect(hasStackTrace(result.stderr)).toBe(false);
  });
});
