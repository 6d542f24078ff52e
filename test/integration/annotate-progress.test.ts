// annotate's progress counts the writes (issue 50): with every bulk write held by a relay, the report made
// once every document is read says none is done yet; the last says all are, once the engine acknowledged them.
import { expect, it } from 'vitest';
import { connect } from '../../src/engine/client.js';
import { type AnnotateProgress, annotateIndex } from '../../src/jobs/annotate.js';
import { fixtureSample } from '../support/corpus.js';
import { indexDocuments } from '../support/documents.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { forEachEngine } from './harness.js';

const docs = fixtureSample(30);

forEachEngine('annotate progress', (ctx) => {
  it('counts documents written and acknowledged, not only read: the ETA waits for the writes', async () => {
    const index = ctx.index('progress');
    await indexDocuments(ctx.client, index, docs);
    let release = () => {};
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const proxy = new FaultProxy(ctx.engine.url);
    proxy.decide = (request) => (request.kind === 'bulk' ? { holdUntil: held } : 'pass');
    const client = await connect({ ...ctx.connection, url: await proxy.start() });
    const reports: AnnotateProgress[] = [];
    let allRead: AnnotateProgress | undefined;
    try {
      const summary = await annotateIndex(client, {
        index,
        fields: ['text'],
        signer: {},
        onProgress: (p) => {
          reports.push(p);
          // Every document read and signed, the writes held: the report says so, then the writes go.
          if (!allRead && p.seen === docs.length) {
            allRead = p;
            release();
          }
        },
      });
      expect(summary.annotated).toBe(docs.length);
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
