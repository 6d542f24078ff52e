import { describe, expect, it } from 'vitest';
import type { BulkResponseBody } from '../../src/engine/client.js';
import { InFlightLimit } from '../../src/engine/in-flight.js';
import { BulkWriter, type BulkOperation } from '../../src/jobs/bulk-writer.js';

const op = (i: number): BulkOperation => ({ id: `d${i}`, action: { update: { _id: `d${i}` } }, body: { doc: { n: i } } });
const ids = (ndjson: string) =>
  ndjson.trim().split('\n').filter((_, i) => i % 2 === 0).map((line) => JSON.parse(line).update._id as string);
const ok = (body: string): BulkResponseBody => ({ errors: false, items: ids(body).map((_id) => ({ update: { _id, status: 200 } })) });

describe('BulkWriter', () => {
  it('follows an in-flight limit: fewer requests at once after items rejected with 429, all items written', async () => {
    let inFlight = 0;
    const seen: number[] = [];
    let rejectNext = 3;
    const limit = new InFlightLimit({ limit: 8, adaptive: true, why: 'test' });
    const writer = new BulkWriter({
      maxOperations: 5,
      inFlight: limit,
      backoffMs: 1,
      send: async (body) => {
        inFlight++;
        seen.push(inFlight);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        if (rejectNext-- > 0) return { errors: true, items: ids(body).map((_id) => ({ update: { _id, status: 429, error: { type: 'es_rejected_execution_exception' } } })) };
        return ok(body);
      },
    });
    for (let i = 0; i < 200; i++) await writer.add(op(i));
    await writer.flush();
    expect(writer.stats.succeeded).toBe(200);
    expect(Math.max(...seen)).toBe(8);
    expect(limit.decreases).toBeGreaterThanOrEqual(3);
    expect(limit.lowest).toBeLessThanOrEqual(1);
  });

  it('splits by count and bytes and keeps at most `concurrency` requests in flight', async () => {
    let inFlight = 0, maxInFlight = 0;
    const sizes: number[] = [];
    const writer = new BulkWriter({
      maxOperations: 10,
      concurrency: 2,
      send: async (body) => {
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        sizes.push(ids(body).length);
        await new Promise((r) => setTimeout(r, 5));
        inFlight--;
        return ok(body);
      },
    });
    for (let i = 0; i < 95; i++) await writer.add(op(i));
    await writer.flush();
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(95);
    expect(Math.max(...sizes)).toBe(10);
    expect(maxInFlight).toBeLessThanOrEqual(2);
    expect(writer.stats.succeeded).toBe(95);

    const bySize: number[] = [];
    const small = new BulkWriter({ maxBytes: 300, send: async (body) => {
      bySize.push(Buffer.byteLength(body));
      return ok(body);
    } });
    for (let i = 0; i < 20; i++) await small.add(op(i));
    await small.flush();
    expect(Math.max(...bySize)).toBeLessThanOrEqual(300);
  });

  it('retries whole requests on 429/503 and timeouts, with growing delays', async () => {
    const failures = [Object.assign(new Error('busy'), { statusCode: 429 }), Object.assign(new Error('t'), { name: 'TimeoutError' }), Object.assign(new Error('x'), { meta: { statusCode: 503 } })];
    const delays: number[] = [];
    const writer = new BulkWriter({
      backoffMs: 100,
      sleep: async (ms) => void delays.push(ms),
      send: async (body) => {
        const f = failures.shift();
        if (f) throw f;
        return ok(body);
      },
    });
    await writer.add(op(1));
    await writer.flush();
    expect(writer.stats).toMatchObject({ succeeded: 1, failed: 0, retries: 3 });
    expect(delays.every((d, i) => d >= 0 && d <= 100 * 2 ** i)).toBe(true);
  });

  it('retries only the items rejected with 429 and reports other item errors one by one', async () => {
    const failed: string[] = [];
    let call = 0;
    const writer = new BulkWriter({
      sleep: async () => undefined,
      onFailure: (o, reason, status) => failed.push(`${o.id} ${status} ${reason}`),
      send: async (body) => {
        call++;
        const items = ids(body).map((_id) => {
          if (_id === 'd2' && call === 1) return { update: { _id, status: 429, error: { type: 'es_rejected_execution_exception', reason: 'queue full' } } };
          if (_id === 'd3') return { update: { _id, status: 404, error: { type: 'document_missing_exception', reason: 'gone' } } };
          return { update: { _id, status: 200 } };
        });
        return { errors: true, items };
      },
    });
    for (let i = 1; i <= 4; i++) await writer.add(op(i));
    await writer.flush();
    expect(call).toBe(2);
    expect(failed).toEqual(['d3 404 document_missing_exception: gone']);
    expect(writer.stats.succeeded).toBe(3);
  });

  it('splits a request refused as a whole (400) until only the guilty operation fails, by itself', async () => {
    const failed: string[] = [];
    const sent: number[] = [];
    const writer = new BulkWriter({
      onFailure: (o, reason, status) => failed.push(`${o.id} ${status} ${reason}`),
      send: async (ndjson) => {
        const inRequest = ids(ndjson);
        sent.push(inRequest.length);
        if (inRequest.includes('d7')) throw Object.assign(new Error('id is too long'), { statusCode: 400 });
        return ok(ndjson);
      },
    });
    for (let i = 0; i < 20; i++) await writer.add(op(i));
    await writer.flush();
    expect(failed).toEqual(['d7 400 refused by the engine: id is too long']);
    expect(writer.stats.succeeded).toBe(19);
    expect(sent.length).toBeLessThan(20); // halves, not one request per operation
  });

  it('does not split or retry a request refused for who sent it (403), and surfaces it', async () => {
    const writer = new BulkWriter({ send: async () => { throw Object.assign(new Error('forbidden'), { statusCode: 403 }); } });
    await writer.add(op(1));
    await writer.add(op(2));
    await expect(writer.flush()).rejects.toThrow('forbidden');
  });

  it('gives up on a retryable failure after maxAttempts and reports every item', async () => {
    const failed: string[] = [];
    const writer = new BulkWriter({
      maxAttempts: 3,
      sleep: async () => undefined,
      onFailure: (o) => failed.push(o.id),
      send: async () => { throw Object.assign(new Error('unavailable'), { statusCode: 503 }); },
    });
    await writer.add(op(1));
    await writer.add(op(2));
    await writer.flush();
    expect(failed).toEqual(['d1', 'd2']);
  });
});
