// One bad document never costs the others: a line whose id the engines would refuse is failed by itself
// before sending, and a bulk request the engine refuses as a whole is sent again in halves until only the
// guilty operations fail, each listed.
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { expect, it } from 'vitest';
import { BulkWriter } from '../../src/jobs/bulk-writer.js';
import { ingestStream } from '../../src/jobs/ingest.js';
import { forEachEngine } from './harness.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-bulk-'));

forEachEngine('bulk requests with one bad document', (ctx) => {
  it('ingest of 1,000 lines with one id over 512 bytes indexes the other 999 and lists that one line', async () => {
    const index = ctx.index('long-id');
    const lines = Array.from({ length: 1000 }, (_, i) => JSON.stringify({ id: i === 500 ? 'x'.repeat(600) : `doc-${i}`, text: `document number ${i} with a few words of its own` }));
    const errorsFile = path.join(tmp, `${index}.jsonl`);
    const summary = await ingestStream(ctx.client, Readable.from([`${lines.join('\n')}\n`]), { index, fields: ['text'], signer: {}, output: { prefix: 'near_dup', idField: 'id', errorsFile } });
    expect(summary).toMatchObject({ indexed: 999, failed: 1 });
    await ctx.client.refresh(index);
    expect(await ctx.client.count(index)).toBe(999);
    const listed = readFileSync(errorsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
    expect(listed).toHaveLength(1);
    expect(JSON.stringify(listed[0])).toMatch(/"line":501.*is 600 bytes; the engines take ids of at most 512 bytes/);
  });

  it('a bulk request the engine refuses as a whole is split, so only the guilty operation fails', async () => {
    const index = ctx.index('refused-whole');
    await ctx.client.createIndex(index);
    const failed: Array<{ id: string; reason: string }> = [];
    let succeeded = 0;
    const writer = new BulkWriter({
      send: (ndjson) => ctx.client.bulkNdjson(ndjson),
      onSuccess: () => succeeded++,
      onFailure: (op, reason) => failed.push({ id: op.id, reason }),
    });
    for (let i = 0; i < 200; i++) {
      const id = i === 123 ? 'y'.repeat(600) : `doc-${i}`;
      await writer.add({ id, action: { index: { _index: index, _id: id } }, body: { n: i } });
    }
    await writer.flush();
    expect(failed.map((f) => f.id.length)).toEqual([600]);
    expect(failed[0].reason).toMatch(/refused by the engine: .*(id|_id).*512/);
    expect(succeeded).toBe(199);
    await ctx.client.refresh(index);
    expect(await ctx.client.count(index)).toBe(199);
  });
});
