// The locations dedup keeps for every document it meets: by number, in two bytes a document while the
// index names are few, and exactly as they were set however many names there are.
import { expect, it } from 'vitest';
import { LocationTable } from '../../src/engine/doc-location.js';

it('gives back each location as set: unset numbers none, routing where given, past 65,535 index names too', () => {
  const table = new LocationTable();
  table.set(3, { index: 'a' });
  table.set(5000, { index: 'b', routing: 'r1' });
  expect([table.get(0), table.get(3), table.get(5000), table.get(10 ** 9)]).toEqual([undefined, { index: 'a' }, { index: 'b', routing: 'r1' }, undefined]);
  for (let k = 0; k < 70_000; k++) table.set(100_000 + k, { index: `backing-${k}` });
  let wrong = 0;
  for (let k = 0; k < 70_000; k += 97) if (table.get(100_000 + k)?.index !== `backing-${k}`) wrong++;
  expect(wrong).toBe(0);
  expect([table.get(3), table.get(5000), table.get(9)]).toEqual([{ index: 'a' }, { index: 'b', routing: 'r1' }, undefined]);
  table.set(5000, { index: 'a' });
  expect(table.get(5000)).toEqual({ index: 'a' });
});
