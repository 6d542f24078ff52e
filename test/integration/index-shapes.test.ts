// The indices users really have, built as users build them on a real engine: `_source` filtering, custom
// and required routing, an alias over several indices, a data stream, text inside arrays of objects. Each
// test checks that every document that can be signed is, that what near-dup writes lands where the
// document lives, and that no user field changed; where an index cannot be updated without loss, that the
// command refuses before writing anything and says why.
import { describe, expect, it } from 'vitest';
import { annotateDocument } from '../../src/annotation.js';
import type { EngineClient } from '../../src/engine/client.js';
import { startProxy } from '../../src/proxy/server.js';
import { fixtureSample } from '../support/corpus.js';
import { runCli, runCliJson as cli } from '../support/documents.js';
import { dataStream, forEachEngine } from './harness.js';

const docs = fixtureSample(10);

/** Every document's fields other than near-dup's, by "index/id". */
async function userFields(client: EngineClient, name: string): Promise<Map<string, unknown>> {
  await client.refresh(name);
  const found = await client.search(name, { size: 1000, query: { match_all: {} }, _source: { excludes: ['near_dup'] } });
  return new Map(found.hits.hits.map((h) => [`${h._index}/${h._id}`, h._source]));
}

async function signedCount(client: EngineClient, name: string): Promise<number> {
  await client.refresh(name);
  return client.count(name, { exists: { field: 'near_dup.params' } });
}

forEachEngine('index shapes', (ctx) => {
  const url = () => ctx.engine.url;
  const bulkInto = async (index: string, items: Array<{ id: string; routing?: string; source: Record<string, unknown> }>, create = false) => {
    const lines = items.flatMap((d) => [{ [create ? 'create' : 'index']: { _index: index, ...(create ? {} : { _id: d.id }), ...(d.routing ? { routing: d.routing } : {}) } }, d.source]);
    const result = await ctx.client.bulk(lines);
    expect(result.errors, JSON.stringify(result.items.find((i) => i.error))).toBe(false);
    await ctx.client.refresh(index);
  };

  describe('_source filtering', () => {
    it('an index whose _source excludes a field is refused by annotate and dedup before anything is written, naming the field', async () => {
      const index = ctx.index('source-excludes');
      await ctx.client.createIndex(index, { mappings: { _source: { excludes: ['raw'] }, properties: { text: { type: 'text' }, raw: { type: 'keyword' } } } });
      await bulkInto(index, docs.map((d) => ({ id: d.id, source: { text: d.text, raw: `raw-${d.id}` } })));
      const before = await userFields(ctx.client, index);
      const annotate = await cli(['annotate', '--url', url(), '--index', index, '--field', 'text']);
      expect(annotate.code).toBe(1);
      expect(annotate.stderr.trim().split('\n')).toHaveLength(1);
      expect(annotate.stderr).toMatch(/keeps only part of each document in _source \(_source excludes raw\).*the field "raw" would lose its indexed values/);
      expect(annotate.stderr).toMatch(/near-dup proxy/);
      const dedup = await cli(['dedup', '--url', url(), '--index', index]);
      expect(dedup.code).toBe(1);
      expect(dedup.stderr).toMatch(/"raw" would lose/);
      // Nothing was written: raw is searchable in every document, and no signature or mapping was added.
      expect(await ctx.client.count(index, { prefix: { raw: 'raw-' } })).toBe(docs.length);
      expect(await signedCount(ctx.client, index)).toBe(0);
      expect(await userFields(ctx.client, index)).toEqual(before);
      const mapping = await ctx.client.getMapping(index);
      expect(mapping[index].mappings.properties.near_dup).toBeUndefined();
    });

    it('an index whose _source leaves out the text field itself says that the text is not kept, once', async () => {
      const index = ctx.index('source-includes');
      await ctx.client.createIndex(index, { mappings: { _source: { includes: ['title'] }, properties: { text: { type: 'text' }, title: { type: 'keyword' } } } });
      await bulkInto(index, docs.slice(0, 5).map((d) => ({ id: d.id, source: { text: d.text, title: d.id } })));
      const annotate = await cli(['annotate', '--url', url(), '--index', index, '--field', 'text']);
      expect(annotate.code).toBe(1);
      expect(annotate.stderr.trim().split('\n')).toHaveLength(1);
      expect(annotate.stderr).toMatch(/the text field "text" of ".*" is not kept in _source \(_source includes title\)/);
    });

    it('an index with _source disabled is said to keep no _source, not "all shards failed"', async () => {
      const index = ctx.index('source-disabled');
      await ctx.client.createIndex(index, { mappings: { _source: { enabled: false }, properties: { text: { type: 'text' } } } });
      await bulkInto(index, docs.slice(0, 5).map((d) => ({ id: d.id, source: { text: d.text } })));
      const annotate = await cli(['annotate', '--url', url(), '--index', index, '--field', 'text']);
      expect(annotate.code).toBe(1);
      expect(annotate.stderr).toMatch(/keeps no _source/);
      expect(annotate.stderr).not.toMatch(/all shards failed/);
    });
  });

  describe('routing', () => {
    it('with _routing required, annotate signs every document, similar --id finds one with and without --routing, and dedup writes every cluster', async () => {
      const index = ctx.index('routing-required');
      await ctx.client.createIndex(index, { settings: { number_of_shards: 3 }, mappings: { _routing: { required: true }, properties: { text: { type: 'text' } } } });
      await bulkInto(index, docs.map((d) => ({ id: d.id, routing: d.family, source: { text: d.text, family: d.family } })));
      const before = await userFields(ctx.client, index);
      const annotate = await cli(['annotate', '--url', url(), '--index', index, '--field', 'text']);
      expect(annotate.code, annotate.stderr).toBe(0);
      expect(annotate.json).toMatchObject({ annotated: docs.length, failed: 0, complete: true });
      expect(await signedCount(ctx.client, index)).toBe(docs.length);
      const edited = docs.find((d) => d.version === 1)!;
      for (const extra of [[], ['--routing', edited.family]]) {
        const similar = await cli(['similar', '--url', url(), '--index', index, '--id', edited.id, ...extra]);
        expect(similar.code, similar.stderr).toBe(0);
        expect(similar.json.query.id).toBe(edited.id);
      }
      const wrongRouting = await cli(['similar', '--url', url(), '--index', index, '--id', edited.id, '--routing', 'no-such-routing-value']);
      // Another routing may reach the same shard; if it does not, the document is said not to be there.
      if (wrongRouting.code !== 0) expect(wrongRouting.stderr).toMatch(/no document .* with routing "no-such-routing-value"/);
      await expectDedupWritesEveryCluster(ctx.client, index);
      await expectSpilledSplitRunWritesTheSame(ctx.client, index, ctx.index('routing-pairs'));
      expect(await userFields(ctx.client, index)).toEqual(before);
    });

    it('with custom routing on three shards (not required), no update fails by chance of shard', async () => {
      const index = ctx.index('routing-custom');
      await ctx.client.createIndex(index, { settings: { number_of_shards: 3 }, mappings: { properties: { text: { type: 'text' } } } });
      await bulkInto(index, docs.map((d) => ({ id: d.id, routing: `tenant-${d.family}`, source: { text: d.text } })));
      const annotate = await cli(['annotate', '--url', url(), '--index', index, '--field', 'text']);
      expect(annotate.code, annotate.stderr).toBe(0);
      expect(annotate.json).toMatchObject({ annotated: docs.length, failed: 0, complete: true });
      // Each signature sits on the document itself: a routed GET finds it.
      for (const d of docs.slice(0, 5)) {
        const got = await ctx.client.get(index, d.id, { routing: `tenant-${d.family}`, _source_includes: 'near_dup.params' });
        expect((got?._source as any)?.near_dup?.params).toBe(annotate.json.params);
      }
      await expectDedupWritesEveryCluster(ctx.client, index);
    });
  });

  it('an alias over two indices: annotate and dedup write to each document\'s own index, and similar --id looks up through the alias', async () => {
    const [a, b] = [ctx.index('alias-a'), ctx.index('alias-b')];
    const alias = ctx.name('alias');
    for (const index of [a, b]) await ctx.client.createIndex(index, { mappings: { properties: { text: { type: 'text' } } } });
    await ctx.client.request('POST', '/_aliases', { actions: [{ add: { index: a, alias } }, { add: { index: b, alias } }] });
    const half = Math.floor(docs.length / 2);
    await bulkInto(a, docs.slice(0, half).map((d) => ({ id: d.id, source: { text: d.text } })));
    await bulkInto(b, docs.slice(half).map((d) => ({ id: d.id, source: { text: d.text } })));
    const before = await userFields(ctx.client, alias);
    const annotate = await cli(['annotate', '--url', url(), '--index', alias, '--field', 'text']);
    expect(annotate.code, annotate.stderr).toBe(0);
    expect(annotate.json).toMatchObject({ annotated: docs.length, complete: true });
    const similar = await cli(['similar', '--url', url(), '--index', alias, '--id', docs[half].id]);
    expect(similar.code, similar.stderr).toBe(0);
    expect(similar.json.query.id).toBe(docs[half].id);
    await expectDedupWritesEveryCluster(ctx.client, alias);
    await expectSpilledSplitRunWritesTheSame(ctx.client, alias, ctx.index('alias-pairs'));
    expect(await userFields(ctx.client, alias)).toEqual(before);
  });

  it('a data stream: annotate, dedup and similar --id work on its backing indices, after a rollover too', async () => {
    const stream = await dataStream(ctx, 'stream', { priority: 500 });
    const half = Math.floor(docs.length / 2);
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString();
    await bulkInto(stream, docs.slice(0, half).map((d, i) => ({ id: d.id, source: { '@timestamp': at(i), id: d.id, text: d.text } })), true);
    await ctx.client.request('POST', `/${stream}/_rollover`);
    await bulkInto(stream, docs.slice(half).map((d, i) => ({ id: d.id, source: { '@timestamp': at(half + i), id: d.id, text: d.text } })), true);
    const before = await userFields(ctx.client, stream);
    const annotate = await cli(['annotate', '--url', url(), '--index', stream, '--field', 'text']);
    expect(annotate.code, annotate.stderr).toBe(0);
    expect(annotate.json).toMatchObject({ annotated: docs.length, complete: true });
    const anId = (await ctx.client.search(stream, { size: 1, query: { match_all: {} } })).hits.hits[0]._id;
    const similar = await cli(['similar', '--url', url(), '--index', stream, `--id=${anId}`]);
    expect(similar.code, similar.stderr).toBe(0);
    await expectDedupWritesEveryCluster(ctx.client, stream);
    await expectSpilledSplitRunWritesTheSame(ctx.client, stream, ctx.index('stream-pairs'));
    expect(await userFields(ctx.client, stream)).toEqual(before);
  });

  it('a data stream written through the proxy across a rollover: every backing index has the near-dup fields mapped before its first document', async () => {
    const stream = await dataStream(ctx, 'proxied-stream', { priority: 400 });
    const proxy = await startProxy({ upstream: { url: url() }, host: '127.0.0.1', port: 0, index: `${stream}*`, fields: ['text'], prefix: 'near_dup', signer: {}, maxChars: 10_000_000, onError: 'pass', threads: 1, maxUpstreamBytes: 16 * 1024 * 1024, warn: () => undefined });
    try {
      const send = async (part: typeof docs) => {
        const body = part.flatMap((d, i) => [JSON.stringify({ create: { _index: stream } }), JSON.stringify({ '@timestamp': new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(), id: d.id, text: d.text })]).join('\n') + '\n';
        const answer = await fetch(`${proxy.url}/_bulk?refresh=true`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body });
        const json = (await answer.json()) as { errors: boolean };
        expect(json.errors).toBe(false);
      };
      const half = Math.floor(docs.length / 2);
      await send(docs.slice(0, half));
      await ctx.client.request('POST', `/${stream}/_rollover`);
      await send(docs.slice(half));
      const mappings = await ctx.client.getMapping(stream);
      expect(Object.keys(mappings).length).toBe(2);
      for (const [backing, { mappings: m }] of Object.entries(mappings)) {
        expect(m.properties?.near_dup?.properties?.minhash?.type, backing).toBe('binary');
        expect(m.properties?.near_dup?.properties?.bands?.type, backing).toBe('keyword');
      }
      expect(await signedCount(ctx.client, stream)).toBe(docs.length);
    } finally {
      await proxy.close();
    }
  });

  it('init of a data stream composes its template of the near-dup fields; init --template says when another template outranks it', async () => {
    const stream = ctx.name('init-stream');
    const template = ctx.name('init-stream-template');
    await ctx.client.putIndexTemplate(template, { index_patterns: [`${stream}*`], data_stream: {}, priority: 300 });
    ctx.cleanup(() => ctx.client.request('DELETE', `/_data_stream/${stream}`));
    ctx.cleanup(() => ctx.client.request('DELETE', `/_index_template/${template}`));
    await bulkInto(stream, [{ id: 'x', source: { '@timestamp': '2026-01-01T00:00:00Z', text: 'a first line of text' } }], true);
    const init = await cli(['init', '--url', url(), '--index', stream]);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toMatch(new RegExp(`data stream "${stream}": its template "${template}" is now composed of the near-dup fields`));
    const stored = await ctx.client.request<any>('GET', `/_index_template/${template}`);
    expect(stored.index_templates[0].index_template.composed_of).toContain('near-dup-fields');
    expect(stored.index_templates[0].index_template.priority).toBe(300);
    await ctx.client.request('POST', `/${stream}/_rollover`);
    const mappings = await ctx.client.getMapping(stream);
    for (const { mappings: m } of Object.values(mappings)) expect(m.properties?.near_dup?.properties?.minhash?.type).toBe('binary');
    const again = await cli(['init', '--url', url(), '--index', stream]);
    expect(again.stdout).toMatch(/already gives new backing indices the near-dup fields/);
    // A template for new indices that a higher one outranks is said, with the fix, and exits 1.
    const ours = ctx.name('ours');
    ctx.cleanup(() => ctx.client.request('DELETE', `/_index_template/${ours}`));
    const outranked = await cli(['init', '--url', url(), '--template', `${stream}-more-*`, '--template-name', ours]);
    expect(outranked.code).toBe(1);
    expect(outranked.stderr).toMatch(new RegExp(`take their mapping from the index template "${template}" \\(priority 300, above 100\\)`));
  });

  it('a pattern that matches a closed index names it as not read; a disk block is said to be one, before anything is written', async () => {
    const base = ctx.name('pattern');
    const [open, closed] = [`${base}-open`, `${base}-closed`];
    for (const index of [open, closed]) {
      ctx.cleanup(() => ctx.client.deleteIndex(index));
      await bulkInto(index, docs.slice(0, 4).map((d) => ({ id: d.id, source: { text: d.text } })));
    }
    await ctx.client.request('POST', `/${closed}/_close`);
    const annotate = await cli(['annotate', '--url', url(), '--index', `${base}-*`, '--field', 'text']);
    expect(annotate.code, annotate.stderr).toBe(0);
    expect(annotate.json).toMatchObject({ annotated: 4, closedIndices: [closed] });
    expect(annotate.stderr).toMatch(new RegExp(`not read: the closed index ${closed} \\(open it and run again`));
    await ctx.client.request('PUT', `/${open}/_settings`, { 'index.blocks.read_only_allow_delete': true });
    try {
      const blocked = await cli(['annotate', '--url', url(), '--index', open, '--field', 'text', '--force']);
      expect(blocked.code).toBe(1);
      expect(blocked.stderr).toMatch(/is read-only because a node's disk passed the flood-stage watermark.*it is a disk block, not load/);
      expect(blocked.stderr).not.toMatch(/overloaded|lower the concurrency/);
    } finally {
      await ctx.client.request('PUT', `/${open}/_settings`, { 'index.blocks.read_only_allow_delete': null });
    }
  });

  it('external versions: annotate --keep-version leaves every _version as the producer wrote it, so its next version is taken', async () => {
    const index = ctx.index('external-versions');
    const items = docs.slice(0, 6);
    const write = (version: number) =>
      ctx.client.bulk(items.flatMap((d) => [{ index: { _index: index, _id: d.id, version, version_type: 'external' } }, { text: d.text, rev: version }]));
    expect((await write(5)).errors).toBe(false);
    await ctx.client.refresh(index);
    const kept = await cli(['annotate', '--url', url(), '--index', index, '--field', 'text', '--keep-version']);
    expect(kept.code, kept.stderr).toBe(0);
    expect(kept.json).toMatchObject({ annotated: items.length, failed: 0, complete: true });
    for (const d of items) {
      const got = await ctx.client.get(index, d.id);
      expect(got?._version).toBe(5);
      expect((got?._source as any)?.rev).toBe(5);
      expect((got?._source as any)?.near_dup?.params).toBe(kept.json.params);
    }
    // The producer's next version goes in; a partial update (the default) would have taken version 6 from it.
    expect((await write(6)).errors).toBe(false);
    await ctx.client.refresh(index);
    const plain = await cli(['annotate', '--url', url(), '--index', index, '--field', 'text']);
    expect(plain.code, plain.stderr).toBe(0);
    const after = await write(7);
    expect(after.items.every((i) => i.status === 409)).toBe(true);
  });

  it('a field limit the near-dup fields would pass is named with the setting to raise; nothing is signed', async () => {
    const index = ctx.index('field-limit');
    await ctx.client.createIndex(index, { settings: { 'index.mapping.total_fields.limit': 5 }, mappings: { properties: { text: { type: 'text' }, title: { type: 'keyword' } } } });
    await bulkInto(index, docs.slice(0, 3).map((d) => ({ id: d.id, source: { text: d.text, title: d.id } })));
    const annotate = await cli(['annotate', '--url', url(), '--index', index, '--field', 'text']);
    expect(annotate.code).toBe(1);
    expect(annotate.stderr).toMatch(new RegExp(`"${index}" may map at most 5 fields \\(index.mapping.total_fields.limit\\).*"index.mapping.total_fields.limit": 30`));
    expect(await signedCount(ctx.client, index)).toBe(0);
  });

  it('the proxy with its defaults indexes a document it cannot sign (no text) unsigned and counts it, as the cluster would take it', async () => {
    const index = ctx.index('proxy-defaults');
    const run = runCli(['proxy', '--url', url(), '--listen', '127.0.0.1:0', '--index', index, '--field', 'text', '--threads', '1']);
    const proxyUrl = await new Promise<string>((resolve, reject) => {
      run.child.stderr.on('data', (b: Buffer) => {
        const found = /listening on (\S+),/.exec(b.toString());
        if (found) resolve(found[1]);
      });
      run.done.then((r) => reject(new Error(`the proxy stopped: ${r.stderr}`)));
    });
    const lines = [{ index: { _index: index, _id: 'with-text' } }, { text: docs[0].text }, { index: { _index: index, _id: 'no-text' } }, { title: 'no text here' }];
    const answer = (await (await fetch(`${proxyUrl}/_bulk?refresh=true`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body: `${lines.map((l) => JSON.stringify(l)).join('\n')}\n` })).json()) as any;
    const stats = (await (await fetch(`${proxyUrl}/_near_dup/stats`)).json()) as any;
    run.child.kill('SIGTERM');
    await run.done;
    expect(answer.errors).toBe(false);
    expect(stats.documents).toMatchObject({ signed: 1, passed: 1, rejected: 0 });
    expect(await ctx.client.count(index)).toBe(2);
    expect(await signedCount(ctx.client, index)).toBe(1);
  });

  describe('text inside arrays of objects', () => {
    for (const type of ['object', 'nested'] as const) {
      it(`comments.text of a list of comments (${type}) is signed as the comments' texts joined`, async () => {
        const index = ctx.index(`array-${type}`);
        await ctx.client.createIndex(index, { mappings: { properties: { comments: { type, properties: { text: { type: 'text' } } } } } });
        const items = docs.map((d) => ({ id: d.id, source: { comments: d.text.split('\n\n').map((part) => ({ text: part, by: 'someone' })) } }));
        items.push({ id: 'one-comment', source: { comments: { text: 'a single comment object, not a list' } as never } });
        await bulkInto(index, items);
        const annotate = await cli(['annotate', '--url', url(), '--index', index, '--field', 'comments.text']);
        expect(annotate.code, annotate.stderr).toBe(0);
        expect(annotate.json).toMatchObject({ annotated: items.length, failed: 0 });
        // The same signature as the comments' texts joined by newlines, as for an array of strings.
        const parts = items[0].source.comments as unknown as Array<{ text: string }>;
        const expected = annotateDocument({ text: parts.map((c) => c.text).join('\n') }, { fields: ['text'] }) as any;
        const stored = await ctx.client.get(index, docs[0].id, { _source_includes: 'near_dup.content_hash' });
        expect((stored?._source as any)?.near_dup?.content_hash).toBe(expected.near_dup.content_hash);
      });
    }
  });
});

/** dedup on `name` completes, and the documents holding a cluster_id are exactly the clusters' members. */
const CLUSTER_FIELDS = ['cluster_id', 'duplicate_of', 'is_canonical', 'cluster_size', 'max_similarity', 'canonical_similarity', 'best_match'];

/** Every document's cluster fields, by its index and id. */
async function clusterFields(client: EngineClient, name: string): Promise<Map<string, unknown>> {
  await client.refresh(name);
  const found = await client.search(name, { size: 1000, query: { match_all: {} } });
  const near = (source: any) => Object.fromEntries(CLUSTER_FIELDS.map((f) => [f, source?.near_dup?.[f] ?? null]));
  return new Map(found.hits.hits.map((h) => [`${h._index}/${h._id}`, near(h._source)]));
}

/**
 * After a single run wrote its clusters: the run split in two shares, its final step spilled (its ids, facts
 * and sets on disk, its pairs in parts), writes to each document's own index and routing, the same fields.
 */
async function expectSpilledSplitRunWritesTheSame(client: EngineClient, name: string, pairsIndex: string): Promise<void> {
  const single = await clusterFields(client, name);
  for (const share of ['1/2', '2/2']) {
    const run = await cli(['dedup', '--url', client.url, '--index', name, '--share', share, '--pairs-index', pairsIndex]);
    expect(run.code, run.stderr).toBe(0);
  }
  const final = await cli(['dedup', '--url', client.url, '--index', name, '--from-shares', '2', '--pairs-index', pairsIndex, '--max-cached-signatures', '5', '--max-cached-members', '3']);
  expect(final.code, final.stderr).toBe(0);
  expect(final.json).toMatchObject({ failed: 0, complete: true });
  expect(final.json.verifiedPairs).toBeGreaterThan(2 * 3);
  // Every clustered document written again (to its own index, with its routing), none failing.
  expect(final.json.written).toBe([...single.values()].filter((f: any) => f.cluster_id !== null).length);
  expect(await clusterFields(client, name)).toEqual(single);
}

async function expectDedupWritesEveryCluster(client: EngineClient, name: string): Promise<void> {
  const dedup = await cli(['dedup', '--url', client.url, '--index', name]);
  expect(dedup.code, dedup.stderr).toBe(0);
  expect(dedup.json).toMatchObject({ failed: 0, complete: true });
  expect(dedup.json.clusters).toBeGreaterThan(0);
  const members = dedup.json.clusters + dedup.json.duplicates + dedup.json.alone;
  await client.refresh(name);
  expect(await client.count(name, { exists: { field: 'near_dup.cluster_id' } })).toBe(members);
}
