// The progress line fits the terminal (issue 50): the counts first, whole parts only (nothing cut mid-word),
// never wider than the terminal; without a size it is still whole and reads unambiguously.
import { describe, expect, it } from 'vitest';
import { createProgressPrinter } from '../../src/cli/progress.js';

/** A terminal of this many columns (undefined: a terminal that gives no size) that keeps what is written. */
function terminal(columns: number | undefined) {
  const written: string[] = [];
  return { written, stream: { isTTY: true, columns, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream };
}

/** The last line drawn, without its carriage return and the padding that wipes a longer line before it. */
function drawn(written: string[]): string {
  const line = written.filter((s) => s !== '\n').at(-1) ?? '';
  return line.replace(/^\r/, '').replace(/\x1b\[K$/, '');
}

function draw(columns: number | undefined, extra: string[] = ['annotated', 'unchanged', 'failed']): string {
  const { written, stream } = terminal(columns);
  const progress = createProgressPrinter('annotate', stream, extra, { now: () => 0 });
  progress.update({ seen: 3000, total: 6618, elapsedSeconds: 5.06, annotated: 2990, unchanged: 1000, failed: 0 } as never);
  return drawn(written);
}

describe('the progress line on a terminal', () => {
  for (const columns of [40, 60, 80, 120]) {
    it(`at ${columns} columns: the counts, whole parts, within the width`, () => {
      const line = draw(columns);
      expect(line.length).toBeLessThan(columns);
      expect(line).toContain('3000/6618 docs');
      // Every part is whole: a percentage, an ETA, a rate and each count appear entire or not at all.
      for (const part of line.split(/ {2}|, /)) {
        expect(part).toMatch(/^(annotate|3000\/6618 docs|45\.3%|\[#*\.*\]|ETA 0:06|593 docs\/s|annotated 2990|unchanged 1000|failed 0)$/);
      }
    });
  }

  it('at 80 columns shows the ETA and what failed', () => {
    const line = draw(80);
    expect(line).toContain('ETA 0:06');
    expect(line).toContain('failed 0');
  });

  it('at 120 columns shows every part', () => {
    const line = draw(120);
    for (const part of ['annotate', '45.3%', '[', 'ETA 0:06', '593 docs/s', 'annotated 2990, unchanged 1000, failed 0']) expect(line).toContain(part);
  });

  it('without a size: every count whole, each with its name, separated (never "unchanged 1000 failed")', () => {
    const line = draw(undefined);
    expect(line).toContain('annotated 2990, unchanged 1000, failed 0');
    expect(line.length).toBeLessThan(80);
  });

  it('a shorter line drawn after a longer one wipes what is left of it', () => {
    const { written, stream } = terminal(120);
    let now = 0;
    const progress = createProgressPrinter('dedup', stream, [], { now: () => now });
    progress.update({ seen: 123456, total: 999999, elapsedSeconds: 1, unit: 'signatures' });
    now = 1;
    progress.update({ seen: 2, total: 32, elapsedSeconds: 2, unit: 'bands' });
    expect(written.at(-1)).toMatch(/\x1b\[K$/);
  });
});
