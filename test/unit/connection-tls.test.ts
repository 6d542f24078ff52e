// TLS options of the one connection layer (issue 34 item 3), against a local HTTPS stand-in that answers GET /
// as OpenSearch 2.19.1 and records the client certificate each connection presented: a CA pinned by its
// SHA-256 fingerprint (read from the chain the server presents, then trusted as a CA file would be, by the
// official client and by near-dup's own requests alike), a client certificate and key (mutual TLS), and
// --insecure said once. The real secured OpenSearch runs the same options in test/secured/connection.test.ts.
import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/engine/client.js';
import { resolveConnection } from '../../src/engine/connection.js';
import { httpGet } from '../../src/engine/detect.js';
import { UsageError, UserError } from '../../src/errors.js';

const hasOpenssl = spawnSync('openssl', ['version']).status === 0;
const PASSWORD = 'tls-test-pa55word';

interface Files {
  ca: string;
  otherCa: string;
  serverKey: string;
  /** The server's certificate followed by its CA (what Elasticsearch presents). */
  serverChain: string;
  /** The server's certificate alone. */
  serverLeaf: string;
  clientCa: string;
  clientCert: string;
  clientKey: string;
}

/** Two CAs (one for the server, one for clients), a server certificate for 127.0.0.1, a client certificate CN=nd-client. */
function makeCertificates(dir: string): Files {
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  for (const name of ['ca', 'other-ca', 'client-ca']) {
    openssl('req', '-x509', ...ec, '-keyout', file(`${name}.key`), '-out', file(`${name}.pem`), '-days', '2', '-subj', `/CN=near-dup test ${name}`, '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  }
  const sign = (name: string, subject: string, ca: string, ext: string) => {
    openssl('req', ...ec, '-keyout', file(`${name}.key`), '-out', file(`${name}.csr`), '-subj', subject);
    writeFileSync(file(`${name}.ext`), ext);
    openssl('x509', '-req', '-in', file(`${name}.csr`), '-CA', file(`${ca}.pem`), '-CAkey', file(`${ca}.key`), '-CAcreateserial', '-out', file(`${name}.pem`), '-days', '2', '-extfile', file(`${name}.ext`));
  };
  sign('server', '/CN=127.0.0.1', 'ca', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n');
  sign('client', '/CN=nd-client', 'client-ca', 'basicConstraints=CA:FALSE\nextendedKeyUsage=clientAuth\n');
  writeFileSync(file('chain.pem'), readFileSync(file('server.pem'), 'utf8') + readFileSync(file('ca.pem'), 'utf8'));
  return {
    ca: file('ca.pem'),
    otherCa: file('other-ca.pem'),
    serverKey: file('server.key'),
    serverChain: file('chain.pem'),
    serverLeaf: file('server.pem'),
    clientCa: file('client-ca.pem'),
    clientCert: file('client.pem'),
    clientKey: file('client.key'),
  };
}

interface Engine {
  url: string;
  /** The CN of the client certificate of each request, or null. */
  clients: Array<string | null>;
  close(): Promise<void>;
}

/** GET / as OpenSearch answers it; any other request a 200 count. With `requireClient`, a connection without a client certificate is refused. */
async function engine(files: Files, options: { chain: boolean; requireClient?: boolean }): Promise<Engine> {
  const clients: Array<string | null> = [];
  const server = https.createServer(
    {
      key: readFileSync(files.serverKey),
      cert: readFileSync(options.chain ? files.serverChain : files.serverLeaf),
      ca: readFileSync(files.clientCa),
      requestCert: true,
      rejectUnauthorized: options.requireClient ?? false,
    },
    (req, res) => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      const cn = peer?.subject?.CN;
      clients.push(typeof cn === 'string' ? cn : null);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(req.url === '/' ? { cluster_name: 'stand-in', version: { number: '2.19.1', distribution: 'opensearch' } } : { count: 0 }));
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    clients,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe.skipIf(!hasOpenssl)('TLS options of the connection layer', () => {
  let dir = '';
  let files: Files;
  const fingerprint = (file: string) => new X509Certificate(readFileSync(file)).fingerprint256;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'nd-tls-'));
    files = makeCertificates(dir);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('--ca-fingerprint: the CA is taken from the presented chain and then trusted by the official client and the raw requests', async () => {
    const server = await engine(files, { chain: true });
    try {
      const connection = await resolveConnection({ url: server.url, caFingerprint: fingerprint(files.ca).toLowerCase().replace(/:/g, '') });
      expect(connection.ca).toBe(new X509Certificate(readFileSync(files.ca)).toString());
      expect(connection.caFingerprint).toBe(fingerprint(files.ca));
      expect((await httpGet(connection, '/')).statusCode).toBe(200);
      const client = await connect({ url: server.url, caFingerprint: fingerprint(files.ca) });
      try {
        expect(client.info).toMatchObject({ flavour: 'opensearch', version: '2.19.1' });
        expect(await client.request('POST', '/x/_count')).toEqual({ count: 0 });
      } finally {
        await client.close();
      }
    } finally {
      await server.close();
    }
  });

  it('a fingerprint the chain does not hold is refused in one line that lists what was presented, with no credential in it', async () => {
    const server = await engine(files, { chain: true });
    const leafOnly = await engine(files, { chain: false });
    try {
      const other = fingerprint(files.otherCa);
      const attempt = resolveConnection({ url: server.url.replace('https://', `https://nd:${PASSWORD}@`), caFingerprint: other });
      await expect(attempt).rejects.toThrow(UserError);
      const message = await attempt.catch((err: Error) => err.message);
      expect(message).toContain(`has the SHA-256 fingerprint ${other} given to --ca-fingerprint (it presented: CN=127.0.0.1 (${fingerprint(files.serverLeaf)}); CN=near-dup test ca (${fingerprint(files.ca)}))`);
      expect(message).not.toContain(PASSWORD);
      expect(message).not.toContain('\n');
      // A server that does not send its CA: the fingerprint cannot be checked there, and the way out is said.
      await expect(resolveConnection({ url: leafOnly.url, caFingerprint: fingerprint(files.ca) })).rejects.toThrow(/give the CA certificate itself with --ca-file if the server does not send it in its chain/);
      await expect(resolveConnection({ url: 'http://127.0.0.1:9', caFingerprint: fingerprint(files.ca) })).rejects.toThrow(/--ca-fingerprint applies to an https:\/\/ URL/);
      await expect(resolveConnection({ url: server.url, caFingerprint: 'not-hex' })).rejects.toThrow(UsageError);
    } finally {
      await server.close();
      await leafOnly.close();
    }
  });

  it('--client-cert and --client-key are presented by the official client and by the raw requests; without them a server that requires one refuses', async () => {
    const server = await engine(files, { chain: true, requireClient: true });
    try {
      const client = await connect({ url: server.url, caFile: files.ca, clientCert: files.clientCert, clientKey: files.clientKey });
      try {
        await client.request('POST', '/x/_count');
      } finally {
        await client.close();
      }
      // GET / by detect.ts, then the count by the OpenSearch client: both presented the certificate.
      expect(server.clients).toEqual(['nd-client', 'nd-client']);
      const refused = connect({ url: server.url, caFile: files.ca });
      await expect(refused).rejects.toThrow(UserError);
      expect(await refused.catch((err: Error) => err.message)).not.toMatch(/\n/);
    } finally {
      await server.close();
    }
  });

  it('a client certificate with another key, half of the pair, or an http URL is refused before any request', async () => {
    await expect(resolveConnection({ url: 'https://h', clientCert: files.clientCert, clientKey: files.serverKey })).rejects.toThrow(
      new UserError(`the key in ${files.serverKey} (--client-key) is not the key of the certificate in ${files.clientCert} (--client-cert)`),
    );
    await expect(resolveConnection({ url: 'https://h', clientCert: files.clientCert })).rejects.toThrow(/give --client-cert and --client-key together/);
    await expect(resolveConnection({ url: 'http://h', clientCert: files.clientCert, clientKey: files.clientKey })).rejects.toThrow(UsageError);
    await expect(resolveConnection({ url: 'https://h', clientCert: files.ca, clientKey: '/no/such.key' })).rejects.toThrow(/cannot read the client key \/no\/such.key given to --client-key: no such file/);
  });

  it('--insecure is said once for however many connections, and only for https', async () => {
    const lines: string[] = [];
    const warn = (line: string) => lines.push(line);
    await resolveConnection({ url: 'https://a:1,https://b:2', insecure: true, warn });
    await resolveConnection({ url: 'https://a:1', insecure: true, warn });
    await resolveConnection({ url: 'http://c:3', insecure: true, warn: (line) => lines.push(`other: ${line}`) });
    expect(lines).toEqual(['--insecure: the TLS certificate of https://a:1,https://b:2 is not checked']);
  });

  it('the CLI says --insecure once on stderr, and its failure is one line', () => {
    const cli = path.resolve(__dirname, '../../dist/cli/main.js');
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('SEARCH_')));
    const run = spawnSync(process.execPath, [cli, 'similar', '--url', 'https://127.0.0.1:9,https://127.0.0.1:10', '--insecure', '--index', 'x', '--text', 'a b c'], { env, encoding: 'utf8' });
    expect(run.stderr.match(/--insecure/g)).toHaveLength(1);
    expect(run.stderr).toMatch(/^near-dup: --insecure: the TLS certificate of https:\/\/127\.0\.0\.1:9,https:\/\/127\.0\.0\.1:10 is not checked\nnear-dup: cannot connect to/);
    expect(run.status).toBe(1);
  });
});
