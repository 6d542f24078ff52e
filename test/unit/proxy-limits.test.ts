// The proxy's limits that need no engine (issue 48): the room for large documents (who waits, who is served
// first, who is refused when no one can go on), and the ranges of the proxy command's numeric options.
import { describe, expect, it } from 'vitest';
import { ByteBudget } from '../../src/proxy/byte-budget.js';

/** Whether a promise has settled, after the microtasks queued so far. */
async function settled(promise: Promise<unknown>): Promise<'resolved' | 'rejected' | 'pending'> {
  let state: 'resolved' | 'rejected' | 'pending' = 'pending';
  promise.then(
    () => {
      state = 'resolved';
    },
    () => {
      state = 'rejected';
    },
  );
  await new Promise((resolve) => setImmediate(resolve));
  return state;
}

describe('the room for large documents', () => {
  it('first room is served in order of arrival; more room for a lease that holds some goes first', async () => {
    const budget = new ByteBudget(10);
    const a = budget.lease();
    await a.take(6);
    const b = budget.lease();
    const bFirst = b.take(6); // waits: 4 free
    const c = budget.lease();
    const cFirst = c.take(2); // fits, but waits behind b
    expect([await settled(bFirst), await settled(cFirst)]).toEqual(['pending', 'pending']);
    const aMore = a.take(3); // a holds room: served before b and c
    expect(await settled(aMore)).toBe('resolved');
    expect([budget.held, budget.waiting]).toEqual([9, 2]);
    a.close();
    expect([await settled(bFirst), await settled(cFirst)]).toEqual(['resolved', 'resolved']);
    expect([budget.held, budget.peak]).toEqual([8, 9]);
  });

  it('when every lease that holds room waits for more, the newest is refused (429, Retry-After), and the others go on', async () => {
    const budget = new ByteBudget(10);
    const a = budget.lease();
    const b = budget.lease();
    await a.take(5);
    await b.take(5);
    const aMore = a.take(1);
    expect(await settled(aMore)).toBe('pending');
    const bMore = b.take(1);
    await expect(bMore).rejects.toMatchObject({ status: 429, retryAfter: 1, message: expect.stringMatching(/--max-buffered-mb/) });
    expect(await settled(aMore)).toBe('pending');
    b.close();
    expect(await settled(aMore)).toBe('resolved');
    expect(budget.held).toBe(6);
  });

  it('a lease that alone needs more than all the room is refused at once (413); a closed lease lets go of a take still waiting', async () => {
    const budget = new ByteBudget(10);
    const a = budget.lease();
    await a.take(4);
    await expect(a.take(7)).rejects.toMatchObject({ status: 413, message: expect.stringMatching(/11 bytes or more.*--max-buffered-mb/) });
    const b = budget.lease();
    const waiting = b.take(8);
    b.close();
    await expect(waiting).rejects.toThrow(/over/);
    a.close();
    expect([budget.held, budget.waiting]).toEqual([0, 0]);
  });
});
