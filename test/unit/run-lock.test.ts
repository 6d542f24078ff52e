// Whether a lock read from the index is held by a run that may still be going (issue 48): the document is
// the index's, so a forged or damaged one must not block every run for good.
import { describe, expect, it } from 'vitest';
import { isLive, lockFromIndex } from '../../src/jobs/dedup/state/run-lock.js';

const now = Date.parse('2026-12-07T08:00:00Z');
const lock = (expires: string, lease = 60, released: string | null = null) => ({ expires_at: expires, lease_seconds: lease, released_at: released });

describe('a lock read from the index', () => {
  it('is live until its lease ends, and not once released', () => {
    expect(isLive(lock('2026-12-07T08:00:30Z'), now)).toBe(true);
    expect(isLive(lock('2026-12-07T07:59:59Z'), now)).toBe(false);
    expect(isLive(lock('2026-12-07T08:00:30Z', 60, '2026-12-07T07:59:00Z'), now)).toBe(false);
  });

  it('is not live when its end lies further ahead than any run sets it, or cannot be read', () => {
    expect(isLive(lock('9999-01-01T00:00:00Z'), now)).toBe(false);
    expect(isLive(lock('2026-12-07T08:07:00Z', 60), now)).toBe(false); // 7 minutes ahead of a 60 s lease
    expect(isLive(lock('2026-12-07T08:05:30Z', 60), now)).toBe(true); // within the clocks' 5 minutes
    expect(isLive(lock('2026-12-07T09:30:00Z', 1e9), now)).toBe(false); // a lease no run takes
    expect(isLive(lock('not a date'), now)).toBe(false);
  });
});

describe('a lock document read from the index', () => {
  it('is taken field by field at the types a run writes, a damaged field reading as what lets runs go on', () => {
    const forged = lockFromIndex({ what: 7, host: ['x'], pid: '../../etc', process: 'here', lease_seconds: '60', expires_at: 2e12, released_at: 0, settings: 'ok' });
    expect(forged).toMatchObject({ what: 'dedup run', host: '', pid: 0, process: null, settings: 'ok', released_at: 'damaged' });
    expect(Number.isNaN(forged.lease_seconds)).toBe(true);
    expect(isLive(forged, now)).toBe(false);
    expect(lockFromIndex('not an object')).toMatchObject({ pid: 0, process: null, released_at: 'damaged' });
    const written = { what: 'dedup of "docs"', host: 'h', pid: 42, started_at: 's', settings: 'x', process: { boot: 'b', pidNamespace: 'n', startedAt: '1' }, token: 't', lease_seconds: 60, renewed_at: 'r', expires_at: '2026-12-07T08:00:30Z', released_at: null };
    expect(lockFromIndex(written)).toEqual(written);
    expect(isLive(lockFromIndex(written), now)).toBe(true);
  });
});
