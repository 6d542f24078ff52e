// The facts dedup keeps for every document it meets (the canonical rule's value, token count, earlier
// cluster, where it lives), by number: in memory, and on disk beside the spilled ids for an index too large
// for memory; both give back exactly what was set, in any order, however many index names there are.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import { type Facts, FactsTable } from '../../src/jobs/dedup/documents/facts.js';
import { SpillFolder } from '../../src/jobs/dedup/spill/spill-folder.js';

const scratch = mkdtempSync(path.join(os.tmpdir(), 'nd-facts-'));
const folders: SpillFolder[] = [];
afterAll(() => {
  for (const folder of folders) folder.remove();
  rmSync(scratch, { recursive: true, force: true });
});

function table(where: 'memory' | 'disk'): FactsTable {
  if (where === 'memory') return new FactsTable(new DocNumbers());
  const folder = new SpillFolder(scratch);
  folders.push(folder);
  return new FactsTable(new DocNumbers(), { spill: folder });
}

const facts: fc.Arbitrary<Facts> = fc.record(
  {
    tokens: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    sortKey: fc.oneof(fc.double({ noNaN: true }), fc.constantFrom('2024-02-29T10:00:00Z', 'a keyword', true, undefined, null)),
    clusterId: fc.option(fc.string({ minLength: 1 }), { nil: undefined }),
    location: fc.option(fc.record({ index: fc.constantFrom('a', 'b', '.ds-logs-000001'), routing: fc.option(fc.string(), { nil: undefined }) }, { requiredKeys: ['index'] }), { nil: undefined }),
  },
  { requiredKeys: ['tokens', 'sortKey'] },
);

/** What a table gives back for facts set: dates as their milliseconds, null as no value. */
function expected(f: Facts): Facts {
  const sortKey = typeof f.sortKey === 'string' && !Number.isNaN(Date.parse(f.sortKey)) ? Date.parse(f.sortKey) : f.sortKey === null ? undefined : f.sortKey;
  return { tokens: f.tokens, sortKey, clusterId: f.clusterId, location: f.location };
}

describe.each(['memory', 'disk'] as const)('FactsTable in %s', (where) => {
  it('gives back the facts last set for each number, in any order (sequential runs, jumps, repeats), none for others', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.oneof(fc.nat(300), fc.constant(70_000)), facts), { maxLength: 200 }), fc.boolean(), (sets, sequential) => {
        const t = table(where);
        const model = new Map<number, Facts>();
        for (const [i, [n, f]] of sets.entries()) {
          const at = sequential ? i : n;
          t.set(at, f);
          model.set(at, f);
          if (i % 17 === 0) expect(t.at(at)).toEqual(expected(f)); // a read between writes
        }
        for (let n = 0; n <= 301; n++) expect(t.at(n)).toEqual(model.has(n) ? expected(model.get(n)!) : undefined);
        expect(t.at(70_000)).toEqual(model.has(70_000) ? expected(model.get(70_000)!) : undefined);
        expect(t.at(10 ** 7)).toBeUndefined();
      }),
      { numRuns: 40 },
    );
  });

  it('keeps every index name past 65,535 of them, and routing only where given', () => {
    const t = table(where);
    t.set(3, { tokens: 1, sortKey: 5, location: { index: 'a' } });
    t.set(5000, { tokens: 2, sortKey: 6, location: { index: 'b', routing: 'r1' } });
    for (let k = 0; k < 70_000; k++) t.set(100_000 + k, { tokens: 0, sortKey: k, location: { index: `backing-${k}` } });
    let wrong = 0;
    for (let k = 0; k < 70_000; k += 97) if (t.at(100_000 + k)?.location?.index !== `backing-${k}`) wrong++;
    expect(wrong).toBe(0);
    expect([t.at(3)?.location, t.at(5000)?.location, t.at(9)]).toEqual([{ index: 'a' }, { index: 'b', routing: 'r1' }, undefined]);
  });
});
