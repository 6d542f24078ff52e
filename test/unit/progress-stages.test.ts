// Progress by stage (issue 50: "a 9.8 s dedup printed no progress"): a job of several stages (dedup) names the
// stage on the line, counts its rate and ETA from the stage's start, and without a terminal writes a JSON line
// at each change of stage (once the job has run a few seconds) besides one every few seconds within a stage.
import { describe, expect, it } from 'vitest';
import { createProgressPrinter } from '../../src/cli/progress.js';

function sink(isTTY: boolean, columns = 80) {
  const written: string[] = [];
  return { written, stream: { isTTY, columns, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream };
}

describe('progress by stage without a terminal', () => {
  it('a line at each change of stage, and at most one every few seconds within one', () => {
    let now = 0;
    const { written, stream } = sink(false);
    const progress = createProgressPrinter('dedup', stream, [], { lineSeconds: 5, now: () => now });
    const report = (t: number, stage: string, seen: number, total?: number) => {
      now = t;
      progress.update({ stage, seen, total, elapsedSeconds: t, unit: 'docs' });
    };
    for (let i = 1; i <= 60; i++) report(i * 0.1, 'signatures', i * 100, 6000); // 6 s of reading
    report(6.1, 'bands', 1, 32);
    report(6.2, 'bands', 32, 32);
    report(6.3, 'cut', 0);
    report(6.4, 'cut', 90);
    report(6.5, 'write-back', 0, 400);
    for (let i = 1; i <= 33; i++) report(6.5 + i * 0.1, 'write-back', i * 12, 400); // 3.3 s more
    progress.done();
    const lines = written.map((l) => JSON.parse(l));
    expect(lines.map((l) => l.stage)).toEqual(['signatures', 'bands', 'cut', 'write-back']);
    expect(lines[1]).toMatchObject({ job: 'dedup', stage: 'bands', seen: 1, total: 32 });
    expect(lines[3]).toMatchObject({ stage: 'write-back', seen: 0, total: 400 });
  });

  it('a short job of several stages writes none (its summary says all)', () => {
    let now = 0;
    const { written, stream } = sink(false);
    const progress = createProgressPrinter('dedup', stream, [], { lineSeconds: 5, now: () => now });
    for (const [t, stage] of [[0.1, 'signatures'], [0.2, 'bands'], [0.3, 'cut'], [0.4, 'write-back']] as const) {
      now = t;
      progress.update({ stage, seen: 1, elapsedSeconds: t });
    }
    progress.done();
    expect(written).toEqual([]);
  });
});

describe('progress by stage on a terminal', () => {
  it('names the stage, and counts the rate and ETA from its start', () => {
    let now = 0;
    const { written, stream } = sink(true, 80);
    const progress = createProgressPrinter('dedup', stream, [], { now: () => now });
    now = 1;
    progress.update({ stage: 'signatures', seen: 1000, total: 1000, elapsedSeconds: 8, unit: 'signatures' });
    now = 2;
    progress.update({ stage: 'write-back', seen: 0, total: 400, elapsedSeconds: 8, unit: 'docs' });
    now = 3;
    progress.update({ stage: 'write-back', seen: 100, total: 400, elapsedSeconds: 10, unit: 'docs' });
    const line = written.at(-1)!.replace(/^\r/, '').replace(/\x1b\[K$/, '');
    expect(line).toMatch(/^(dedup {2})?write-back {2}100\/400 docs/);
    // 100 written in the stage's 2 s: 50 a second, 300 left, 6 s (counted from the job's start: 10 a second, 30 s).
    expect(line).toContain('ETA 0:06');
    expect(line).toContain('50 docs/s');
  });
});
