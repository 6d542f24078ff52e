// near-dup evaluate --truth-field on a real engine: a labelled corpus (licence texts with edited versions and
// quoted copies, each document's `source` its family; an alias copied under another source, and documents
// without a source), annotated and deduplicated, then evaluated from the command line. Every figure of the
// report is checked against one computed here from scratch: the shingles as strings, every pair compared.
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { normalizer } from '../../src/text/normalize.js';
import { fixtureSample } from '../support/corpus.js';
import { indexDocuments, runCli, sourcesById } from '../support/documents.js';
import { forEachEngine } from './harness.js';

const fixture = fixtureSample(14, { seed: 47 });
// An alias: a family's first text under a source of its own (nearly identical: one source to the truth).
// Two documents without a source: an exact copy of another text, and a text of its own.
const docs: Array<{ id: string; text: string; source?: string }> = [
  ...fixture.map((d) => ({ id: d.id, text: d.text, source: d.family })),
  { id: 'alias', text: `${fixture[0].text}\nSee also.`, source: 'alias-source' },
  { id: 'unlabelled-copy', text: fixture[3].text },
  { id: 'unlabelled-alone', text: fixture.map((d) => d.text.split(' ')[5]).join(' ') },
];

/** The figures, computed here without near-dup's scoring: string shingles, all pairs, union-find. */
function expected(clusterOf: Map<string, string | undefined>) {
  const norm = normalizer('norm-html');
  const sets = docs.map((d) => {
    const w = norm(d.text).split(/\s+/).filter(Boolean);
    return new Set(w.length <= 4 ? [w.join(' ')] : w.slice(3).map((_, i) => w.slice(i, i + 4).join(' ')));
  });
  const J = (a: number, b: number) => {
    let shared = 0;
    for (const s of sets[a]) if (sets[b].has(s)) shared++;
    return shared / (sets[a].size + sets[b].size - shared);
  };
  const parent = docs.map((_, i) => i);
  const root = (i: number): number => (parent[i] === i ? i : (parent[i] = root(parent[i])));
  const unite = (a: number, b: number) => (parent[root(a)] = root(b));
  const pairs: Array<[number, number, number]> = [];
  for (let a = 0; a < docs.length; a++) for (let b = a + 1; b < docs.length; b++) pairs.push([a, b, J(a, b)]);
  for (const [a, b, j] of pairs) if ((docs[a].source !== undefined && docs[a].source === docs[b].source) || j >= 0.9) unite(a, b);
  const cluster = (i: number) => clusterOf.get(docs[i].id);
  const together = (a: number, b: number) => cluster(a) !== undefined && cluster(a) === cluster(b);
  const inClusters = pairs.filter(([a, b]) => together(a, b));
  const recallPairs = pairs.filter(([a, b, j]) => root(a) === root(b) && j >= 0.7);
  const mustJoin = recallPairs.filter(([, , j]) => j >= 0.9);
  const clusters = new Map<string, number[]>();
  for (const [i] of docs.entries()) if (cluster(i) !== undefined) clusters.set(cluster(i)!, [...(clusters.get(cluster(i)!) ?? []), i]);
  const groupsIn = (list: number[]) => new Set(list.map(root)).size;
  // The largest; of two as large, the one that mixes more truth groups.
  const largest = [...clusters.values()].sort((x, y) => y.length - x.length || groupsIn(y) - groupsIn(x))[0];
  return {
    clusterPairs: inClusters.length,
    precision: inClusters.filter(([a, b]) => root(a) === root(b)).length / inClusters.length,
    recallPairs: recallPairs.length,
    recall: recallPairs.filter(([a, b]) => together(a, b)).length / recallPairs.length,
    split: new Set(mustJoin.filter(([a, b]) => !together(a, b)).map(([a]) => root(a))).size,
    splitOf: new Set(mustJoin.map(([a]) => root(a))).size,
    groups: new Set(docs.map((_, i) => root(i))).size,
    largest: { size: largest.length, groups: groupsIn(largest), sources: new Set(largest.map((i) => docs[i].source ?? docs[i].id)).size },
  };
}

forEachEngine('evaluate --truth-field', (ctx) => {
  const index = ctx.index('evaluate-truth');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-evaluate-truth-'));
  const evaluate = (...more: string[]) => runCli(['evaluate', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--truth-field', 'source', '--out', tmp, ...more]).done;

  beforeAll(async () => {
    await indexDocuments(ctx.client, index, docs);
    const summary = await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, state: { checkpointFile: path.join(tmp, 'cp.json') }, output: { prefix: 'near_dup', errorsFile: path.join(tmp, 'errors.jsonl') } });
    expect(summary.complete).toBe(true);
  });

  it('before dedup: one line that says to run dedup first', async () => {
    const run = await evaluate();
    expect(run.code).not.toBe(0);
    expect(run.stderr.trim().split('\n')).toHaveLength(1);
    expect(run.stderr).toContain(`run near-dup dedup --index ${index} first`);
  });

  it("after dedup: pair precision, recall, groups split and the largest cluster, as computed here from dedup's clusters", async () => {
    const dedup = await runCli(['dedup', '--url', ctx.engine.url, '--index', index, '--full']).done;
    expect(dedup.code, dedup.stderr).toBe(0);
    const clusterOf = new Map([...(await sourcesById(ctx.client, index))].map(([id, s]) => [id, s.near_dup?.cluster_id as string | undefined]));
    const want = expected(clusterOf);
    expect(want.clusterPairs).toBeGreaterThan(0);
    expect(want.splitOf).toBeGreaterThan(0);

    const run = await evaluate();
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(readFileSync(path.join(tmp, 'report.json'), 'utf8'));
    const s = report.scores;
    expect(s.precision).toBeCloseTo(want.precision, 9);
    expect(s.clusterPairs).toBe(want.clusterPairs);
    expect(s.recall).toBeCloseTo(want.recall, 9);
    expect(s.recallPairs).toBe(want.recallPairs);
    expect([s.split, s.splitOf]).toEqual([want.split, want.splitOf]);
    expect({ size: s.largest.size, groups: s.largest.groups, sources: s.largest.sources }).toEqual(want.largest);
    expect(report.documents.evaluated).toBe(docs.length);
    // The alias joins its family's group; the two documents without a source are counted and named.
    expect(report.truth.groups).toBe(want.groups);
    expect(report.truth.crossSourcePairsAtSameText).toBeGreaterThanOrEqual(2);
    expect(report.documents.withoutSource).toEqual({ count: 2, examples: expect.arrayContaining(['unlabelled-copy', 'unlabelled-alone']) });
    expect(run.stderr).toContain(`pair precision ${want.precision.toFixed(3)}: `);
    expect(run.stderr).toContain(`recall ${want.recall.toFixed(3)}: `);
    expect(run.stderr).toMatch(/2 documents have no single value of source, each its own source/);
    expect(JSON.parse(run.stdout)).toMatchObject({ index, truthField: 'source', precision: s.precision, recall: s.recall });
  });
});
