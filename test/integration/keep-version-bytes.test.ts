// annotate --keep-version writes each document back whole, and so must write the document's own bytes
// (issue 48): integers beyond 2^53, "1.0" and "1e2", key order ("10" before "2"), each as the producer indexed
// them, the near_dup member the only change, the producer's _version kept. The documents are indexed and read
// back as text with fetch (never through JSON.parse, which would round the very numbers under test). A
// document the producer changes while annotate holds it still answers 409 and is read and signed again: the
// relay holds annotate's request while the producer writes its next version.
import { applyEdits, modify } from 'jsonc-parser';
import { expect, it } from 'vitest';
import { runCliJson as cli } from '../support/documents.js';
import { FaultProxy, type RequestKind } from '../support/fault-proxy.js';
import { type EngineContext, forEachEngine } from './harness.js';

const TEXT = 'the quick brown fox jumps over the lazy dog and keeps running far away from the farm';
const LATER = 'an altogether different text, written by the producer while annotate was holding the document';
/** What JSON.parse and JSON.stringify would change: each of these is rewritten by a round trip. */
const TOUCHY = '"big":1234567890123456789,"edge":9007199254740993,"one":1.0,"sci":1e2,"10":"ten","2":"two","nested":{"id":9223372036854775807}';

/** The text with the near_dup member removed (and nothing else). */
function withoutNearDup(text: string): string {
  return applyEdits(text, modify(text, ['near_dup'], undefined, {}));
}

/** Indexes `text` as it is at an external version, the way a producer that sets versions does. */
async function produce(ctx: EngineContext, index: string, id: string, text: string, version: number | string, routing?: string): Promise<void> {
  const query = new URLSearchParams({ version: String(version), version_type: 'external', refresh: 'true', ...(routing ? { routing } : {}) });
  const response = await fetch(`${ctx.engine.url}/${index}/_doc/${id}?${query}`, { method: 'PUT', headers: { 'content-type': 'application/json' }, body: text });
  expect(response.status, await response.text()).toBeLessThan(300);
}

/** The stored source as text, and the document's _version as the engine wrote it (a long may pass 2^53). */
async function stored(ctx: EngineContext, index: string, id: string, routing?: string): Promise<{ text: string; version: string }> {
  const query = routing ? `?routing=${routing}` : '';
  const source = await fetch(`${ctx.engine.url}/${index}/_source/${id}${query}`);
  expect(source.status).toBe(200);
  const doc = await (await fetch(`${ctx.engine.url}/${index}/_doc/${id}${query}`)).text();
  return { text: await source.text(), version: /"_version":(\d+)/.exec(doc)?.[1] ?? doc };
}

forEachEngine('annotate --keep-version keeps the bytes', (ctx) => {
  it('each document is written back from its own text: only the near_dup member added, _version as the producer wrote it', async () => {
    const index = ctx.index('keep-version-bytes');
    // Three shards, so that a document read or written without its routing would be looked for on the wrong one.
    await ctx.client.createIndex(index, { settings: { number_of_shards: 3 }, mappings: { properties: { near_dup: { properties: { cluster_id: { type: 'keyword' } } } } } });
    const docs = {
      plain: `{"text":${JSON.stringify(TEXT)},${TOUCHY}}`,
      spaced: `{ "text" : ${JSON.stringify(TEXT)} ,  ${TOUCHY} }`,
      // Signed once already and clustered by dedup: the near_dup object's other members stay.
      held: `{"text":${JSON.stringify(TEXT)},${TOUCHY},"near_dup":{"cluster_id":"c7"}}`,
      routed: `{"text":${JSON.stringify(TEXT)},${TOUCHY}}`,
      // A producer whose versions are nanoseconds: a version beyond 2^53, which a number would round up to ...256.
      nanos: `{"text":${JSON.stringify(TEXT)},${TOUCHY}}`,
    };
    const versionOf = (id: string) => (id === 'nanos' ? '1700000000000000255' : '5');
    for (const [id, text] of Object.entries(docs)) await produce(ctx, index, id, text, versionOf(id), id === 'routed' ? 'r1' : undefined);
    const run = await cli(['annotate', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--keep-version']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.json).toMatchObject({ annotated: 5, failed: 0, conflicts: 0, complete: true });
    for (const [id, text] of Object.entries(docs)) {
      const after = await stored(ctx, index, id, id === 'routed' ? 'r1' : undefined);
      expect(after.version, id).toBe(versionOf(id));
      expect(after.text, id).toContain('"params":');
      expect(withoutNearDup(after.text), id).toBe(id === 'spaced' ? text.replace(/ }$/, '}') : withoutNearDup(text));
    }
    expect((await stored(ctx, index, 'held')).text).toContain('"cluster_id":"c7"');
  });

  it('a source indexed over several lines goes out on one bulk line: its line breaks become spaces, every value as written', async () => {
    const index = ctx.index('keep-version-lines');
    const text = `{\n  "text": ${JSON.stringify(TEXT)},\n  ${TOUCHY.replaceAll(',"', ',\n  "')}\n}`;
    await produce(ctx, index, 'lines', text, 3);
    const run = await cli(['annotate', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--keep-version']);
    expect(run.code, run.stderr).toBe(0);
    const after = await stored(ctx, index, 'lines');
    expect(after.version).toBe('3');
    expect(withoutNearDup(after.text)).toBe(text.replaceAll('\n', ' ').replace(/ +}$/, '}'));
  });

  it("the client reads an answer as the engine wrote it, up to a bound, and an error answer as it reads any other", async () => {
    const index = ctx.index('keep-version-text');
    const text = `{"text":"short",${TOUCHY}}`;
    await produce(ctx, index, 'one', text, 1);
    const answer = await ctx.client.requestText('POST', '/_mget', { docs: [{ _index: index, _id: 'one' }] });
    expect(answer).toContain(`"_source":${text}`);
    await expect(ctx.client.requestText('POST', '/_mget', { docs: [{ _index: index, _id: 'one' }] }, 100)).rejects.toThrow(/larger than 100 bytes/);
    await expect(ctx.client.requestText('GET', `/${index}-missing/_doc/one`)).rejects.toMatchObject({ statusCode: 404, type: 'index_not_found_exception' });
  });

  /**
   * The producer writes version 6 of a document (new text, its own bytes) while the relay holds annotate's
   * first request of `kind` that names it: annotate's write of version 5 is refused, the document read again,
   * and version 6 signed and written back at version 6, its bytes kept.
   */
  const producerWritesWhileHeld = async (kind: RequestKind) => {
    const index = ctx.index(`keep-version-${kind}-held`);
    const first = `{"text":${JSON.stringify(TEXT)},${TOUCHY}}`;
    const second = `{"text":${JSON.stringify(LATER)},"rev":6,${TOUCHY}}`;
    await produce(ctx, index, 'moving', first, 5);
    const relay = new FaultProxy(ctx.engine.url);
    const url = await relay.start();
    let held = 0;
    relay.decide = (request) => {
      if (request.kind !== kind || !request.body.includes('"moving"') || held++ > 0) return 'pass';
      return { holdUntil: produce(ctx, index, 'moving', second, 6) };
    };
    try {
      const run = await cli(['annotate', '--url', url, '--index', index, '--field', 'text', '--keep-version']);
      expect(run.code, run.stderr).toBe(0);
      expect(relay.injected.held).toBe(1);
      expect(run.json).toMatchObject({ annotated: 1, conflicts: 1, failed: 0, complete: true });
    } finally {
      await relay.stop();
    }
    const after = await stored(ctx, index, 'moving');
    expect(after.version).toBe('6');
    expect(withoutNearDup(after.text)).toBe(second);
    // The signature written is that of version 6's text: a second run finds it current.
    const again = await cli(['annotate', '--url', ctx.engine.url, '--index', index, '--field', 'text', '--keep-version', '--dry-run']);
    expect(again.json).toMatchObject({ annotated: 0, unchanged: 1 });
  };

  it('a document the producer changes while annotate writes it (the bulk held) answers 409, and is read and signed again', () => producerWritesWhileHeld('bulk'));

  it('a document the producer changes after the scan and before its text is read (the read held) is read and signed again', () => producerWritesWhileHeld('mget'));
});
