// A document's bytes outside the near-dup fields reach the engine exactly as given (issue 48): integers beyond
// 2^53, "1.0" and "1e2", key order ("10" before "2"), spacing, from every path that writes a user's source —
// ingest, the proxy's documents, update bodies and upserts, and documents that already hold a near_dup object
// or dotted keys reaching it. Each stored `_source` is read back as text (never through JSON.parse, which
// would round the very numbers under test) and compared byte for byte with what was sent, near_dup removed.
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { applyEdits, modify } from 'jsonc-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliJson as cli } from '../support/documents.js';
import { type ProxyProcess, startProxyProcess } from '../support/proxy-process.js';
import { type EngineContext, forEachEngine } from './harness.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-bytes-'));
const TEXT = 'the quick brown fox jumps over the lazy dog and keeps running far away from the farm';
/** What JSON.parse and JSON.stringify would change: each of these is rewritten by a round trip. */
const TOUCHY = '"big":1234567890123456789, "edge":9007199254740993,"neg":-9007199254740993,"one":1.0,"sci":1e2,"10":"ten","2":"two","nested":{"id":9223372036854775807}';

/** The text with the member at the prefix removed (and nothing else). */
function withoutNearDup(text: string, at: string[] = ['near_dup']): string {
  return applyEdits(text, modify(text, at, undefined, {}));
}

async function rawSource(ctx: EngineContext, index: string, id: string): Promise<string> {
  const response = await fetch(`${ctx.engine.url}/${index}/_source/${encodeURIComponent(id)}`);
  expect(response.status).toBe(200);
  return response.text();
}

async function send(base: string, method: string, target: string, body: string, type = 'application/json'): Promise<any> {
  const response = await fetch(`${base}${target}`, { method, headers: { 'content-type': type }, body });
  const json = await response.json();
  expect(response.status, JSON.stringify(json)).toBeLessThan(300);
  return json;
}

forEachEngine('bytes outside the near-dup fields kept', (ctx) => {
  it('ingest: each line reaches the engine as written, the near_dup object the only change', async () => {
    const index = ctx.index('bytes-ingest');
    const lines = [
      `{"id":"plain","text":${JSON.stringify(TEXT)},${TOUCHY}}`,
      // Read back and ingested again: its old near_dup object and a forged dotted key are replaced.
      `{"id":"again", "text":${JSON.stringify(TEXT)} ,${TOUCHY},"near_dup":{"cluster_id":"c7","simhash":"stale"},"near_dup.bands":["0:forged"]}`,
    ];
    const file = path.join(tmp, `${index}.ndjson`);
    writeFileSync(file, `${lines.join('\n')}\n`);
    const run = await cli(['ingest', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--id-field', 'id', '--file', file]);
    expect(run.code, run.stderr).toBe(0);
    const plain = await rawSource(ctx, index, 'plain');
    expect(withoutNearDup(plain)).toBe(lines[0]);
    const again = await rawSource(ctx, index, 'again');
    expect(withoutNearDup(again)).toBe(withoutNearDup(withoutNearDup(lines[1], ['near_dup.bands'])));
    expect(again).toContain('"cluster_id":"c7"');
    expect(again).not.toContain('forged');
    expect(again).not.toContain('stale');
  });

  describe('through the proxy', () => {
    let proxy: ProxyProcess;
    const index = ctx.index('bytes-proxy');
    beforeAll(async () => {
      await ctx.client.createIndex(index);
      proxy = await startProxyProcess(['--url', ctx.engine.url, '--index', index, '--field', 'text', '--threads', '1']);
    });
    afterAll(async () => {
      proxy?.run.child.kill('SIGTERM');
      await proxy?.run.done;
    });

    it('a document that already holds a near_dup object, indexed and bulk-indexed again', async () => {
      const doc = `{"text":${JSON.stringify(TEXT)},  ${TOUCHY},"near_dup":{"cluster_id":"c1","simhash":"stale"}}`;
      await send(proxy.url, 'PUT', `/${index}/_doc/held?refresh=true`, doc);
      expect(withoutNearDup(await rawSource(ctx, index, 'held'))).toBe(withoutNearDup(doc));
      await send(proxy.url, 'POST', '/_bulk?refresh=true', `{"index":{"_index":"${index}","_id":"bulk"}}\n${doc}\n`, 'application/x-ndjson');
      const stored = await rawSource(ctx, index, 'bulk');
      expect(withoutNearDup(stored)).toBe(withoutNearDup(doc));
      expect(stored).toContain('"cluster_id":"c1"');
    });

    // The engine writes an updated source itself (an upsert's "1e2" is stored as "100.0", spacing dropped),
    // so the oracle is the same update sent to the engine directly: both stored sources equal, near_dup aside.
    const sameAsDirect = async (id: string, body: string) => {
      await send(proxy.url, 'POST', `/${index}/_update/${id}?refresh=true`, body);
      await send(ctx.engine.url, 'POST', `/${index}/_update/${id}-direct?refresh=true`, body);
      const [through, direct] = [await rawSource(ctx, index, id), await rawSource(ctx, index, `${id}-direct`)];
      expect(through).toContain('"near_dup"');
      expect(withoutNearDup(through)).toBe(direct);
      return through;
    };

    it('an update doc, a doc_as_upsert and an upsert keep their numbers', async () => {
      const upd = await sameAsDirect('upd', `{"doc":{"text":${JSON.stringify(TEXT)},${TOUCHY}},"doc_as_upsert":true}`);
      expect(upd).toContain('"edge":9007199254740993');
      await sameAsDirect('ups', `{"doc":{"n":1},"upsert":{"text":${JSON.stringify(TEXT)},${TOUCHY}}}`);
      // An update of the text on a stored document: the engine merges the doc, whose numbers must arrive as sent.
      const merged = await sameAsDirect('ups', '{"doc":{"text":"another text altogether, with words of its own for a new signature","later":1234567890123456787}}');
      expect(merged).toContain('"later":1234567890123456787');
      expect(merged).toContain('"big":1234567890123456789');
    });
  });
});
