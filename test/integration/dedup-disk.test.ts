// dedup and the disk it spills to, on real engines: a --spill-dir dedup cannot make its folder in is one
// line naming it and the way out, exit code 1.
import { mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { runCli } from '../support/documents.js';
import { type HandMade, indexSignatures } from './hand-made.js';
import { forEachEngine } from './harness.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-dedup-disk-'));

/**
 * Families of four: a and b near copies, c and d near copies, c a third changed from a. At 0.5 each family is
 * one cluster of four; at 0.8, two clusters of two.
 */
function families(count: number): HandMade[] {
  const docs: HandMade[] = [];
  for (let f = 0; f < count; f++) {
    const a = Uint32Array.from({ length: 128 }, (_, p) => f * 1000 + p);
    const b = a.map((v, p) => (p % 32 === 0 ? v + 500_000 : v));
    const c = a.map((v, p) => (p % 3 === 0 ? v + 700_000 : v));
    const d = c.map((v, p) => (p % 32 === 1 ? v + 900_000 : v));
    for (const [k, values] of [a, b, c, d].entries()) docs.push({ id: `f${f}-${'abcd'[k]}`, values, shared: `0_f${f}` });
  }
  return docs;
}

forEachEngine('dedup and its disk', (ctx) => {
  it('a --spill-dir that is a file, missing, a dangling link or a place no folder can be made: one line naming it and the way out, exit code 1', async () => {
    const index = ctx.index('spill-dir');
    await indexSignatures(ctx.client, index, families(1));
    const here = mkdtempSync(path.join(tmp, 'places-'));
    const file = path.join(here, 'a-file');
    writeFileSync(file, 'x');
    const dangling = path.join(here, 'dangling');
    symlinkSync(path.join(here, 'gone'), dangling);
    const cases: Array<[value: string, why: string]> = [
      [file, 'not a folder'],
      [path.join(here, 'no-such-folder'), 'no such folder'],
      [dangling, `a link to ${path.join(here, 'gone')}, which does not exist`],
    ];
    if (process.platform === 'linux') cases.push(['/proc', 'no folder can be made there'], ['/sys', 'near-dup may not write there (permission denied)']);
    for (const [value, why] of cases) {
      const run = await runCli(['dedup', '--url', ctx.engine.url, '--index', index, '--max-cached-signatures', '1', '--spill-dir', value], { cwd: here }).done;
      // (The line before says the hand-made signatures are of the first layout.)
      expect({ code: run.code, last: run.stderr.trimEnd().split('\n').pop() }).toEqual({
        code: 1,
        last: `near-dup: --spill-dir ${value}: ${why}; give a folder near-dup may write to, or leave the option out to use the system's temporary folder`,
      });
    }
  });
});
