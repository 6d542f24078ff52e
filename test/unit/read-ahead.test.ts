// readAhead (engine/scan.ts): the next page is asked for while the caller works on the one handed out; errors
// reach the caller; stopping early closes the source (a scroll is cleared) after the page being read.
import { expect, it } from 'vitest';
import { readAhead } from '../../src/engine/scan.js';

/** A source of `count` pages that logs when each is asked for, comes, and when the source is closed. */
function source(count: number, log: string[], failAt = -1) {
  return (async function* pages() {
    try {
      for (let i = 0; i < count; i++) {
        log.push(`ask ${i}`);
        await new Promise((r) => setTimeout(r, 1));
        if (i === failAt) throw new Error(`page ${i} lost`);
        yield i;
      }
    } finally {
      log.push('closed');
    }
  })();
}

it('asks for the next page before the caller is done with this one', async () => {
  const log: string[] = [];
  const seen: number[] = [];
  for await (const page of readAhead(source(3, log))) {
    log.push(`work ${page}`);
    seen.push(page);
  }
  expect(seen).toEqual([0, 1, 2]);
  // Page 1 is asked for before the work on page 0 starts, and so on (the end too: found while page 2 is worked on).
  expect(log).toEqual(['ask 0', 'ask 1', 'work 0', 'ask 2', 'work 1', 'closed', 'work 2']);
});

it('hands the caller the error of a page it reads', async () => {
  const log: string[] = [];
  const seen: number[] = [];
  const read = async () => {
    for await (const page of readAhead(source(5, log, 2))) seen.push(page);
  };
  await expect(read()).rejects.toThrow('page 2 lost');
  expect(seen).toEqual([0, 1]);
  expect(log.filter((l) => l === 'closed')).toHaveLength(1);
});

it('closes the source when the caller stops early, after the page being read', async () => {
  const log: string[] = [];
  for await (const page of readAhead(source(10, log))) {
    if (page === 1) break;
  }
  expect(log).toEqual(['ask 0', 'ask 1', 'ask 2', 'closed']);
});

it('a stop while the page being read fails is not an error', async () => {
  const log: string[] = [];
  for await (const page of readAhead(source(10, log, 1))) {
    if (page === 0) break;
  }
  expect(log).toEqual(['ask 0', 'ask 1', 'closed']);
});
