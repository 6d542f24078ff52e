// The built CLI (dist/, made by `npm test`'s pretest) on connection failures: one line on stderr, no stack
// trace, no credentials, exit code 1 (2 for a usage mistake). No engine needed.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const CLI = path.resolve(__dirname, '../../dist/cli/main.js');
const built = existsSync(CLI);

/** Runs the CLI without blocking: the fake servers below live in this process. */
function run(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('SEARCH_')));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...clean, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe.skipIf(!built)('near-dup CLI connection failures', () => {
  let server: http.Server;
  let authUrl = '';
  let closedUrl = '';

  beforeAll(async () => {
    const probe = http.createServer().listen(0, '127.0.0.1');
    await new Promise((r) => probe.once('listening', r));
    closedUrl = `http://127.0.0.1:${(probe.address() as AddressInfo).port}`;
    await new Promise((r) => probe.close(r));
    server = http.createServer((_req, res) => {
      res.statusCode = 401;
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ error: { type: 'security_exception', reason: 'unable to authenticate user' }, status: 401 }));
    });
    server.listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    authUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((r) => server.close(r));
  });

  const oneLine = (stderr: string) => {
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(stderr).not.toMatch(/\bat .*\.js:\d+/); // no stack trace
    return stderr.trim();
  };

  it('an unreachable URL: exit 1, one line', async () => {
    const { status, stderr } = await run(['init', '--index', 'docs', '--url', closedUrl]);
    expect(status).toBe(1);
    expect(oneLine(stderr)).toMatch(new RegExp(`^near-dup: cannot connect to ${closedUrl}: connection refused;`));
  });

  it('wrong credentials: exit 1, one line, the password never printed', async () => {
    const withUrlCredentials = await run(['init', '--index', 'docs', '--url', authUrl.replace('http://', 'http://ann:hunter2@')]);
    expect(withUrlCredentials.status).toBe(1);
    expect(oneLine(withUrlCredentials.stderr)).toMatch(/refused the credentials given \(401 Unauthorized\)/);
    const fromEnv = await run(['init', '--index', 'docs'], { SEARCH_URL: authUrl, SEARCH_USERNAME: 'ann', SEARCH_PASSWORD: 'hunter2' });
    expect(fromEnv.status).toBe(1);
    expect(oneLine(fromEnv.stderr)).toMatch(/refused the credentials given/);
    for (const out of [withUrlCredentials, fromEnv]) expect(out.stdout + out.stderr).not.toContain('hunter2');
  });

  it('a usage mistake: exit 2', async () => {
    expect((await run(['init', '--url', authUrl])).status).toBe(2);
    expect((await run(['init', '--index', 'x', '--url', 'ftp://host'])).status).toBe(2);
    const bad = await run(['init', '--index', 'x'], { SEARCH_URL: authUrl, SEARCH_INSECURE: 'sometimes' });
    expect(bad.status).toBe(2);
    expect(oneLine(bad.stderr)).toBe('near-dup: SEARCH_INSECURE="sometimes" is not a boolean; use true or false');
  });
});
