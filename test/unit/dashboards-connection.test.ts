// `dashboards` reaches OpenSearch Dashboards or Kibana the way every other command reaches a cluster
// (issue 34 item 3): the credentials resolved by engine/connection.ts (an API key given as id:key is sent
// base64-encoded), the CA of --ca-file / SEARCH_CA_FILE trusted, and trusted only when given, --insecure said
// on stderr, options that cannot apply refused in one line, and no credential in anything it prints or throws.
// The server is a small HTTPS stand-in of the saved objects API, its certificate signed by a CA made here.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import yargs from 'yargs';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { dashboardsCommand } from '../../src/cli/commands/dashboards.js';
import { CONNECTION_ENV } from '../../src/cli/connection-options.js';
import { importSavedObjects } from '../../src/dashboards/import.js';
import { savedObjectsFor } from '../../src/dashboards/saved-objects.js';
import { UsageError } from '../../src/errors.js';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const objects = savedObjectsFor({ index: 'news', prefix: 'near_dup' });
const settings = { index: 'news', prefix: 'near_dup', format: 'kibana' as const };
const KEY_ID = 'nd-key-id';
const KEY_SECRET = 'Kx9-secret-part-of-the-api-key';
const PASSWORD = 'pa55-word-not-to-print';
const base64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** A CA, a server certificate it signs for 127.0.0.1, and a second CA that signed nothing here. */
function makeCertificates(dir: string): { ca: string; otherCa: string; key: string; cert: string } {
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  for (const name of ['ca', 'other-ca']) {
    openssl('req', '-x509', ...ec, '-keyout', file(`${name}.key`), '-out', file(`${name}.pem`), '-days', '2', '-subj', `/CN=near-dup test ${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  }
  openssl('req', ...ec, '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=127.0.0.1');
  writeFileSync(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  openssl('x509', '-req', '-in', file('server.csr'), '-CA', file('ca.pem'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.pem'), '-days', '2', '-extfile', file('server.ext'));
  return { ca: file('ca.pem'), otherCa: file('other-ca.pem'), key: file('server.key'), cert: file('server.pem') };
}

interface StandIn {
  url: string;
  /** The Authorization header of each request, in order. */
  authorizations: Array<string | undefined>;
  imported: () => number;
  close: () => Promise<void>;
}

/** Kibana 8.19's saved objects API, in a few lines: status, import, read back. Or 401 to everything. */
async function standIn(tls: { key: string; cert: string } | undefined, answer: 'ok' | 'unauthorized' = 'ok'): Promise<StandIn> {
  const store = new Map<string, unknown>();
  const authorizations: Array<string | undefined> = [];
  const handler: http.RequestListener = (req, res) => {
    authorizations.push(req.headers.authorization);
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const reply = (status: number, json: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'kbn-name': 'stand-in' });
        res.end(JSON.stringify(json));
      };
      if (answer === 'unauthorized') return reply(401, { statusCode: 401, error: 'Unauthorized', message: `[security_exception] unable to authenticate with ApiKey ${base64(`${KEY_ID}:${KEY_SECRET}`)}` });
      if (req.url === '/api/status') return reply(200, { version: { number: '8.19.3' } });
      if (req.url?.startsWith('/api/saved_objects/_import')) {
        for (const line of body.split('\n').filter((l) => l.startsWith('{"id"'))) {
          const o = JSON.parse(line);
          store.set(`${o.type}:${o.id}`, o);
        }
        return reply(200, { success: true, successCount: store.size });
      }
      if (req.url === '/api/saved_objects/_bulk_get') {
        const asked = JSON.parse(body) as Array<{ type: string; id: string }>;
        return reply(200, { saved_objects: asked.map((a) => store.get(`${a.type}:${a.id}`) ?? { ...a, error: { statusCode: 404 } }) });
      }
      reply(404, { message: 'no such route' });
    });
  };
  const server = tls ? https.createServer({ key: readFileSync(tls.key), cert: readFileSync(tls.cert) }, handler) : http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    authorizations,
    imported: () => store.size,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/** Runs `near-dup dashboards ARGS` in this process; what it printed, and the error it ended with, if any. */
async function runCommand(args: string[]): Promise<{ stdout: string; stderr: string; error?: Error }> {
  let stdout = '';
  let stderr = '';
  const out = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
    stderr += String(chunk);
    return true;
  });
  try {
    await yargs(['dashboards', ...args])
      .strict()
      .command(dashboardsCommand as never)
      .fail((msg, e) => {
        if (e) throw e;
        throw new UsageError(msg);
      })
      .parseAsync();
    return { stdout, stderr };
  } catch (error) {
    return { stdout, stderr, error: error as Error };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

describe.skipIf(!hasOpenssl)('dashboards: credentials and TLS from the connection layer', () => {
  let dir = '';
  let certs: ReturnType<typeof makeCertificates>;
  let secure: StandIn;
  const noState = () => path.join(dir, 'no-dedup-state.json');

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'near-dup-dashboards-tls-'));
    certs = makeCertificates(dir);
    secure = await standIn(certs);
  });
  afterAll(async () => {
    await secure?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => {
    // Whatever this machine's environment says about its cluster is not part of these runs.
    for (const name of Object.values(CONNECTION_ENV)) vi.stubEnv(name, '');
  });
  afterEach(() => {
    secure.authorizations.length = 0;
    vi.unstubAllEnvs();
  });

  it('sends an API key given as id:key as ApiKey base64(id:key), as every other command does; an encoded key as it is', async () => {
    const plain = await standIn(undefined);
    try {
      await importSavedObjects(objects, { url: plain.url, apiKey: `${KEY_ID}:${KEY_SECRET}`, ...settings });
      expect(plain.authorizations.length).toBeGreaterThanOrEqual(3); // status, import, read back
      expect(new Set(plain.authorizations)).toEqual(new Set([`ApiKey ${base64(`${KEY_ID}:${KEY_SECRET}`)}`]));
    } finally {
      await plain.close();
    }
    const result = await importSavedObjects(objects, { url: secure.url, apiKey: `${KEY_ID}:${KEY_SECRET}`, caFile: certs.ca, ...settings });
    expect(result.imported).toBe(objects.length);
    expect(new Set(secure.authorizations)).toEqual(new Set([`ApiKey ${base64(`${KEY_ID}:${KEY_SECRET}`)}`]));
    secure.authorizations.length = 0;
    await importSavedObjects(objects, { url: secure.url, apiKey: base64(`${KEY_ID}:${KEY_SECRET}`), caFile: certs.ca, ...settings });
    expect(new Set(secure.authorizations)).toEqual(new Set([`ApiKey ${base64(`${KEY_ID}:${KEY_SECRET}`)}`]));
  });

  it('sends Basic user:password over HTTPS with the CA of --ca-file, from the options or from user:password@ in --url', async () => {
    await importSavedObjects(objects, { url: secure.url, username: 'kibana-admin', password: PASSWORD, caFile: certs.ca, ...settings });
    expect(new Set(secure.authorizations)).toEqual(new Set([`Basic ${base64(`kibana-admin:${PASSWORD}`)}`]));
    secure.authorizations.length = 0;
    const result = await importSavedObjects(objects, { url: secure.url.replace('https://', `https://kibana-admin:${PASSWORD}@`), caFile: certs.ca, ...settings });
    expect(new Set(secure.authorizations)).toEqual(new Set([`Basic ${base64(`kibana-admin:${PASSWORD}`)}`]));
    // The link printed is the URL without the credentials.
    expect(result.dashboardUrl).toBe(`${secure.url}/app/dashboards#/view/near-dup-news-dashboard`);
  });

  it('trusts the private CA only when given: without it, or with another CA, one line naming --ca-file and no request sent', async () => {
    for (const caFile of [undefined, certs.otherCa]) {
      const attempt = importSavedObjects(objects, { url: secure.url, apiKey: `${KEY_ID}:${KEY_SECRET}`, caFile, ...settings });
      await expect(attempt, String(caFile)).rejects.toThrow(/^TLS error talking to OpenSearch Dashboards or Kibana at https:\/\/127\.0\.0\.1:\d+: .*certificate.*--ca-file \(SEARCH_CA_FILE\).*--insecure/);
      const message = await attempt.catch((e: Error) => e.message);
      expect(message).not.toContain(KEY_SECRET);
      expect(message).not.toContain(base64(`${KEY_ID}:${KEY_SECRET}`));
    }
    expect(secure.authorizations).toEqual([]);
    // A file that holds no certificate is refused before anything is sent.
    await expect(importSavedObjects(objects, { url: secure.url, caFile: certs.key, ...settings })).rejects.toThrow(/holds no PEM certificate/);
    // --insecure: no check, and the import goes through.
    const result = await importSavedObjects(objects, { url: secure.url, insecure: true, ...settings });
    expect(result.imported).toBe(objects.length);
  });

  it('never shows the credentials: a refused key is one line without it, even when the server echoes it', async () => {
    const refusing = await standIn(certs, 'unauthorized');
    try {
      for (const credentials of [{ apiKey: `${KEY_ID}:${KEY_SECRET}` }, { username: 'kibana-admin', password: PASSWORD }]) {
        const message = await importSavedObjects(objects, { url: refusing.url, caFile: certs.ca, ...credentials, ...settings }).then(
          () => 'imported',
          (e: Error) => e.message,
        );
        expect(message).toMatch(/^https:\/\/127\.0\.0\.1:\d+ refused its status \(401\); give --username\/--password/);
        for (const secret of [KEY_SECRET, PASSWORD, base64(`${KEY_ID}:${KEY_SECRET}`), base64(`kibana-admin:${PASSWORD}`)]) expect(message).not.toContain(secret);
      }
    } finally {
      await refusing.close();
    }
  });

  it('the command takes --ca-file and --api-key id:key like every command, prints no credential, and says --insecure once on stderr', async () => {
    const run = await runCommand(['--url', secure.url, '--index', 'news', '--format', 'kibana', '--dedup-state', noState(), '--api-key', `${KEY_ID}:${KEY_SECRET}`, '--ca-file', certs.ca]);
    expect(run.error).toBeUndefined();
    expect(run.stdout).toMatch(/^imported \d+ saved objects into Kibana 8\.19\.3/);
    expect(new Set(secure.authorizations)).toEqual(new Set([`ApiKey ${base64(`${KEY_ID}:${KEY_SECRET}`)}`]));
    for (const secret of [KEY_SECRET, base64(`${KEY_ID}:${KEY_SECRET}`)]) expect(run.stdout + run.stderr).not.toContain(secret);

    const insecure = await runCommand(['--url', secure.url, '--index', 'news', '--format', 'kibana', '--dedup-state', noState(), '--insecure']);
    expect(insecure.error).toBeUndefined();
    expect(insecure.stderr.match(/--insecure/g)).toHaveLength(1);
    expect(insecure.stderr).toContain(`near-dup dashboards: --insecure: the TLS certificate of ${secure.url} is not checked\n`);
  });

  it('the command reads the SEARCH_* variables every command reads: the CA file and the key, encoded', async () => {
    vi.stubEnv(CONNECTION_ENV.caFile, certs.ca);
    vi.stubEnv(CONNECTION_ENV.apiKey, `${KEY_ID}:${KEY_SECRET}`);
    const run = await runCommand(['--url', secure.url, '--index', 'news', '--format', 'kibana', '--dedup-state', noState()]);
    expect(run.error).toBeUndefined();
    expect(new Set(secure.authorizations)).toEqual(new Set([`ApiKey ${base64(`${KEY_ID}:${KEY_SECRET}`)}`]));
  });

  it('refuses in one line what cannot apply: --ca-file or --insecure for an http:// URL, two URLs, two kinds of credentials', async () => {
    const http1 = await runCommand(['--url', 'http://127.0.0.1:1', '--index', 'news', '--dedup-state', noState(), '--ca-file', certs.ca]);
    expect(http1.error).toBeInstanceOf(UsageError);
    expect(http1.error?.message).toBe('--ca-file applies to an https:// URL, and --url http://127.0.0.1:1 is plain HTTP: give the https:// URL of OpenSearch Dashboards or Kibana, or leave --ca-file out');
    const http2 = await runCommand(['--url', 'http://127.0.0.1:1', '--index', 'news', '--dedup-state', noState(), '--insecure']);
    expect(http2.error?.message).toMatch(/^--insecure applies to an https:\/\/ URL/);
    const two = await runCommand(['--url', `${secure.url},${secure.url.replace('127.0.0.1', 'localhost')}`, '--index', 'news', '--dedup-state', noState(), '--ca-file', certs.ca]);
    expect(two.error).toBeInstanceOf(UsageError);
    expect(two.error?.message).toMatch(/^--url names 2 servers .*; dashboards talks to one OpenSearch Dashboards or Kibana: give its one URL$/);
    const both = await runCommand(['--url', secure.url, '--index', 'news', '--dedup-state', noState(), '--ca-file', certs.ca, '--api-key', `${KEY_ID}:${KEY_SECRET}`, '--username', 'u', '--password', PASSWORD]);
    expect(both.error?.message).toMatch(/^give one kind of credentials, not --username\/--password and --api-key/);
    for (const run of [http1, http2, two, both]) expect(`${run.error?.message}${run.stderr}${run.stdout}`).not.toMatch(new RegExp(`${KEY_SECRET}|${PASSWORD}`));
    expect(secure.authorizations).toEqual([]);
  });
});
