// A real cluster: three OpenSearch nodes, one JVM each (scripts/engine's opensearch-cluster, or
// OPENSEARCH_CLUSTER_URL), an index of 3 primary shards with 1 replica each. The jobs give the same
// results as on a single node; a node killed (SIGKILL) in the middle of annotate or dedup, or paused for
// 30 s (SIGSTOP) in the middle of a bulk write, ends with every document holding the fields of an
// uninterrupted run and no user field changed; three processes, one slice each, on three nodes give the
// index one process gives.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { connectionArgsFrom } from '../../src/cli/connection-options.js';
import { connect, type EngineClient } from '../../src/engine/client.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { dedupIndex } from '../../src/jobs/dedup.js';
import { findSimilar } from '../../src/jobs/similar.js';
import { createSigner } from '../../src/signature.js';
import { fixtureSample } from '../support/corpus.js';
import { expectCleanIndex, expectedSignatures, indexDocuments, runCli, sourcesById } from '../support/documents.js';
import { testEngines, uniqueName } from './harness.js';

// @ts-expect-error: plain JavaScript module without type declarations
const engines = await import('../../scripts/engine/engines.mjs');

const cluster = inject('cluster');
const inCi = ['true', '1'].includes((process.env.CI ?? '').toLowerCase());
const docs = fixtureSample(30);
const signer = createSigner();
const expected = expectedSignatures(signer, docs);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-cluster-'));
const SHARDS = { number_of_shards: 3, number_of_replicas: 1 };

function withoutTime(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!fields) return fields;
  const { annotated_at: _t, ...rest } = fields;
  return rest;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

if (!cluster) {
  describe.skip(`cluster [no cluster: ${inject('clusterMissing')}]`, () => {
    it('needs a cluster of three OpenSearch nodes', () => undefined);
  });
} else {
  describe(`a cluster of ${cluster.nodes.length} opensearch ${cluster.version} nodes, 3 shards with 1 replica`, () => {
    let client: EngineClient;
    const indices: string[] = [];
    const connection = { ...connectionArgsFrom({}), url: cluster.url };
    const index = (label: string) => {
      const name = uniqueName(label);
      indices.push(name);
      return name;
    };
    /** The node a fault test kills or pauses: one scripts/engine runs, the first of the --url list. */
    const victim = () => {
      const node = cluster.nodes.find((n) => n.name);
      if (!node?.name) throw new Error('no node of this cluster is run by scripts/engine, so none can be killed; use `npm run engine:start -- opensearch-cluster`');
      return node.name as string;
    };
    const signal = (name: string, sig: NodeJS.Signals) => {
      const pids: number[] = engines.enginePids(name);
      expect(pids.length, `${name} is running`).toBeGreaterThan(0);
      for (const pid of pids) process.kill(pid, sig);
    };

    /** A new index of the corpus, 3 shards and 1 replica each, green. */
    const clusterIndex = async (label: string) => {
      const name = index(label);
      await client.createIndex(name, { settings: SHARDS });
      await indexDocuments(client, name, docs);
      await client.request('GET', `/_cluster/health/${name}`, undefined, { wait_for_status: 'green', timeout: '60s' });
      return name;
    };

    const signed = async (name: string) => {
      await client.refresh(name).catch(() => undefined);
      return client.count(name, { exists: { field: 'near_dup.params' } }).catch(() => 0);
    };

    /**
     * annotate through every node, in small steps (pages of 10, bulks of 5, one at a time) so that a fault
     * lands mid-job; resolves once `share` of the documents are signed, the job still running.
     */
    const slowAnnotate = async (name: string, share: number) => {
      const cwd = mkdtempSync(path.join(tmp, 'annotate-'));
      const args = ['annotate', '--url', cluster.url, '--index', name, '--field', 'text', '--page-size', '10', '--bulk-size', '5', '--concurrency', '1', '--threads', '1'];
      const first = runCli(args, { cwd });
      for (let i = 0; i < 3000 && (await signed(name)) < share * docs.length; i++) await sleep(20);
      return { args, cwd, first };
    };

    const expectClean = (name: string) => expectCleanIndex(client, name, docs, expected);

    /** A job's last JSON line; a job that failed must have said why in one line, then --resume finishes it. */
    const finish = async (run: { code: number | null; stdout: string; stderr: string }, args: string[], cwd: string) => {
      // For the record (the figures in the issue notes come from these lines).
      const last = run.stdout.trim().split('\n').pop() ?? '';
      process.stderr.write(`[cluster] ${args[0]}: exit ${run.code}; ${run.code === 0 ? last.slice(0, 400) : run.stderr.trim().split('\n').pop()}\n`);
      if (run.code !== 0) {
        const message = run.stderr.trim().split('\n').pop() ?? '';
        expect(message, run.stderr).toMatch(/^near-dup: (?!unexpected error)/);
        expect(run.stderr).not.toMatch(/\n\s+at /); // a message, not a stack trace
        const resumed = await runCli([...args, '--resume'], { cwd }).done;
        expect(resumed.code, resumed.stderr).toBe(0);
        return { resumed: true, summary: JSON.parse(resumed.stdout.trim().split('\n').pop()!) };
      }
      return { resumed: false, summary: JSON.parse(run.stdout.trim().split('\n').pop()!) };
    };

    beforeAll(async () => {
      client = await connect(connection);
      if (inCi) victim(); // under CI the node faults must be able to run
    });

    // A node a test killed or paused is back, on its data, and the cluster green, before the next test.
    afterEach(async () => {
      for (const node of cluster.nodes) {
        if (!node.name) continue;
        for (const pid of engines.enginePids(node.name) as number[]) process.kill(pid, 'SIGCONT');
        await engines.restart(node.name);
      }
      await client.request('GET', '/_cluster/health', undefined, { wait_for_status: 'green', wait_for_nodes: String(cluster.nodes.length), timeout: '120s' });
    }, 240_000);

    afterAll(async () => {
      for (const name of indices) await client.deleteIndex(name).catch(() => undefined);
      await client.close();
    });

    it('annotate, similar and dedup give the results of a single node', async () => {
      const single = testEngines().find((e) => e.flavour === 'opensearch') ?? testEngines()[0];
      expect(single, 'a single-node engine to compare with').toBeDefined();
      const reference = await connect({ ...connectionArgsFrom({}), url: single.url });
      const alone = uniqueName('cluster-reference');
      try {
        await indexDocuments(reference, alone, docs);
        const spread = await clusterIndex('cluster-equal');
        const run = async (c: EngineClient, name: string) => {
          const annotated = await annotateIndex(c, { index: name, fields: ['text'], signer: {}, limits: { pageSize: 10 }, output: { prefix: 'near_dup' } });
          expect(annotated).toMatchObject({ seen: docs.length, annotated: docs.length, complete: true });
          const similar = [];
          for (const doc of docs) similar.push((await findSimilar(c, { index: name, id: doc.id, limit: 1000 })).hits.map((h) => [h.id, h.jaccard, h.hamming]));
          const pairsFile = path.join(tmp, `${name}-pairs.jsonl`);
          // Oldest by the documents' own date: the default (the time of annotation) differs between two runs.
          const dedup = await dedupIndex(c, { index: name, state: { full: true, stateFile: path.join(tmp, `${name}.json`) }, limits: { pageSize: 10 }, compare: { canonical: 'oldest', dateField: 'date' }, output: { pairsFile } });
          const pairs = readFileSync(pairsFile, 'utf8').trim().split('\n').sort();
          const stored = await sourcesById(c, name);
          const fields = docs.map((d) => withoutTime(stored.get(d.id)?.near_dup));
          return { similar, pairs, fields, dedup: { clusters: dedup.clusters, duplicates: dedup.duplicates, top: dedup.top, complete: dedup.complete } };
        };
        const there = await run(client, spread);
        const here = await run(reference, alone);
        expect(there.dedup.complete).toBe(true);
        expect(there.dedup.clusters).toBeGreaterThan(5);
        expect(there.fields).toEqual(here.fields);
        expect(there.similar).toEqual(here.similar);
        expect(there.pairs).toEqual(here.pairs);
        expect(there.dedup).toEqual(here.dedup);
        // The index is spread: every node holds shards of it.
        const shards = (await client.request('GET', `/_cat/shards/${spread}`, undefined, { format: 'json', h: 'node,prirep' })) as Array<{ node: string }>;
        expect(shards.length).toBe(6);
        expect(new Set(shards.map((s) => s.node)).size).toBe(cluster.nodes.length);
      } finally {
        await reference.deleteIndex(alone).catch(() => undefined);
        await reference.close();
      }
    }, 240_000);

    it('annotate with a node killed (SIGKILL) midway completes, or says so and finishes on --resume, with the fields of an uninterrupted run', async () => {
      const name = await clusterIndex('cluster-annotate-kill');
      const { args, cwd, first } = await slowAnnotate(name, 0.3);
      expect(first.child.exitCode, 'the job is still running when the node dies').toBeNull();
      signal(victim(), 'SIGKILL');
      const { summary } = await finish(await first.done, args, cwd);
      expect(summary).toMatchObject({ complete: true, missing: 0, failed: 0 });
      await expectClean(name);
    }, 240_000);

    it('dedup with a node killed (SIGKILL) midway completes, or says so and finishes on --resume, with the clusters of an uninterrupted run', async () => {
      const name = await clusterIndex('cluster-dedup-kill');
      await annotateIndex(client, { index: name, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      const clean = await dedupIndex(client, { index: name, state: { full: true, stateFile: path.join(tmp, `clean-${name}.json`) }, output: { dryRun: true } });
      const cwd = mkdtempSync(path.join(tmp, 'dedup-kill-'));
      // The journal is named by the cluster's uuid and the index (dedup/state/state-file.ts).
      const runFile = () => {
        const dir = path.join(cwd, '.near-dup');
        const found = existsSync(dir) ? readdirSync(dir).find((f) => f.startsWith('dedup-') && f.endsWith(`-${name}.run.json`)) : undefined;
        return path.join(dir, found ?? `dedup-${name}.run.json`);
      };
      const args = ['dedup', '--url', cluster.url, '--index', name, '--full', '--page-size', '10', '--max-cached-signatures', '10'];
      const first = runCli(args, { cwd });
      let done = 0;
      for (let i = 0; i < 3000 && done < 2; i++) {
        await sleep(10);
        try {
          done = JSON.parse(readFileSync(runFile(), 'utf8')).counts.partitionsDone;
        } catch {
          // not written yet, or being renamed into place
        }
      }
      expect(done, 'the kill lands after two partitions').toBeGreaterThanOrEqual(2);
      expect(first.child.exitCode, 'the job is still running when the node dies').toBeNull();
      signal(victim(), 'SIGKILL');
      const { summary } = await finish(await first.done, args, cwd);
      expect(summary).toMatchObject({ clusters: clean.clusters, duplicates: clean.duplicates, complete: true, failed: 0 });
      expect(summary.top).toEqual(clean.top);
      await client.refresh(name);
      expect(await client.count(name, { exists: { field: 'near_dup.cluster_id' } })).toBe(clean.clusters + clean.duplicates + clean.alone);
      await expectClean(name);
    }, 240_000);

    it('a node that stops answering for 30 s (SIGSTOP, then SIGCONT) in the middle of a bulk write: annotate completes with the fields of an uninterrupted run', async () => {
      const name = await clusterIndex('cluster-annotate-pause');
      const { args, cwd, first } = await slowAnnotate(name, 0.2);
      const node = victim();
      expect(first.child.exitCode, 'the job is still running when the node stops').toBeNull();
      signal(node, 'SIGSTOP');
      await sleep(30_000);
      signal(node, 'SIGCONT');
      const { summary } = await finish(await first.done, args, cwd);
      expect(summary).toMatchObject({ complete: true, missing: 0, failed: 0, seen: expect.any(Number) });
      await expectClean(name);
    }, 240_000);

    it('--slices 3 as three processes at once, each on another node, gives the index of one process', async () => {
      const name = await clusterIndex('cluster-slices');
      const cwd = mkdtempSync(path.join(tmp, 'slices-'));
      const runs = cluster.nodes.slice(0, 3).map((node, slice) =>
        runCli(['annotate', '--url', node.url, '--index', name, '--field', 'text', '--slices', '3', '--slice', String(slice), '--page-size', '10'], { cwd }).done,
      );
      const results = await Promise.all(runs);
      const summaries = results.map((r) => {
        expect(r.code, r.stderr).toBe(0);
        return JSON.parse(r.stdout.trim().split('\n').pop()!);
      });
      for (const s of summaries) expect(s).toMatchObject({ complete: true, failed: 0, conflicts: 0 });
      expect(summaries.reduce((n, s) => n + s.seen, 0)).toBe(docs.length);
      expect(summaries.every((s) => s.seen > 0)).toBe(true);
      await expectClean(name);
    }, 240_000);
  });
}
