import { describe, expect, it } from 'vitest';
import { InFlightLimit } from '../../src/engine/in-flight.js';
import { limitFor, planInFlight } from '../../src/engine/in-flight-plan.js';

const adaptive = (limit: number) => new InFlightLimit({ limit, adaptive: true, why: 'test' });

describe('requests in flight chosen from the cluster', () => {
  it('keeps every write thread busy: twice the requests that take them all, from 2 to 16', () => {
    expect(limitFor({ dataNodes: 1, writeThreads: 2, primaries: 1 })).toBe(4);
    expect(limitFor({ dataNodes: 1, writeThreads: 16, primaries: 1 })).toBe(16);
    expect(limitFor({ dataNodes: 3, writeThreads: 6, primaries: 3 })).toBe(4);
    expect(limitFor({ dataNodes: 3, writeThreads: 6, primaries: 30 })).toBe(2);
    expect(limitFor({ dataNodes: 20, writeThreads: 640, primaries: 5 })).toBe(16);
  });

  it('reads the shape from nodes info and the index settings; a given number wins', async () => {
    const answers: Record<string, unknown> = {
      '/_nodes/thread_pool,os': {
        nodes: {
          a: { roles: ['data', 'master'], thread_pool: { write: { size: 2 } } },
          b: { roles: ['data_hot'], thread_pool: { write: { size: 2 } } },
          c: { roles: ['master'], thread_pool: { write: { size: 8 } } },
          d: { roles: ['data_content'], os: { allocated_processors: 2 } },
        },
      },
      '/docs/_settings/index.number_of_shards': { 'docs-1': { settings: { index: { number_of_shards: '3' } } }, 'docs-2': { settings: { index: { number_of_shards: '1' } } } },
    };
    const client = { request: async <T>(_m: string, path: string) => answers[path] as T };
    const plan = await planInFlight(client as never, 'docs');
    expect(plan).toEqual({ limit: 4, adaptive: true, why: '3 data nodes with 6 write threads, 3 primary shards' });
    expect(await planInFlight(client as never, 'docs', 7)).toEqual({ limit: 7, adaptive: false, why: 'given (--concurrency)' });
    const failing = { request: async () => Promise.reject(new Error('403')) };
    expect((await planInFlight(failing as never, 'docs')).limit).toBe(2);
  });
});

describe('the live limit', () => {
  it('halves on 429, never below 1, and climbs back by one per limit-worth of calm answers, never above the plan', () => {
    const limit = adaptive(8);
    limit.busy();
    expect(limit.current).toBe(4);
    limit.busy();
    limit.busy();
    limit.busy();
    expect(limit.current).toBe(1);
    for (let i = 0; i < 200; i++) limit.answered(100, 1000);
    expect(limit.current).toBe(8);
    expect(limit.decreases).toBe(3);
    expect(limit.describe()).toBe('8 (test; lowered 3 times, to 1 at the least, 8 at the end)');
  });

  it('steps down when answers take over twice as long per byte as the best seen', () => {
    const limit = adaptive(6);
    for (let i = 0; i < 10; i++) limit.answered(100, 1000);
    expect(limit.current).toBe(6);
    for (let i = 0; i < 3; i++) limit.answered(1000, 1000);
    expect(limit.current).toBe(5);
    // Requests of mixed sizes (each with a fixed cost) on a healthy engine: the limit stays.
    const mixed = adaptive(8);
    for (let i = 0; i < 200; i++) mixed.answered(i % 2 === 0 ? 200 : 8, i % 2 === 0 ? 5_000_000 : 2_000);
    expect([mixed.current, mixed.decreases]).toEqual([8, 0]);
    // Larger requests that take longer in proportion are not slower.
    const steady = adaptive(6);
    for (let i = 0; i < 10; i++) steady.answered(100 * (1 + (i % 3)), 1000 * (1 + (i % 3)));
    expect(steady.current).toBe(6);
  });

  it('stays where it was put when given', () => {
    const limit = new InFlightLimit({ limit: 3, adaptive: false, why: 'given' });
    limit.busy();
    limit.answered(1e6, 1);
    expect(limit.current).toBe(3);
    expect(limit.describe()).toBe('3 (given)');
  });
});
