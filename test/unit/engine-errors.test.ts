// Failures talking to a cluster become one line: what, where, what to do. First the translation itself,
// then the real thing over local sockets (a closed port, a server that wants credentials, TLS servers),
// without any engine.
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from '../../src/engine/client.js';
import { chooseUrl, findLocalEngine } from '../../src/engine/locate.js';
import { describeConnectionError, EngineConnectionError, EngineResponseError, errorCode } from '../../src/engine/errors.js';
import { UserError } from '../../src/errors.js';

const fixture = (name: string) => new URL(`../fixtures/tls/${name}`, import.meta.url).pathname;

function oneLineUserError(err: unknown): string {
  expect(err).toBeInstanceOf(UserError);
  const message = (err as Error).message;
  expect(message).not.toContain('\n');
  return message;
}

describe('describeConnectionError', () => {
  const url = 'https://elastic:changeme@search.example.org:9200';
  const described = (err: unknown, extra = {}) => oneLineUserError(describeConnectionError(err, { url, ...extra }));

  it('says a refused connection, an unknown host and a timeout, without credentials', () => {
    const refused = described(Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:9200'), { code: 'ECONNREFUSED' }));
    expect(refused).toBe(
      'cannot connect to https://search.example.org:9200: connection refused; check --url (or SEARCH_URL) and that the cluster is running (for a local one: docker compose up -d, or npm run engine:start)',
    );
    expect(described(new EngineConnectionError('getaddrinfo ENOTFOUND search.example.org', undefined, url))).toMatch(/host "search.example.org" not found/);
    expect(described(new EngineConnectionError('Request timed out', 'ETIMEDOUT', url, { timeout: true }))).toMatch(/no answer from https:\/\/search.example.org:9200 in time/);
    for (const message of [refused]) expect(message).not.toMatch(/changeme|elastic:/);
  });

  it('says what to do about TLS', () => {
    const message = described(new EngineConnectionError('self-signed certificate', undefined, url));
    expect(message).toMatch(/^TLS error talking to https:\/\/search.example.org:9200: self-signed certificate \(DEPTH_ZERO_SELF_SIGNED_CERT\)/);
    expect(message).toMatch(/--ca-file \(SEARCH_CA_FILE\)/);
    expect(message).toMatch(/--insecure/);
    expect(described(Object.assign(new Error('x'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }))).toMatch(/TLS error/);
    expect(described(Object.assign(new Error('write EPROTO ...:wrong version number:...\n'), { code: 'EPROTO' }))).toMatch(/does not speak HTTPS on that port; try an http:\/\/ URL/);
  });

  it('tells refused credentials from missing ones', () => {
    const err = new EngineResponseError(401, 'security_exception', 'missing authentication credentials', 'GET', '/', url, {});
    expect(described(err)).toMatch(/requires authentication \(401 Unauthorized\); give --username and --password, --api-key or --bearer-token/);
    expect(described(err, { authGiven: true })).toMatch(/refused the credentials given \(401 Unauthorized\)/);
  });

  it('names a missing index and how to create it', () => {
    const err = new EngineResponseError(404, 'index_not_found_exception', 'no such index [docs]', 'POST', '/docs/_search', 'http://h:9200', {
      error: { type: 'index_not_found_exception', index: 'docs' },
    });
    expect(described(err)).toBe(
      'index "docs" does not exist on https://search.example.org:9200; check the name given to --index, or create it with `near-dup init --index docs`',
    );
  });

  it('passes other answers on with their reason, and leaves bugs alone', () => {
    const err = new EngineResponseError(400, 'illegal_argument_exception', 'bad\nthing', 'PUT', '/_index_template/x', url, {});
    expect(described(err)).toBe('https://search.example.org:9200 rejected PUT /_index_template/x (400 illegal_argument_exception: bad thing)');
    expect(described(new EngineResponseError(503, undefined, undefined, 'GET', '/', url, {}))).toMatch(/failed on GET \/ \(503\); check the cluster's health/);
    const bug = new TypeError('x is not a function');
    expect(describeConnectionError(bug, { url })).toBe(bug);
  });

  it('finds the error code wherever a client put it', () => {
    expect(errorCode({ code: 'ECONNREFUSED' })).toBe('ECONNREFUSED');
    expect(errorCode({ cause: { code: 'ENOTFOUND' } })).toBe('ENOTFOUND');
    expect(errorCode(new Error('connect ECONNREFUSED 127.0.0.1:1'))).toBe('ECONNREFUSED');
    expect(errorCode(new Error('unable to verify the first certificate'))).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    expect(errorCode(new Error('something else'))).toBeUndefined();
  });
});

describe('connect() over real sockets', () => {
  const servers: Array<http.Server | https.Server> = [];
  const root = { name: 'n', cluster_name: 'fake', version: { distribution: 'opensearch', number: '2.19.1' }, tagline: 'The OpenSearch Project: https://opensearch.org/' };
  let closedPort = 0;
  let authUrl = '';
  let tlsUrl = '';
  let plainUrl = '';

  async function listen(server: http.Server | https.Server): Promise<number> {
    servers.push(server);
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as AddressInfo).port;
  }

  const answer = (req: http.IncomingMessage, res: http.ServerResponse) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify(req.url === '/' ? root : { status: 'green', cluster_name: 'fake' }));
  };

  beforeAll(async () => {
    authUrl = `http://127.0.0.1:${await listen(
      http.createServer((req, res) => {
        if (req.headers.authorization !== `Basic ${Buffer.from('ann:right').toString('base64')}`) {
          res.statusCode = 401;
          res.setHeader('www-authenticate', 'Basic realm="security"');
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify({ error: { type: 'security_exception', reason: 'missing authentication credentials for REST request [/]' }, status: 401 }));
          return;
        }
        answer(req, res);
      }),
    )}`;
    tlsUrl = `https://127.0.0.1:${await listen(https.createServer({ cert: readFileSync(fixture('cert.pem')), key: readFileSync(fixture('key.pem')) }, answer))}`;
    plainUrl = `http://127.0.0.1:${await listen(http.createServer(answer))}`;
    // The closed port is taken last: a port freed before the servers above listen can be handed to one of them.
    const probe = http.createServer();
    closedPort = await listen(probe);
    await new Promise((r) => probe.close(r));
    servers.pop();
  });

  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections?.();
      await new Promise((r) => server.close(r));
    }
  });

  const failure = (promise: Promise<unknown>) =>
    promise.then(
      () => {
        throw new Error('expected a failure');
      },
      (err: unknown) => oneLineUserError(err),
    );

  it('an unreachable URL', async () => {
    expect(await failure(connect({ url: `http://127.0.0.1:${closedPort}` }))).toBe(
      `cannot connect to http://127.0.0.1:${closedPort}: connection refused; check --url (or SEARCH_URL) and that the cluster is running (for a local one: docker compose up -d, or npm run engine:start)`,
    );
  });

  it('missing and wrong credentials (401), never printing them', async () => {
    expect(await failure(connect({ url: authUrl }))).toMatch(/requires authentication \(401 Unauthorized\)/);
    const wrong = await failure(connect({ url: authUrl.replace('http://', 'http://ann:wrong-secret@') }));
    expect(wrong).toBe(
      `${authUrl} refused the credentials given (401 Unauthorized); check them, or give --username and --password, --api-key or --bearer-token (or SEARCH_USERNAME and SEARCH_PASSWORD, SEARCH_API_KEY, SEARCH_BEARER_TOKEN)`,
    );
    expect(wrong).not.toContain('wrong-secret');
    const client = await connect({ url: authUrl, username: 'ann', password: 'right' });
    expect(client.info).toMatchObject({ flavour: 'opensearch', version: '2.19.1' });
    expect(await client.request('GET', '/_cluster/health')).toMatchObject({ status: 'green' });
    await client.close();
  });

  it('an untrusted certificate, the CA file that trusts it, and --insecure', async () => {
    const untrusted = await failure(connect({ url: tlsUrl }));
    expect(untrusted).toMatch(new RegExp(`^TLS error talking to ${tlsUrl}: self[- ]signed certificate`));
    expect(untrusted).toMatch(/--ca-file/);
    expect(await failure(connect({ url: tlsUrl, caFile: fixture('other-ca.pem') }))).toMatch(/^TLS error/);

    for (const options of [{ caFile: fixture('cert.pem') }, { insecure: true }]) {
      const client = await connect({ url: tlsUrl, ...options });
      expect(client.info.flavour).toBe('opensearch');
      // The client behind the interface uses the same trust settings.
      expect(await client.request('GET', '/_cluster/health')).toMatchObject({ status: 'green' });
      await client.close();
    }
  });

  it('https:// to a plain HTTP port', async () => {
    expect(await failure(connect({ url: plainUrl.replace('http://', 'https://') }))).toMatch(/does not speak HTTPS on that port; try an http:\/\/ URL/);
  });

  it('without a URL: the first local candidate that answers, else a line saying what to do', async () => {
    expect(await chooseUrl('http://explicit:9200')).toBe('http://explicit:9200');
    const closed = `http://127.0.0.1:${closedPort}`;
    expect(await findLocalEngine([closed, authUrl, plainUrl])).toBe(authUrl); // a 401 is still a cluster
    expect(await findLocalEngine([closed])).toBeUndefined();
  });

  it('something that is not a search engine', async () => {
    const other = `http://127.0.0.1:${await listen(http.createServer((_req, res) => res.end('<html>hello</html>')))}`;
    expect(await failure(connect({ url: other }))).toBe(`${other} answered GET / but not as OpenSearch or Elasticsearch does; check --url`);
  });
});
