// The smoke subset: what a user does first, through the command line, on a small corpus, on every engine
// (the older majors run only this; the newest run it too, beside the whole suite). init maps the fields,
// annotate writes exactly what `near-dup sign` gives, similar finds the strong pairs and only verified
// ones, dedup puts every strong pair in one cluster, and no user field changes on the way.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { nearDupFields } from '../../src/annotation.js';
import { DEDUP_DEFAULTS } from '../../src/jobs/dedup.js';
import { DEFAULT_MIN_SIMILARITY } from '../../src/jobs/similar.js';
import { createSigner } from '../../src/signature.js';
import { MAX_QUERY_TERMS } from '../../src/sketch/containment.js';
import { fixtureSample } from '../support/corpus.js';
import { indexDocuments, runCli, sourcesById } from '../support/documents.js';
import { exactContainmentOf, exactJaccardOf } from '../support/jaccard.js';
import { forEachEngine } from './harness.js';

const signer = createSigner();
// The bars the commands use when none is given: similar's and dedup's differ.
const THRESHOLD = DEFAULT_MIN_SIMILARITY.jaccard;
const DEDUP_THRESHOLD = DEDUP_DEFAULTS.minSimilarity;
const docs = fixtureSample(12, { seed: 7 });
const exactJaccard = exactJaccardOf(signer, docs);
const exactContainment = exactContainmentOf(signer, docs);
const pairsAbove = (bar: number) => docs.flatMap((a, i) => docs.slice(i + 1).filter((b) => exactJaccard(a.id, b.id) >= bar).map((b) => [a.id, b.id] as const));
const strongPairs = pairsAbove(THRESHOLD + 0.1);
const dedupPairs = pairsAbove(DEDUP_THRESHOLD + 0.1);
const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-smoke-'));

/** near-dup, which must succeed; its standard output. */
async function cli(args: string[]): Promise<string> {
  const result = await runCli(args, { cwd: tmp }).done;
  expect(result.code, `near-dup ${args.join(' ')}\n${result.stderr}`).toBe(0);
  return result.stdout;
}

/** The CLI's JSON output: its last line. */
const cliJson = async (args: string[]): Promise<any> => JSON.parse((await cli(args)).trim().split('\n').pop()!);

forEachEngine(
  'smoke: init, annotate, similar, dedup from the command line',
  (ctx) => {
    const index = ctx.index('smoke');
    const url = () => ['--url', ctx.engine.url];

    beforeAll(async () => {
      expect(strongPairs.length).toBeGreaterThan(5);
      expect(dedupPairs.length).toBeGreaterThan(5);
      await cli(['init', ...url(), '--index', index]);
      await indexDocuments(ctx.client, index, docs);
    });

    it('init maps the near-dup fields beside the user fields: band keys as keywords, key lists as text split on white space', async () => {
      const mapping = (await ctx.client.getMapping(index))[index].mappings;
      expect(mapping.properties.near_dup.properties.bands.type).toBe('keyword');
      for (const name of ['simhash_blocks', 'sample']) expect(mapping.properties.near_dup.properties[name]).toMatchObject({ type: 'text', analyzer: 'whitespace', index_options: 'docs', norms: false });
    });

    it('annotate writes the fields near-dup sign gives to every document and changes no user field', async () => {
      const summary = await cliJson(['annotate', ...url(), '--index', index, '--field', 'text']);
      expect(summary).toMatchObject({ seen: docs.length, annotated: docs.length, failed: 0, complete: true });
      const stored = await sourcesById(ctx.client, index);
      for (const doc of docs) {
        const { near_dup, ...rest } = stored.get(doc.id)!;
        expect(JSON.stringify(rest)).toBe(JSON.stringify(doc));
        const { annotated_at: _a, ...fields } = near_dup;
        // A new index maps the key lists as text: annotate writes each as one string of terms.
        const { annotated_at: _b, ...expected } = nearDupFields(signer(doc.text), signer.settings, undefined, 'joined');
        expect(fields, doc.id).toEqual(expected);
      }
    });

    it('similar finds every pair 0.1 above the threshold, each hit verified', async () => {
      // One lookup per document that has a strong partner: every partner among its hits.
      for (const a of new Set(strongPairs.map(([a]) => a))) {
        const result = await cliJson(['similar', ...url(), '--index', index, '--id', a, '--limit', '100', '--method', 'minhash']);
        const found = new Set(result.hits.map((h: { id: string }) => h.id));
        for (const [, b] of strongPairs.filter(([x]) => x === a)) expect(found.has(b), `${a} -> ${b} (exact ${exactJaccard(a, b).toFixed(3)})`).toBe(true);
        for (const h of result.hits) expect(h.jaccard).toBeGreaterThanOrEqual(THRESHOLD);
      }
    });

    it('similar --measure containment finds the text that quotes a document whole, and dedup --containment marks it', async () => {
      const quoting = docs.filter((d) => d.id.endsWith('@quoted'));
      expect(quoting.length).toBeGreaterThan(0);
      for (const q of quoting) {
        // The first version of the family before it is the text it quotes into: whole inside it.
        const families = [...new Set(docs.map((d) => d.family))];
        const host = `${families[families.indexOf(q.family) - 1]}@0`;
        const result = await cliJson(['similar', ...url(), '--index', index, '--id', host, '--measure', 'containment', '--direction', 'inside']);
        // Whole but for the word shingles across the line the passage went in at (n - 1 of them, a word
        // 4-shingle's 3): the hit says the share of the host's sampled tokens in the quoting text.
        const [h, quoting] = [signer(docs.find((d) => d.id === host)!.text), signer(q.text)];
        const n = Number(/^white-space-(\d)-grams$/.exec(signer.settings.spec.tokenizer)?.[1] ?? 1);
        expect(Math.round(exactContainment(host, q.id) * h.distinct_tokens), `${host} inside ${q.id}`).toBeGreaterThanOrEqual(h.distinct_tokens - (n - 1));
        const share = h.sample.filter((t) => quoting.sample.includes(t)).length / h.sample.length;
        expect(h.sample.length).toBeLessThanOrEqual(MAX_QUERY_TERMS);
        expect(result.hits.find((x: { id: string }) => x.id === q.id), `${host} inside ${q.id}`).toMatchObject({ containment: share });
      }
      const summary = await cliJson(['dedup', ...url(), '--index', index, '--containment', '0.8', '--full']);
      expect(summary.complete).toBe(true);
      expect(summary.containment).toMatchObject({ failed: 0, complete: true });
      const stored = await sourcesById(ctx.client, index);
      const marked = [...stored.values()].filter((s) => s.near_dup.contained_in);
      expect(marked.length).toBe(summary.containment.contained);
      for (const s of marked) for (const id of s.near_dup.contained_in) expect(stored.get(id)!.near_dup.distinct_tokens).toBeGreaterThan(s.near_dup.distinct_tokens);
    });

    it('dedup puts every strong pair in one cluster and keeps the oldest', async () => {
      const summary = await cliJson(['dedup', ...url(), '--index', index, '--date-field', 'date']);
      expect(summary.complete).toBe(true);
      const stored = await sourcesById(ctx.client, index);
      for (const [a, b] of dedupPairs) {
        const cluster = stored.get(a)!.near_dup.cluster_id;
        expect(cluster, a).toBeDefined();
        expect(stored.get(b)!.near_dup.cluster_id, `${a} ~ ${b}`).toBe(cluster);
      }
      for (const doc of docs) {
        const { near_dup, ...rest } = stored.get(doc.id)!;
        expect(JSON.stringify(rest)).toBe(JSON.stringify(doc));
        if (near_dup.is_canonical === false) {
          const canonical = stored.get(near_dup.duplicate_of)!;
          expect(canonical.date <= doc.date, `${near_dup.duplicate_of} is older than ${doc.id}`).toBe(true);
        }
      }
    });
  },
  { smoke: true },
);
