// Issue 37, item 7: the proxy as a hostile client sees it. Requests the engines take as writes must be
// read as writes by the proxy (a bulk under any first segment), and an action line built to exhaust the
// proxy's stack is an unreadable line, not a failure of the proxy.
import { describe, expect, it } from 'vitest';
import { readAction } from '../../src/proxy/bulk-items.js';
import { rawPath } from '../../src/proxy/raw-path.js';
import { routeOf } from '../../src/proxy/server.js';

describe('a bulk under any first segment', () => {
  it('is a bulk, as the engines route it (/_doc/_bulk, /_all/_bulk write the items that name their index)', () => {
    for (const [path, index] of [
      ['/_doc/_bulk', '_doc'],
      ['/_all/_bulk', '_all'],
      ['/_anything/_bulk/', '_anything'],
      ['/%5Fdoc/_bulk', '_doc'],
      ['/_doc/_bulk?refresh=true', '_doc'],
    ] as const) {
      expect(routeOf('POST', rawPath(path)), path).toEqual({ kind: 'bulk', index });
      expect(routeOf('PUT', rawPath(path)), path).toEqual({ kind: 'bulk', index });
    }
    // Other paths under a first segment that is no index name still pass (the engines refuse them).
    for (const path of ['/_doc/_doc/1', '/_all/_update/1', '/_bulk/stream', '/_x/_bulk/y']) expect(routeOf('POST', rawPath(path)), path).toEqual({ kind: 'pass' });
  });
});

describe('an action line nested deep', () => {
  const line = (depth: number) => Buffer.from(`{"index":{"_index":"s","_source":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}}`);

  it('is unreadable past the engines’ nesting limit, without overflowing the stack', () => {
    expect(readAction(line(30_000), 'd')).toBeUndefined();
    expect(readAction(Buffer.from(`{"index":{"_index":"s","_source":${'{"a":'.repeat(1500)}1${'}'.repeat(1500)}}}`), 'd')).toBeUndefined();
  });

  it('is read as before within it', () => {
    expect(readAction(line(900), 'd')).toMatchObject({ verb: 'index', index: 's', ownIndex: true });
  });
});
