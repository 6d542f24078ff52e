// Dedup's options are grouped (compare, limits, state, output): a test's options over its common ones are
// merged group by group, where a spread would drop the common members of a group the test also gives.
import type { DedupOptions } from '../../src/jobs/dedup.js';

const GROUPS = ['compare', 'limits', 'state', 'output'] as const;

/** `more` over `base`, group by group (a member in both: `more`'s). */
export function withDedupOptions<T extends Partial<DedupOptions>>(base: T, more: Partial<DedupOptions> = {}): T {
  const merged: Partial<DedupOptions> = { ...base, ...more };
  for (const group of GROUPS) if (base[group] || more[group]) Object.assign(merged, { [group]: { ...base[group], ...more[group] } });
  return merged as T;
}
