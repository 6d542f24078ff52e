// annotate and ingest against real engines, on a sample of the PEP revisions corpus.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { beforeAll, describe, expect, it } from 'vitest';
import { nearDupFields } from '../../src/annotation.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { ingestStream } from '../../src/jobs/ingest.js';
import { createSigner } from '../../src/signature.js';
import { testCorpora } from '../support/corpus.js';
import { indexDocuments as indexDocs, runCli, sourcesById as allSources } from '../support/documents.js';
import { forEachEngine } from './harness.js';

const signer = createSigner();
const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-annotate-'));

function withoutTime(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!fields) return fields;
  const { annotated_at: _ignored, ...rest } = fields;
  return rest;
}

for (const { name, docs } of testCorpora(25, 25)) {
  const expectedFields = new Map(docs.map((d) => [d.id, nearDupFields(signer(d.text), signer.settings, undefined, 'joined')]));

  forEachEngine(`annotate (${name})`, (ctx) => {
    const full = ctx.index('peps-full');

    beforeAll(async () => {
      await indexDocs(ctx.client, full, docs);
    });

    it(`annotates every document (${docs.length} PEP revisions) with the fields near-dup sign gives, touching nothing else`, async () => {
      const summary = await annotateIndex(ctx.client, { index: full, fields: ['text'], signer: {}, output: { prefix: 'near_dup', errorsFile: path.join(tmp, `e1-${full}.jsonl`) } });
      expect(summary).toMatchObject({ seen: docs.length, annotated: docs.length, failed: 0, complete: true });
      const stored = await allSources(ctx.client, full);
      expect(stored.size).toBe(docs.length);
      for (const doc of docs) {
        const source = stored.get(doc.id)!;
        const { near_dup, ...rest } = source;
        expect(JSON.stringify(rest), `other fields of ${doc.id}`).toBe(JSON.stringify(doc));
        expect(withoutTime(near_dup), doc.id).toEqual(withoutTime(expectedFields.get(doc.id) as never));
        expect(Date.parse(near_dup.annotated_at)).toBeGreaterThan(Date.now() - 600_000);
      }
    });

    it('skips documents whose stored signature is current, and redoes those whose text changed', async () => {
      const full = ctx.index('skips');
      await indexDocs(ctx.client, full, docs);
      await annotateIndex(ctx.client, { index: full, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      const changed = docs[3];
      await ctx.client.request('POST', `/${full}/_update/${encodeURIComponent(changed.id)}`, { doc: { text: `${changed.text}\nA new closing line.` } }, { refresh: 'true' });
      const summary = await annotateIndex(ctx.client, { index: full, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      expect(summary).toMatchObject({ seen: docs.length, annotated: 1, unchanged: docs.length - 1, failed: 0 });
      const stored = await allSources(ctx.client, full);
      expect(stored.get(changed.id)!.near_dup.content_hash).toBe(signer(`${changed.text}\nA new closing line.`).content_hash);
    });

    it('reads what was written before it started and is not searchable yet (refresh off): a text changed by a partial update, a new document', async () => {
      const index = ctx.index('unrefreshed');
      await ctx.client.createIndex(index, { settings: { refresh_interval: '-1' } });
      await indexDocs(ctx.client, index, docs);
      await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      const [changed, added] = [docs[3], { ...docs[4], id: 'added-unrefreshed' }];
      const text = `${changed.text}\nA new closing line.`;
      await ctx.client.request('POST', `/${index}/_update/${encodeURIComponent(changed.id)}`, { doc: { text } });
      await ctx.client.request('PUT', `/${index}/_doc/${added.id}`, added);
      const summary = await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup' } });
      expect(summary).toMatchObject({ annotated: 2, unchanged: docs.length - 1, failed: 0, complete: true });
      const stored = await allSources(ctx.client, index);
      expect(stored.get(changed.id)!.near_dup.content_hash).toBe(signer(text).content_hash);
      expect(stored.get(added.id)!.near_dup.content_hash).toBe(signer(added.text).content_hash);
    });

    it('reports bad documents one by one and goes on: missing field, not text, arrays joined, huge text cut', async () => {
      const index = ctx.index('bad-docs');
      const errorsFile = path.join(tmp, `bad-${index}.jsonl`);
      // Stored but not indexed, so one field can hold a string in one document and a number in another.
      await ctx.client.createIndex(index, { mappings: { properties: { text: { type: 'object', enabled: false } } } });
      await indexDocs(ctx.client, index, [
        { id: 'good', text: 'an ordinary document with a few words in it' },
        { id: 'missing', title: 'no text field here' },
        { id: 'number', text: 42 },
        { id: 'object', text: { nested: true } },
        { id: 'array', text: ['first paragraph of words', 'second paragraph of words'] },
        { id: 'huge', text: 'word '.repeat(300_000) },
        { id: 'junk', text: '\u0000\u0001\ufffd\ud800 binary \u0007 junk' },
        { id: 'empty', text: '   ' },
      ]);
      const summary = await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, limits: { maxChars: 100_000 }, output: { prefix: 'near_dup', errorsFile } });
      expect(summary).toMatchObject({ seen: 8, annotated: 5, failed: 3, empty: 1, cut: 1, complete: true });
      const errors = readFileSync(errorsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(errors.map((e) => e.id).sort()).toEqual(['missing', 'number', 'object']);
      expect(errors.find((e) => e.id === 'number').reason).toMatch(/field "text" holds a number, not text/);
      const stored = await allSources(ctx.client, index);
      expect(stored.get('array')!.near_dup.content_hash).toBe(signer('first paragraph of words\nsecond paragraph of words').content_hash);
      expect(stored.get('missing')!.near_dup).toBeUndefined();
      expect(stored.get('empty')!.near_dup.token_count).toBe(0);
    });

    it('two slices together give what one full run gives', async () => {
      const index = ctx.index('peps-sliced');
      await indexDocs(ctx.client, index, docs);
      const a = await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, read: { slice: { id: 0, max: 2 } }, state: { checkpointFile: path.join(tmp, `s0-${index}.json`) }, output: { prefix: 'near_dup' } });
      const b = await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, read: { slice: { id: 1, max: 2 } }, state: { checkpointFile: path.join(tmp, `s1-${index}.json`) }, output: { prefix: 'near_dup' } });
      expect(a.annotated + b.annotated).toBe(docs.length);
      expect(a.annotated).toBeGreaterThan(0);
      expect(b.annotated).toBeGreaterThan(0);
      const stored = await allSources(ctx.client, index);
      for (const doc of docs) expect(withoutTime(stored.get(doc.id)!.near_dup)).toEqual(withoutTime(expectedFields.get(doc.id) as never));
    });

    it('killed midway, --resume finishes with the same result as an uninterrupted run', async () => {
      const index = ctx.index('peps-killed');
      await indexDocs(ctx.client, index, docs);
      const checkpoint = path.join(tmp, `cp-${index}.json`);
      const args = ['annotate', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--checkpoint', checkpoint, '--page-size', '10', '--bulk-size', '5', '--concurrency', '1', '--threads', '1'];
      const first = runCli(args);
      // Kill it hard once some, but not all, documents carry a signature.
      let annotated = 0;
      for (let i = 0; i < 600 && annotated < 5; i++) {
        await new Promise((r) => setTimeout(r, 50));
        await ctx.client.refresh(index).catch(() => undefined);
        annotated = await ctx.client.count(index, { exists: { field: 'near_dup.params' } });
      }
      first.child.kill('SIGKILL');
      const killed = await first.done;
      expect(killed.signal).toBe('SIGKILL');
      // A bulk request the engine had already received still completes after its client died.
      await new Promise((r) => setTimeout(r, 1500));
      await ctx.client.refresh(index);
      const before = await ctx.client.count(index, { exists: { field: 'near_dup.params' } });
      expect(before).toBeGreaterThan(0);
      expect(before).toBeLessThan(docs.length);

      const resumed = runCli([...args, '--resume']);
      const result = await resumed.done;
      expect(result.code, result.stderr).toBe(0);
      const summary = JSON.parse(result.stdout.trim().split('\n').pop()!);
      expect(summary.complete).toBe(true);
      // Only the rest was read again, not the documents the killed run had finished.
      expect(summary.seen).toBe(docs.length - before);
      const stored = await allSources(ctx.client, index);
      for (const doc of docs) expect(withoutTime(stored.get(doc.id)!.near_dup), doc.id).toEqual(withoutTime(expectedFields.get(doc.id) as never));
    });

    it('a dry run reports what it would write and writes nothing', async () => {
      const index = ctx.index('peps-dry');
      await indexDocs(ctx.client, index, docs.slice(0, 10));
      const summary = await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup', dryRun: true } });
      expect(summary).toMatchObject({ seen: 10, annotated: 10, dryRun: true });
      expect(summary.sample?.length).toBeGreaterThan(0);
      expect(await ctx.client.count(index, { exists: { field: 'near_dup.params' } })).toBe(0);
    });

    it('ingest from NDJSON gives the same fields as annotate', async () => {
      const index = ctx.index('peps-ingest');
      // Two bad lines: not JSON, and a document in Latin-1 (not UTF-8), which is refused, not indexed mangled.
      const ndjson = Buffer.concat([
        Buffer.from(docs.map((d) => JSON.stringify(d)).join('\n') + '\nnot json\n'),
        Buffer.from(`${JSON.stringify({ id: 'latin1', text: 'caf\xe9 cr\xe8me br\xfbl\xe9e' })}\n`, 'latin1'),
      ]);
      const errorsFile = path.join(tmp, `ingest-${index}.jsonl`);
      const summary = await ingestStream(ctx.client, Readable.from([ndjson]), { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup', idField: 'id', errorsFile } });
      expect(summary).toMatchObject({ seen: docs.length + 2, indexed: docs.length, failed: 2 });
      const failures = readFileSync(errorsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
      expect(failures.map((f) => f.line)).toEqual([docs.length + 1, docs.length + 2]);
      expect(failures[1].reason).toMatch(/not valid UTF-8: byte 0xe9/);
      expect(await ctx.client.count(index, { ids: { values: ['latin1'] } })).toBe(0);
      const stored = await allSources(ctx.client, index);
      for (const doc of docs) {
        const { near_dup, ...rest } = stored.get(doc.id)!;
        expect(JSON.stringify(rest)).toBe(JSON.stringify(doc));
        expect(withoutTime(near_dup)).toEqual(withoutTime(expectedFields.get(doc.id) as never));
      }
    });

    it('ingest of exactly a thousand documents (a whole number of check chunks) ends complete', async () => {
      // The final check with the engine once asked for an empty _mget, which the engines refuse.
      const index = ctx.index('ingest-thousand');
      const thousand = Array.from({ length: 1000 }, (_, i) => ({ id: `t${i}`, text: `${docs[i % docs.length].text.slice(0, 200)} ${i}` }));
      const summary = await ingestStream(ctx.client, Readable.from([thousand.map((d) => JSON.stringify(d)).join('\n') + '\n']), { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup', idField: 'id', errorsFile: path.join(tmp, `ingest-${index}.jsonl`) } });
      expect(summary).toMatchObject({ seen: 1000, indexed: 1000, failed: 0 });
    });

    it('the CLI refuses a missing index with one clear line and exit code 1', async () => {
      const result = await runCli(['annotate', '--url', ctx.engine.url, '--index', 'nd-test-no-such-index', '--field', 'text', '--dry-run']).done;
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toHaveLength(1);
      expect(result.stderr).toMatch(/nd-test-no-such-index/);
    });
  });

  describe(`the ${name} sample`, () => {
    it('mixes versions of the same text', () => {
      expect(docs.length).toBeGreaterThan(60);
      expect(new Set(docs.map((d) => d.family)).size).toBe(25);
      writeFileSync(path.join(tmp, 'ok'), '');
    });
  });
}
