// dedup split between processes that share only the engine (--share K/N, --from-shares N), on real engines:
// two and three shares give every document the cluster fields one process gives it; a share killed midway
// (SIGKILL, a child process) goes on from its last band written; the final step refuses while a share is
// missing or of another run, and refuses to write from a damaged or forged pair document, naming it; the
// pairs index is near-dup's own and nothing of the user's index but the cluster fields is written.
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import type { EngineClient } from '../../src/engine/client.js';
import { indexSignatures, largeKeyCorpus } from './hand-made.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { DEDUP_DEFAULTS, type DedupOptions, dedupIndex, dedupShare, type ShareSummary } from '../../src/jobs/dedup.js';
import { withDedupOptions } from '../support/dedup-options.js';
import { markerId } from '../../src/jobs/dedup/split/plan.js';
import { fixtureSample, testCorpora } from '../support/corpus.js';
import { indexDocuments, runCli } from '../support/documents.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { forEachEngine } from './harness.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-shares-'));
const CLUSTER_FIELDS = ['cluster_id', 'duplicate_of', 'is_canonical', 'cluster_size', 'max_similarity', 'canonical_similarity', 'best_match'];

/** Every document's cluster fields, and the rest of its source (which dedup must not touch), by id. */
async function snapshot(client: EngineClient, index: string) {
  await client.refresh(index);
  const response = await client.search(index, { size: 1000, query: { match_all: {} } });
  const clusters = new Map<string, Record<string, unknown>>();
  const rest = new Map<string, Record<string, unknown>>();
  for (const hit of response.hits.hits) {
    const source = structuredClone(hit._source ?? {}) as Record<string, any>;
    const fields: Record<string, unknown> = {};
    for (const name of CLUSTER_FIELDS) {
      fields[name] = source.near_dup?.[name] ?? null;
      delete source.near_dup?.[name];
    }
    clusters.set(hit._id, fields);
    rest.set(hit._id, source);
  }
  return { clusters, rest };
}

/** The ids of the documents whose source (but the cluster fields) is not as it was. */
function changed(before: Map<string, Record<string, unknown>>, after: Map<string, Record<string, unknown>>): string[] {
  return [...before.keys()].filter((id) => !isDeepStrictEqual(before.get(id), after.get(id)));
}

/**
 * The cluster fields of every document removed (as if dedup had never run), visible to the next search: each
 * document written again without them (an engine may have no scripting to remove a field in place).
 */
async function clearClusterFields(client: EngineClient, index: string): Promise<void> {
  await client.refresh(index);
  const held = (await client.search(index, { size: 1000, query: { exists: { field: 'near_dup.cluster_id' } } })).hits.hits;
  const lines = held.flatMap((h) => {
    const source = structuredClone(h._source) as Record<string, any>;
    for (const name of CLUSTER_FIELDS) delete source.near_dup[name];
    return [{ index: { _index: index, _id: h._id } }, source];
  });
  if (lines.length > 0) expect((await client.bulk(lines, { refresh: 'true' })).errors).toBe(false);
  expect(await client.count(index, { exists: { field: 'near_dup.cluster_id' } })).toBe(0);
}

const withCluster = (client: EngineClient, index: string) => client.count(index, { exists: { field: 'near_dup.cluster_id' } });

forEachEngine('dedup split between processes', (ctx) => {
  /** The options of every run here: the oldest by the documents' own date kept, state files of the test's own. */
  const common = (index: string): DedupOptions => ({ index, compare: { canonical: 'oldest', dateField: 'date' }, state: { stateFile: path.join(tmp, `state-${index}.json`) }, output: { errorsFile: path.join(tmp, `errors-${index}.jsonl`) } });
  const shares = (index: string, count: number, pairsIndex: string, numbers = Array.from({ length: count }, (_, k) => k + 1), extra: Partial<DedupOptions> = {}) =>
    Promise.all(numbers.map((k) => dedupShare(ctx.client, { ...withDedupOptions(common(index), extra), share: `${k}/${count}`, pairsIndex })));
  const finalStep = (index: string, count: number, pairsIndex: string, extra: Partial<DedupOptions> = {}) =>
    dedupIndex(ctx.client, { ...withDedupOptions(common(index), extra), fromShares: count, pairsIndex });

  /** A new index of these documents, annotated. */
  const annotated = async (label: string, docs: ReadonlyArray<{ id: string }>) => {
    const index = ctx.index(label);
    await indexDocuments(ctx.client, index, docs);
    await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
    return index;
  };

  /** One process's run, written back: its summary and every document as it left it; then the cluster fields cleared. */
  const oneProcess = async (index: string, extra: Partial<DedupOptions> = {}) => {
    const before = await snapshot(ctx.client, index);
    const summary = await dedupIndex(ctx.client, withDedupOptions(common(index), withDedupOptions(extra, { state: { full: true } })));
    expect(summary.complete).toBe(true);
    const after = await snapshot(ctx.client, index);
    expect(changed(before.rest, after.rest)).toEqual([]);
    await clearClusterFields(ctx.client, index);
    return { summary, clusters: after.clusters, rest: after.rest };
  };

  for (const { name, docs } of testCorpora(30, 30)) {
    it(`two and three shares give every document the cluster fields of one process, and touch nothing else (${name}, ${docs.length} documents)`, async () => {
      const index = await annotated(`shares-${name}`, docs);
      const one = await oneProcess(index);
      expect(one.summary.clusters).toBeGreaterThan(10);
      for (const count of [2, 3]) {
        const pairsIndex = ctx.index(`pairs-${count}`);
        // The three shares hold a tenth of the signatures in memory, the rest spilled to disk: the memory a
        // share is given is its own business, not the run's.
        const done: ShareSummary[] = await shares(index, count, pairsIndex, undefined, count === 3 ? { limits: { maxCachedSignatures: Math.ceil(docs.length / 10) } } : {});
        expect(done.map((s) => [s.complete, s.alreadyComplete, s.resumedBands])).toEqual(done.map(() => [true, false, 0]));
        expect(new Set(done.map((s) => s.run)).size).toBe(1);
        // Every bucket is one share's: the counts add up to one process's.
        expect(done.reduce((n, s) => n + s.buckets, 0)).toBe(one.summary.buckets);
        expect(done.reduce((n, s) => n + s.candidatePairs, 0)).toBe(one.summary.candidatePairs);
        expect(done.reduce((n, s) => n + s.pairs, 0)).toBe(one.summary.verifiedPairs);
        // Nothing of the index is written by a share.
        expect(await withCluster(ctx.client, index)).toBe(0);
        // The final step of the three holds a tenth of the signatures too: its ids, facts and sets on disk, and
        // its pairs in parts of 12 on disk (more than two parts: the fixtures have 40 pairs at the default bar).
        const small = { maxCachedSignatures: Math.ceil(docs.length / 10), maxCachedMembers: 12 };
        const summary = await finalStep(index, count, pairsIndex, count === 3 ? { limits: small } : {});
        expect(summary).toMatchObject({ complete: true, failed: 0, clusters: one.summary.clusters, duplicates: one.summary.duplicates, verifiedPairs: one.summary.verifiedPairs });
        if (count === 3) expect(one.summary.verifiedPairs).toBeGreaterThan(2 * small.maxCachedMembers);
        expect(summary.fromShares).toMatchObject({ shares: count, pairsIndex, pairs: one.summary.verifiedPairs, duplicates: 0 });
        const split = await snapshot(ctx.client, index);
        expect(split.clusters).toEqual(one.clusters);
        expect(changed(one.rest, split.rest)).toEqual([]);
        await clearClusterFields(ctx.client, index);
      }
    });
  }

  it('makes the pairs index with a mapping of its own: strict, only what a share is found by indexed, refresh off while shares write, back on after', async () => {
    const index = await annotated('shares-mapping', fixtureSample(12));
    const pairsIndex = ctx.index('pairs-mapping');
    await shares(index, 2, pairsIndex, [1]);
    const settings = await ctx.client.request('GET', `/${pairsIndex}/_settings`, undefined, { flat_settings: 'true' });
    expect(settings[pairsIndex].settings['index.refresh_interval']).toBe('-1');
    const mapping = (await ctx.client.getMapping(pairsIndex))[pairsIndex].mappings;
    expect(mapping).toMatchObject({ dynamic: 'strict', _meta: { near_dup: 'pairs' } });
    expect(mapping.properties).toMatchObject({ run: { type: 'keyword' }, kind: { type: 'keyword' }, pairs: { type: 'object', enabled: false }, identity: { type: 'object', enabled: false } });
    await shares(index, 2, pairsIndex, [2]);
    await finalStep(index, 2, pairsIndex);
    const after = await ctx.client.request('GET', `/${pairsIndex}/_settings`, undefined, { flat_settings: 'true' });
    expect(after[pairsIndex].settings['index.refresh_interval']).toBeUndefined();
  });

  it('refuses an index near-dup did not make for pairs, and writes nothing to it', async () => {
    const index = await annotated('shares-theirs', fixtureSample(6));
    const theirs = ctx.index('not-pairs');
    await indexDocuments(ctx.client, theirs, [{ id: 'a', title: 'their own' }]);
    const mapping = await ctx.client.getMapping(theirs);
    await expect(shares(index, 2, theirs, [1])).rejects.toThrow(new RegExp(`--pairs-index "${theirs}" is an index that near-dup did not make for pairs .*\\(nothing was written to "${theirs}"\\)`));
    await expect(finalStep(index, 2, theirs)).rejects.toThrow(/near-dup did not make for pairs/);
    await ctx.client.refresh(theirs);
    expect(await ctx.client.count(theirs)).toBe(1);
    expect(await ctx.client.getMapping(theirs)).toEqual(mapping);
  });

  it('the final step refuses while a share is missing, stopped or of another run, naming each, and writes nothing', async () => {
    const index = await annotated('shares-missing', fixtureSample(20));
    const pairsIndex = ctx.index('pairs-missing');
    await shares(index, 3, pairsIndex, [1, 3]);
    await expect(finalStep(index, 3, pairsIndex)).rejects.toThrow(
      new RegExp(`1 of 3 shares is not complete in ${pairsIndex}: 2/3 \\(never started\\)\\. Run each \\(near-dup dedup --index ${index} --share K/3 --pairs-index ${pairsIndex}.*nothing was written`),
    );
    // A marker that says complete with bands to go is not trusted.
    await ctx.client.refresh(pairsIndex);
    const marker = (await ctx.client.search(pairsIndex, { size: 1, query: { bool: { filter: [{ term: { kind: 'share' } }, { term: { share: 3 } }] } } })).hits.hits[0];
    const forged = structuredClone(marker._source) as any;
    forged.progress.bands_done = 3;
    forged.progress.pages = forged.progress.pages.slice(0, 3);
    forged.progress.pairs = forged.progress.pages.reduce((n: number, k: number) => n + k, 0);
    forged.progress.complete = true;
    await ctx.client.request('PUT', `/${pairsIndex}/_doc/${marker._id}`, forged);
    await expect(finalStep(index, 3, pairsIndex)).rejects.toThrow(/2 of 3 shares are not complete.*3\/3 \(marker damaged: it says complete with 3 of 26 bands done\)/);
    // Shares of another run: the bar differs, said with both values.
    const other = DEDUP_DEFAULTS.minSimilarity - 0.1;
    await expect(finalStep(index, 3, pairsIndex, { compare: { minSimilarity: other } })).rejects.toThrow(
      new RegExp(`holds shares of another run of .*, which differ in minSimilarity \\(${DEDUP_DEFAULTS.minSimilarity} there, ${other} here\\): give the options they ran with`),
    );
    expect(await withCluster(ctx.client, index)).toBe(0);
    // Run again, a share of the run goes on: the forged one starts over, with a reason.
    const [three] = await shares(index, 3, pairsIndex, [3]);
    expect(three.restarted).toMatch(/its marker in .* could not be trusted \(it says complete with 3 of 26 bands done\)/);
    await shares(index, 3, pairsIndex, [2]);
    expect((await finalStep(index, 3, pairsIndex)).complete).toBe(true);
  });

  it('a damaged or forged pair document is named, nothing is written, and its share does its work again', async () => {
    const index = await annotated('shares-forged', fixtureSample(25));
    const one = await oneProcess(index);
    const pairsIndex = ctx.index('pairs-forged');
    await shares(index, 2, pairsIndex);
    await ctx.client.refresh(pairsIndex);
    const pages = (await ctx.client.search(pairsIndex, { size: 100, query: { term: { kind: 'pairs' } }, sort: [{ band: 'asc' }] })).hits.hits;
    const ofShare = (k: number) => pages.filter((p) => (p._source as any).share === k);
    // Share 1: a similarity edited (the page still reads as a page). Share 2: a column cut short.
    const edited = ofShare(1)[0];
    const forged = structuredClone(edited._source) as any;
    forged.pairs.jaccard[0] = forged.pairs.jaccard[0] === 1 ? 0.9921875 : 1;
    await ctx.client.request('PUT', `/${pairsIndex}/_doc/${edited._id}`, forged);
    const cut = ofShare(2)[0];
    const damaged = structuredClone(cut._source) as any;
    damaged.pairs.b.pop();
    await ctx.client.request('PUT', `/${pairsIndex}/_doc/${cut._id}`, damaged);
    const errorsFile = path.join(tmp, `errors-${index}.jsonl`);
    // A dry run names them too, and leaves the shares as they are (their markers kept).
    const markers = async () => (await ctx.client.search(pairsIndex, { size: 10, query: { term: { kind: 'share' } } })).hits.hits.length;
    const before = await markers();
    await expect(finalStep(index, 2, pairsIndex, { output: { dryRun: true } })).rejects.toThrow(/2 problems in 2 documents .*the shares were left as they are \(a dry run\)\. Shares 1\/2, 2\/2 would do their work again once this runs without --dry-run/);
    await ctx.client.refresh(pairsIndex);
    expect([before, await markers()]).toEqual([2, 2]);
    await expect(finalStep(index, 2, pairsIndex)).rejects.toThrow(
      new RegExp(`2 problems in 2 documents of ${pairsIndex} \\(damaged or forged; each named in .*\\): nothing was written to ${index}\\. Shares 1/2, 2/2 will do their work again`),
    );
    expect(await withCluster(ctx.client, index)).toBe(0);
    const named = readFileSync(errorsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(named.map((e) => e.id).sort()).toEqual([edited._id, edited._id, cut._id, cut._id].sort()); // (by the dry run, then the run)
    expect(named.find((e) => e.id === edited._id).reason).toMatch(/says similarity .*, their signatures give/);
    expect(named.find((e) => e.id === cut._id).reason).toMatch(/columns hold/);
    // Run again, each share starts over (its marker was removed), and the final step gives one process's clusters.
    const redone = await shares(index, 2, pairsIndex);
    expect(redone.map((s) => [s.alreadyComplete, s.resumedBands])).toEqual([[false, 0], [false, 0]]);
    expect((await finalStep(index, 2, pairsIndex)).complete).toBe(true);
    expect((await snapshot(ctx.client, index)).clusters).toEqual(one.clusters);
  });

  it('a page with pairs taken out (its count made to match), or a marker listing pages the engine does not hold, is named and nothing is written', async () => {
    const index = await annotated('shares-thinned', fixtureSample(25));
    const pairsIndex = ctx.index('pairs-thinned');
    await shares(index, 2, pairsIndex);
    await ctx.client.refresh(pairsIndex);
    const hits = (await ctx.client.search(pairsIndex, { size: 200, query: { match_all: {} }, sort: [{ band: 'asc' }] })).hits.hits;
    const page = hits.find((h) => (h._source as any).kind === 'pairs' && (h._source as any).share === 1 && (h._source as any).count > 1) as (typeof hits)[number];
    // Share 1: a page that still reads as a page, one pair fewer. Share 2: its marker lists a page more.
    const thinned = structuredClone(page._source) as any;
    for (const column of ['a', 'b', 'jaccard', 'hamming']) thinned.pairs[column].pop();
    thinned.count -= 1;
    await ctx.client.request('PUT', `/${pairsIndex}/_doc/${page._id}`, thinned);
    const marker = markerId(thinned.run, { number: 2, count: 2 });
    const listed = structuredClone((await ctx.client.get(pairsIndex, marker))?._source) as any;
    listed.progress.pages[0] += 1;
    listed.progress.pairs += 1;
    await ctx.client.request('PUT', `/${pairsIndex}/_doc/${marker}`, listed);
    await expect(finalStep(index, 2, pairsIndex)).rejects.toThrow(/2 problems in 2 documents .* Shares 1\/2, 2\/2 will do their work again/);
    expect(await withCluster(ctx.client, index)).toBe(0);
    const named = readFileSync(path.join(tmp, `errors-${index}.jsonl`), 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(named.map((e) => e.reason).sort()).toEqual([
      expect.stringMatching(/^of share 1\/2: says its share wrote \d+ pairs, where its pages hold \d+$/),
      expect.stringMatching(/^of share 2\/2: lists \d+ pages, where .* holds \d+ of this share \(none read\)$/),
    ]);
  });

  describe('a share killed midway', () => {
    let proxy: FaultProxy;
    let proxyUrl: string;
    beforeAll(async () => {
      proxy = new FaultProxy(ctx.engine.url);
      proxyUrl = await proxy.start();
      ctx.cleanup(() => proxy.stop());
    });

    it('(SIGKILL, a child process) is refused by the final step, then goes on from its last band written, and the clusters are one process\'s', async () => {
      const index = await annotated('shares-kill', fixtureSample(30));
      const one = await oneProcess(index);
      const pairsIndex = ctx.index('pairs-kill');
      // Each write of the share's marker held back a little, so that the kill lands midway.
      proxy.decide = (r) => (r.method === 'PUT' && r.path.startsWith(`/${pairsIndex}/_doc/`) ? { stallMs: 150 } : 'pass');
      const cwd = mkdtempSync(path.join(tmp, 'kill-'));
      const args = ['dedup', '--index', index, '--date-field', 'date', '--share', '1/2', '--pairs-index', pairsIndex];
      const first = runCli(['--url', proxyUrl, ...args], { cwd });
      const bandsDone = async () => {
        try {
          await ctx.client.refresh(pairsIndex);
          const hit = (await ctx.client.search(pairsIndex, { size: 1, query: { term: { kind: 'share' } } })).hits.hits[0];
          return (hit?._source as any)?.progress?.bands_done ?? 0;
        } catch {
          return 0; // not made yet
        }
      };
      for (let i = 0; i < 2000 && (await bandsDone()) < 5; i++) await new Promise((r) => setTimeout(r, 20));
      first.child.kill('SIGKILL');
      expect((await first.done).signal).toBe('SIGKILL');
      proxy.reset();
      await new Promise((r) => setTimeout(r, 500)); // a request the engine already had still lands
      const stoppedAt = await bandsDone();
      expect(stoppedAt).toBeGreaterThanOrEqual(5);
      expect(stoppedAt).toBeLessThan(26);
      await expect(finalStep(index, 2, pairsIndex)).rejects.toThrow(new RegExp(`2 of 2 shares are not complete in ${pairsIndex}: 1/2 \\(${stoppedAt} of 26 bands done, last on .*\\); 2/2 \\(never started\\)`));
      const again = await runCli(['--url', ctx.engine.url, ...args], { cwd }).done;
      expect(again.code, again.stderr).toBe(0);
      const summary = JSON.parse(again.stdout.trim().split('\n').pop() as string);
      expect(summary).toMatchObject({ share: '1/2', complete: true, alreadyComplete: false, resumedBands: stoppedAt });
      expect(again.stderr).toMatch(new RegExp(`went on after the ${stoppedAt} bands an earlier attempt had done`));
      await shares(index, 2, pairsIndex, [2]);
      const final = await finalStep(index, 2, pairsIndex);
      expect(final).toMatchObject({ complete: true, verifiedPairs: one.summary.verifiedPairs });
      expect(final.fromShares?.duplicates).toBe(0);
      expect((await snapshot(ctx.client, index)).clusters).toEqual(one.clusters);
    });
  });

  it('with a band key held by more documents than a bucket verifies at once, three shares give one process\'s pairs and clusters', async () => {
    // Such a key is verified a chunk at a time, in the order the scan met its documents; that order changes
    // when documents are written (a write-back), for one process as for shares, so both read the index
    // unchanged here (dry runs), and their pairs are compared.
    const index = ctx.index('shares-large-key');
    const { docs, bar } = largeKeyCorpus();
    await indexSignatures(ctx.client, index, docs, { dated: true });
    const pairsOf = (file: string) => readFileSync(file, 'utf8').trim().split('\n').sort();
    const oneFile = path.join(tmp, `${index}-one.jsonl`);
    const one = await dedupIndex(ctx.client, withDedupOptions(common(index), { compare: { minSimilarity: bar }, limits: { bucketChunk: 16 }, state: { full: true }, output: { dryRun: true, pairsFile: oneFile } }));
    expect(one.top.map((c) => c.size)).toEqual([60, 10, 2]);
    const pairsIndex = ctx.index('pairs-large-key');
    await shares(index, 3, pairsIndex, undefined, { compare: { minSimilarity: bar }, limits: { bucketChunk: 16 } });
    const splitFile = path.join(tmp, `${index}-split.jsonl`);
    const split = await finalStep(index, 3, pairsIndex, { compare: { minSimilarity: bar }, limits: { bucketChunk: 16 }, output: { dryRun: true, pairsFile: splitFile } });
    expect(pairsOf(splitFile)).toEqual(pairsOf(oneFile));
    expect(split.fromShares?.pairs).toBe(one.verifiedPairs);
    const { clusters, duplicates, families, alone, top, canonicalSimilarity } = one;
    expect(split).toMatchObject({ clusters, duplicates, families, alone, top, canonicalSimilarity });
  });

  it('refuses options that are not for a share, before connecting (exit 2)', async () => {
    const url = ctx.engine.url;
    const cases: Array<[string[], RegExp]> = [
      [['--share', '3/2', '--pairs-index', 'p'], /--share must be K\/N.*got "3\/2"/],
      [['--share', '1/2'], /need --pairs-index NAME/],
      [['--pairs-index', 'p'], /--pairs-index "p" goes with --share K\/N .* or --from-shares N/],
      [['--share', '1/2', '--pairs-index', 'p', '--dry-run'], /--dry-run is not for --share: give it to the final step/],
      [['--share', '1/2', '--pairs-index', 'p', '--from-shares', '2'], /--share and --from-shares go to different runs/],
      [['--from-shares', '2', '--pairs-index', 'p', '--resume'], /--resume is not for --from-shares/],
    ];
    for (const [args, message] of cases) {
      const run = await runCli(['dedup', '--url', url, '--index', 'nd-test-none', ...args]).done;
      expect([run.code, run.stderr], args.join(' ')).toEqual([2, expect.stringMatching(message)]);
    }
  });
});
