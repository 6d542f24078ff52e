// dedup on chains built to drift, against real engines: real license texts, each edited again and again
// (every version a near-duplicate of the one before, the first and the last far apart), annotated as
// users annotate. By default every duplicate is within --min-similarity of the canonical it names, however
// the run finds its pairs (in memory, partition by partition, incrementally); --clusters components keeps
// every chain whole.
import { createRequire } from 'node:module';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import type { EngineClient } from '../../src/engine/client.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { type DedupOptions, dedupIndex } from '../../src/jobs/dedup.js';
import { withDedupOptions } from '../support/dedup-options.js';
import { createSigner } from '../../src/signature.js';
import { editText, seededRandom } from '../support/corpus.js';
import { indexDocuments, sourcesById } from '../support/documents.js';
import { exactJaccardOf } from '../support/jaccard.js';
import { forEachEngine } from './harness.js';

const BAR = 0.5;
const CHAINS = 3;
const VERSIONS = 12;
const signer = createSigner();
const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-chains-'));

interface Version {
  id: string;
  chain: number;
  date: string;
  text: string;
}

const random = seededRandom(27);
/** Words no license uses: each edit brings tokens of its own, so the versions drift apart step by step. */
const vocabulary = Array.from({ length: 20_000 }, (_, k) => `drift${k}`);
const edit = (text: string) => editText(text, 0.06, random, vocabulary);
const day = (n: number) => new Date(Date.UTC(2020, 0, 1 + n)).toISOString();

function driftingChains(): Version[] {
  const require = createRequire(import.meta.url);
  const full = require('spdx-license-list/spdx-full.json') as Record<string, { licenseText: string }>;
  const long = Object.entries(full)
    .filter(([, l]) => l.licenseText.length > 6000 && l.licenseText.length < 20_000)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  const chosen = Array.from({ length: CHAINS }, (_, c) => long[Math.floor((c * long.length) / CHAINS)]);
  return chosen.flatMap(([, license], chain) => {
    let text = license.licenseText;
    return Array.from({ length: VERSIONS }, (_, v) => {
      if (v > 0) text = edit(text);
      return { id: `c${chain}-v${String(v).padStart(2, '0')}`, chain, date: day(chain * 100 + v + 10), text };
    });
  });
}

const versions = driftingChains();
const minhashes = new Map(versions.map((d) => [d.id, signer(d.text).minhash]));

/** The MinHash estimate, as dedup computes it from the stored signatures. */
function estimate(a: string, b: string): number {
  const x = minhashes.get(a) ?? signer(extra.get(a)!).minhash;
  const y = minhashes.get(b) ?? signer(extra.get(b)!).minhash;
  return x.filter((v, i) => v === y[i]).length / x.length;
}
/** Texts of documents added by a test. */
const extra = new Map<string, string>();

type Stored = Map<string, Record<string, any>>;

/** Each document's cluster fields, to compare two runs. */
function clusterFields(stored: Stored): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const [id, s] of stored) {
    const nd = s.near_dup ?? {};
    out[id] = [nd.cluster_id, nd.duplicate_of, nd.is_canonical, nd.cluster_size, nd.canonical_similarity];
  }
  return out;
}

/** Every duplicate within the bar of its canonical, with that similarity; each canonical the oldest of its cluster. */
function expectNearTheirCanonicals(stored: Stored): void {
  const members = new Map<string, string[]>();
  for (const [id, s] of stored) if (s.near_dup?.cluster_id) members.set(s.near_dup.cluster_id, [...(members.get(s.near_dup.cluster_id) ?? []), id]);
  for (const [cluster, ids] of members) {
    expect(stored.get(cluster)!.near_dup.is_canonical).toBe(true);
    const oldest = [...ids].sort((a, b) => Date.parse(stored.get(a)!.date) - Date.parse(stored.get(b)!.date))[0];
    expect(cluster).toBe(oldest);
    for (const id of ids) {
      const nd = stored.get(id)!.near_dup;
      expect(nd.cluster_size).toBe(ids.length);
      if (id === cluster) continue;
      expect(nd.duplicate_of).toBe(cluster);
      expect(nd.is_canonical).toBe(false);
      expect(nd.canonical_similarity, `${id} -> ${cluster}`).toBe(estimate(id, cluster));
      expect(nd.canonical_similarity).toBeGreaterThanOrEqual(BAR);
    }
  }
}

it('the chains drift: each version near the one before, the first and the last far apart', () => {
  const exact = exactJaccardOf(signer, versions);
  for (let c = 0; c < CHAINS; c++) {
    const id = (v: number) => `c${c}-v${String(v).padStart(2, '0')}`;
    for (let v = 1; v < VERSIONS; v++) expect(exact(id(v - 1), id(v)), id(v)).toBeGreaterThanOrEqual(0.6);
    expect(exact(id(0), id(VERSIONS - 1))).toBeLessThan(0.35);
  }
});

forEachEngine('dedup of chains that drift', (ctx) => {
  const stateOf = (index: string) => path.join(tmp, `state-${index}.json`);
  const run = (index: string, options: Partial<DedupOptions> = {}) =>
    dedupIndex(ctx.client, withDedupOptions({ index, compare: { minSimilarity: BAR, canonical: 'oldest', dateField: 'date' }, state: { stateFile: stateOf(index) } }, options));

  /** A new index of the chains, annotated. */
  async function chainsIndex(label: string): Promise<string> {
    const index = ctx.index(label);
    await indexDocuments(ctx.client, index, versions);
    await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
    return index;
  }

  /** Adds documents, or changes the text of those there (a partial update, as the other fields stay), and annotates them. */
  async function put(client: EngineClient, index: string, docs: Version[]): Promise<void> {
    for (const d of docs) extra.set(d.id, d.text);
    const there = new Set((await client.search(index, { size: docs.length, query: { ids: { values: docs.map((d) => d.id) } }, _source: false })).hits.hits.map((h) => h._id));
    await indexDocuments(client, index, docs.filter((d) => !there.has(d.id)));
    for (const d of docs.filter((d) => there.has(d.id))) await client.request('POST', `/${index}/_update/${encodeURIComponent(d.id)}`, { doc: { text: d.text } }, { refresh: 'true' });
    const annotated = await annotateIndex(client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
    expect(annotated.annotated).toBe(docs.length);
  }

  let shared: string;
  beforeAll(async () => {
    shared = await chainsIndex('chains');
  });

  it('cuts each chain into clusters whose every duplicate is within the bar of its canonical', async () => {
    const summary = await run(shared, { state: { full: true } });
    expect(summary).toMatchObject({ clusterMethod: 'centres', families: CHAINS, largestFamily: VERSIONS, complete: true });
    expect(summary.clusters).toBeGreaterThan(CHAINS);
    const stored = await sourcesById(ctx.client, shared);
    expectNearTheirCanonicals(stored);
    for (let c = 0; c < CHAINS; c++) expect(stored.get(`c${c}-v00`)!.near_dup.is_canonical).toBe(true);
    expect(summary.canonicalSimilarity.min).toBeGreaterThanOrEqual(BAR);
  });

  it('every version carries cluster fields and names its best match; one whose near-duplicates all went to other canonicals is a canonical of its own', async () => {
    const summary = await run(shared, { state: { full: true } });
    const stored = await sourcesById(ctx.client, shared);
    let alone = 0;
    for (const d of versions) {
      const nd = stored.get(d.id)!.near_dup;
      expect(typeof nd.cluster_id, d.id).toBe('string');
      expect(nd.max_similarity, d.id).toBeGreaterThanOrEqual(BAR);
      expect(estimate(d.id, nd.best_match), d.id).toBe(nd.max_similarity);
      if (nd.cluster_size !== 1) continue;
      alone++;
      expect([nd.cluster_id, nd.is_canonical, nd.duplicate_of, nd.canonical_similarity], d.id).toEqual([d.id, true, null, null]);
    }
    expect(summary.alone).toBe(alone);
    expect(summary.complete).toBe(true);
  });

  it('--clusters components keeps every chain whole, its first version the canonical, the drift in canonical_similarity', async () => {
    const index = await chainsIndex('chains-components');
    const summary = await run(index, { compare: { clusters: 'components' } });
    expect(summary).toMatchObject({ clusters: CHAINS, largestCluster: VERSIONS, complete: true });
    const stored = await sourcesById(ctx.client, index);
    for (const d of versions) {
      const nd = stored.get(d.id)!.near_dup;
      expect(nd.cluster_id).toBe(`c${d.chain}-v00`);
      expect(nd.cluster_size).toBe(VERSIONS);
    }
    expect(stored.get(`c0-v${VERSIONS - 1}`)!.near_dup.canonical_similarity).toBeLessThan(BAR);
    // Back to the default: the chains are cut again, and what no longer holds is cleared.
    const again = await run(index, { state: { full: true } });
    expect(again.complete).toBe(true);
    expectNearTheirCanonicals(await sourcesById(ctx.client, index));
  });

  it('the same clusters with the signatures in memory and spilled to disk (a cache far smaller than the index)', async () => {
    const summaryOf = async (options: Partial<DedupOptions>) => {
      const { clusters, duplicates, top, canonicalSimilarity, families } = await run(shared, withDedupOptions({ state: { full: true }, output: { dryRun: true } }, options));
      return { clusters, duplicates, top, canonicalSimilarity, families };
    };
    const inMemory = await summaryOf({});
    expect(await summaryOf({ limits: { maxCachedSignatures: 10 } })).toEqual(inMemory);
    expect(await summaryOf({ limits: { maxCachedSignatures: 10, bucketChunk: 4 } })).toEqual(await summaryOf({ limits: { bucketChunk: 4 } }));
  });

  it('a re-run after a version older than a chain, a newer one and a rewritten one leaves what a full run does', async () => {
    const index = await chainsIndex('chains-incremental');
    await run(index);
    // An older version of chain 0 (it becomes its canonical and shifts every cluster after it), a newer
    // version of chain 1, and the middle of chain 2 rewritten (the chain falls apart in two).
    const first = versions.find((d) => d.id === 'c0-v00')!;
    const last = versions.find((d) => d.id === `c1-v${VERSIONS - 1}`)!;
    await put(ctx.client, index, [
      { id: 'c0-older', chain: 0, date: day(0), text: edit(first.text) },
      { id: 'c1-newer', chain: 1, date: day(300), text: edit(last.text) },
      { id: 'c2-v06', chain: 2, date: versions.find((d) => d.id === 'c2-v06')!.date, text: 'a text about gardening, tomatoes and rain, nothing like a license' },
    ]);
    const incremental = await run(index);
    expect(incremental).toMatchObject({ mode: 'incremental', newDocuments: 3, complete: true });
    const left = clusterFields(await sourcesById(ctx.client, index));
    expect(left['c0-older'][2]).toBe(true);
    expect(left['c2-v06'][0] ?? null).toBeNull();
    expectNearTheirCanonicals(await sourcesById(ctx.client, index));
    const full = await run(index, { state: { full: true } });
    expect(full.mode).toBe('full');
    expect(clusterFields(await sourcesById(ctx.client, index))).toEqual(left);
  });

  it('a re-run whose families need more lookups than allowed runs in full, and says so', async () => {
    const index = await chainsIndex('chains-too-large');
    await run(index);
    await put(ctx.client, index, [{ id: 'c0-older', chain: 0, date: day(0), text: edit(versions[0].text) }]);
    const summary = await run(index, { limits: { maxFamilyLookups: 5 } });
    expect(summary).toMatchObject({ mode: 'full', complete: true });
    expect(summary.notes.join('\n')).toMatch(/needed \d+ lookups or more; this run is a full one instead/);
    expectNearTheirCanonicals(await sourcesById(ctx.client, index));
  });
});
