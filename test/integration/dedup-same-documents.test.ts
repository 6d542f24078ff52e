// dedup gives the same clusters for the same documents wherever they are: in an index of one shard written
// in one order, in one of three shards written in another, in OpenSearch and in Elasticsearch. The
// documents are built so that the cut has choices to make: licence texts with edited versions (families
// that chain), exact copies under other ids (ties of the default canonical rule, the longest), and a
// template of boilerplate sections that every document carries (the core rule at work, with a set drawn
// from each index). A cluster that followed the order the writes landed in, or a shard's scan order, would
// differ between the two indices.
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { dedupIndex } from '../../src/jobs/dedup.js';
import { editText, fixtureSample } from '../support/corpus.js';
import { indexDocuments, sourcesById } from '../support/documents.js';
import { seededRandom } from '../support/seeded-random.js';
import { forEachEngine, testEngines } from './harness.js';

const random = seededRandom(61);
const SECTIONS = Array.from({ length: 6 }, (_, s) => `Notice ${s}: ${Array.from({ length: 40 }, (_, w) => `boiler${s}x${w}`).join(' ')}.`);
/** Each licence text with three of the six boilerplate sections around it (which ones drawn per document). */
const withTemplate = (text: string) => {
  const chosen = SECTIONS.filter(() => random() < 0.5);
  return [...chosen.slice(0, 2), text, ...chosen.slice(2)].join('\n\n');
};
const licences = fixtureSample(40, { seed: 71, maxChars: 6000 }).map((d) => ({ ...d, text: withTemplate(d.text) }));
/** Exact copies under other ids: the longest rule ties, broken by the id alone. */
const copies = licences.filter((_, i) => i % 7 === 3).map((d, k) => ({ ...d, id: `copy-${String(k).padStart(2, '0')}-${d.id}` }));
/** Chains that drift: each version a few words from the one before, the first and the last far apart (families the cut must split). */
const fresh = Array.from({ length: 5000 }, (_, k) => `drift${k}`);
const chains = licences.filter((_, i) => i % 9 === 1).flatMap((d, c) => {
  let text = d.text;
  return Array.from({ length: 8 }, (_, v) => {
    if (v > 0) text = editText(text, 0.02, random, fresh);
    return { ...d, id: `chain${c}-v${v}`, text };
  });
});
const docs = [...licences, ...copies, ...chains];
const reversed = [...docs].reverse();

/** Each document's canonical, by where the documents were: `engine, shards`. */
const runs = new Map<string, Record<string, string | null>>();

forEachEngine('dedup, the same documents', (ctx) => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-dedup-same-'));
  const where = [
    { shards: 1, index: ctx.index('dedup-same-one-shard'), order: docs },
    { shards: 3, index: ctx.index('dedup-same-three-shards'), order: reversed },
  ];

  beforeAll(async () => {
    for (const { shards, index, order } of where) {
      await ctx.client.createIndex(index, { settings: { number_of_shards: shards, number_of_replicas: 0 } });
      // Written in batches of a few, so that the shards' segments (and their scan order) follow the order given.
      for (let at = 0; at < order.length; at += 7) await indexDocuments(ctx.client, index, order.slice(at, at + 7));
      const summary = await annotateIndex(ctx.client, {
        index,
        fields: ['text'],
        signer: {},
        template: { share: 0.3 },
        state: { checkpointFile: path.join(tmp, `${index}.json`) },
        output: { prefix: 'near_dup', errorsFile: path.join(tmp, `${index}.jsonl`) },
      });
      expect(summary.complete).toBe(true);
    }
  }, 120_000);

  it('one shard or three, written in opposite orders: every document in the same cluster under the same canonical', async () => {
    for (const { shards, index } of where) {
      const summary = await dedupIndex(ctx.client, { index, state: { stateFile: path.join(tmp, `state-${index}.json`) }, output: { errorsFile: path.join(tmp, `errors-${index}.jsonl`) } });
      expect(summary.complete).toBe(true);
      const stored = await sourcesById(ctx.client, index);
      const canonicals = Object.fromEntries(docs.map((d) => [d.id, (stored.get(d.id)?.near_dup?.cluster_id as string | undefined) ?? null]));
      runs.set(`${ctx.engine.flavour}, ${shards} shard(s)`, canonicals);
    }
    const [one, three] = [...runs.entries()].filter(([k]) => k.startsWith(ctx.engine.flavour)).map(([, v]) => v);
    // The cut had choices to make: clusters of several documents, and chains cut into more than one.
    const sizes = new Map<string, number>();
    for (const c of Object.values(one)) if (c !== null) sizes.set(c, (sizes.get(c) ?? 0) + 1);
    expect([...sizes.values()].filter((n) => n >= 3).length).toBeGreaterThanOrEqual(5);
    const chainClusters = new Set(chains.map((d) => one[d.id]));
    expect(chainClusters.size).toBeGreaterThan(chains.length / 8);
    expect(three).toEqual(one);
  }, 180_000);
});

it('OpenSearch and Elasticsearch: the same clusters', () => {
  if (testEngines().filter((e) => e.suite === 'full').length < 2) return;
  const all = [...runs.entries()];
  expect(all.length).toBeGreaterThanOrEqual(4);
  for (const [where, run] of all) expect(run, where).toEqual(all[0][1]);
});
