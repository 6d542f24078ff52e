// dedup against real engines, on a sample of the PEP revisions corpus, checked against brute force.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { EngineClient } from '../../src/engine/client.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { indexSignatures, largeKeyCorpus } from './hand-made.js';
import { type ClusterMethod, dedupIndex, type DedupPair } from '../../src/jobs/dedup.js';
import { withDedupOptions } from '../support/dedup-options.js';
import { UnionFind } from '../../src/jobs/dedup/verify/union-find.js';
import { createSigner } from '../../src/signature.js';
import { testCorpora } from '../support/corpus.js';
import { indexDocuments } from '../support/documents.js';
import { exactJaccardOf } from '../support/jaccard.js';
import { forEachEngine } from './harness.js';

const signer = createSigner();
const THRESHOLD = 0.5;
const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-dedup-'));

async function sources(client: EngineClient, index: string) {
  const response = await client.search(index, {
    size: 1000,
    _source: ['near_dup.cluster_id', 'near_dup.duplicate_of', 'near_dup.is_canonical', 'near_dup.cluster_size', 'near_dup.max_similarity', 'near_dup.canonical_similarity', 'date'],
  });
  return new Map(response.hits.hits.map((h) => [h._id, h._source as Record<string, any>]));
}

for (const { name, docs } of testCorpora(30, 30)) {
  /** Exact Jaccard over the very tokens MinHash saw (default tokenizer: white space of the normalized text). */
  const exactJaccard = exactJaccardOf(signer, docs);
  /** The MinHash estimate of two documents, as dedup computes it from the stored signatures. */
  const minhashOf = new Map(docs.map((d) => [d.id, signer(d.text).minhash]));
  const estimateOf = (a: string, b: string) => {
    const x = minhashOf.get(a)!, y = minhashOf.get(b)!;
    return x.filter((v, i) => v === y[i]).length / x.length;
  };
  const strongPairs: Array<[string, string, number]> = [];
  for (let i = 0; i < docs.length; i++) {
    for (let j = i + 1; j < docs.length; j++) {
      const jac = exactJaccard(docs[i].id, docs[j].id);
      if (jac >= THRESHOLD + 0.1) strongPairs.push([docs[i].id, docs[j].id, jac]);
    }
  }

  forEachEngine(`dedup (${name})`, (ctx) => {
    // Read by the dry runs only; a test that writes works on an index of its own (every test can run alone).
    const index = ctx.index('dedup');
    const stateOf = (target: string) => path.join(tmp, `state-${target}.json`);

    /** A new index of the sample, annotated. */
    const annotatedIndex = async (label: string) => {
      const target = ctx.index(label);
      await indexDocuments(ctx.client, target, docs);
      await annotateIndex(ctx.client, { index: target, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      return target;
    };

    /** A full dedup run that writes its clusters back, with its own state file; its verified pairs. */
    const fullRun = async (target: string, clusters?: ClusterMethod) => {
      const pairsFile = path.join(tmp, `${target}-pairs.jsonl`);
      const summary = await dedupIndex(ctx.client, { index: target, compare: { minSimilarity: THRESHOLD, canonical: 'oldest', dateField: 'date', clusters }, output: { pairsFile }, state: { stateFile: stateOf(target) } });
      const pairs: DedupPair[] = readFileSync(pairsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      return { summary, pairs };
    };

    beforeAll(async () => {
      await indexDocuments(ctx.client, index, docs);
      await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
    });

    it(`finds every pair 0.1 above the threshold (${strongPairs.length} in ${docs.length} documents) and only verified pairs`, async () => {
      expect(strongPairs.length).toBeGreaterThan(20);
      const { summary, pairs } = await fullRun(await annotatedIndex('dedup-pairs'));
      expect(summary.verifiedPairs).toBe(pairs.length);
      // Found: verified as a pair, or joined through verified pairs (large buckets are verified against
      // representatives, not pair by pair).
      const components = new UnionFind();
      for (const p of pairs) components.union(p.a, p.b);
      const missed = strongPairs.filter(([a, b]) => components.find(a) !== components.find(b));
      expect(missed).toEqual([]);
      expect(new Set(pairs.map((p) => `${p.a}|${p.b}`)).size).toBe(pairs.length); // each pair reported once
      // Every reported pair passes verification: its estimate, recomputed from the signatures, reaches the bar.
      for (const p of pairs) {
        const a = signer(docs.find((d) => d.id === p.a)!.text).minhash;
        const b = signer(docs.find((d) => d.id === p.b)!.text).minhash;
        let equal = 0;
        for (let i = 0; i < a.length; i++) if (a[i] === b[i]) equal++;
        expect(equal / a.length).toBe(p.jaccard);
        expect(p.jaccard).toBeGreaterThanOrEqual(THRESHOLD);
      }
    });

    it('finds the same clusters with a signature cache far smaller than the index', async () => {
      const roomy = await dedupIndex(ctx.client, { index, compare: { minSimilarity: THRESHOLD }, output: { dryRun: true }, state: { full: true } });
      const tight = await dedupIndex(ctx.client, { index, compare: { minSimilarity: THRESHOLD }, output: { dryRun: true }, state: { full: true }, limits: { maxCachedSignatures: 40 } });
      expect(tight.clusters).toBe(roomy.clusters);
      expect(tight.duplicates).toBe(roomy.duplicates);
      expect(tight.top).toEqual(roomy.top);
    });

    it('finds the same clusters, pairs and similarities with the signatures spilled to disk as held in memory', async () => {
      const pairsOf = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      const roomyFile = path.join(tmp, `${name}-pairs-roomy-${ctx.engine.flavour}-${ctx.engine.version}.jsonl`);
      const roomy = await dedupIndex(ctx.client, { index, compare: { minSimilarity: THRESHOLD }, output: { dryRun: true, pairsFile: roomyFile }, state: { full: true } });
      const spillDir = mkdtempSync(path.join(tmp, 'spill-'));
      const spilledFile = path.join(tmp, `${name}-pairs-spilled-${ctx.engine.flavour}-${ctx.engine.version}.jsonl`);
      // A cache of half the index: the signatures go to disk, in a folder of the spill's own, removed at the end.
      const spilled = await dedupIndex(ctx.client, { index, compare: { minSimilarity: THRESHOLD }, output: { dryRun: true, pairsFile: spilledFile }, state: { full: true }, limits: { maxCachedSignatures: Math.floor(docs.length / 2), spillDir } });
      expect(spilled.top).toEqual(roomy.top);
      expect([spilled.clusters, spilled.duplicates, spilled.verifiedPairs, spilled.candidatePairs]).toEqual([roomy.clusters, roomy.duplicates, roomy.verifiedPairs, roomy.candidatePairs]);
      expect(spilled.canonicalSimilarity).toEqual(roomy.canonicalSimilarity);
      expect(pairsOf(spilledFile)).toEqual(pairsOf(roomyFile));
      expect(readdirSync(spillDir)).toEqual([]);
    });

    it('writes the same cluster fields with the clusters of a few documents held in memory (--max-cached-members) as with all of them', async () => {
      const fieldsOf = async (target: string) => {
        const response = await ctx.client.search(target, { size: 1000, _source: ['near_dup.cluster_id', 'near_dup.duplicate_of', 'near_dup.is_canonical', 'near_dup.cluster_size', 'near_dup.max_similarity', 'near_dup.canonical_similarity', 'near_dup.best_match'] });
        return new Map(response.hits.hits.map((h) => [h._id, h._source as Record<string, unknown>]));
      };
      const [roomy, tight] = [await annotatedIndex('dedup-members-roomy'), await annotatedIndex('dedup-members-tight')];
      const spillDir = mkdtempSync(path.join(tmp, 'spill-members-'));
      const common = { compare: { minSimilarity: THRESHOLD, canonical: 'oldest', dateField: 'date' }, limits: { maxCachedSignatures: Math.floor(docs.length / 2), spillDir } } as const;
      // The roomy run holds everything in memory (signatures, ids, rows, clusters, the ids written); the tight
      // one spills its signatures and ids, writes its rows past 3 and keeps its clusters and ids written on disk.
      const all = await dedupIndex(ctx.client, withDedupOptions({ index: roomy, ...common }, { limits: { maxCachedSignatures: 100_000 }, state: { stateFile: stateOf(roomy) } }));
      const few = await dedupIndex(ctx.client, withDedupOptions({ index: tight, ...common }, { state: { stateFile: stateOf(tight) }, limits: { maxCachedMembers: 3 } }));
      expect(all.clusters).toBeGreaterThan(0);
      expect([few.clusters, few.duplicates, few.verifiedPairs, few.candidatePairs, few.written, few.complete]).toEqual([all.clusters, all.duplicates, all.verifiedPairs, all.candidatePairs, all.written, true]);
      expect(await fieldsOf(tight)).toEqual(await fieldsOf(roomy));
      // Cluster fields planted on a document in no cluster: a full run again clears them (the clustered ids,
      // on disk in the tight run, in memory in the roomy one, say it is not one of theirs) and keeps every
      // other document's.
      const outside = [...(await fieldsOf(roomy))].find(([, source]) => !(source.near_dup as { cluster_id?: string } | undefined)?.cluster_id)?.[0];
      if (!outside) throw new Error('every document of the corpus is in a cluster: none to plant fields on');
      for (const target of [roomy, tight]) {
        await ctx.client.request('POST', `/${target}/_update/${encodeURIComponent(outside)}`, { doc: { near_dup: { cluster_id: 'planted', cluster_size: 9 } } }, { refresh: 'true' });
      }
      const [allAgain, fewAgain] = [await dedupIndex(ctx.client, withDedupOptions({ index: roomy, ...common }, { limits: { maxCachedSignatures: 100_000 }, state: { stateFile: stateOf(roomy), full: true } })), await dedupIndex(ctx.client, withDedupOptions({ index: tight, ...common }, { state: { stateFile: stateOf(tight), full: true }, limits: { maxCachedMembers: 3 } }))];
      expect([fewAgain.cleared, fewAgain.complete, allAgain.cleared]).toEqual([1, true, 1]);
      expect(await fieldsOf(tight)).toEqual(await fieldsOf(roomy));
      expect(readdirSync(spillDir)).toEqual([]);
    });

    it('a library run that fails once its signatures are spilled leaves nothing in the spill folder', async () => {
      const spillDir = mkdtempSync(path.join(tmp, 'spill-failed-'));
      const failing = dedupIndex(ctx.client, {
        index,
        compare: { minSimilarity: THRESHOLD },
        output: { dryRun: true },
        state: { full: true },
        limits: { maxCachedSignatures: Math.floor(docs.length / 2), spillDir },
        onProgress: (p) => {
          if (p.stage === 'bands' && p.done === 1) throw new Error('stopped by the caller after the first band');
        },
      });
      await expect(failing).rejects.toThrow('stopped by the caller after the first band');
      expect(readdirSync(spillDir)).toEqual([]);
    });

    it('--clusters components writes clusters equal to the connected components of the verified pairs, with the oldest as canonical', async () => {
      const index = await annotatedIndex('dedup-components');
      const { pairs } = await fullRun(index, 'components');
      const uf = new UnionFind();
      for (const p of pairs) uf.union(p.a, p.b);
      const components = uf.groups().map((g) => g.sort().join(','));
      const stored = await sources(ctx.client, index);
      const byCluster = new Map<string, string[]>();
      for (const [id, source] of stored) {
        const cluster = source.near_dup?.cluster_id;
        if (!cluster) continue;
        byCluster.set(cluster, [...(byCluster.get(cluster) ?? []), id]);
      }
      expect([...byCluster.values()].map((m) => m.sort().join(',')).sort()).toEqual(components.sort());
      for (const members of byCluster.values()) {
        const canon = members.filter((id) => stored.get(id)!.near_dup.is_canonical);
        expect(canon).toHaveLength(1);
        const oldest = [...members].sort((a, b) => Date.parse(stored.get(a)!.date) - Date.parse(stored.get(b)!.date) || (a < b ? -1 : 1))[0];
        expect(canon[0]).toBe(oldest);
        for (const id of members) {
          const nd = stored.get(id)!.near_dup;
          expect(nd.cluster_size).toBe(members.length);
          expect(nd.duplicate_of ?? null).toBe(id === oldest ? null : oldest);
          expect(nd.max_similarity).toBeGreaterThanOrEqual(THRESHOLD);
          expect(nd.canonical_similarity ?? null).toBe(id === oldest ? null : estimateOf(id, oldest));
        }
      }
    });

    it('by default every duplicate is within the bar of the canonical duplicate_of names, says how near, and stays in its family', async () => {
      const index = await annotatedIndex('dedup-centres');
      const { summary, pairs } = await fullRun(index);
      expect(summary.clusterMethod).toBe('centres');
      const families = new UnionFind();
      for (const p of pairs) families.union(p.a, p.b);
      expect(summary.families).toBe(families.groups().length);
      const stored = await sources(ctx.client, index);
      const byCluster = new Map<string, string[]>();
      for (const [id, source] of stored) {
        const cluster = source.near_dup?.cluster_id;
        if (cluster) byCluster.set(cluster, [...(byCluster.get(cluster) ?? []), id]);
      }
      // Besides the clusters, the documents whose near-duplicates all went with other canonicals (a copy
      // stays with its copy): canonicals of their own, cluster_size 1.
      const alone = [...byCluster].filter(([, members]) => members.length === 1);
      expect(byCluster.size).toBe(summary.clusters + summary.alone);
      expect(alone.length).toBe(summary.alone);
      for (const [cluster] of alone) expect(stored.get(cluster)!.near_dup.cluster_size).toBe(1);
      let duplicates = 0;
      for (const [cluster, members] of byCluster) {
        if (members.length === 1) continue;
        const canonical = members.filter((id) => stored.get(id)!.near_dup.is_canonical);
        expect(canonical).toEqual([cluster]);
        const oldest = [...members].sort((a, b) => Date.parse(stored.get(a)!.date) - Date.parse(stored.get(b)!.date) || (a < b ? -1 : 1))[0];
        for (const id of members) {
          const nd = stored.get(id)!.near_dup;
          expect(nd.cluster_size).toBe(members.length);
          expect(families.find(id)).toBe(families.find(cluster));
          if (id === cluster) continue;
          duplicates++;
          expect(nd.duplicate_of).toBe(cluster);
          expect(nd.canonical_similarity).toBe(estimateOf(id, cluster));
          expect(nd.canonical_similarity).toBeGreaterThanOrEqual(THRESHOLD);
          expect(cluster).toBe(oldest);
        }
      }
      expect(duplicates).toBe(summary.duplicates);
      expect(summary.canonicalSimilarity.min).toBeGreaterThanOrEqual(THRESHOLD);
    });

    it('a re-run after new documents were annotated revisits only their neighbourhood and adds them to clusters', async () => {
      const index = await annotatedIndex('dedup-new');
      const { pairs } = await fullRun(index);
      const member = pairs[0].a;
      const original = docs.find((d) => d.id === member)!;
      const copyId = `${member}-copy`;
      await ctx.client.request('PUT', `/${index}/_doc/${encodeURIComponent(copyId)}`, { ...original, id: copyId, date: '2030-01-01T00:00:00+00:00', text: `${original.text}\nOne more line.` }, { refresh: 'true' });
      const annotated = await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      expect(annotated.annotated).toBe(1);
      const summary = await dedupIndex(ctx.client, { index, compare: { minSimilarity: THRESHOLD, canonical: 'oldest', dateField: 'date' }, state: { stateFile: stateOf(index) } });
      expect(summary).toMatchObject({ mode: 'incremental', newDocuments: 1 });
      const stored = await sources(ctx.client, index);
      const cluster = stored.get(member)!.near_dup.cluster_id;
      expect(stored.get(copyId)!.near_dup.cluster_id).toBe(cluster);
      const members = [...stored.entries()].filter(([, s]) => s.near_dup?.cluster_id === cluster).map(([id]) => id);
      for (const id of members) expect(stored.get(id)!.near_dup.cluster_size).toBe(members.length);
      // A full run agrees with what the incremental one left.
      const before = clusterMembership(stored);
      const full = await dedupIndex(ctx.client, { index, compare: { minSimilarity: THRESHOLD, canonical: 'oldest', dateField: 'date' }, state: { full: true, stateFile: stateOf(index) } });
      expect(full.mode).toBe('full');
      expect(clusterMembership(await sources(ctx.client, index))).toEqual(before);
    });

    it('an index deleted and made again under the same name is deduplicated whole, not as a re-run', async () => {
      const index = await annotatedIndex('dedup-remade');
      await fullRun(index);
      await ctx.client.deleteIndex(index);
      await indexDocuments(ctx.client, index, docs);
      await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      const again = await dedupIndex(ctx.client, { index, compare: { minSimilarity: THRESHOLD, canonical: 'oldest', dateField: 'date' }, state: { stateFile: stateOf(index) } });
      expect(again.mode).toBe('full');
      const next = await dedupIndex(ctx.client, { index, compare: { minSimilarity: THRESHOLD, canonical: 'oldest', dateField: 'date' }, state: { stateFile: stateOf(index) } });
      expect(next.mode).toBe('incremental');
    });

    it('a re-run after documents change updates the clusters and clears documents that left them', async () => {
      const index = await annotatedIndex('dedup-changed');
      const { pairs } = await fullRun(index);
      const clustered = pairs[0].b;
      // Replace the text of one clustered document by something unrelated, annotate again, dedup again.
      await ctx.client.request('POST', `/${index}/_update/${encodeURIComponent(clustered)}`, { doc: { text: 'an entirely different text about gardening, tomatoes and rain' } }, { refresh: 'true' });
      const again = await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      expect(again.annotated).toBe(1);
      const summary = await dedupIndex(ctx.client, { index, compare: { minSimilarity: THRESHOLD, canonical: 'oldest', dateField: 'date' }, state: { stateFile: stateOf(index) } });
      const stored = await sources(ctx.client, index);
      expect(summary.mode).toBe('incremental');
      expect(summary.top.some((c) => c.members.includes(clustered))).toBe(false);
      expect(stored.get(clustered)!.near_dup.cluster_id ?? null).toBeNull();
      expect(summary.cleared).toBeGreaterThanOrEqual(1);
    });
  });
}

/**
 * A chain of documents in one large bucket: neighbours share 70% of their MinHash values, documents two
 * apart about 40%, three apart 10%. Its verified pairs form a path, so the whole chain is one cluster, and
 * no member is within the threshold of every other: a bucket verified only against representatives
 * breaks it apart.
 */
function chainDocuments(length: number): Array<{ id: string; values: Uint32Array }> {
  return Array.from({ length }, (_, i) => ({
    id: `chain-${String(i).padStart(2, '0')}`,
    values: Uint32Array.from({ length: 128 }, (_, p) => p * 1000 + Math.floor((3 * i + (p % 10)) / 10)),
  }));
}

forEachEngine('dedup of a large bucket', (ctx) => {
  const index = ctx.index('chain');
  // Indexed in an order that puts no two neighbours side by side.
  const chain = chainDocuments(40);
  const order = [...chain.filter((_, i) => i % 2 === 0), ...chain.filter((_, i) => i % 2 === 1).reverse()];

  beforeAll(async () => {
    // One key shared by the whole chain; every other band key is the document's own.
    await indexSignatures(ctx.client, index, order.map((d) => ({ ...d, shared: '0_chain' })));
  });

  it('joins every pair of members that passes verification, whatever their order in the bucket', async () => {
    const jaccard = (a: Uint32Array, b: Uint32Array) => a.filter((v, i) => v === b[i]).length / a.length;
    // Brute force over the signatures: the pairs at or above the threshold, and their components.
    const expected = new UnionFind();
    let similar = 0;
    for (let i = 0; i < chain.length; i++) {
      for (let j = i + 1; j < chain.length; j++) {
        if (jaccard(chain[i].values, chain[j].values) >= THRESHOLD) {
          similar++;
          expected.union(chain[i].id, chain[j].id);
        }
      }
    }
    expect(expected.groups()).toHaveLength(1);
    expect(jaccard(chain[0].values, chain[2].values)).toBeLessThan(THRESHOLD);
    const pairsFile = path.join(tmp, `pairs-chain-${ctx.engine.flavour}-${ctx.engine.version}.jsonl`);
    const summary = await dedupIndex(ctx.client, { index, compare: { minSimilarity: THRESHOLD, clusters: 'components' }, state: { full: true }, output: { dryRun: true, pairsFile } });
    expect(summary.clusters).toBe(1);
    expect(summary.top[0].size).toBe(chain.length);
    // Only what joins clusters is verified: fewer comparisons than all pairs, and every reported pair real.
    const pairs: DedupPair[] = readFileSync(pairsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(pairs.length).toBeGreaterThanOrEqual(chain.length - 1);
    expect(pairs.length).toBeLessThanOrEqual(similar);
    for (const p of pairs) expect(p.jaccard).toBeGreaterThanOrEqual(THRESHOLD);
  });

  it('by default cuts the chain into clusters whose every duplicate is within the bar of its canonical, the family whole', async () => {
    const summary = await dedupIndex(ctx.client, { index, compare: { minSimilarity: THRESHOLD }, state: { full: true }, output: { dryRun: true } });
    expect([summary.families, summary.largestFamily]).toEqual([1, chain.length]);
    expect(summary.clusters).toBeGreaterThan(5);
    expect(summary.canonicalSimilarity.min).toBeGreaterThanOrEqual(THRESHOLD);
    for (const c of summary.top) expect(c.family).toBe(summary.top[0].family);
  });
});

forEachEngine('dedup of a band key held by more documents than one bucket verifies', (ctx) => {
  const index = ctx.index('copies');
  const { copies, family, docs } = largeKeyCorpus();

  beforeAll(async () => {
    await indexSignatures(ctx.client, index, docs);
  });

  it('verifies it a chunk at a time and still joins every copy, however many chunks there are, in memory or partition by partition', async () => {
    for (const [bucketChunk, maxCachedSignatures] of [undefined, 16, 5].flatMap((c) => [[c, undefined], [c, 10]])) {
      const pairsFile = path.join(tmp, `pairs-large-${ctx.engine.flavour}-${ctx.engine.version}-${bucketChunk}-${maxCachedSignatures}.jsonl`);
      const summary = await dedupIndex(ctx.client, { index, compare: { minSimilarity: THRESHOLD }, state: { full: true }, output: { dryRun: true, pairsFile }, limits: { bucketChunk, maxCachedSignatures } });
      expect(summary.clusters).toBe(3);
      expect(summary.top.map((c) => c.size)).toEqual([copies.length, family.length, 2]);
      expect(summary.top[0].members.every((id) => id.startsWith('copy-'))).toBe(true);
      expect(summary.top[2].members.sort()).toEqual(['pair-a', 'pair-b']);
      const reported = readFileSync(pairsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(new Set(reported.map((p) => `${p.a}|${p.b}`)).size).toBe(reported.length); // none twice
    }
  });
});

function clusterMembership(stored: Map<string, Record<string, any>>): string[] {
  const byCluster = new Map<string, string[]>();
  for (const [id, source] of stored) {
    const cluster = source.near_dup?.cluster_id;
    if (cluster) byCluster.set(cluster, [...(byCluster.get(cluster) ?? []), id]);
  }
  return [...byCluster.values()].map((m) => m.sort().join(',')).sort();
}
