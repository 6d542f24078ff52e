// Dedup's state is kept by cluster and index (issue 50): a run on another cluster with the same index name
// has its own file, an old file named by the index alone is read once, and a run asked to be incremental
// that runs in full says why in one line.
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clusterUuid, defaultStatePath, type DedupState, latestStatePath, whyFull } from '../../src/jobs/dedup/state/state-file.js';
import type { EngineClient } from '../../src/engine/client.js';

const current = { index: 'news', params: 'p1', prefix: 'near_dup', minSimilarity: 0.8, uuids: ['u1'], clusters: 'centres' as const, order: 'o' };
const saved: DedupState = { version: 1, lastRunAt: '2026-01-01T00:00:00Z', ...current };

describe('the state file of a dedup run', () => {
  it('is named by the cluster and the index', () => {
    expect(defaultStatePath('news', 'CLUSTER-uuid_1')).toBe(path.join('.near-dup', 'dedup-CLUSTER-uuid_1-news.json'));
    expect(defaultStatePath('news', 'other')).not.toBe(defaultStatePath('news', 'CLUSTER-uuid_1'));
    // Without a cluster uuid (an engine that gives none): by the index, as before.
    expect(defaultStatePath('news')).toBe(path.join('.near-dup', 'dedup-news.json'));
  });

  it('stays within 255 bytes with its journal (.run.json) for every index name an engine takes (255 bytes)', () => {
    const uuid = 'x'.repeat(64);
    for (const length of [1, 100, 200, 217, 218, 221, 222, 240, 244, 245, 255]) {
      for (const index of ['a'.repeat(length), 'é'.repeat(Math.floor(length / 2))]) {
        for (const file of [defaultStatePath(index, uuid), defaultStatePath(index, 'AAAAAAAAAAAAAAAAAAAAAA'), defaultStatePath(index)]) {
          expect(Buffer.byteLength(`${path.basename(file, '.json')}.run.json`), `${length}: ${file}`).toBeLessThanOrEqual(255);
        }
      }
    }
    // A short name is as it was; long ones cut to a readable start and told apart by a hash of the whole.
    expect(defaultStatePath('a'.repeat(200), 'AAAAAAAAAAAAAAAAAAAAAA')).toBe(path.join('.near-dup', `dedup-AAAAAAAAAAAAAAAAAAAAAA-${'a'.repeat(200)}.json`));
    const long = (last: string) => path.basename(defaultStatePath(`${'a'.repeat(249)}${last}`, 'AAAAAAAAAAAAAAAAAAAAAA'));
    expect(long('b')).toMatch(/^dedup-AAAAAAAAAAAAAAAAAAAAAA-a{100}-[0-9a-f]{16}\.json$/);
    expect(long('b')).not.toBe(long('c'));
    expect(long('b')).not.toBe(path.basename(defaultStatePath(`${'a'.repeat(249)}b`, 'BBBBBBBBBBBBBBBBBBBBBB')).replace('BBBBBBBBBBBBBBBBBBBBBB', 'AAAAAAAAAAAAAAAAAAAAAA'));
  });
});

describe("the cluster's uuid", () => {
  /** A client whose GET / and cluster state answer (or fail) as given. */
  const client = (root: () => unknown, state: () => unknown = () => Promise.reject(new Error('403 security_exception'))) =>
    ({ request: async (_m: string, path: string) => (path === '/' ? root() : state()) }) as unknown as EngineClient;

  it('is taken when it is 1-64 characters of letters, digits, _ and -', async () => {
    expect(await clusterUuid(client(() => ({ cluster_uuid: 'FMN8h7nqQ4enrZlGu0eyWg' })))).toBe('FMN8h7nqQ4enrZlGu0eyWg');
  });

  it('is refused when it is anything else (a file name made of it would not be one), said in one line without it', async () => {
    for (const uuid of ['x'.repeat(65), 'a/b', '../x', 'a b', 'é', '']) {
      const said: string[] = [];
      expect(await clusterUuid(client(() => ({ cluster_uuid: uuid })), (line) => said.push(line))).toBeUndefined();
      expect(said).toEqual([
        "the cluster's uuid could not be read (GET /: not 1-64 characters of A-Z, a-z, 0-9, _ and -; GET /_cluster/state/metadata: 403 security_exception): the state file is the one named by the index alone, as before near-dup kept it by cluster",
      ]);
    }
  });

  it('said in one line when it could not be read, the run then using the file named by the index alone', async () => {
    const said: string[] = [];
    const uuid = await clusterUuid(client(() => Promise.reject(new Error('429 too many requests'))), (line) => said.push(line));
    expect(uuid).toBeUndefined();
    expect(said).toEqual([
      "the cluster's uuid could not be read (GET /: 429 too many requests; GET /_cluster/state/metadata: 403 security_exception): the state file is the one named by the index alone, as before near-dup kept it by cluster",
    ]);
  });
});

describe('why a run is full', () => {
  it('says nothing when the saved state allows an incremental run', () => {
    expect(whyFull(saved, current, 'f.json')).toBeUndefined();
  });
  it('a first run (no state anywhere) says nothing', () => {
    expect(whyFull(undefined, current, 'f.json')).toBeUndefined();
  });
  it('no state for this cluster, but one of the index on another cluster: named', () => {
    expect(whyFull(undefined, current, 'f.json', 'g.json')).toMatch(/^no state of an earlier complete run for this cluster and index \(f\.json; g\.json is of another cluster\): this run is a full one/);
  });
  it('names what changed, with the old and new value', () => {
    expect(whyFull({ ...saved, minSimilarity: 0.9 }, current, 'f.json')).toMatch(/min similarity changed \(0\.9 then, 0\.8 now\)/);
    expect(whyFull({ ...saved, params: 'p0' }, current, 'f.json')).toMatch(/params changed \(p0 then, p1 now\)/);
    expect(whyFull({ ...saved, uuids: ['u0'] }, current, 'f.json')).toMatch(/deleted and made again/);
    expect(whyFull({ ...saved, clusters: 'components' }, current, 'f.json')).toMatch(/clusters changed \(components then, centres now\)/);
  });
  it('is one line', () => {
    expect(whyFull({ ...saved, params: 'p0', minSimilarity: 0.5 }, current, 'f.json')).not.toMatch(/\n/);
  });
});

describe('a reader that knows no cluster (dashboards)', () => {
  it('takes the newest state of the index on any cluster, else the old name', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'near-dup-state-latest-'));
    const at = (name: string) => path.join(root, '.near-dup', name);
    expect(latestStatePath('news', root)).toBe(at('dedup-news.json'));
    mkdirSync(path.join(root, '.near-dup'));
    expect(latestStatePath('news', root)).toBe(at('dedup-news.json'));
    writeFileSync(at('dedup-news.json'), '{}');
    // Another index whose name ends the same way is not this one's.
    writeFileSync(at('dedup-BBBBBBBBBBBBBBBBBBBBBB-other-news.json'), '{}');
    expect(latestStatePath('news', root)).toBe(at('dedup-news.json'));
    writeFileSync(at('dedup-AAAAAAAAAAAAAAAAAAAAAA-news.json'), '{}');
    writeFileSync(at('dedup-CCCCCCCCCCCCCCCCCCCCCC-news.json'), '{}');
    utimesSync(at('dedup-AAAAAAAAAAAAAAAAAAAAAA-news.json'), new Date(2000, 0, 1), new Date(2000, 0, 1));
    expect(latestStatePath('news', root)).toBe(at('dedup-CCCCCCCCCCCCCCCCCCCCCC-news.json'));
  });

  it('finds a long name by its cut form, and takes no file of another index for it', () => {
    const root = mkdtempSync(path.join(os.tmpdir(), 'near-dup-state-long-'));
    mkdirSync(path.join(root, '.near-dup'));
    const index = 'n'.repeat(240);
    const file = path.join(root, defaultStatePath(index, 'DDDDDDDDDDDDDDDDDDDDDD'));
    writeFileSync(file, '{}');
    writeFileSync(path.join(root, defaultStatePath(`${index}x`, 'EEEEEEEEEEEEEEEEEEEEEE')), '{}');
    expect(latestStatePath(index, root)).toBe(file);
  });
});
