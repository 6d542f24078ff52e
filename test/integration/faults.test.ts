// Jobs on a faulty network: a loopback proxy between near-dup and each real engine answers 429 and 503,
// drops answers after the engine has acted, and holds answers past the client's timeout. Every job must
// end with the index a clean run gives, or exit 1 naming what is missing; never report success over a gap.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { connect, type EngineClient } from '../../src/engine/client.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { dedupIndex } from '../../src/jobs/dedup.js';
import { clusterUuid } from '../../src/jobs/dedup/state/state-file.js';
import { ingestStream } from '../../src/jobs/ingest.js';
import { createSigner } from '../../src/signature.js';
import { fixtureSample } from '../support/corpus.js';
import { expectCleanIndex, expectedSignatures, indexDocuments, runCli, signatureFields, sourcesById } from '../support/documents.js';
import { type Fault, FaultProxy, type ProxiedRequest } from '../support/fault-proxy.js';
import { forEachEngine } from './harness.js';

const docs = fixtureSample(30);
const signer = createSigner();
const expected = expectedSignatures(signer, docs);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-faults-'));
/** Short, so that a held answer times out quickly. */
const TIMEOUT_MS = 1500;

async function indexDocs(client: EngineClient, index: string): Promise<void> {
  await indexDocuments(client, index, docs);
}

const expectClean = (client: EngineClient, index: string) => expectCleanIndex(client, index, docs, expected);

/** A fault plan: the nth request of a kind gets a fault; `every` injects it again every so many requests. */
function plan(rules: Array<{ kind: ProxiedRequest['kind']; nth?: number; every?: number; fault: Fault }>) {
  return (request: ProxiedRequest): Fault => {
    for (const rule of rules) {
      if (rule.kind !== request.kind) continue;
      if (rule.nth !== undefined && request.nth === rule.nth) return rule.fault;
      if (rule.every !== undefined && request.nth % rule.every === 0) return rule.fault;
    }
    return 'pass';
  };
}

forEachEngine('jobs on a faulty network', (ctx) => {
  let proxy: FaultProxy;
  let faulty: EngineClient;
  let proxyUrl: string;

  beforeAll(async () => {
    proxy = new FaultProxy(ctx.engine.url);
    const url = (proxyUrl = await proxy.start());
    faulty = await connect({ ...ctx.connection, url, requestTimeoutMs: TIMEOUT_MS });
    ctx.cleanup(async () => {
      await faulty.close();
      await proxy.stop();
    });
  });
  beforeEach(() => proxy.reset());
  // What each test injected, for the record (the figures in the issue notes come from these lines).
  afterEach(() => {
    const { passed, ...faults } = proxy.injected;
    process.stderr.write(`[faults] ${expect.getState().currentTestName}: ${JSON.stringify(faults)} (${passed} answers passed)\n`);
  });

  const annotate = (index: string, extra: Partial<Parameters<typeof annotateIndex>[1]> = {}) =>
    annotateIndex(faulty, {
      index,
      fields: ['text'],
      signer: {},
      read: extra.read,
      limits: { pageSize: 10, bulk: { maxOperations: 7 }, ...extra.limits },
      state: { checkpointFile: path.join(tmp, `cp-${index}-${extra.read?.slice?.id ?? 'all'}.json`) },
      output: { prefix: 'near_dup', errorsFile: path.join(tmp, `errors-${index}.jsonl`) },
    });

  it('annotate: a dropped scroll or search_after page is read again, never skipped', async () => {
    const index = ctx.index('faults-page');
    await indexDocs(ctx.client, index);
    proxy.decide = plan([
      { kind: 'scroll', nth: 2, fault: 'drop' },
      { kind: 'scroll', nth: 5, fault: { stallMs: TIMEOUT_MS + 1000 } },
      { kind: 'search', nth: 3, fault: 'drop' },
      { kind: 'search', nth: 6, fault: { stallMs: TIMEOUT_MS + 1000 } },
    ]);
    const summary = await annotate(index);
    expect(proxy.injected.dropped + proxy.injected.stalled).toBeGreaterThanOrEqual(2);
    expect(summary).toMatchObject({ complete: true, failed: 0, annotated: docs.length, seen: docs.length, missing: 0 });
    await expectClean(ctx.client, index);
  });

  it('annotate: 429 and 503 answers and dropped bulk answers still give the index of a clean run, with retries counted by cause', async () => {
    const index = ctx.index('faults-mixed');
    await indexDocs(ctx.client, index);
    proxy.decide = plan([
      { kind: 'bulk', every: 3, fault: { status: 429 } },
      { kind: 'bulk', nth: 4, fault: 'drop' },
      { kind: 'bulk', nth: 8, fault: { stallMs: TIMEOUT_MS + 1000 } },
      { kind: 'search', every: 4, fault: { status: 503 } },
      { kind: 'scroll', every: 4, fault: { status: 503 } },
      { kind: 'count', nth: 1, fault: { status: 503 } },
    ]);
    const summary = await annotate(index);
    const injected = proxy.injected.status429 + proxy.injected.status503;
    expect(injected).toBeGreaterThan(3);
    expect(summary).toMatchObject({ complete: true, failed: 0, missing: 0 });
    expect(summary.retries.status429).toBeGreaterThan(0);
    expect(summary.retries.status5xx).toBeGreaterThan(0);
    expect(summary.retries.connection + summary.retries.timeout).toBeGreaterThan(0);
    await expectClean(ctx.client, index);
  });

  it('annotate with slices: each slice checks with the engine what it left, and together they give a clean index', async () => {
    const index = ctx.index('faults-slices');
    await indexDocs(ctx.client, index);
    proxy.decide = plan([
      { kind: 'scroll', every: 3, fault: 'drop' },
      { kind: 'bulk', every: 5, fault: 'drop' },
    ]);
    const a = await annotate(index, { read: { slice: { id: 0, max: 2 } } });
    const b = await annotate(index, { read: { slice: { id: 1, max: 2 } } });
    expect(proxy.injected.dropped).toBeGreaterThan(2);
    expect([a.complete, b.complete, a.missing, b.missing]).toEqual([true, true, 0, 0]);
    expect(a.annotated + b.annotated).toBe(docs.length);
    await expectClean(ctx.client, index);
  });

  it('annotate that cannot write says what is missing and is not complete', async () => {
    const index = ctx.index('faults-down');
    await indexDocs(ctx.client, index);
    proxy.decide = (r) => (r.kind === 'bulk' ? { status: 503 } : 'pass');
    const summary = await annotate(index, { limits: { bulk: { maxOperations: 50 } } });
    expect(summary).toMatchObject({ complete: false, missing: docs.length, annotated: 0, sweeps: 2 });
    expect(summary.retries.status5xx).toBeGreaterThan(0);
    const listed = readFileSync(path.join(tmp, `errors-${index}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(new Set(listed.map((e) => e.id)).size).toBe(docs.length);
    expect(listed[0].reason).toMatch(/still without a signature after the job and 2 sweeps \(gave up after \d+ attempts: .*503/);
    expect(await ctx.client.count(index, { exists: { field: 'near_dup.params' } })).toBe(0);
  });

  it.each([0.1, 0.5, 0.9])('annotate killed (SIGKILL) once a share of %s of the documents is signed: --resume reads only the rest and ends with the index of a clean run', async (share) => {
    const index = ctx.index('faults-kill');
    await indexDocs(ctx.client, index);
    const cwd = mkdtempSync(path.join(tmp, 'annotate-kill-'));
    // Every bulk answer held back a little, so that the kill lands where it is meant to.
    proxy.decide = (r) => (r.kind === 'bulk' ? { stallMs: 150 } : 'pass');
    const args = ['annotate', '--url', proxyUrl, '--index', index, '--field', 'text', '--page-size', '10', '--bulk-size', '5', '--concurrency', '1', '--threads', '1'];
    const first = runCli(args, { cwd });
    const signed = async () => {
      await ctx.client.refresh(index);
      return ctx.client.count(index, { exists: { field: 'near_dup.params' } });
    };
    for (let i = 0; i < 1000 && (await signed()) < share * docs.length; i++) await new Promise((r) => setTimeout(r, 20));
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    await new Promise((r) => setTimeout(r, 1000)); // a bulk request the engine already had still lands
    const before = await signed();
    expect(before).toBeGreaterThan(0);
    expect(before).toBeLessThan(docs.length);
    proxy.reset();
    const resumed = await runCli([...args, '--resume'], { cwd }).done;
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = JSON.parse(resumed.stdout.trim().split('\n').pop()!);
    expect(summary).toMatchObject({ complete: true, missing: 0, failed: 0, conflicts: 0, seen: docs.length - before, annotated: docs.length - before });
    await expectClean(ctx.client, index);
  });

  it('dedup: scans and write-back through faults give the clusters of a clean run', async () => {
    const index = ctx.index('faults-dedup');
    await indexDocs(ctx.client, index);
    await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
    const clean = await dedupIndex(ctx.client, { index, state: { full: true, stateFile: path.join(tmp, `dd-clean-${index}.json`) }, output: { dryRun: true, collectMatches: false } });
    proxy.decide = plan([
      { kind: 'scroll', nth: 3, fault: 'drop' },
      { kind: 'scroll', nth: 7, fault: { stallMs: TIMEOUT_MS + 1000 } },
      { kind: 'search', every: 5, fault: { status: 503 } },
      { kind: 'search', nth: 7, fault: 'drop' },
      { kind: 'bulk', nth: 1, fault: 'drop' },
      { kind: 'bulk', nth: 3, fault: { status: 429 } },
    ]);
    const summary = await dedupIndex(faulty, {
      index,
      limits: { maxCachedSignatures: 10, pageSize: 10, bulk: { maxOperations: 10 } },
      state: { full: true, stateFile: path.join(tmp, `dd-${index}.json`) },
      output: { errorsFile: path.join(tmp, `dd-errors-${index}.jsonl`) },
    });
    expect(proxy.total).toBeGreaterThan(0);
    expect(summary).toMatchObject({ clusters: clean.clusters, duplicates: clean.duplicates, failed: 0, complete: true });
    expect(summary.top).toEqual(clean.top);
    const stored = await sourcesById(ctx.client, index);
    const inClusters = [...stored.values()].filter((s) => s.near_dup?.cluster_id).length;
    expect(inClusters).toBe(clean.duplicates + clean.clusters + clean.alone);
  });

  /** An annotated index, the clusters of a clean run, and a working folder with the path of dedup's run journal there. */
  async function dedupToKill(label: string) {
    const index = ctx.index(label);
    await indexDocs(ctx.client, index);
    await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
    const clean = await dedupIndex(ctx.client, { index, state: { full: true, stateFile: path.join(tmp, `dd-clean-${index}.json`) }, output: { dryRun: true } });
    const cwd = mkdtempSync(path.join(tmp, `${label}-`));
    // The journal is named as the state file is: by the cluster's uuid and the index.
    return { index, clean, cwd, runFile: path.join(cwd, '.near-dup', `dedup-${await clusterUuid(ctx.client)}-${index}.run.json`) };
  }

  /** `--resume` ends with the clusters of the clean run, written and checked, and nothing left to resume; its summary. */
  async function resumedLikeClean(args: string[], run: Awaited<ReturnType<typeof dedupToKill>>) {
    const resumed = await runCli([...args, '--resume'], { cwd: run.cwd }).done;
    expect(resumed.code, resumed.stderr).toBe(0);
    const summary = JSON.parse(resumed.stdout.trim().split('\n').pop()!);
    expect(summary).toMatchObject({ clusters: run.clean.clusters, duplicates: run.clean.duplicates, complete: true, failed: 0 });
    expect(summary.top).toEqual(run.clean.top);
    expect(await ctx.client.count(run.index, { exists: { field: 'near_dup.cluster_id' } })).toBe(run.clean.duplicates + run.clean.clusters + run.clean.alone);
    expect(existsSync(run.runFile)).toBe(false); // finished: nothing left to resume
    return summary;
  }

  it('dedup killed (SIGKILL) midway (signatures spilled to disk) resumes from its last finished band with --resume, and ends with the clusters of a clean run', async () => {
    const run = await dedupToKill('faults-dedup-kill');
    // A cache smaller than the index: the signatures are spilled to disk, and read again by the resumed run.
    const args = ['dedup', '--url', ctx.engine.url, '--index', run.index, '--full', '--page-size', '10', '--max-cached-signatures', '10'];
    const first = runCli(args, { cwd: run.cwd });
    let done = 0;
    for (let i = 0; i < 2000 && done < 3; i++) {
      await new Promise((r) => setTimeout(r, 10));
      try {
        done = JSON.parse(readFileSync(run.runFile, 'utf8')).counts.partitionsDone;
      } catch {
        // not written yet, or being renamed into place
      }
    }
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    const summary = await resumedLikeClean(args, run);
    expect(summary.resumedPartitions).toBeGreaterThanOrEqual(3);
  });

  it('dedup in memory killed (SIGKILL) while it writes the clusters: --resume replays the verified pairs instead of finding them again', async () => {
    const run = await dedupToKill('faults-dedup-memory-kill');
    const args = ['dedup', '--index', run.index, '--full', '--page-size', '10'];
    // Through the test proxy, whose first bulk write of the clusters is held back: the kill lands there. (The
    // first bulk request is dedup's check that it may write, engine/privileges.ts: it writes nothing.)
    proxy.decide = plan([{ kind: 'bulk', nth: 2, fault: { stallMs: 60_000 } }]);
    const first = runCli([...args, '--url', proxyUrl], { cwd: run.cwd });
    for (let i = 0; i < 3000 && proxy.injected.stalled === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(proxy.injected.stalled).toBe(1);
    const journal = JSON.parse(readFileSync(run.runFile, 'utf8'));
    first.child.kill('SIGKILL');
    expect((await first.done).signal).toBe('SIGKILL');
    expect(journal.identity.pass).toBe('bands');
    expect(journal.counts.partitionsDone).toBe(journal.identity.partitions); // every band done before the write
    const summary = await resumedLikeClean([...args, '--url', ctx.engine.url], run);
    expect(summary.resumedPartitions).toBe(journal.identity.partitions);
  });

  it('ingest: a dropped bulk answer is sent again without doubling documents, and every line is accounted for', async () => {
    const index = ctx.index('faults-ingest');
    // Half the documents carry an id, half let near-dup choose one; blank lines are counted, not lost.
    const lines = docs.map((d, i) => JSON.stringify(i % 2 === 0 ? d : { ...d, id: undefined, ref: d.id }));
    const ndjson = lines.join('\n') + '\n\n   \n';
    proxy.decide = plan([
      { kind: 'bulk', nth: 1, fault: 'drop' },
      { kind: 'bulk', nth: 3, fault: 'drop' },
      { kind: 'bulk', nth: 5, fault: { status: 429 } },
    ]);
    const summary = await ingestStream(faulty, Readable.from([Buffer.from(ndjson)]), {
      index,
      fields: ['text'],
      signer: {},
      output: { prefix: 'near_dup', idField: 'id', errorsFile: path.join(tmp, `ingest-errors-${index}.jsonl`) },
      limits: { bulk: { maxOperations: 8 } },
    });
    expect(proxy.injected.dropped).toBeGreaterThanOrEqual(2);
    expect(summary).toMatchObject({ indexed: docs.length, failed: 0, blank: 2 });
    expect(summary.retries.connection + summary.retries.timeout).toBeGreaterThan(0);
    const stored = await sourcesById(ctx.client, index);
    expect(stored.size).toBe(docs.length);
    const byRef = new Map([...stored.values()].map((s) => [(s.id ?? s.ref) as string, s]));
    expect(byRef.size).toBe(docs.length);
    for (const doc of docs) expect(signatureFields(byRef.get(doc.id)?.near_dup), doc.id).toEqual(expected.get(doc.id));
  });
});
