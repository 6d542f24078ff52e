// similar against real engines, on a sample of the PEP revisions corpus, checked against brute force.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, expect, it, vi } from 'vitest';
import { createIndexBody } from '../../src/indices/mapping.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { findSimilar } from '../../src/jobs/similar.js';
import { createSigner } from '../../src/signature.js';
import { hammingDistance } from '../../src/sketch/simhash.js';
import { runCliJson } from '../support/documents.js';
import { testCorpora } from '../support/corpus.js';
import { exactJaccardOf } from '../support/jaccard.js';
import { forEachEngine } from './harness.js';

const CLI = path.resolve(__dirname, '../../dist/cli/main.js');
const signer = createSigner();
const THRESHOLD = 0.5;

for (const { name, docs } of testCorpora(20, 20)) {
  const exactJaccard = exactJaccardOf(signer, docs);

  forEachEngine(`similar (${name})`, (ctx) => {
    const index = ctx.index('peps-similar');

    beforeAll(async () => {
      const lines = docs.flatMap((d) => [{ index: { _index: index, _id: d.id } }, d]);
      for (let i = 0; i < lines.length; i += 200) expect((await ctx.client.bulk(lines.slice(i, i + 200))).errors).toBe(false);
      await ctx.client.refresh(index);
      await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
    });

    it('by id, finds every document 0.1 above the threshold, never the query itself, only verified hits', async () => {
      let strong = 0;
      for (const doc of docs) {
        const result = await findSimilar(ctx.client, { index, id: doc.id, limit: 1000, minSimilarity: THRESHOLD });
        const found = new Set(result.hits.map((h) => h.id));
        expect(found.has(doc.id)).toBe(false);
        for (const other of docs) {
          if (other.id === doc.id || exactJaccard(doc.id, other.id) < THRESHOLD + 0.1) continue;
          strong++;
          expect(found.has(other.id), `${doc.id} -> ${other.id} (exact ${exactJaccard(doc.id, other.id).toFixed(3)})`).toBe(true);
        }
        for (const hit of result.hits) {
          const other = docs.find((d) => d.id === hit.id)!;
          const a = signer(doc.text), b = signer(other.text);
          let equal = 0;
          for (let i = 0; i < a.minhash.length; i++) if (a.minhash[i] === b.minhash[i]) equal++;
          expect(hit.jaccard).toBe(equal / a.minhash.length);
          expect(hit.hamming).toBe(hammingDistance(a.simhash, b.simhash));
          expect(hit.jaccard >= THRESHOLD || hit.hamming <= 3).toBe(true);
        }
      }
      expect(strong).toBeGreaterThan(50);
    });

    it('by text, the document itself comes first with similarity 1', async () => {
      const doc = docs[5];
      const result = await findSimilar(ctx.client, { index, text: doc.text, signer: {} });
      expect(result.hits[0]).toMatchObject({ id: doc.id, jaccard: 1, hamming: 0 });
    });

    it('SimHash only: every candidate within k bits, as the block query promises', async () => {
      const doc = docs[7];
      const result = await findSimilar(ctx.client, { index, id: doc.id, method: 'simhash', maxDistance: 3, limit: 1000 });
      const expected = docs.filter((d) => d.id !== doc.id && hammingDistance(signer(d.text).simhash, signer(doc.text).simhash) <= 3).map((d) => d.id).sort();
      expect(result.hits.map((h) => h.id).sort()).toEqual(expected);
    });

    /** The candidate query: one clause per band key and the SimHash blocks with m - k to match, never the query document. */
    const expectCandidateQuery = (body: any, doc: (typeof docs)[number]) => {
      expect(body.size).toBe(77);
      expect(body.query.bool.minimum_should_match).toBe(1);
      expect(body.query.bool.must_not).toEqual([{ ids: { values: [doc.id] } }]);
      const query = JSON.stringify(body.query.bool.should);
      for (const key of signer(doc.text).bands) expect(query).toContain(JSON.stringify(key));
      for (const key of signer(doc.text).simhash_blocks) expect(query).toContain(JSON.stringify(key));
      expect(query).toContain('"minimum_should_match":5');
    };

    it('asks the engine for the candidates with their signatures only (_source filtered to them; the MinHash is stored once, there)', async () => {
      const doc = docs[2];
      const spy = vi.spyOn(ctx.client, 'search');
      try {
        const result = await findSimilar(ctx.client, { index, id: doc.id, candidateLimit: 77 });
        expect(result.hits.length).toBeGreaterThan(0);
        // The query document by its id (a search: it reads aliases, data streams and routed documents alike).
        expect(spy).toHaveBeenCalledTimes(2);
        expect((spy.mock.calls[0][1] as any).query).toEqual({ ids: { values: [doc.id] } });
        const body = spy.mock.calls[1][1] as any;
        expect([...body._source].sort()).toEqual(['near_dup.content_hash', 'near_dup.minhash', 'near_dup.params', 'near_dup.simhash']);
        expect(body.docvalue_fields).toBeUndefined();
        expectCandidateQuery(body, doc);
      } finally {
        spy.mockRestore();
      }
    });

    it('an index mapped before the MinHash was stored once (it has doc values): signatures from doc values without ids, then the ids of the verified hits alone', async () => {
      const older = ctx.index('older-layout');
      const mapping = createIndexBody('near_dup') as any;
      // As near-dup mapped indices then: the MinHash and the SimHash with doc values, the key lists keyword.
      Object.assign(mapping.mappings.properties.near_dup.properties, {
        minhash: { type: 'binary', doc_values: true },
        simhash: { type: 'keyword' },
        simhash_blocks: { type: 'keyword' },
        sample: { type: 'keyword', doc_values: false },
      });
      await ctx.client.createIndex(older, mapping);
      const lines = docs.flatMap((d) => [{ index: { _index: older, _id: d.id } }, d]);
      for (let i = 0; i < lines.length; i += 200) expect((await ctx.client.bulk(lines.slice(i, i + 200))).errors).toBe(false);
      await ctx.client.refresh(older);
      await annotateIndex(ctx.client, { index: older, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      const doc = docs[2];
      const spy = vi.spyOn(ctx.client, 'search');
      try {
        const result = await findSimilar(ctx.client, { index: older, id: doc.id, candidateLimit: 77 });
        const current = await findSimilar(ctx.client, { index, id: doc.id, candidateLimit: 77 });
        const found = (hits: typeof result.hits) => hits.map(({ id, jaccard, hamming }) => ({ id, jaccard, hamming }));
        expect(found(result.hits)).toEqual(found(current.hits));
        expect(spy.mock.calls.length).toBe(3 + 2);
        const body = spy.mock.calls[1][1] as any;
        // The engine loads neither the documents' _source (their text) nor their stored ids.
        expect(body._source).toBeUndefined();
        expect(body.stored_fields).toBe('_none_');
        expect([...body.docvalue_fields].sort()).toEqual(['near_dup.content_hash', 'near_dup.minhash', 'near_dup.params', 'near_dup.simhash']);
        expectCandidateQuery(body, doc);
        // Then the ids, by the content hashes of the verified candidates only, same params, never the query document.
        const ids = spy.mock.calls[2][1] as any;
        expect(ids._source).toBe(false);
        const hashes: string[] = ids.query.bool.filter[0].terms['near_dup.content_hash'];
        const verified = new Set(result.hits.map((h) => signer(docs.find((d) => d.id === h.id)!.text).content_hash));
        expect(new Set(hashes)).toEqual(verified);
        expect(ids.query.bool.filter[1]).toEqual({ term: { 'near_dup.params': result.query.params } });
        expect(ids.query.bool.must_not).toEqual([{ ids: { values: [doc.id] } }]);
      } finally {
        spy.mockRestore();
      }
    });

    it('an index signed in the first layout (hex keys) is read as it is, said in one line by each command, and brought to the current one by annotate', async () => {
      const first = ctx.index('first-layout');
      const lines = docs.flatMap((d) => [{ index: { _index: first, _id: d.id } }, d]);
      for (let i = 0; i < lines.length; i += 200) expect((await ctx.client.bulk(lines.slice(i, i + 200))).errors).toBe(false);
      await ctx.client.refresh(first);
      await annotateIndex(ctx.client, { index: first, fields: ['text'], signer: { keyEncoding: 1 }, output: { prefix: 'near_dup' } });
      const doc = docs[3];
      const url = ['--url', ctx.engine.url];
      const before = await runCliJson(['similar', ...url, '--index', first, '--id', doc.id]);
      expect(before.code, before.stderr).toBe(0);
      expect(before.stderr).toMatch(new RegExp(`"${first}" holds ${docs.length} signatures of near-dup's first layout .*near-dup annotate --index ${first} --field FIELD`));
      const byText = await runCliJson(['similar', ...url, '--index', first, '--text', doc.text]);
      expect(byText.json.hits[0]).toMatchObject({ id: doc.id, jaccard: 1 });
      const upgrade = await runCliJson(['annotate', ...url, '--index', first, '--field', 'text']);
      expect([upgrade.code, upgrade.json?.annotated]).toEqual([0, docs.length]);
      await ctx.client.refresh(first);
      const after = await runCliJson(['similar', ...url, '--index', first, '--id', doc.id]);
      expect(after.stderr).not.toContain('first layout');
      const ids = (r: typeof before) => r.json.hits.map((h: any) => [h.id, h.jaccard]);
      expect(ids(after)).toEqual(ids(before));
      expect(after.json.query.params).toMatch(/;k=2;/);
    }, 120_000);

    it('a document without a signature is refused with the fix; an empty text has no hits', async () => {
      await ctx.client.request('PUT', `/${index}/_doc/unsigned`, { text: 'never annotated' }, { refresh: 'true' });
      await expect(findSimilar(ctx.client, { index, id: 'unsigned' })).rejects.toThrow(/run near-dup annotate/);
      const empty = await findSimilar(ctx.client, { index, text: '' });
      expect(empty.hits).toEqual([]);
      expect(empty.query.tokens).toBe(0);
      await expect(findSimilar(ctx.client, { index, id: docs[0].id, maxDistance: 8 })).rejects.toThrow(/^maxDistance must be a whole number from 0 to 7/);
    });

    it('never compares signatures made with other parameters: they are excluded and counted', async () => {
      const doc = docs[0];
      const twin = `${doc.id}-other-params`;
      const sig = signer(doc.text);
      await ctx.client.request('PUT', `/${index}/_doc/${encodeURIComponent(twin)}`, {
        text: doc.text,
        near_dup: { bands: sig.bands, simhash: sig.simhash, simhash_blocks: sig.simhash_blocks, params: 'white-space:norm:sha1:128;seed=2', minhash: 'AAAA', token_count: sig.tokens },
      }, { refresh: 'true' });
      const result = await findSimilar(ctx.client, { index, id: doc.id, limit: 1000 });
      expect(result.excludedParams).toBeGreaterThanOrEqual(1);
      expect(result.hits.some((h) => h.id === twin)).toBe(false);
    });

    it('the CLI prints a table, and an unknown id is one line with exit code 1', () => {
      const table = spawnSync(process.execPath, [CLI, 'similar', '--url', ctx.engine.url, '--index', index, '--id', docs[1].id, '--format', 'table'], { encoding: 'utf8' });
      expect(table.status, table.stderr).toBe(0);
      expect(table.stdout.split('\n')[0]).toMatch(/^id\s+jaccard\s+hamming$/);
      const missing = spawnSync(process.execPath, [CLI, 'similar', '--url', ctx.engine.url, '--index', index, '--id', 'no-such-doc'], { encoding: 'utf8' });
      expect(missing.status).toBe(1);
      expect(missing.stderr.trim().split('\n')).toHaveLength(1);
      expect(missing.stderr).toMatch(/no document "no-such-doc"/);
      const json = spawnSync(process.execPath, [CLI, 'similar', '--url', ctx.engine.url, '--index', index, '--text', docs[3].text, '--limit', '3'], { encoding: 'utf8' });
      expect(json.status, json.stderr).toBe(0);
      const parsed = JSON.parse(json.stdout);
      expect(parsed.hits[0]).toMatchObject({ id: docs[3].id, jaccard: 1 });
      expect(parsed.hits.length).toBeLessThanOrEqual(3);
      expect(parsed).toHaveProperty('excludedParams');
      expect(parsed).toHaveProperty('tookMs');
      const both = spawnSync(process.execPath, [CLI, 'similar', '--url', ctx.engine.url, '--index', index, '--id', 'x', '--text', 'y'], { encoding: 'utf8' });
      expect(both.status).toBe(2);
      const far = spawnSync(process.execPath, [CLI, 'similar', '--url', ctx.engine.url, '--index', index, '--id', docs[0].id, '--max-distance', '8'], { encoding: 'utf8' });
      expect(far.status).toBe(2);
      const usage = spawnSync(process.execPath, [CLI, 'similar', '--url', ctx.engine.url, '--index', index], { encoding: 'utf8' });
      expect(usage.status).toBe(2);
    });

    it('still works on an index whose MinHash field was mapped without doc values (reads _source)', async () => {
      const old = ctx.index('peps-old-mapping');
      await ctx.client.createIndex(old, { mappings: { properties: { near_dup: { properties: { minhash: { type: 'binary' } } } } } });
      const sample = docs.slice(0, 12);
      const lines = sample.flatMap((d) => [{ index: { _index: old, _id: d.id } }, d]);
      expect((await ctx.client.bulk(lines, { refresh: 'true' })).errors).toBe(false);
      await annotateIndex(ctx.client, { index: old, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      const result = await findSimilar(ctx.client, { index: old, text: sample[3].text, signer: {} });
      expect(result.hits[0]).toMatchObject({ id: sample[3].id, jaccard: 1 });
    });
  });
}
