// The simhash-doc preset end to end: annotate, sign and the proxy take --preset simhash-doc, store the
// SimHash in base32 under params that say the preset, and similar finds a near-duplicate by id (by MinHash
// and by the SimHash blocks, which the engine matches) and by text.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSigner } from '../../src/signature.js';
import { parseSimhash } from '../../src/sketch/simhash-doc.js';
import { editText, fixtureSample, seededRandom } from '../support/corpus.js';
import { expectedSignatures, indexDocuments, runCli, runCliJson, signatureFields, sourcesById } from '../support/documents.js';
import { type ProxyProcess, startProxyProcess } from '../support/proxy-process.js';
import { forEachEngine } from './harness.js';

const PARAMS = 'white-space:simhash-doc-html:sha1:128;seed=1;scheme=affine32;b=26;r=4;simhash=simhash-doc:m8;k=2;sample=4';
const BASE32 = /^[A-Z2-7]{13}$/;

const others = fixtureSample(6, { seed: 27 }).filter((d) => d.version === 0);
const original = others[0];
/** A revision: a few words changed. */
const revised = { id: 'revised', text: editText(original.text, 0.02, seededRandom(5), ['licence', 'software', 'holder']) };
/** The same words disguised: capitals, zero-width spaces and soft hyphens inside words, markup. */
const disguised = {
  id: 'disguised',
  text: `<div>${original.text.toUpperCase().replace(/(\w{3})(\w{3})/g, '$1\u200B$2').replace(/(\w{4})(\w{2})/g, '$1\u00AD$2')}</div>`,
};
const docs = [...others.map((d) => ({ id: d.id, text: d.text })), revised, disguised];
const signer = createSigner({ preset: 'simhash-doc' });

forEachEngine('the simhash-doc preset', (ctx) => {
  const index = ctx.index('simhash-doc');
  const proxied = ctx.index('simhash-doc-proxy');
  const url = () => ['--url', ctx.engine.url];
  let proxy: ProxyProcess | undefined;

  beforeAll(async () => {
    expect(original.text.length).toBeGreaterThan(600);
    await indexDocuments(ctx.client, index, docs);
  });

  afterAll(async () => {
    proxy?.run.child.kill('SIGTERM');
    await proxy?.run.done;
  });

  it('annotate --preset simhash-doc stores what sign gives: the SimHash in base32, params that say the preset', async () => {
    const run = await runCliJson(['annotate', ...url(), '--index', index, '--field', 'text', '--preset', 'simhash-doc']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ params: PARAMS, annotated: docs.length, failed: 0 });
    const stored = await sourcesById(ctx.client, index);
    const expected = expectedSignatures(signer, docs);
    for (const doc of docs) {
      const fields = stored.get(doc.id)?.near_dup;
      expect(fields?.simhash, doc.id).toMatch(BASE32);
      expect(fields?.params).toBe(PARAMS);
      expect(signatureFields(fields), doc.id).toEqual(expected.get(doc.id));
    }
    // The disguise is undone by the draft's rules: the same tokens, so the same SimHash.
    expect(stored.get('disguised')?.near_dup.simhash).toBe(stored.get(original.id)?.near_dup.simhash);
    // Read back and checked as current: a second run writes nothing.
    const again = await runCliJson(['annotate', ...url(), '--index', index, '--field', 'text', '--preset', 'simhash-doc']);
    expect(again.json).toMatchObject({ annotated: 0, unchanged: docs.length, failed: 0 });
  });

  it('sign --preset simhash-doc prints the same base32 SimHash', async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'nd-simhash-doc-')), 'revised.txt');
    writeFileSync(file, revised.text);
    const run = await runCliJson(['sign', '--preset', 'simhash-doc', '--file', file]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json.params).toBe(PARAMS);
    expect(run.json.simhash).toMatch(BASE32);
    expect(run.json.simhash).toBe((await sourcesById(ctx.client, index)).get('revised')?.near_dup.simhash);
  });

  it('similar by id finds the near-duplicates, by MinHash and by the SimHash blocks', async () => {
    const both = await runCliJson(['similar', ...url(), '--index', index, '--id', original.id, '--min-similarity', '0.8']);
    expect(both.code, both.stderr).toBe(0);
    const hits = new Map<string, { jaccard: number; hamming: number }>(both.json.hits.map((h: { id: string }) => [h.id, h]));
    expect([...hits.keys()].sort()).toEqual(['disguised', 'revised']);
    expect(hits.get('disguised')).toMatchObject({ jaccard: 1, hamming: 0 });
    const stored = await sourcesById(ctx.client, index);
    const distance = (id: string) => {
      const a = parseSimhash(stored.get(original.id)?.near_dup.simhash), b = parseSimhash(stored.get(id)?.near_dup.simhash);
      return [a.hi ^ b.hi, a.lo ^ b.lo].reduce((n, x) => n + x.toString(2).replaceAll('0', '').length, 0);
    };
    expect(hits.get('revised')?.hamming).toBe(distance('revised'));
    // The engine's candidates by SimHash alone, within the draft's k = 3: the blocks of base32-stored
    // SimHashes match (the revision is 2 bits away, the other licences 18 or more).
    expect(distance('revised')).toBeLessThanOrEqual(3);
    const bySimhash = await runCliJson(['similar', ...url(), '--index', index, '--id', original.id, '--method', 'simhash', '--max-distance', '3']);
    expect(bySimhash.code, bySimhash.stderr).toBe(0);
    expect(bySimhash.json.hits.map((h: { id: string }) => h.id).sort()).toEqual(['disguised', 'revised']);
  });

  it('similar by text signs it the way the index was (the preset, from the stored params)', async () => {
    const run = await runCliJson(['similar', ...url(), '--index', index, '--text', revised.text, '--min-similarity', '0.8']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json.hits.map((h: { id: string }) => h.id)).toEqual(expect.arrayContaining([original.id, 'disguised', 'revised']));
  });

  it('dedup reads the base32 SimHashes: the near-duplicates are one cluster, none damaged', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'nd-simhash-doc-'));
    const pairs = path.join(dir, 'pairs.jsonl');
    const run = await runCli(['dedup', ...url(), '--index', index, '--pairs', pairs], { cwd: dir }).done; // its state file in dir
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout.trim().split('\n').pop() ?? '')).toMatchObject({ params: PARAMS, damaged: 0 });
    const stored = await sourcesById(ctx.client, index);
    const cluster = (id: string) => stored.get(id)?.near_dup.cluster_id;
    expect(cluster(original.id)).toBeDefined();
    expect([cluster('revised'), cluster('disguised')]).toEqual([cluster(original.id), cluster(original.id)]);
    for (const other of others.slice(1)) expect(cluster(other.id)).toBeUndefined();
    const verified = readFileSync(pairs, 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    expect(verified).toContainEqual(expect.objectContaining({ a: original.id < 'disguised' ? original.id : 'disguised', jaccard: 1, hamming: 0 }));
  });

  it('the proxy with --preset simhash-doc stores base32, and similar finds the near-duplicate there', async () => {
    proxy = await startProxyProcess(['--url', ctx.engine.url, '--index', proxied, '--field', 'text', '--preset', 'simhash-doc', '--on-error', 'reject']);
    const body = [original, revised].map((d) => `${JSON.stringify({ index: { _index: proxied, _id: d.id } })}\n${JSON.stringify({ text: d.text })}\n`).join('');
    const response = await fetch(`${proxy.url}/_bulk?refresh=true`, { method: 'POST', headers: { 'content-type': 'application/x-ndjson' }, body });
    expect(((await response.json()) as { errors: boolean }).errors).toBe(false);
    const stored = await sourcesById(ctx.client, proxied);
    const expected = expectedSignatures(signer, [original, revised]);
    for (const id of [original.id, 'revised']) {
      expect(stored.get(id)?.near_dup.simhash).toMatch(BASE32);
      expect(signatureFields(stored.get(id)?.near_dup), id).toEqual(expected.get(id));
    }
    const run = await runCliJson(['similar', ...url(), '--index', proxied, '--id', 'revised', '--min-similarity', '0.8']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json.hits.map((h: { id: string }) => h.id)).toEqual([original.id]);
  });
});
