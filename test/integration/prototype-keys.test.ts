// Keys that name an object's prototype (issue 37, item 2), on real engines. A document may hold a field
// named `__proto__` (or `constructor` with a `prototype` inside): both engines store it and map it, and
// near-dup must read such documents, their mappings and the pages they are on like any other, sign each
// from its own text, and never let such a key stand for another field. Through the proxy, an update whose
// doc holds `{"__proto__": {"text": <another document's text>}}` once stored that other document's
// signature on the one updated; and a key of that kind under the near-dup prefix is refused, with the reason.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ownValue } from '../../src/own-keys.js';
import { createSigner } from '../../src/signature.js';
import { fixtureSample } from '../support/corpus.js';
import { expectedSignatures, runCliJson as cli, signatureFields } from '../support/documents.js';
import { type ProxyProcess, startProxyProcess } from '../support/proxy-process.js';
import { type EngineContext, forEachEngine } from './harness.js';

const docs = fixtureSample(5, { seed: 37 });
const signer = createSigner({});
const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-proto-'));

/** Another document's text: what a key through the prototype would make a document be signed as. */
const planted = docs[0].text;
/** A text of its own for odd document i, like no other document's. */
const own = (i: number) => Array.from({ length: 60 }, (_, k) => `odd${i}word${k}`).join(' ');

/**
 * Documents written as JSON text (a JavaScript object literal with `__proto__` would set the prototype
 * instead of making a key). Each has its own text in "text".
 */
const ODD: Array<{ id: string; text: string; json: string }> = [
  { id: 'proto-field', text: own(1), json: `{"text":${JSON.stringify(own(1))},"__proto__":{"text":${JSON.stringify(planted)}}}` },
  { id: 'ctor-field', text: own(2), json: `{"text":${JSON.stringify(own(2))},"constructor":{"prototype":{"text":${JSON.stringify(planted)}}}}` },
  { id: 'ctor-text', text: own(3), json: `{"constructor":{"prototype":{"text":${JSON.stringify(planted)}}},"text":${JSON.stringify(own(3))},"toString":"a field named toString"}` },
  // Indexed straight into the engine with a key of that kind under the prefix: the mapping holds near_dup.__proto__.
  { id: 'prefix-proto', text: own(4), json: `{"text":${JSON.stringify(own(4))},"near_dup":{"__proto__":{"params":"planted"}}}` },
];

/** One request to the engine or the proxy, its answer read with JSON.parse (own keys, whatever their names). */
async function call(base: string, method: string, path: string, body?: string, type = 'application/json'): Promise<{ status: number; json: any }> {
  const response = await fetch(`${base}${path}`, { method, headers: body === undefined ? {} : { 'content-type': type }, body });
  const text = await response.text();
  return { status: response.status, json: text ? JSON.parse(text) : undefined };
}

async function sourceOf(ctx: EngineContext, index: string, id: string): Promise<Record<string, any> | undefined> {
  const { status, json } = await call(ctx.engine.url, 'GET', `/${index}/_doc/${encodeURIComponent(id)}`);
  return status === 200 ? json._source : undefined;
}

async function indexRaw(ctx: EngineContext, index: string, items: ReadonlyArray<{ id: string; json: string }>): Promise<void> {
  const body = items.map((d) => `${JSON.stringify({ index: { _index: index, _id: d.id } })}\n${d.json}\n`).join('');
  const { json } = await call(ctx.engine.url, 'POST', '/_bulk?refresh=true', body, 'application/x-ndjson');
  expect(json.errors, JSON.stringify(json.items?.find((i: any) => i.index.error))).toBe(false);
}

const ordinary = docs.map((d) => ({ id: d.id, text: d.text, json: JSON.stringify({ text: d.text }) }));
const expected = expectedSignatures(signer, [...ordinary, ...ODD]);
const signatureOf = (text: string) => expectedSignatures(signer, [{ id: 'x', text }]).get('x');
/** The signature fields of a stored near_dup object, without a key "__proto__" planted there (compared on its own). */
const storedFields = (nearDup: Record<string, unknown> | undefined) => {
  if (nearDup === undefined) return undefined;
  const { ['__proto__']: _planted, ...rest } = nearDup;
  return signatureFields(rest);
};

forEachEngine('prototype keys in documents, mappings and answers', (ctx) => {
  const index = ctx.index('proto');
  const url = () => ['--url', ctx.engine.url];

  beforeAll(async () => {
    await indexRaw(ctx, index, [...ordinary.slice(0, 3), ...ODD, ...ordinary.slice(3)]);
  });

  it('the client reads a mapping and a page holding such keys: own keys, the prototype untouched', async () => {
    const mappings = await ctx.client.getMapping(index);
    const properties = mappings[index].mappings.properties;
    expect(Object.hasOwn(properties, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(properties)).toBe(Object.prototype);
    const page = await ctx.client.search(index, { size: 100, query: { match_all: {} } });
    expect(page.hits.hits).toHaveLength(ordinary.length + ODD.length);
    const odd = page.hits.hits.find((h) => h._id === 'proto-field')!._source as Record<string, unknown>;
    expect(Object.hasOwn(odd, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(odd)).toBe(Object.prototype);
    expect(({} as Record<string, unknown>).text).toBeUndefined();
  });

  it('annotate signs every document from its own text and does not fail', async () => {
    const run = await cli(['annotate', ...url(), '--index', index, '--field', 'text']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ annotated: ordinary.length + ODD.length, failed: 0, complete: true });
    for (const d of [...ordinary, ...ODD]) {
      const source = await sourceOf(ctx, index, d.id);
      expect(storedFields(source?.near_dup), d.id).toEqual(expected.get(d.id));
    }
    // The odd keys are still there, as they were.
    expect(ownValue((await sourceOf(ctx, index, 'proto-field'))!, '__proto__')).toEqual({ text: planted });
    expect((await sourceOf(ctx, index, 'ctor-field'))?.constructor).toEqual({ prototype: { text: planted } });
    expect(ownValue((await sourceOf(ctx, index, 'prefix-proto'))?.near_dup, '__proto__')).toEqual({ params: 'planted' });
    const again = await cli(['annotate', ...url(), '--index', index, '--field', 'text']);
    expect(again.json, again.stderr).toMatchObject({ annotated: 0, unchanged: ordinary.length + ODD.length, failed: 0 });
  });

  it('dedup (in memory and --full) reads the whole index and completes', async () => {
    for (const extra of [[], ['--full']]) {
      const run = await cli(['dedup', ...url(), '--index', index, ...extra]);
      expect(run.code, run.stderr).toBe(0);
      expect(run.json, run.stderr).toMatchObject({ complete: true, damaged: 0 });
    }
    // The documents with odd keys are no duplicates of the text planted in them.
    for (const d of ODD) expect((await sourceOf(ctx, index, d.id))?.near_dup.duplicate_of, d.id).not.toBe(docs[0].id);
  });

  it('similar by the id of a document with such keys answers for its own text', async () => {
    for (const d of ODD) {
      const run = await cli(['similar', ...url(), '--index', index, '--id', d.id, '--min-similarity', '0.1']);
      expect(run.code, run.stderr).toBe(0);
      expect(run.json.query.tokens).toBe(signer(d.text).tokens);
      expect(run.json.hits.map((h: { id: string }) => h.id)).not.toContain(docs[0].id);
    }
  });

  it('evaluate reads the documents with such keys as the others', async () => {
    const out = path.join(tmp, 'evaluate');
    const run = await cli(['evaluate', ...url(), '--index', index, '--field', 'text', '--out', out, '--sample', String(ordinary.length + ODD.length)]);
    expect(run.code, run.stderr).toBe(0);
    const report = JSON.parse(readFileSync(path.join(out, 'report.json'), 'utf8'));
    expect(report.pairs.total).toBeGreaterThan(0);
  });

  it('ingest indexes such documents signed by their own text; a key of that kind under the prefix costs its line', async () => {
    const target = ctx.index('proto-ingest');
    const file = path.join(tmp, `${target}.jsonl`);
    const errorsFile = path.join(tmp, `${target}-errors.jsonl`);
    const withId = (d: { id: string; json: string }) => `{"id":${JSON.stringify(d.id)},${d.json.slice(1)}`;
    const lines = [...ordinary.slice(0, 2), ...ODD.slice(0, 3), ...ordinary.slice(2)].map(withId);
    lines.splice(3, 0, withId(ODD[3]), `{"id":"dotted-proto","text":"some words here","near_dup.__proto__.params":"planted"}`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    const run = await cli(['ingest', ...url(), '--index', target, '--field', 'text', '--id-field', 'id', '--file', file, '--errors-file', errorsFile]);
    expect(run.json, run.stderr).toMatchObject({ indexed: ordinary.length + 3, failed: 2 });
    const failed = readFileSync(errorsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(failed.map((f) => f.id).sort()).toEqual(['dotted-proto', 'prefix-proto']);
    for (const f of failed) expect(f.reason ?? f.error).toMatch(/__proto__/);
    for (const d of [...ordinary, ...ODD.slice(0, 3)]) {
      const source = await sourceOf(ctx, target, d.id);
      expect(signatureFields(source?.near_dup), d.id).toEqual(expected.get(d.id));
    }
    // The index it made (its mapping now holds __proto__) takes another ingest and an annotate.
    const more = path.join(tmp, `${target}-more.jsonl`);
    writeFileSync(more, `{"id":"later","text":"words written later"}\n`);
    const second = await cli(['ingest', ...url(), '--index', target, '--field', 'text', '--id-field', 'id', '--file', more]);
    expect(second.code, second.stderr).toBe(0);
    const annotate = await cli(['annotate', ...url(), '--index', target, '--field', 'text']);
    expect(annotate.code, annotate.stderr).toBe(0);
  });

  it('similar by the planted text finds it where it is a document\'s own text, not where it is behind such a key', async () => {
    const run = await cli(['similar', ...url(), '--index', index, '--text', planted, '--min-similarity', '0.9']);
    expect(run.code, run.stderr).toBe(0);
    const ids = run.json.hits.map((h: { id: string }) => h.id);
    expect(ids).toContain(docs[0].id);
    for (const d of ODD) expect(ids).not.toContain(d.id);
  });
});

forEachEngine('prototype keys through the proxy', (ctx) => {
  const index = ctx.index('proto-proxy');
  let proxy: ProxyProcess;
  // Texts of four families: no two alike.
  const [a, b, c, d] = [...new Set(docs.map((x) => x.family))].slice(0, 4).map((f) => docs.find((x) => x.family === f)!.text);

  beforeAll(async () => {
    proxy = await startProxyProcess(['--url', ctx.engine.url, '--index', index, '--field', 'text', '--threads', '1', '--on-error', 'reject']);
    for (const [id, text] of [['d1', a], ['d2', b]]) {
      const put = await call(proxy.url, 'PUT', `/${index}/_doc/${id}?refresh=true`, JSON.stringify({ text }));
      expect(put.status, JSON.stringify(put.json)).toBe(201);
    }
  });
  afterAll(async () => {
    proxy?.run.child.kill('SIGTERM');
    await proxy?.run.done;
  });

  const storedSignature = async (id: string) => signatureFields((await sourceOf(ctx, index, id))?.near_dup);

  it('an update whose doc holds __proto__ with another text never stores that text\'s signature', async () => {
    expect(await storedSignature('d1')).toEqual(signatureOf(a));
    const forged = `{"doc":{"__proto__":{"text":${JSON.stringify(b)}}}}`;
    const update = await call(proxy.url, 'POST', `/${index}/_update/d1?refresh=true`, forged);
    expect([200, 400]).toContain(update.status);
    expect(await storedSignature('d1')).toEqual(signatureOf(a));
    // The same as one item of a bulk, beside an ordinary document.
    const bulk = [{ update: { _index: index, _id: 'd1' } }, forged, { index: { _index: index, _id: 'd7' } }, { text: d }].map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n');
    const answer = await call(proxy.url, 'POST', '/_bulk?refresh=true', `${bulk}\n`, 'application/x-ndjson');
    expect(answer.json.items[1].index.status).toBe(201);
    expect(await storedSignature('d1')).toEqual(signatureOf(a));
    expect(await storedSignature('d7')).toEqual(signatureOf(d));
    // similar by d1 does not answer d2 as its copy.
    const similar = await cli(['similar', '--url', ctx.engine.url, '--index', index, '--id', 'd1', '--min-similarity', '0.1']);
    expect(similar.code, similar.stderr).toBe(0);
    expect(similar.json.hits.filter((h: { id: string; jaccard: number }) => h.id === 'd2' && h.jaccard === 1)).toEqual([]);
  });

  it('an upsert, or a doc_as_upsert, whose text is only behind __proto__ is not signed with that text', async () => {
    for (const [id, body] of [
      ['u1', `{"doc":{"other":1},"upsert":{"__proto__":{"text":${JSON.stringify(b)}}}}`],
      ['u2', `{"doc":{"__proto__":{"text":${JSON.stringify(b)}}},"doc_as_upsert":true}`],
      ['u3', `{"doc":{"constructor":{"prototype":{"text":${JSON.stringify(b)}}}},"doc_as_upsert":true}`],
    ]) {
      const answer = await call(proxy.url, 'POST', `/${index}/_update/${id}?refresh=true`, body);
      const stored = await storedSignature(id);
      // Refused (no text of its own), or stored without a signature of the planted text.
      if (answer.status === 400) expect(answer.json.error.reason, id).toMatch(/no text/);
      expect(stored, id).not.toEqual(signatureOf(b));
    }
  });

  it('a key of that kind under the prefix is refused with the reason; elsewhere the document is signed from its own text', async () => {
    const refused = [
      `{"text":${JSON.stringify(c)},"near_dup":{"__proto__":{"params":"forged"}}}`,
      `{"text":${JSON.stringify(c)},"near_dup":{"constructor":{"prototype":{"params":"forged"}}}}`,
      `{"text":${JSON.stringify(c)},"near_dup.__proto__.params":"forged"}`,
    ];
    for (const [i, body] of refused.entries()) {
      const answer = await call(proxy.url, 'PUT', `/${index}/_doc/r${i}?refresh=true`, body);
      expect(answer.status, body).toBe(400);
      expect(answer.json.error.reason, body).toMatch(/near_dup.*(__proto__|constructor\.prototype)/);
      expect(await sourceOf(ctx, index, `r${i}`)).toBeUndefined();
    }
    const update = await call(proxy.url, 'POST', `/${index}/_update/d2?refresh=true`, `{"doc":{"near_dup":{"__proto__":{"params":"forged"}}}}`);
    expect(update.status).toBe(400);
    expect(update.json.error.reason).toMatch(/__proto__/);
    expect(await storedSignature('d2')).toEqual(signatureOf(b));
    // Elsewhere in the document: signed from its own text, the keys kept.
    const odd = `{"text":${JSON.stringify(c)},"__proto__":{"text":${JSON.stringify(b)}},"constructor":{"prototype":{"text":${JSON.stringify(b)}}}}`;
    const put = await call(proxy.url, 'PUT', `/${index}/_doc/odd?refresh=true`, odd);
    expect(put.status, JSON.stringify(put.json)).toBe(201);
    const source = await sourceOf(ctx, index, 'odd');
    expect(signatureFields(source?.near_dup)).toEqual(signatureOf(c));
    expect(ownValue(source!, '__proto__')).toEqual({ text: b });
  });
});

forEachEngine('near-dup fields a client puts in a document the proxy passes unsigned (--on-error pass)', (ctx) => {
  const index = ctx.index('proto-pass');
  let proxy: ProxyProcess;

  beforeAll(async () => {
    proxy = await startProxyProcess(['--url', ctx.engine.url, '--index', index, '--field', 'text', '--threads', '1', '--on-error', 'pass']);
  });
  afterAll(async () => {
    proxy?.run.child.kill('SIGTERM');
    await proxy?.run.done;
  });

  it('are dropped: a forged signature on a document without text, a key naming a prototype under the prefix; the rest is stored', async () => {
    const bodies = [
      '{"title":"no text here","near_dup":{"bands":["0_forged"],"params":"forged","minhash":"AAAA"},"near_dup.simhash":"0000000000000000"}',
      '{"text":"a text of its own","near_dup":{"__proto__":{"params":"forged"}},"kept":true}',
    ];
    for (const [i, body] of bodies.entries()) {
      const put = await call(proxy.url, 'PUT', `/${index}/_doc/p${i}?refresh=true`, body);
      expect(put.status, JSON.stringify(put.json)).toBe(201);
      const source = await sourceOf(ctx, index, `p${i}`);
      expect(source, body).toBeDefined();
      expect(Object.keys(source!).filter((k) => k.startsWith('near_dup')), body).toEqual([]);
    }
    expect((await sourceOf(ctx, index, 'p1'))?.kept).toBe(true);
  });
});
