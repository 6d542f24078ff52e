// Dedup's state by cluster (issue 50): a run on another cluster with the same index name no longer takes the
// place of the first cluster's state, so the next run on the first is incremental; a run asked to be
// incremental that runs in full says why. Needs two engines at once (the newest OpenSearch and Elasticsearch).
import { mkdtempSync, readdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type EngineClient } from '../../src/engine/client.js';
import { fixtureSample } from '../support/corpus.js';
import { indexDocuments, runCli } from '../support/documents.js';
import { testEngines, uniqueName } from './harness.js';

const engines = testEngines().filter((e) => e.suite === 'full');
const docs = fixtureSample(40);

describe.runIf(engines.length >= 2)('dedup state on two clusters with the same index name', () => {
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'near-dup-state-clusters-'));
  const index = uniqueName('state-clusters');
  const clients: EngineClient[] = [];
  const [a, b] = engines;

  beforeAll(async () => {
    for (const engine of [a, b]) {
      const client = await connect({ url: engine.url });
      clients.push(client);
      await indexDocuments(client, index, docs);
      const annotated = await runCli(['annotate', '--url', engine.url, '--index', index, '--field', 'text'], { cwd }).done;
      expect(annotated.code, annotated.stderr).toBe(0);
    }
  });
  afterAll(async () => {
    for (const client of clients) {
      await client.deleteIndex(index, { ignoreMissing: true });
      await client.close();
    }
  });

  const dedup = async (url: string) => {
    const run = await runCli(['dedup', '--url', url, '--index', index], { cwd }).done;
    expect(run.code, run.stderr).toBe(0);
    return { summary: JSON.parse(run.stdout.trim().split('\n').pop() as string), stderr: run.stderr };
  };

  it('each cluster keeps its own state; a first run is quiet, a first run on another cluster says why it is full', async () => {
    const first = await dedup(a.url);
    expect(first.summary.mode).toBe('full');
    expect(first.stderr).not.toMatch(/no state/);
    const other = await dedup(b.url);
    expect(other.summary.mode).toBe('full');
    expect(other.stderr).toMatch(/no state of an earlier complete run for this cluster and index \(.*is of another cluster\)/);
    // Back on the first cluster: its state is its own, so the run is incremental (it was full).
    const again = await dedup(a.url);
    expect(again.summary.mode).toBe('incremental');
    expect(readdirSync(path.join(cwd, '.near-dup')).filter((f) => f.startsWith('dedup-') && f.endsWith(`-${index}.json`))).toHaveLength(2);
  });

  it('a state file named by the index alone (an earlier version) is read once', async () => {
    const client = clients[0];
    const dir = path.join(cwd, '.near-dup');
    const keyed = readdirSync(dir).find((f) => f.endsWith(`-${index}.json`) && !f.includes(`dedup-${index}`)) as string;
    const { renameSync } = await import('node:fs');
    // The state of the first cluster as an earlier version named it.
    for (const f of readdirSync(dir)) if (f.endsWith(`-${index}.json`)) renameSync(path.join(dir, f), path.join(dir, `${f}.aside`));
    const uuid = (await client.request('GET', '/_cluster/state/metadata', undefined, { filter_path: 'metadata.cluster_uuid' })).metadata.cluster_uuid;
    const ours = readdirSync(dir).find((f) => f === `dedup-${uuid}-${index}.json.aside`) ?? `${keyed}.aside`;
    renameSync(path.join(dir, ours), path.join(dir, `dedup-${index}.json`));
    const run = await dedup(a.url);
    expect(run.summary.mode).toBe('incremental');
  });
});
