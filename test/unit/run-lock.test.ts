// Whether a lock read from the index is held by a run that may still be going (issue 48): the document is
// the index's, so a forged or damaged one must not block every run for good.
import { describe, expect, it } from 'vitest';
import { isLive } from '../../src/jobs/dedup/state/run-lock.js';

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
