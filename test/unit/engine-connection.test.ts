// The pure parts of reaching a cluster: URLs and their credentials, options and environment variables,
// identifying the engine, choosing the client.
import { describe, expect, it } from 'vitest';
import { connectionArgsFrom, parseBooleanEnv } from '../../src/cli/connection-options.js';
import { clientPackageFor, supportsPointInTime } from '../../src/engine/client.js';
import { authorizationHeader, encodeApiKey, resolveConnection } from '../../src/engine/connection.js';
import { parseNodesInfo, parseRootInfo } from '../../src/engine/detect.js';
import { joinUrl, parseClusterUrl, redactCredentials, redactUrl } from '../../src/engine/url.js';
import { UsageError, UserError } from '../../src/errors.js';

describe('cluster URLs', () => {
  it('normalizes, and takes the credentials out', () => {
    expect(parseClusterUrl('localhost:9200')).toEqual({ url: 'http://localhost:9200', username: undefined, password: undefined });
    expect(parseClusterUrl('https://es.example.org:9243/')).toMatchObject({ url: 'https://es.example.org:9243' });
    expect(parseClusterUrl('https://bob:s%40cret@es.example.org/proxy/es/')).toEqual({
      url: 'https://es.example.org/proxy/es',
      username: 'bob',
      password: 's@cret',
    });
  });

  it('refuses what is not an http(s) URL, without echoing credentials', () => {
    expect(() => parseClusterUrl('ftp://host')).toThrow(UsageError);
    expect(() => parseClusterUrl('http://host:9200/?pretty')).toThrow(/query string/);
    // Must throw (a test that only looks inside a catch passes when nothing is thrown), and not echo the password.
    expect(() => parseClusterUrl('gopher://user:hunter2@host')).toThrow(UsageError);
    expect(() => parseClusterUrl('gopher://user:hunter2@host')).not.toThrow(/hunter2/);
  });

  it('redacts user:password@ from any text', () => {
    expect(redactUrl('https://elastic:changeme@localhost:9200/x')).toBe('https://localhost:9200/x');
    expect(redactUrl('http://token@host')).toBe('http://host');
    // An @ after a / may close a password that holds one: everything up to it goes (too much rather than a secret).
    expect(redactCredentials('connect ECONNREFUSED at http://a:b@h:1 and https://c:d@e@f/g, and http://h/p@q')).toBe(
      'connect ECONNREFUSED at http://h:1 and https://f/g, and http://q',
    );
    expect(redactUrl('http://localhost:9200')).toBe('http://localhost:9200');
  });

  it('joins paths onto a base with a prefix', () => {
    expect(joinUrl('https://h/proxy/', '/_bulk')).toBe('https://h/proxy/_bulk');
    expect(joinUrl('http://h:9200', '_search')).toBe('http://h:9200/_search');
  });
});

describe('connection options', () => {
  it('takes one kind of credentials, from options or the URL', async () => {
    expect((await resolveConnection({ url: 'http://u:p@h:9200' })).auth).toEqual({ kind: 'basic', username: 'u', password: 'p' });
    expect((await resolveConnection({ url: 'http://u:p@h', username: 'v', password: 'q' })).auth).toEqual({ kind: 'basic', username: 'v', password: 'q' });
    expect((await resolveConnection({ url: 'http://h', apiKey: 'id:key' })).auth).toEqual({ kind: 'apiKey', apiKey: Buffer.from('id:key').toString('base64') });
    expect((await resolveConnection({ url: 'http://h', bearerToken: 't' })).auth).toEqual({ kind: 'bearer', token: 't' });
    expect((await resolveConnection({ url: 'http://h' })).auth).toBeUndefined();
    await expect(resolveConnection({ url: 'http://h', username: 'u', password: 'p', apiKey: 'k' })).rejects.toThrow(UsageError);
    await expect(resolveConnection({ url: 'http://h', username: 'u' })).rejects.toThrow(/needs --password/);
    await expect(resolveConnection({ url: 'http://h', password: 'p' })).rejects.toThrow(/needs --username/);
  });

  it('takes the nodes of one cluster as comma-separated URLs, credentials once', async () => {
    const several = await resolveConnection({ url: 'http://u:p@n1:9200, n2:9200,,http://u:p@n3:9200/' });
    expect(several.nodes).toEqual(['http://n1:9200', 'http://n2:9200', 'http://n3:9200']);
    expect(several.url).toBe('http://n1:9200,http://n2:9200,http://n3:9200');
    expect(several.auth).toEqual({ kind: 'basic', username: 'u', password: 'p' });
    await expect(resolveConnection({ url: 'http://u:p@n1,http://v:q@n2' })).rejects.toThrow(/different credentials/);
    await expect(resolveConnection({ url: ' , ' })).rejects.toThrow(/--url is empty/);
    expect((await resolveConnection({ url: 'http://h:9200' })).nodes).toEqual(['http://h:9200']);
  });

  it('reads the CA file, and says clearly when it cannot', async () => {
    const tls = await resolveConnection({ url: 'https://h', caFile: new URL('../fixtures/tls/cert.pem', import.meta.url).pathname });
    expect(tls.ca).toContain('BEGIN CERTIFICATE');
    await expect(resolveConnection({ url: 'https://h', caFile: '/no/such/ca.pem' })).rejects.toThrow(
      new UserError('cannot read the CA file /no/such/ca.pem given to --ca-file (SEARCH_CA_FILE): no such file'),
    );
    await expect(resolveConnection({ url: 'https://h', caFile: new URL('../fixtures/tls/README.md', import.meta.url).pathname })).rejects.toThrow(
      /holds no PEM certificate/,
    );
  });

  it('builds Authorization headers', () => {
    expect(authorizationHeader({ kind: 'basic', username: 'a', password: 'b' })).toBe(`Basic ${Buffer.from('a:b').toString('base64')}`);
    expect(authorizationHeader({ kind: 'apiKey', apiKey: 'abc' })).toBe('ApiKey abc');
    expect(authorizationHeader({ kind: 'bearer', token: 't' })).toBe('Bearer t');
    expect(encodeApiKey('already-encoded==')).toBe('already-encoded==');
  });

  it('falls back to SEARCH_* environment variables, options first', () => {
    const env = {
      SEARCH_URL: 'https://env:9200',
      SEARCH_USERNAME: 'envuser',
      SEARCH_PASSWORD: 'envpass',
      SEARCH_API_KEY: '',
      SEARCH_CA_FILE: '/ca.pem',
      SEARCH_INSECURE: 'true',
    };
    expect(connectionArgsFrom({}, env)).toEqual({
      url: 'https://env:9200',
      username: 'envuser',
      password: 'envpass',
      apiKey: undefined,
      bearerToken: undefined,
      caFile: '/ca.pem',
      insecure: true,
    });
    expect(connectionArgsFrom({ url: 'http://flag:1', insecure: false, username: 'flaguser' }, env)).toMatchObject({
      url: 'http://flag:1',
      insecure: false,
      username: 'flaguser',
    });
    expect(connectionArgsFrom({}, {})).toMatchObject({ url: undefined, insecure: undefined });
  });

  it('parses boolean environment variables strictly', () => {
    expect(parseBooleanEnv('1', 'X')).toBe(true);
    expect(parseBooleanEnv('No', 'X')).toBe(false);
    expect(parseBooleanEnv(undefined, 'X')).toBeUndefined();
    expect(() => parseBooleanEnv('maybe', 'SEARCH_INSECURE')).toThrow(/SEARCH_INSECURE="maybe"/);
  });
});

describe('identifying the engine', () => {
  it('reads OpenSearch from GET /, also in its 7.10.2 compatibility mode', () => {
    expect(parseRootInfo({ cluster_name: 'c', version: { distribution: 'opensearch', number: '2.19.1' }, tagline: 'The OpenSearch Project: https://opensearch.org/' })).toEqual({
      flavour: 'opensearch',
      version: '2.19.1',
      major: 2,
      minor: 19,
      clusterName: 'c',
    });
    expect(parseRootInfo({ version: { distribution: 'opensearch', number: '7.10.2' } })?.flavour).toBe('opensearch');
    expect(parseRootInfo({ version: { number: '3.0.0' }, tagline: 'The OpenSearch Project: https://opensearch.org/' })?.flavour).toBe('opensearch');
  });

  it('reads Elasticsearch from GET /', () => {
    const body = { name: 'n', cluster_name: 'es', version: { number: '8.19.21', build_flavor: 'default' }, tagline: 'You Know, for Search' };
    expect(parseRootInfo(body, { 'x-elastic-product': 'Elasticsearch' })).toEqual({ flavour: 'elasticsearch', version: '8.19.21', major: 8, minor: 19, clusterName: 'es' });
    expect(parseRootInfo({ version: { number: '7.10.2' }, tagline: 'You Know, for Search' })?.major).toBe(7);
    expect(parseRootInfo({ version: { number: '9.1.0-SNAPSHOT' } })).toMatchObject({ major: 9, minor: 1 });
  });

  it('does not mistake other answers for an engine', () => {
    expect(parseRootInfo({ hello: 'world' })).toBeUndefined();
    expect(parseRootInfo('<html>')).toBeUndefined();
    expect(parseRootInfo({ version: { number: '1.0', distribution: 'something-else' } })).toBeUndefined();
  });

  it('falls back to the local node info, flavour from the product header', () => {
    const body = { cluster_name: 'x', nodes: { abc: { version: '8.19.21' } } };
    expect(parseNodesInfo(body, { 'x-elastic-product': 'Elasticsearch' })).toMatchObject({ flavour: 'elasticsearch', major: 8 });
    expect(parseNodesInfo({ nodes: { abc: { version: '2.19.1' } } })).toMatchObject({ flavour: 'opensearch', major: 2, minor: 19 });
    expect(parseNodesInfo({ nodes: {} })).toBeUndefined();
  });

  it('chooses the client major that matches the server', () => {
    expect(clientPackageFor({ flavour: 'opensearch', major: 1, version: '1.3.0' })).toBe('@opensearch-project/opensearch');
    expect(clientPackageFor({ flavour: 'opensearch', major: 3, version: '3.1.0' })).toBe('@opensearch-project/opensearch');
    expect(clientPackageFor({ flavour: 'elasticsearch', major: 7, version: '7.17.29' })).toBe('@elastic/elasticsearch7');
    expect(clientPackageFor({ flavour: 'elasticsearch', major: 8, version: '8.19.21' })).toBe('@elastic/elasticsearch8');
    expect(clientPackageFor({ flavour: 'elasticsearch', major: 9, version: '9.1.0' })).toBe('@elastic/elasticsearch');
    expect(() => clientPackageFor({ flavour: 'elasticsearch', major: 6, version: '6.8.23' })).toThrow(/not supported/);
  });

  it('knows which engines have a point in time', () => {
    expect(supportsPointInTime({ flavour: 'opensearch', major: 2, minor: 3 })).toBe(false);
    expect(supportsPointInTime({ flavour: 'opensearch', major: 2, minor: 4 })).toBe(true);
    expect(supportsPointInTime({ flavour: 'opensearch', major: 1, minor: 3 })).toBe(false);
    expect(supportsPointInTime({ flavour: 'elasticsearch', major: 7, minor: 9 })).toBe(false);
    expect(supportsPointInTime({ flavour: 'elasticsearch', major: 7, minor: 10 })).toBe(true);
    expect(supportsPointInTime({ flavour: 'elasticsearch', major: 8, minor: 0 })).toBe(true);
  });
});
