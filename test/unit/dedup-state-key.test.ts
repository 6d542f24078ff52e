// Dedup's state is kept by cluster and index (issue 50): a run on another cluster with the same index name
// has its own file, an old file named by the index alone is read once, and a run asked to be incremental
// that runs in full says why in one line.
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultStatePath, type DedupState, latestStatePath, whyFull } from '../../src/jobs/dedup/state.js';

const current = { index: 'news', params: 'p1', prefix: 'near_dup', minSimilarity: 0.8, uuids: ['u1'], clusters: 'centres' as const, order: 'o' };
const saved: DedupState = { version: 1, lastRunAt: '2026-01-01T00:00:00Z', ...current };

describe('the state file of a dedup run', () => {
  it('is named by the cluster and the index', () => {
    expect(defaultStatePath('news', 'CLUSTER-uuid_1')).toBe(path.join('.near-dup', 'dedup-CLUSTER-uuid_1-news.json'));
    expect(defaultStatePath('news', 'other')).not.toBe(defaultStatePath('news', 'CLUSTER-uuid_1'));
    // Without a cluster uuid (an engine that gives none): by the index, as before.
    expect(defaultStatePath('news')).toBe(path.join('.near-dup', 'dedup-news.json'));
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
});
