// A scroll whose context a lost node took (500 search_phase_execution_exception on a continuation page):
// the scan starts again from what it has read, reading every document once; another 500 is not a lost page.
import { expect, it } from 'vitest';
import { EngineResponseError } from '../../src/engine/errors.js';
import { type ScanHit, scanIndex } from '../../src/engine/scan.js';

const docs: ScanHit[] = Array.from({ length: 25 }, (_, i) => ({ _index: 'i', _id: `d${i}`, _source: {} }) as ScanHit);

/** A scroll of pages of 10 over `docs`; the first continuation fails with `failure` (once). */
function scrolling(failure: EngineResponseError) {
  let failed = false;
  let at = 0;
  return {
    async request(_method: string, path: string): Promise<any> {
      if (path.endsWith('/_search')) {
        at = 10;
        return { _scroll_id: 's', hits: { hits: docs.slice(0, 10) } };
      }
      if (path === '/_search/scroll') {
        if (!failed) {
          failed = true;
          throw failure;
        }
        const page = docs.slice(at, at + 10);
        at += 10;
        return { _scroll_id: 's', hits: { hits: page } };
      }
      return {};
    },
  };
}

const phaseFailed = (type: string) => new EngineResponseError(500, type, 'Phase failed', 'POST', '/_search/scroll', 'http://x', {});

it('a scroll page a lost node took is read again from a new scroll, every document once', async () => {
  const read: string[] = [];
  const restarts: string[] = [];
  for await (const page of scanIndex(scrolling(phaseFailed('search_phase_execution_exception')), { index: 'i', pointInTime: false, onRestart: (why) => restarts.push(why) })) {
    read.push(...page.map((h) => h._id));
  }
  expect(restarts).toHaveLength(1);
  expect(read.sort()).toEqual(docs.map((d) => d._id).sort());
});

it('another 500 on a scroll page is an error, not a lost page', async () => {
  const scan = async () => {
    for await (const _ of scanIndex(scrolling(phaseFailed('illegal_state_exception')), { index: 'i', pointInTime: false })) {
      // read on
    }
  };
  await expect(scan()).rejects.toThrow(/Phase failed/);
});

it('a restarted scroll skips by the set the caller keeps (dedup: the documents its table holds), keeping none of its own', async () => {
  const held = new Set<string>();
  let asked = 0;
  const seen = {
    has: (id: string) => {
      asked++;
      return held.has(id);
    },
    add: () => undefined,
  };
  const read: string[] = [];
  for await (const page of scanIndex(scrolling(phaseFailed('search_phase_execution_exception')), { index: 'i', pointInTime: false, seen })) {
    for (const h of page) {
      read.push(h._id);
      held.add(h._id); // the caller takes each document as it comes
    }
  }
  expect(read.sort()).toEqual(docs.map((d) => d._id).sort());
  expect(asked).toBeGreaterThan(docs.length); // the first page read again was skipped through it
});
