// dedup when other work overlaps it, on real engines, each case made exact with a relay that holds a request
// until the test lets it go (no sleeps):
// - documents signed before a dedup run but written while it ran (or after it) are clustered by the next
//   incremental run;
// - a second dedup of the same index is refused while one runs, naming the holder of its lock; a dry run
//   goes on and says who is writing;
// - a killed run's lock is taken over once its lease has run out, and the run that takes it says so.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { connect, type EngineClient } from '../../src/engine/client.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { DEDUP_DEFAULTS, dedupIndex, type DedupOptions, dedupShare } from '../../src/jobs/dedup.js';
import { withDedupOptions } from '../support/dedup-options.js';
import { DEFAULT_LOCK_INDEX } from '../../src/jobs/dedup/state/run-lock.js';
import { createSigner } from '../../src/signature.js';
import { editText, seededRandom } from '../support/corpus.js';
import { indexDocuments } from '../support/documents.js';
import { FaultProxy, type ProxiedRequest } from '../support/fault-proxy.js';
import { exactJaccardOf } from '../support/jaccard.js';
import { forEachEngine } from './harness.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-overlap-'));
const random = seededRandom(48);
const VOCABULARY = Array.from({ length: 3000 }, (_, i) => `w${i.toString(36)}`);
const textOf = () => Array.from({ length: 300 }, () => VOCABULARY[Math.floor(random() * VOCABULARY.length)]).join(' ');
// 1 word in 100 edited: a near-duplicate well above dedup's default bar in word 4-shingles (each edit
// breaks four of them), which the runs are left to use (checked below).
const copyOf = (text: string) => editText(text, 0.01, random, VOCABULARY);

/** 20 pairs of near-duplicates and 20 documents alone. */
const BASE = [
  ...Array.from({ length: 20 }, (_, f) => {
    const text = textOf();
    return [
      { id: `base-${f}-a`, text },
      { id: `base-${f}-b`, text: copyOf(text) },
    ];
  }).flat(),
  ...Array.from({ length: 20 }, (_, k) => ({ id: `alone-${k}`, text: textOf() })),
];
/** 30 near-duplicates, three of each of 10 new texts: 10 clusters once clustered. */
const LATE = Array.from({ length: 10 }, (_, f) => {
  const text = textOf();
  return [0, 1, 2].map((k) => ({ id: `late-${f}-${k}`, text: k === 0 ? text : copyOf(text) }));
}).flat();

/** The documents of one text (base-F-*, late-F-*) are each at least 0.1 above dedup's default bar. */
function expectCopiesNear(docs: ReadonlyArray<{ id: string; text: string }>): void {
  const exact = exactJaccardOf(createSigner(), docs);
  const family = (id: string) => id.slice(0, id.lastIndexOf('-'));
  for (const a of docs) {
    for (const b of docs) {
      if (a.id < b.id && !a.id.startsWith('alone-') && family(a.id) === family(b.id)) {
        expect(exact(a.id, b.id), `${a.id} ~ ${b.id}`).toBeGreaterThanOrEqual(DEDUP_DEFAULTS.minSimilarity + 0.1);
      }
    }
  }
}

/** A promise and the function that settles it. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** Holds the first request `matches` picks until `release.open()`; `seen` settles when it came. */
function holdFirst(relay: FaultProxy, matches: (r: ProxiedRequest) => boolean): { seen: Promise<void>; release: () => void } {
  const seen = gate();
  const release = gate();
  let held = false;
  relay.decide = (r) => {
    if (held || !matches(r)) return 'pass';
    held = true;
    seen.open();
    return { holdUntil: release.promise };
  };
  return { seen: seen.promise, release: release.open };
}

const isBulkWith = (text: string) => (r: ProxiedRequest) => r.kind === 'bulk' && r.body.toString().includes(text);

forEachEngine('dedup overlapping other work', (ctx) => {
  const stateOf = (index: string) => path.join(tmp, `state-${index}.json`);
  const dedup = (client: EngineClient, index: string, more: Partial<DedupOptions> = {}) => dedupIndex(client, withDedupOptions({ index, state: { stateFile: stateOf(index) } }, more));
  const annotate = (client: EngineClient, index: string) => annotateIndex(client, { index, fields: ['text'], signer: {}, state: { checkpointFile: path.join(tmp, `annotate-${index}-${Date.now()}.json`) }, output: { prefix: 'near_dup' } });

  /** A relay in front of the engine, and a client that talks through it (both closed after the block). */
  const relayed = async () => {
    const relay = new FaultProxy(ctx.engine.url);
    const url = await relay.start();
    const client = await connect({ ...ctx.connection, url });
    ctx.cleanup(async () => {
      await client.close();
      await relay.stop();
    });
    return { relay, client, url };
  };

  /**
   * BASE annotated and deduplicated (a complete run: the next one may be incremental), then LATE indexed
   * unsigned: in one index of three shards, or (`alias`) in two indices of two shards each, behind an alias.
   */
  const prepared = async (label: string, shape: 'index' | 'alias' = 'index') => {
    expectCopiesNear([...BASE, ...LATE]);
    const first = ctx.index(label);
    const second = shape === 'alias' ? ctx.index(`${label}-2`) : first;
    for (const name of new Set([first, second])) await ctx.client.createIndex(name, { settings: { number_of_shards: shape === 'alias' ? 2 : 3, number_of_replicas: 0 } });
    const index = shape === 'alias' ? ctx.name(`${label}-alias`) : first;
    if (shape === 'alias') await ctx.client.request('POST', '/_aliases', { actions: [{ add: { indices: [first, second], alias: index } }] });
    await indexDocuments(ctx.client, first, BASE);
    await annotate(ctx.client, index);
    expect(await dedup(ctx.client, index, { state: { full: true } })).toMatchObject({ clusters: 20, complete: true });
    await indexDocuments(ctx.client, second, LATE);
    return index;
  };

  /** Each late text's three documents share one cluster, and it has no other member. */
  const expectLateClustered = async (index: string) => {
    await ctx.client.refresh(index);
    const found = await ctx.client.search(index, { size: 1000, _source: ['near_dup.cluster_id', 'near_dup.cluster_size'] });
    const cluster = new Map(found.hits.hits.map((h) => [h._id, (h._source as any)?.near_dup?.cluster_id as string | undefined]));
    for (let f = 0; f < 10; f++) {
      const ids = [0, 1, 2].map((k) => `late-${f}-${k}`);
      expect(ids.map((id) => cluster.get(id)), `late-${f}`).toEqual(ids.map(() => cluster.get(ids[0])));
      expect(cluster.get(ids[0]), `late-${f}`).toBeTruthy();
      expect([...cluster.values()].filter((c) => c === cluster.get(ids[0])), `late-${f}`).toHaveLength(3);
    }
  };

  it('clusters, on the next incremental run, documents signed before a run and written after it ended', async () => {
    const index = await prepared('late-after', 'alias');
    const { relay, client } = await relayed();
    const bulk = holdFirst(relay, isBulkWith('annotated_at'));
    const annotating = annotate(client, index);
    await bulk.seen;
    // Signed (annotated_at stamped) but not written: this run sees none of them.
    expect(await dedup(ctx.client, index)).toMatchObject({ mode: 'incremental', newDocuments: 0, complete: true });
    bulk.release();
    expect(await annotating).toMatchObject({ annotated: 30, complete: true });
    const next = await dedup(ctx.client, index);
    expect(next).toMatchObject({ mode: 'incremental', newDocuments: 30, complete: true });
    expect((await dedup(ctx.client, index, { state: { full: true }, output: { dryRun: true } })).clusters).toBe(30);
    await expectLateClustered(index);
    // Nothing is new any more: the run after writes nothing (its own writes are not taken for new ones).
    expect(await dedup(ctx.client, index)).toMatchObject({ mode: 'incremental', newDocuments: 0, written: 0 });
  });

  it('clusters, on the next incremental run, documents signed before a run and written while it wrote back', async () => {
    const index = await prepared('late-during');
    const annotating = await relayed();
    const annotateBulk = holdFirst(annotating.relay, isBulkWith('annotated_at'));
    const signed = annotate(annotating.client, index);
    await annotateBulk.seen;
    const deduping = await relayed();
    const writeBack = holdFirst(deduping.relay, isBulkWith('cluster_id'));
    const run = dedup(deduping.client, index, { state: { full: true } });
    await writeBack.seen;
    // The signatures land after the run read the index, before it writes its clusters back.
    annotateBulk.release();
    expect(await signed).toMatchObject({ annotated: 30, complete: true });
    writeBack.release();
    expect(await run).toMatchObject({ mode: 'full', clusters: 20, complete: true });
    const next = await dedup(ctx.client, index);
    expect(next).toMatchObject({ mode: 'incremental', complete: true });
    expect(next.newDocuments).toBeGreaterThanOrEqual(30);
    expect((await dedup(ctx.client, index, { state: { full: true }, output: { dryRun: true } })).clusters).toBe(30);
    await expectLateClustered(index);
    expect(await dedup(ctx.client, index)).toMatchObject({ mode: 'incremental', newDocuments: 0, written: 0 });
  });

  it('goes on when the lock index was deleted between runs (an _mget of a missing index answers 200 with an error per document)', async () => {
    const index = await prepared('locks-deleted');
    await ctx.client.request('DELETE', '/near-dup-locks', undefined, { expand_wildcards: 'all' });
    expect(await dedup(ctx.client, index, { state: { full: true } })).toMatchObject({ complete: true });
    expect(await ctx.client.indexExists('near-dup-locks')).toBe(true);
  });

  it('runs in full, and says why, when the marks of the last run were edited', async () => {
    const index = await prepared('edited-marks');
    const state = JSON.parse(readFileSync(stateOf(index), 'utf8'));
    expect(state.marks.map((m: { uuid: string }) => m.uuid)).toEqual(await ctx.client.indexUuids(index));
    writeFileSync(stateOf(index), JSON.stringify({ ...state, marks: state.marks.map((m: { shards: number[] }) => ({ ...m, shards: m.shards.map(() => 'x') })) }));
    const again = await dedup(ctx.client, index);
    expect(again.mode).toBe('full');
    expect(again.notes.join(' ')).toContain('the marks of the last run');
  });

  it('refuses a second run of the same index while one runs, naming its holder; a dry run goes on and says who writes', async () => {
    const index = ctx.index('locked');
    await indexDocuments(ctx.client, index, BASE);
    await annotate(ctx.client, index);
    const { relay, client } = await relayed();
    const writeBack = holdFirst(relay, isBulkWith('cluster_id'));
    const first = dedup(client, index, { state: { full: true }, compare: { minSimilarity: 0.5 } });
    await writeBack.seen;
    const started = Date.now();
    const refusal = await dedup(ctx.client, index, { state: { full: true }, compare: { minSimilarity: 0.7 } }).catch((e: Error) => e);
    expect(refusal).toBeInstanceOf(Error);
    const message = (refusal as Error).message;
    expect(message).toContain(`dedup of "${index}" is running`);
    expect(message).toContain(`on ${os.hostname()}`);
    expect(message).toContain(`pid ${process.pid}`);
    expect(message).toMatch(/started \d{4}-\d\d-\d\dT/);
    expect(message).toContain('min similarity 0.5');
    expect(message).not.toContain('\n');
    const dry = await dedup(ctx.client, index, { state: { full: true }, output: { dryRun: true }, compare: { minSimilarity: 0.7 } });
    expect(dry.notes.join(' ')).toContain(`pid ${process.pid}`);
    writeBack.release();
    expect(await first).toMatchObject({ clusters: 20, complete: true });
    // Released at its end: the next run takes the lock at once.
    expect(await dedup(ctx.client, index, { state: { full: true }, compare: { minSimilarity: 0.7 } })).toMatchObject({ complete: true });
    expect(Date.now() - started).toBeLessThan(60_000);
  });

  it('refuses the same share of a split run twice at once, and runs another share beside it', async () => {
    const index = ctx.index('shares');
    await indexDocuments(ctx.client, index, BASE);
    await annotate(ctx.client, index);
    const pairsIndex = ctx.index('shares-pairs');
    const { relay, client } = await relayed();
    // The share's first write of its marker held: it holds its lock meanwhile.
    const marker = holdFirst(relay, (r) => r.method === 'PUT' && r.path.startsWith(`/${pairsIndex}/_doc/`));
    const first = dedupShare(client, { index, share: '1/2', pairsIndex });
    await marker.seen;
    const twice = await dedupShare(ctx.client, { index, share: '1/2', pairsIndex }).catch((e: Error) => e);
    expect((twice as Error).message).toMatch(new RegExp(`dedup share 1/2 of "${index}" into ${pairsIndex} is running on .*pid ${process.pid}`));
    expect(await dedupShare(ctx.client, { index, share: '2/2', pairsIndex })).toMatchObject({ complete: true });
    marker.release();
    expect(await first).toMatchObject({ complete: true });
    expect(await dedup(ctx.client, index, { fromShares: 2, pairsIndex })).toMatchObject({ clusters: 20, complete: true });
  });

  /** A dedup run in another process, through the relay, the first read of the signatures held there; `lease` in seconds. */
  const holderProcess = async (index: string, lease?: number) => {
    const { relay, url } = await relayed();
    const read = holdFirst(relay, (r) => r.kind === 'search' && r.body.toString().includes('minhash'));
    const script = `
      import { connect, dedupIndex } from ${JSON.stringify(path.resolve(__dirname, '../../dist/index.js'))};
      const client = await connect({ url: ${JSON.stringify(url)} });
      try {
        await dedupIndex(client, { index: ${JSON.stringify(index)}, state: { full: true, stateFile: ${JSON.stringify(stateOf(`${index}-holder`))} }, lock: { leaseSeconds: ${lease ?? 60} } });
      } catch (err) {
        process.stderr.write(err.message);
        process.exit(1);
      }`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (b) => (stderr += b));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })));
    ctx.cleanup(async () => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'));
    await read.seen;
    return { child, exited, release: read.release };
  };

  it("takes over at once the lock of a killed run on this machine (its process is gone), and says so", async () => {
    const index = ctx.index('killed');
    await indexDocuments(ctx.client, index, BASE);
    await annotate(ctx.client, index);
    const holder = await holderProcess(index);
    holder.child.kill('SIGKILL');
    expect((await holder.exited).signal).toBe('SIGKILL');
    const taken = await dedup(ctx.client, index, { state: { full: true } });
    expect(taken).toMatchObject({ clusters: 20, complete: true });
    expect(taken.notes.join(' ')).toMatch(new RegExp(`took over the lock of a dedup of "${index}" on .*pid ${holder.child.pid}.*whose process is gone`));
  });

  it("refuses while a paused run's lease lasts, takes its lock over once the lease has run out, and the paused run then writes nothing", async () => {
    const index = ctx.index('paused');
    await indexDocuments(ctx.client, index, BASE);
    await annotate(ctx.client, index);
    // Its lease 15 s, renewed every 5 s while it runs; paused (SIGSTOP) midway, it renews no more. Long
    // enough that the refused run below reaches the lock before it ends on a loaded machine (10 s at worst).
    const holder = await holderProcess(index, 15);
    holder.child.kill('SIGSTOP');
    const refusal = await dedup(ctx.client, index, { state: { full: true } }).catch((e: Error) => e);
    expect((refusal as Error).message).toContain(`pid ${holder.child.pid}`);
    // The lease as the holder last wrote it: once it is over, the lock is free to take.
    const lease = await leaseEnd(ctx.client, index);
    while (Date.now() <= lease) await new Promise((resolve) => setTimeout(resolve, lease - Date.now() + 1));
    const taken = await dedup(ctx.client, index, { state: { full: true }, compare: { minSimilarity: 0.7 } });
    expect(taken).toMatchObject({ complete: true });
    expect(taken.notes.join(' ')).toMatch(new RegExp(`took over the lock of a dedup of "${index}" on .*pid ${holder.child.pid}.*whose lease ended`));
    const clusters = async () => (await ctx.client.search(index, { size: 1000, _source: ['near_dup'] })).hits.hits.map((h) => [h._id, (h._source as any).near_dup.cluster_id ?? null]);
    const after = await clusters();
    holder.child.kill('SIGCONT');
    holder.release();
    const ended = await holder.exited;
    expect(ended.code, ended.stderr).toBe(1);
    expect(ended.stderr).toMatch(/this run's lock on dedup of ".*" in near-dup-locks was lost \((taken over by a dedup of .* on .*, pid \d+|its lease ran out at .*)/);
    await ctx.client.refresh(index);
    expect(await clusters()).toEqual(after);
  });
});

/** When the lease on an index's lock ends, as its holder last wrote it (ms). */
async function leaseEnd(client: EngineClient, index: string): Promise<number> {
  const [uuid] = await client.indexUuids(index);
  const found = await client.request('POST', `/${DEFAULT_LOCK_INDEX}/_mget`, { ids: [`dedup-${uuid}`] });
  return Date.parse(found.docs[0]._source.expires_at);
}
