// near-dup evaluate gives the same recommendation for the same documents wherever they are: in OpenSearch
// and in Elasticsearch, in an index of one shard and in one of three, under different index names. The
// sample is drawn by a hash of each _id (not by the engine's random_score, which mixes in the index name,
// the shard and the order the writes landed), and the neighbours are chosen the same way (more_like_this
// scores by each shard's statistics: its pairs may differ by a few).
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { evaluateIndex } from '../../src/jobs/evaluate.js';
import { fixtureSample } from '../support/corpus.js';
import { indexDocuments } from '../support/documents.js';
import { forEachEngine, testEngines } from './harness.js';

// More documents than the sample, so that which ones are drawn matters; written in a shuffled order to
// the index of three shards, so that no order of writing is shared.
const docs = fixtureSample(40, { seed: 53 });
const shuffled = [...docs].sort((a, b) => (a.id.split('').reverse().join('') < b.id.split('').reverse().join('') ? -1 : 1));
const SAMPLE = 30;

/** Each run's recommendation and pairs, by where the documents were: `engine, shards`. */
const runs = new Map<string, unknown>();

forEachEngine('evaluate, the same documents', (ctx) => {
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-evaluate-same-'));
  const where = [
    { shards: 1, index: ctx.index('evaluate-one-shard'), order: docs },
    { shards: 3, index: ctx.index('evaluate-three-shards'), order: shuffled },
  ];

  beforeAll(async () => {
    for (const { shards, index, order } of where) {
      await ctx.client.createIndex(index, { settings: { number_of_shards: shards, number_of_replicas: 0 } });
      await indexDocuments(ctx.client, index, order);
      const summary = await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, state: { checkpointFile: path.join(tmp, `${index}.json`) }, output: { prefix: 'near_dup', errorsFile: path.join(tmp, `${index}.jsonl`) } });
      expect(summary.complete).toBe(true);
      await ctx.client.refresh(index);
    }
  });

  it('one shard or three: the same sample, LSH pairs and recommendation', async () => {
    for (const { shards, index } of where) {
      const summary = await evaluateIndex(ctx.client, { index, fields: ['text'], prefix: 'near_dup', sample: SAMPLE, seed: 1, neighbours: 20, randomPartners: 5, maxChars: 1e7, out: path.join(tmp, index), currentThreshold: 0.5 });
      const { threshold, bands, rows, falseNegativeWeight } = summary.report.recommendation;
      // more_like_this picks its terms by each shard's own statistics, so its pairs may differ by a few
      // between one shard and three; the LSH pairs (and the sample they come from) may not.
      runs.set(`${ctx.engine.flavour}, ${shards} shard(s)`, { threshold, bands, rows, falseNegativeWeight, lshPairs: summary.report.pairs.bySource.lsh });
    }
    const [one, three] = [...runs.entries()].filter(([k]) => k.startsWith(ctx.engine.flavour)).map(([, v]) => v);
    expect(three).toEqual(one);
  }, 120_000);
});

it('OpenSearch and Elasticsearch: the same recommendation', () => {
  if (testEngines().filter((e) => e.suite === 'full').length < 2) return;
  const all = [...runs.entries()];
  expect(all.length).toBeGreaterThanOrEqual(4);
  for (const [where, run] of all) expect(run, where).toEqual(all[0][1]);
});
