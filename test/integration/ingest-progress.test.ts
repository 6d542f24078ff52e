// ingest's progress counts the writes (issue 50), as annotate's does: with every bulk write held by a relay, the
// report made once every line is read says none is done yet; the last says all are, once the engine acknowledged
// them (the ETA and rate counted lines read, which run ahead of the writes).
import { Readable } from 'node:stream';
import { expect, it } from 'vitest';
import { connect } from '../../src/engine/client.js';
import { type IngestProgress, ingestStream } from '../../src/jobs/ingest.js';
import { fixtureSample } from '../support/corpus.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { forEachEngine } from './harness.js';

const docs = fixtureSample(30);

forEachEngine('ingest progress', (ctx) => {
  it('counts documents written and acknowledged, not only read', async () => {
    const index = ctx.index('ingest-progress');
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const proxy = new FaultProxy(ctx.engine.url);
    // The documents' writes held (not the probe of write privileges, a bulk request too, made before them).
    proxy.decide = (request) => (request.kind === 'bulk' && request.body.includes(docs[0].id) ? { holdUntil: held } : 'pass');
    const client = await connect({ ...ctx.connection, url: await proxy.start() });
    const reports: IngestProgress[] = [];
    let allRead: IngestProgress | undefined;
    try {
      const input = Readable.from([docs.map((d) => JSON.stringify({ id: d.id, text: d.text })).join('\n')]);
      const summary = await ingestStream(client, input, {
        index,
        fields: ['text'],
        output: { idField: 'id' },
        onProgress: (p) => {
          reports.push(p);
          // Every line read and signed, the writes held: the report says so, then the writes go.
          if (!allRead && p.seen === docs.length) {
            allRead = p;
            release();
          }
        },
      });
      expect(summary.indexed).toBe(docs.length);
    } finally {
      release();
      await client.close();
      await proxy.stop();
    }
    expect(allRead?.done).toBe(0);
    expect(reports.at(-1)?.done).toBe(docs.length);
    for (const p of reports) expect(p.done).toBeLessThanOrEqual(p.seen);
  });
});
