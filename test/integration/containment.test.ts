// similar --measure containment against real engines: partial copies planted among the corpus (excerpts of
// 10% to 90%, whole documents quoted inside others, excerpts with OCR-like damage), checked against exact
// containment over the same tokens.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { dedupIndex } from '../../src/jobs/dedup.js';
import { MIN_REVERSE_SAMPLE } from '../../src/jobs/containment-lookup.js';
import { findSimilar } from '../../src/jobs/similar.js';
import { createSigner } from '../../src/signature.js';
import { MAX_QUERY_TERMS, MIN_TRUSTED_SAMPLE } from '../../src/sketch/containment.js';
import { minhashJaccard } from '../../src/sketch/minhash.js';
import { hammingDistance } from '../../src/sketch/simhash.js';
import { partialCopies, testCorpora } from '../support/corpus.js';
import { indexDocuments, runCli, sourcesById } from '../support/documents.js';
import { exactContainmentOf } from '../support/jaccard.js';
import { forEachEngine } from './harness.js';

const signer = createSigner();

/** Every document's cluster fields, to compare two runs. */
function clusterFields(sources: Map<string, Record<string, any>>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [id, s] of sources) out[id] = [s.near_dup?.cluster_id, s.near_dup?.duplicate_of, s.near_dup?.cluster_size];
  return out;
}
const THRESHOLD = 0.7;

type Sampled = { sample: string[] };
/**
 * The estimates the samples give, q as the query: its terms of lowest rank (at most MAX_QUERY_TERMS; word
 * 4-shingles give long texts more), the share of them in d, and of d's sample over the same share of ranks.
 */
function sampleEstimate(q: Sampled, d: Sampled): { containment: number; reverse: number } {
  const terms = q.sample.slice(0, MAX_QUERY_TERMS);
  const shared = terms.filter((t) => d.sample.includes(t)).length;
  return { containment: shared / terms.length, reverse: shared / Math.max(shared, (d.sample.length * terms.length) / q.sample.length) };
}

for (const { name, docs: corpus } of testCorpora(25, 20)) {
  const planted = partialCopies(corpus, 30);
  const docs = [...corpus, ...planted];
  const exact = exactContainmentOf(signer, docs);
  const signatures = new Map(docs.map((d) => [d.id, signer(d.text)]));

  forEachEngine(`similar --measure containment (${name})`, (ctx) => {
    const index = ctx.index('containment');

    beforeAll(async () => {
      await indexDocuments(ctx.client, index, docs);
      await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
    });

    it('finds, for every partial copy, each document 0.1 above the threshold either way, and reports only what the samples verify', async () => {
      let strong = 0, warned = 0;
      for (const query of planted) {
        const result = await findSimilar(ctx.client, { index, id: query.id, measure: 'containment', direction: 'both', minSimilarity: THRESHOLD, limit: 1000 });
        const q = signatures.get(query.id)!;
        expect(result.query.sampled).toBe(Math.min(q.sample.length, 1000));
        const found = new Map(result.hits.map((h) => [h.id, h]));
        expect(found.has(query.id)).toBe(false);
        if (result.query.sampled! < MIN_TRUSTED_SAMPLE) {
          expect(result.warnings?.[0]).toMatch(/only \d+ sampled tokens/);
          warned++;
          continue;
        }
        for (const other of docs) {
          if (other.id === query.id) continue;
          // A document with fewer than 16 sampled tokens is only found holding the query, never inside it.
          const inside = exact(query.id, other.id);
          const holds = signatures.get(other.id)!.sample.length >= MIN_REVERSE_SAMPLE ? exact(other.id, query.id) : 0;
          if (Math.max(inside, holds) < THRESHOLD + 0.1) continue;
          strong++;
          expect(found.has(other.id), `${query.id} -> ${other.id} (exact containment ${inside.toFixed(3)}, reverse ${holds.toFixed(3)})`).toBe(true);
        }
        for (const hit of result.hits) {
          const d = signatures.get(hit.id)!;
          const estimate = sampleEstimate(q, d);
          expect(hit.containment).toBeCloseTo(estimate.containment, 12);
          expect(hit.reverse_containment).toBeCloseTo(estimate.reverse, 12);
          expect(Math.max(hit.containment!, hit.reverse_containment!)).toBeGreaterThanOrEqual(THRESHOLD);
          expect(hit.containment_interval![0]).toBeLessThanOrEqual(hit.containment!);
          expect(hit.containment_interval![1]).toBeGreaterThanOrEqual(hit.containment!);
          expect(hit.jaccard).toBe(minhashJaccard(q.minhash, d.minhash));
          expect(hit.hamming).toBe(hammingDistance(q.simhash, d.simhash));
        }
        const order = result.hits.map((h) => Math.max(h.containment!, h.reverse_containment!));
        expect(order).toEqual([...order].sort((a, b) => b - a));
      }
      process.stderr.write(`[containment] ${name}: ${strong} pairs 0.1 above the threshold, ${warned} of ${planted.length} queries warned\n`);
      expect(strong).toBeGreaterThan(planted.length);
      expect(warned).toBeLessThan(planted.length / 4);
    });

    it('a whole document quoted inside another: the short one finds the long one, the long one finds the short one', async () => {
      const quoted = planted.filter((d) => d.id.includes('~in~'));
      expect(quoted.length).toBeGreaterThan(5);
      for (const long of quoted) {
        const sourceId = long.id.slice(0, long.id.indexOf('~'));
        const fromShort = await findSimilar(ctx.client, { index, id: sourceId, measure: 'containment', limit: 1000 });
        expect(fromShort.hits.find((h) => h.id === long.id)).toMatchObject({ containment: 1 });
        const fromLong = await findSimilar(ctx.client, { index, id: long.id, measure: 'containment', direction: 'both', limit: 1000 });
        // Every sampled token of the source is in the long one: 1, unless the long query was cut to its
        // MAX_QUERY_TERMS terms of lowest rank, where the source's share of that rank range is estimated.
        const [longSig, sourceSig] = [signatures.get(long.id)!, signatures.get(sourceId)!];
        expect(sourceSig.sample.every((t) => longSig.sample.includes(t))).toBe(true);
        const reverse = longSig.sample.length <= MAX_QUERY_TERMS ? 1 : sampleEstimate(longSig, sourceSig).reverse;
        expect(fromLong.hits.find((h) => h.id === sourceId)?.reverse_containment).toBeCloseTo(reverse, 12);
        // One direction at a time: each keeps its own hits, and the two together are the hits of both.
        const inside = await findSimilar(ctx.client, { index, id: long.id, measure: 'containment', limit: 1000 });
        const holds = await findSimilar(ctx.client, { index, id: long.id, measure: 'containment', direction: 'holds', limit: 1000 });
        expect(inside.hits.every((h) => h.containment! >= 0.8)).toBe(true);
        expect(holds.hits.every((h) => h.reverse_containment! >= 0.8)).toBe(true);
        expect(holds.hits.map((h) => h.id)).toContain(sourceId);
        expect(new Set([...inside.hits, ...holds.hits].map((h) => h.id))).toEqual(new Set(fromLong.hits.map((h) => h.id)));
      }
    });

    it('by --file on the command line: the source of an excerpt first, fully contained, in a table', async () => {
      const excerpt = planted.find((d) => d.id.includes('~excerpt-50'))!;
      const dir = mkdtempSync(path.join(tmpdir(), 'near-dup-containment-'));
      const file = path.join(dir, 'excerpt.txt');
      writeFileSync(file, excerpt.text);
      const run = await runCli(['similar', '--url', ctx.engine.url, '--index', index, '--file', file, '--measure', 'containment', '--format', 'table']).done;
      expect(run.code, run.stderr).toBe(0);
      const [header, ...rows] = run.stdout.trim().split('\n');
      expect(header.split(/\s+/)).toEqual(['id', 'contained', 'holds', 'jaccard', 'hamming']);
      const ids = rows.map((r) => r.split(/\s+/)[0]);
      expect(ids).toContain(excerpt.id);
      expect(ids).toContain(excerpt.id.slice(0, excerpt.id.indexOf('~')));
      expect(rows[0].split(/\s+/)[1]).toBe('1.000');
    });

    it('dedup --containment marks every partial copy with the larger documents that hold it, leaves the clusters alone, and clears what no longer holds', async () => {
      const S = 0.8;
      const stateFile = path.join(mkdtempSync(path.join(tmpdir(), 'near-dup-dedup-')), 'state.json');
      const plain = await dedupIndex(ctx.client, { index, state: { full: true, stateFile } });
      const clustersBefore = clusterFields(await sourcesById(ctx.client, index));
      const summary = await dedupIndex(ctx.client, { index, state: { full: true, stateFile }, compare: { containment: S } });
      expect(summary.complete).toBe(true);
      expect(summary.clusters).toBe(plain.clusters);
      const sources = await sourcesById(ctx.client, index);
      expect(clusterFields(sources)).toEqual(clustersBefore);
      const short = docs.filter((d) => signatures.get(d.id)!.sample.length < MIN_TRUSTED_SAMPLE).length;
      expect(summary.containment).toMatchObject({ minContainment: S, lookups: docs.length - short, tooShort: short, failed: 0, complete: true });

      let strong = 0;
      for (const doc of docs) {
        const q = signatures.get(doc.id)!;
        const marked = sources.get(doc.id)?.near_dup ?? {};
        const list: string[] = marked.contained_in ?? [];
        if (q.sample.length < MIN_TRUSTED_SAMPLE) expect(list).toEqual([]);
        for (const id of list) {
          const d = signatures.get(id)!;
          expect(d.distinct_tokens, `${id} is larger than ${doc.id}`).toBeGreaterThan(q.distinct_tokens);
          expect(sampleEstimate(q, d).containment).toBeGreaterThanOrEqual(S);
        }
        expect(list.length).toBeLessThanOrEqual(10);
        if (list.length > 0) expect(marked.max_containment).toBeCloseTo(sampleEstimate(q, signatures.get(list[0])!).containment, 6);
        if (q.sample.length < MIN_TRUSTED_SAMPLE) continue;
        const holders = docs.filter((d) => signatures.get(d.id)!.distinct_tokens > q.distinct_tokens && exact(doc.id, d.id) >= S + 0.1);
        strong += holders.length;
        // A full list holds the 10 best by estimate; a shorter one every holder that passed.
        if (list.length < 10) for (const h of holders) expect(list, `${doc.id} inside ${h.id} (exact ${exact(doc.id, h.id).toFixed(3)})`).toContain(h.id);
      }
      expect(strong).toBeGreaterThan(planted.length / 2);
      expect(summary.containment!.contained).toBeGreaterThan(planted.length / 2);

      // A partial copy (that holds no other) indexed again with a new text: the next run clears both fields on it, and only there.
      const holdingOthers = new Set([...sources.values()].flatMap((s) => s.near_dup?.contained_in ?? []));
      const rewritten = [...sources.entries()].find(([id, s]) => s.near_dup?.contained_in && !holdingOthers.has(id))![0];
      await ctx.client.bulk([{ update: { _index: index, _id: rewritten } }, { doc: { text: Array.from({ length: 400 }, (_, i) => `unheard${i}`).join(' '), near_dup: { params: null } } }]);
      await ctx.client.refresh(index);
      await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      const again = await dedupIndex(ctx.client, { index, state: { full: true, stateFile }, compare: { containment: S } });
      expect(again.complete).toBe(true);
      expect(again.containment).toMatchObject({ cleared: 1, contained: summary.containment!.contained - 1 });
      const after = await sourcesById(ctx.client, index);
      expect(after.get(rewritten)!.near_dup).not.toHaveProperty('contained_in', expect.anything());
      expect(after.get(rewritten)!.near_dup.max_containment ?? null).toBeNull();
    });

    it('warns about a short query, and refuses an index signed without a sample with the command that fixes it', async () => {
      const short = corpus[0].text.split(' ').slice(0, 40).join(' ');
      const result = await findSimilar(ctx.client, { index, text: short, measure: 'containment' });
      expect(result.warnings?.[0]).toMatch(/only \d+ sampled tokens: a containment of 1 may be as low as 0\.\d\d/);

      const bare = ctx.index('containment-bare');
      await indexDocuments(ctx.client, bare, corpus.slice(0, 5));
      await annotateIndex(ctx.client, { index: bare, fields: ['text'], signer: { containmentSample: 0 }, output: { prefix: 'near_dup' } });
      await expect(findSimilar(ctx.client, { index: bare, id: corpus[0].id, measure: 'containment' })).rejects.toThrow(
        /no containment sample.*run near-dup annotate --index .* --field FIELD again/,
      );
      await expect(findSimilar(ctx.client, { index: bare, text: 'x', measure: 'containment', minSimilarity: 0 })).rejects.toThrow(/above 0/);
    });
  });
}
