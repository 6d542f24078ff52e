import { describe, expect, it } from 'vitest';
import { RecentMap } from '../../src/jobs/dedup/documents/signature-store.js';

describe('RecentMap (the signature cache of dedup)', () => {
  it('never holds more than its capacity and keeps what was used recently', () => {
    const map = new RecentMap<number, string>(100);
    for (let i = 0; i < 1000; i++) {
      map.set(i, `v${i}`);
      expect(map.get(0), `after ${i} insertions`).toBe('v0'); // used all the time: never forgotten
      expect(map.size).toBeLessThanOrEqual(100);
    }
    expect(map.get(999)).toBe('v999');
    expect(map.get(1)).toBeUndefined(); // not used since it was set, 998 insertions ago
    const kept = Array.from({ length: 1000 }, (_, i) => map.get(i)).filter((v) => v !== undefined).length;
    expect(kept).toBeGreaterThanOrEqual(50);
    expect(kept).toBeLessThanOrEqual(100);
  });
});
