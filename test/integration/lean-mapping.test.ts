// The band keys are mapped without doc values. An index near-dup mapped before, with doc values on them,
// keeps working as it is: init takes it (and adds only what it lacks, silently), annotate, dedup (full and
// incremental) and similar (Jaccard, SimHash, containment) give the same answers there as on an index of the
// current mapping. On the current one the engine itself refuses any sort or aggregation on the band keys, so
// every command that passes there needs no doc values on them.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it, vi } from 'vitest';
import yargs from 'yargs';
import { initCommand } from '../../src/cli/commands/init.js';
import type { EngineClient } from '../../src/engine/client.js';
import { EngineResponseError } from '../../src/engine/client.js';
import { initIndex } from '../../src/indices/init.js';
import { createIndexBody } from '../../src/indices/mapping.js';
import { UsageError } from '../../src/errors.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { dedupIndex } from '../../src/jobs/dedup.js';
import { findSimilar } from '../../src/jobs/similar.js';
import { fixtureSample } from '../support/corpus.js';
import { indexDocuments, sourcesById } from '../support/documents.js';
import { type EngineContext, forEachEngine } from './harness.js';

const docs = fixtureSample(14, { seed: 33 });
const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-lean-'));
const USER_FIELDS = { text: { type: 'text' }, date: { type: 'date' }, family: { type: 'keyword' } };
/** Fields later versions of near-dup added: an older index lacks them until init adds them. */
const ADDED_SINCE = ['canonical_similarity', 'contained_in', 'max_containment'];

/**
 * The mapping near-dup gave indices before the band keys lost their doc values (keyword with doc values,
 * the engines' default), without the fields added since.
 */
function olderMapping() {
  const body = createIndexBody('near_dup') as { mappings: { properties: { near_dup: { properties: Record<string, unknown> } } } };
  const fields = { ...body.mappings.properties.near_dup.properties, bands: { type: 'keyword' } };
  for (const name of ADDED_SINCE) delete (fields as Record<string, unknown>)[name];
  return { mappings: { properties: { ...USER_FIELDS, near_dup: { type: 'object', properties: fields } } } };
}

/** The band keys' mapping as the engine holds it (every parameter, defaults included). */
async function bandsMapping(client: EngineClient, index: string): Promise<Record<string, unknown>> {
  const answer = await client.request<Record<string, any>>('GET', `/${index}/_mapping/field/near_dup.bands`, undefined, { include_defaults: 'true' });
  return answer[index].mappings['near_dup.bands'].mapping.bands;
}

/** `near-dup init ...` in-process: what it printed on stdout and on stderr. */
async function runInit(ctx: EngineContext, args: string[]): Promise<{ stdout: string; stderr: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => out.push(String(chunk)) > 0);
  const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => err.push(String(chunk)) > 0);
  try {
    await yargs(['init', '--url', ctx.engine.url, ...args])
      .command(initCommand as never)
      .strict()
      .fail((msg, e) => {
        throw e ?? new UsageError(msg);
      })
      .parseAsync();
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
  return { stdout: out.join(''), stderr: err.join('') };
}

/** Each document's cluster as the set of its members, by id (the cluster fields as written). */
function clusters(stored: Map<string, Record<string, any>>): Record<string, { canonical: string; members: string[]; similarity?: number }> {
  const byCluster = new Map<string, string[]>();
  for (const [id, s] of stored) if (s.near_dup?.cluster_id) byCluster.set(s.near_dup.cluster_id, [...(byCluster.get(s.near_dup.cluster_id) ?? []), id]);
  const out: Record<string, { canonical: string; members: string[]; similarity?: number }> = {};
  for (const [id, s] of stored) {
    const nd = s.near_dup ?? {};
    if (!nd.cluster_id) continue;
    out[id] = { canonical: nd.duplicate_of ?? id, members: (byCluster.get(nd.cluster_id) ?? []).sort(), similarity: nd.canonical_similarity };
  }
  return out;
}

forEachEngine('the band keys without doc values, and indices mapped with them', (ctx) => {
  const lean = ctx.index('lean');
  const older = ctx.index('older');
  const both = [lean, older];
  const stateOf = (index: string) => path.join(tmp, `state-${index}.json`);
  const dedup = (index: string, full: boolean) => dedupIndex(ctx.client, { index, compare: { minSimilarity: 0.5, canonical: 'oldest', dateField: 'date' }, state: { full, stateFile: stateOf(index) } });

  beforeAll(async () => {
    await ctx.client.createIndex(lean, { mappings: { properties: USER_FIELDS } });
    await ctx.client.createIndex(older, olderMapping());
  });

  it('init maps the band keys of a new index without doc values, and takes the older index as it is, adding only what it lacks, without a warning', async () => {
    expect(await initIndex(ctx.client, lean, 'near_dup')).toMatchObject({ action: 'updated' });
    expect(await bandsMapping(ctx.client, lean)).toMatchObject({ type: 'keyword', doc_values: false, index: true });

    const first = await runInit(ctx, ['--index', older]);
    expect(first.stderr).toBe('');
    expect(first.stdout).toMatch(new RegExp(`added ${ADDED_SINCE.length} near_dup fields`));
    expect(first.stdout).not.toMatch(/doc.values|warn|reindex/i);
    const second = await runInit(ctx, ['--index', older]);
    expect(second).toEqual({ stdout: expect.stringMatching(/already has the near_dup fields; nothing to change/), stderr: '' });
    // The band keys of the older index keep their doc values: near-dup never asks to change them.
    expect(await bandsMapping(ctx.client, older)).toMatchObject({ type: 'keyword', doc_values: true });
    const added = (await ctx.client.getMapping(older))[older].mappings.properties.near_dup.properties;
    for (const name of ADDED_SINCE) expect(added[name], name).toBeDefined();
  });

  it('annotate signs both the same way', async () => {
    for (const index of both) {
      await indexDocuments(ctx.client, index, docs);
      const summary = await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      expect(summary, index).toMatchObject({ annotated: docs.length, complete: true });
    }
    const [a, b] = await Promise.all(both.map((index) => sourcesById(ctx.client, index)));
    for (const [id, source] of a) expect(source.near_dup.bands, id).toEqual(b.get(id)?.near_dup.bands);
  });

  it('similar finds the same documents in both, by MinHash, by SimHash and by containment', async () => {
    const queries = [...new Set(docs.map((d) => d.family))].map((family) => docs.find((d) => d.family === family)!.id).slice(0, 6);
    let found = 0;
    for (const id of queries) {
      for (const lookup of [{ method: 'minhash' as const }, { method: 'simhash' as const, maxDistance: 7 }, { measure: 'containment' as const }]) {
        const [a, b] = await Promise.all(both.map((index) => findSimilar(ctx.client, { index, id, minSimilarity: 0.3, limit: 100, ...lookup })));
        const hits = (r: typeof a) => r.hits.map(({ index: _index, ...h }) => JSON.stringify(h)).sort();
        expect(hits(b), `${id} ${JSON.stringify(lookup)}`).toEqual(hits(a));
        found += a.hits.length;
      }
    }
    expect(found).toBeGreaterThan(5);
  });

  it('dedup --full gives both the same clusters, and a re-run after a new document the same incremental answer', async () => {
    const [a, b] = await Promise.all(both.map((index) => dedup(index, true)));
    for (const s of [a, b]) expect(s).toMatchObject({ mode: 'full', complete: true, damaged: 0 });
    expect(a.verifiedPairs).toBeGreaterThan(3);
    const facts = (s: typeof a) => [s.documents, s.verifiedPairs, s.clusters, s.duplicates, s.largestCluster];
    expect(facts(b)).toEqual(facts(a));
    const [ca, cb] = await Promise.all(both.map(async (index) => clusters(await sourcesById(ctx.client, index))));
    expect(Object.keys(ca).length).toBeGreaterThan(3);
    expect(cb).toEqual(ca);

    // A near copy of a clustered document, annotated, then a plain re-run: the incremental pass finds its
    // neighbours by a terms query on the band keys.
    const member = Object.entries(ca).find(([, c]) => c.members.length > 1)![0];
    const original = docs.find((d) => d.id === member)!;
    const copy = { ...original, id: `${member}-copy`, date: '2030-01-01T00:00:00Z', text: `${original.text}\nOne more line.` };
    for (const index of both) {
      await indexDocuments(ctx.client, index, [copy]);
      expect((await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } })).annotated).toBe(1);
    }
    const [ia, ib] = await Promise.all(both.map((index) => dedup(index, false)));
    for (const s of [ia, ib]) expect(s).toMatchObject({ mode: 'incremental', newDocuments: 1 });
    const [after, afterOlder] = await Promise.all(both.map(async (index) => clusters(await sourcesById(ctx.client, index))));
    expect(after[copy.id]?.members).toContain(member);
    expect(afterOlder).toEqual(after);
  });

  it('the current index has no doc values to sort or aggregate the band keys by (so nothing above used them); the older one still has them', async () => {
    const byBands = { size: 0, aggs: { keys: { terms: { field: 'near_dup.bands', size: 1 } } } };
    const refused = await ctx.client.search(lean, byBands).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(EngineResponseError);
    expect((refused as EngineResponseError).statusCode).toBe(400);
    const held = await ctx.client.search(older, byBands);
    expect(held.aggregations?.keys.buckets.length).toBe(1);
    // Found by the inverted index all the same.
    const key = (await sourcesById(ctx.client, lean)).get(docs[0].id)!.near_dup.bands[0];
    const hits = await ctx.client.search(lean, { size: 10, query: { term: { 'near_dup.bands': key } } });
    expect(hits.hits.hits.map((h) => h._id)).toContain(docs[0].id);
  });
});
