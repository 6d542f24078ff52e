// annotate --follow's pure parts: the interval, and the query for what was written since the last marks.
import { expect, it } from 'vitest';
import { changedSince, parseInterval } from '../../src/jobs/follow.js';

it('--interval: units, bare seconds, and a refusal naming the value', () => {
  expect([parseInterval('10s'), parseInterval('500ms'), parseInterval('2m'), parseInterval('1h'), parseInterval(3), parseInterval('1.5')]).toEqual([10_000, 500, 120_000, 3_600_000, 3000, 1500]);
  for (const bad of ['', 'soon', '10 parsecs', '50ms', '-1s']) expect(() => parseInterval(bad)).toThrow(/is not a duration of at least 100ms; give one like 10s/);
});

it('the next pass reads each index above its mark, and reads whole an index that is new or made anew', () => {
  const marks = new Map([
    ['a', { uuid: 'u1', seqNo: 41 }],
    ['b', { uuid: 'u2', seqNo: 7 }],
  ]);
  const now = new Map([
    ['a', { uuid: 'u1', seqNo: 50 }],
    ['b', { uuid: 'u9', seqNo: 3 }],
    ['c', { uuid: 'u3', seqNo: 0 }],
  ]);
  expect(changedSince({ term: { lang: 'en' } }, marks, now)).toEqual({
    bool: {
      filter: [{ term: { lang: 'en' } }],
      should: [{ bool: { filter: [{ term: { _index: 'a' } }, { range: { _seq_no: { gt: 41 } } }] } }, { term: { _index: 'b' } }, { term: { _index: 'c' } }],
      minimum_should_match: 1,
    },
  });
});
