// The engine support table (src/engine/support.json) held to behaviour: every client package it names is
// installed at the major it serves and takes its TLS settings under the option the table names (a local
// HTTPS stand-in that only that CA can trust) and answers with status and body when asked as the table says;
// every engine scripts/engine can start is a major of the table, pinned at that major; the formats and
// versions it names are ones the code can make and read; and the lookups the client makes from it.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientPackageFor, supportsPointInTime } from '../../src/engine/client.js';
import { type ClientPackage, majorSupport, majorsOf, SUPPORT, supportedRange } from '../../src/engine/support.js';
import { formatFor, SAVED_OBJECT_FORMATS } from '../../src/dashboards/saved-object-formats.js';
import { LOCAL_ENGINE_URLS } from '../../src/engine/locate.js';
import { engineName } from '../setup/engine-types.js';

const root = path.resolve(import.meta.dirname, '..', '..');
const fixture = (name: string) => readFileSync(path.join(root, 'test', 'fixtures', 'tls', name));
// @ts-expect-error: plain JavaScript module without type declarations
const scripts = await import('../../scripts/engine/engines.mjs');
const packages = Object.keys(SUPPORT.clients) as ClientPackage[];

function installedMajor(pkg: string): number {
  const manifest = JSON.parse(readFileSync(path.join(root, 'node_modules', pkg, 'package.json'), 'utf8')) as { version: string };
  return Number.parseInt(manifest.version, 10);
}

describe('the table', () => {
  it('names every client a major uses, and each is a dependency of the package', () => {
    const dependencies = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies;
    for (const m of SUPPORT.majors) expect(packages, `${m.flavour} ${m.major}`).toContain(m.client);
    for (const pkg of packages) expect(dependencies, pkg).toHaveProperty([pkg]);
  });

  it('gives each Elasticsearch major the client of its own major', () => {
    for (const m of majorsOf('elasticsearch')) expect(installedMajor(m.client), `${m.client} for ${m.major}`).toBe(m.major);
  });

  it('lists each flavour oldest major first, versions inside their major, formats the code makes', () => {
    for (const flavour of Object.keys(SUPPORT.flavours) as Array<keyof typeof SUPPORT.flavours>) {
      const majors = majorsOf(flavour).map((m) => m.major);
      expect(majors, flavour).toEqual([...majors].sort((a, b) => a - b));
      expect(new Set(majors).size, flavour).toBe(majors.length);
    }
    for (const m of SUPPORT.majors) {
      const versions = [m.pointInTimeFrom, ...m.savedObjects.map((f) => f.from)].filter((v): v is string => v !== null);
      for (const v of versions) expect(Number.parseInt(v, 10), `${m.flavour} ${m.major}: ${v}`).toBe(m.major);
      for (const f of m.savedObjects) expect(SAVED_OBJECT_FORMATS).toContain(f.format);
    }
  });
});

describe('the client packages', () => {
  let server: https.Server;
  let url: string;
  beforeAll(async () => {
    server = https.createServer({ key: fixture('key.pem'), cert: fixture('cert.pem') }, (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'x-elastic-product': 'Elasticsearch' });
      res.end(JSON.stringify({ version: { number: '9.1.0' }, tagline: 'You Know, for Search' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  for (const pkg of packages) {
    it(`${pkg}: trusts a CA given under "${SUPPORT.clients[pkg].tlsOption}", answers status and body${SUPPORT.clients[pkg].meta ? ' with meta' : ''}`, async () => {
      const support = SUPPORT.clients[pkg];
      const mod = await import(pkg);
      const Client = mod.Client ?? mod.default?.Client;
      const client = new Client({ node: url, maxRetries: 0, requestTimeout: 5000, [support.tlsOption]: { ca: fixture('cert.pem') } });
      try {
        const result = await client.transport.request({ method: 'GET', path: '/' }, support.meta ? { meta: true } : {});
        expect(result.statusCode).toBe(200);
        expect(result.body.version.number).toBe('9.1.0');
      } finally {
        await client.close();
      }
    });
  }

  it('takes a cloud id itself where the table says so', async () => {
    const cloudId = `test:${Buffer.from('example.com:443$abc123$def456').toString('base64')}`;
    for (const pkg of packages.filter((p) => SUPPORT.clients[p].cloudAndFingerprint)) {
      const mod = await import(pkg);
      const client = new mod.Client({ cloud: { id: cloudId }, caFingerprint: 'AA:BB' });
      expect(client.connectionPool.connections[0].url.hostname, pkg).toBe('abc123.example.com');
      await client.close();
    }
  });
});

describe('what the code reads from it', () => {
  it('serves each listed major by its entry, a newer one by the newest, an older one not at all', () => {
    for (const m of SUPPORT.majors) expect(clientPackageFor({ flavour: m.flavour, major: m.major, version: `${m.major}.0.0` })).toBe(m.client);
    expect(majorSupport('opensearch', 99)?.major).toBe(majorsOf('opensearch').at(-1)?.major);
    expect(majorSupport('elasticsearch', 6)).toBeUndefined();
    expect(() => clientPackageFor({ flavour: 'elasticsearch', major: 6, version: '6.8.23' })).toThrow('near-dup works with OpenSearch 1.x to 3.x and Elasticsearch 7.10 to 9.x');
    expect(supportedRange()).toBe('OpenSearch 1.x to 3.x and Elasticsearch 7.10 to 9.x');
  });

  it('gives a point in time from the version the table names', () => {
    for (const m of SUPPORT.majors) {
      if (m.pointInTimeFrom === null) expect(supportsPointInTime({ flavour: m.flavour, major: m.major, minor: 99 })).toBe(false);
      else {
        const [major, minor] = m.pointInTimeFrom.split('.').map(Number);
        expect(supportsPointInTime({ flavour: m.flavour, major, minor })).toBe(true);
        if (minor > 0) expect(supportsPointInTime({ flavour: m.flavour, major, minor: minor - 1 })).toBe(false);
      }
    }
  });

  it('picks the saved-object format of each listed version', () => {
    for (const m of SUPPORT.majors) {
      for (const f of m.savedObjects) expect(formatFor(SUPPORT.flavours[m.flavour].dashboards, `${f.from}.0`), `${m.flavour} ${f.from}`).toBe(f.format);
    }
  });
});

describe('the engines of scripts/engine and test/setup', () => {
  it('starts one single node per major of the table, named and placed as the table says', () => {
    expect(scripts.FLAVOURS).toEqual(SUPPORT.majors.map((m) => m.engine.name));
    for (const m of SUPPORT.majors) {
      const spec = scripts.ENGINES[m.engine.name];
      expect(spec.flavour, m.engine.name).toBe(m.flavour);
      expect(Number.parseInt(spec.release, 10), `${m.engine.name} pins ${spec.release}`).toBe(m.major);
      expect(spec.port, m.engine.name).toBe(m.engine.port);
      expect(spec.minJava, m.engine.name).toBe(m.engine.java);
      expect(engineName(m.flavour, spec.release)).toBe(m.engine.name);
    }
  });

  it('can start nothing that is not a major of the table', () => {
    for (const [name, spec] of Object.entries(scripts.ENGINES) as Array<[string, { flavour: 'opensearch' | 'elasticsearch'; release: string }]>) {
      const major = Number.parseInt(spec.release, 10);
      expect(majorsOf(spec.flavour).map((m) => m.major), `${name}: ${spec.flavour} ${spec.release}`).toContain(major);
    }
  });

  it('is found without --url at the ports of the flavours\' main engines', () => {
    expect(LOCAL_ENGINE_URLS).toEqual({ opensearch: `http://127.0.0.1:${scripts.ENGINES.opensearch.port}`, elasticsearch: `http://127.0.0.1:${scripts.ENGINES.elasticsearch.port}` });
  });
});
