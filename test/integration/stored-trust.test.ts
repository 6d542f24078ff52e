// Trust in what is read back, on a real engine: stored signatures damaged the ways a hand edit, another
// version or a planted document damages them. dedup never takes the signature shape from one document
// (one such document read first used to clear every cluster); lookups, evaluate and the explorer leave a
// damaged document out, name it and go on; annotate signs it again without --force.
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { annotateDocument } from '../../src/annotation.js';
import { clusterMembers, MemberScrolls, similarTo } from '../../src/explore/queries.js';
import { initIndex } from '../../src/indices/init.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { findSimilar } from '../../src/jobs/similar.js';
import { serializeLeanMinhash } from '../../src/sketch/lean-minhash.js';
import { fixtureSample } from '../support/corpus.js';
import { runCliJson as cli } from '../support/documents.js';
import { forEachEngine } from './harness.js';

const docs = fixtureSample(12, { seed: 7 });
/** A family with several versions: its first is the query, the others its near-duplicates. */
const family = [...new Set(docs.map((d) => d.family))].map((f) => docs.filter((d) => d.family === f)).sort((a, b) => b.length - a.length)[0];
const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-trust-'));

/** The damage done to a stored signature, each as a partial update of near_dup, and what is said of it. */
const DAMAGE: Array<{ name: string; nearDup: (stored: Record<string, any>) => unknown }> = [
  { name: 'simhash not hex', nearDup: () => ({ simhash: 'zzzzzzzzzzzzzzzz' }) },
  { name: 'simhash as a list', nearDup: (s) => ({ simhash: [s.simhash, 'ffffffffffffffff'] }) },
  // The engine itself refuses what is not base64 in a binary field; bytes that are no LeanMinHash it keeps.
  { name: 'minhash of bytes that are no MinHash', nearDup: () => ({ minhash: Buffer.from('no minhash here').toString('base64') }) },
  { name: 'minhash of 64 values', nearDup: () => ({ minhash: Buffer.from(serializeLeanMinhash({ seed: 1, scheme: 'affine32', values: new Uint32Array(64) })).toString('base64') }) },
  { name: 'bands as numbers', nearDup: (s) => ({ bands: (s.bands as string[]).map((_, i) => i) }) },
  { name: 'negative token count', nearDup: () => ({ token_count: -3 }) },
];

forEachEngine('stored signatures read back damaged', (ctx) => {
  const index = ctx.index('trust');
  const damaged = family.slice(1, 1 + DAMAGE.length);
  const query = family[0];

  beforeAll(async () => {
    expect(family.length).toBeGreaterThanOrEqual(3);
    const lines = docs.flatMap((d) => [{ index: { _index: index, _id: d.id } }, { text: d.text }]);
    expect((await ctx.client.bulk(lines)).errors).toBe(false);
    await ctx.client.refresh(index);
    await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
    for (const [i, doc] of damaged.entries()) {
      const got = await ctx.client.get(index, doc.id, { _source_includes: 'near_dup' });
      const change = DAMAGE[i].nearDup((got?._source as any)?.near_dup);
      await ctx.client.request('POST', `/${index}/_update/${encodeURIComponent(doc.id)}`, { doc: { near_dup: change } });
    }
    await ctx.client.refresh(index);
  });

  it('similar by id, by text and by containment leaves the damaged candidates out, names them, and answers with the others', async () => {
    for (const lookup of [{ id: query.id }, { text: query.text }, { id: query.id, measure: 'containment' as const, minSimilarity: 0.3 }]) {
      const result = await findSimilar(ctx.client, { index, ...lookup, minSimilarity: lookup.minSimilarity ?? 0.1, limit: 100 });
      const ids = result.hits.map((h) => h.id);
      // The lookups verify by MinHash and SimHash: a document whose are damaged is never a hit (damaged band
      // keys or token count are not read by a lookup; annotate mends those).
      for (const d of damaged.slice(0, 4)) expect(ids).not.toContain(d.id);
      expect(result.damaged, JSON.stringify(lookup)).toBeGreaterThan(0);
      expect(result.damagedDocuments?.every((d) => damaged.some((x) => x.id === d.id))).toBe(true);
    }
    const byCli = await cli(['similar', '--url', ctx.engine.url, '--index', index, '--id', query.id, '--min-similarity', '0.1']);
    expect(byCli.code, byCli.stderr).toBe(0);
    expect(byCli.stderr).toMatch(/candidates left out, their stored signature damaged/);
    // The damaged document itself, looked up by id: one line naming what is wrong and the command that mends it.
    const own = await cli(['similar', '--url', ctx.engine.url, '--index', index, '--id', damaged[2].id]);
    expect(own.code).toBe(1);
    expect(own.stderr.trim().split('\n')).toHaveLength(1);
    expect(own.stderr).toMatch(/has no usable near-dup signature .*minhash does not decode.*annotate --force/);
    expect(own.stderr).not.toMatch(/RangeError|\n\s+at /);
  });

  it('the explorer shows a damaged member without a measure and answers for a damaged document instead of failing', async () => {
    const similar = await similarTo(ctx.client, { index, prefix: 'near_dup', fields: ['text'] } as never, damaged[3].id);
    expect(similar.warnings[0]).toMatch(/minhash holds 64 values/);
  });

  it('dedup leaves the damaged documents out, names them, and clusters the rest as a clean index would', async () => {
    const clean = ctx.index('trust-clean');
    const lines = docs.filter((d) => !damaged.includes(d)).flatMap((d) => [{ index: { _index: clean, _id: d.id } }, { text: d.text }]);
    expect((await ctx.client.bulk(lines)).errors).toBe(false);
    await ctx.client.refresh(clean);
    await annotateIndex(ctx.client, { index: clean, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
    const expected = await cli(['dedup', '--url', ctx.engine.url, '--index', clean]);
    expect(expected.code, expected.stderr).toBe(0);
    const run = await cli(['dedup', '--url', ctx.engine.url, '--index', index]);
    expect(run.json, run.stderr).toMatchObject({ damaged: damaged.length, clusters: expected.json.clusters, duplicates: expected.json.duplicates, complete: true });
    expect(run.stderr).toMatch(new RegExp(`${damaged.length} documents with a damaged stored signature left out`));
    const listed = readFileSync(run.json.errorsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l).id);
    expect(listed.sort()).toEqual(damaged.map((d) => d.id).sort());
    const members = await clusterMembers(ctx.client, { index, prefix: 'near_dup', fields: ['text'] } as never, run.json.top[0].cluster_id, { size: 50, scrolls: new MemberScrolls(ctx.client) });
    expect(members.members.length).toBeGreaterThan(1);
  });

  it('a damaged document read first never sets the shape: dedup keeps every cluster', async () => {
    const first = ctx.index('trust-first');
    const good = docs.filter((d) => !damaged.includes(d));
    const signed = good.map((d) => ({ id: d.id, ...annotateDocument({ text: d.text }, { fields: ['text'] }) })) as Array<Record<string, any>>;
    const three: Record<string, any> = { ...signed[0], id: 'three-bands' };
    three.near_dup = { ...three.near_dup, bands: three.near_dup.bands.slice(0, 3) };
    const short: Record<string, any> = { ...signed[1], id: 'short-minhash' };
    short.near_dup = { ...short.near_dup, minhash: (DAMAGE[3].nearDup({}) as any).minhash };
    await ctx.client.createIndex(first, { settings: { number_of_shards: 1 } });
    await initIndex(ctx.client, first, 'near_dup');
    // The damaged documents are indexed first, so a scan reads them first.
    for (const batch of [[three, short], signed]) {
      const lines = batch.flatMap(({ id, ...source }) => [{ index: { _index: first, _id: id } }, source]);
      expect((await ctx.client.bulk(lines, { refresh: 'true' })).errors).toBe(false);
    }
    const run = await cli(['dedup', '--url', ctx.engine.url, '--index', first]);
    expect(run.json, run.stderr).toMatchObject({ damaged: 2, complete: true });
    expect(run.json.clusters).toBeGreaterThan(0);
  });

  it('annotate signs the damaged documents again without --force; lookups find them again', async () => {
    const run = await cli(['annotate', '--url', ctx.engine.url, '--index', index, '--field', 'text']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ annotated: damaged.length, unchanged: docs.length - damaged.length, failed: 0, complete: true });
    const result = await findSimilar(ctx.client, { index, id: query.id, minSimilarity: 0.1, limit: 100 });
    expect(result.damaged).toBe(0);
    const evaluate = await cli(['evaluate', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--out', path.join(tmp, 'quality')]);
    expect(evaluate.code, evaluate.stderr).toBe(0);
  });
});
