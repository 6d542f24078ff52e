// annotate's template option (jobs/annotate.ts `template`, the CLI's --template-share and --template-sample):
// a share or a sample that cannot be meant is one line naming it, before any engine is asked.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { flagOf } from '../../src/cli/option-flags.js';
import { UsageError } from '../../src/errors.js';
import { checkAnnotateOptions } from '../../src/jobs/annotate.js';

describe('annotate template options', () => {
  const base = { index: 'docs', fields: ['text'] };

  it('takes a share above 0 and below 1, and a sample of at least 1 document', () => {
    expect(() => checkAnnotateOptions({ ...base, template: { share: 0.05 } })).not.toThrow();
    expect(() => checkAnnotateOptions({ ...base, template: { share: 0.05, sample: 500 } })).not.toThrow();
    for (const share of [0, 1, 5, -0.1, Number.NaN]) {
      expect(() => checkAnnotateOptions({ ...base, template: { share } })).toThrow(UsageError);
      expect(() => checkAnnotateOptions({ ...base, template: { share } })).toThrow(`template.share must be a number above 0 and below 1 (0.05: tokens in more than 5% of the documents are template text), got ${share}`);
    }
    expect(() => checkAnnotateOptions({ ...base, template: { share: 0.05, sample: 0 } })).toThrow('template.sample must be a whole number of at least 1, got 0');
  });

  it('names the flags on the command line; a sample alone is the default share drawn from it, a sample with a share of 0 is refused', () => {
    expect(flagOf('template.share')).toBe('--template-share');
    expect(flagOf('template.sample')).toBe('--template-sample');
    const cli = path.resolve(__dirname, '../../dist/cli/main.js');
    const run = (...flags: string[]) => spawnSync(process.execPath, [cli, 'annotate', '--index', 'x', '--field', 'f', ...flags, '--url', 'http://127.0.0.1:1'], { encoding: 'utf8' });
    const none = run('--template-share', '0', '--template-sample', '5');
    expect(none.status).toBe(2);
    expect(none.stderr.trim()).toBe('near-dup: --template-sample goes with a --template-share above 0: --template-share 0 signs without template tokens');
    // Past the flags: it asks the engine (none there), so the options were taken.
    for (const flags of [['--template-sample', '5'], ['--template-share', '0']]) {
      const taken = run(...flags);
      expect(taken.stderr, flags.join(' ')).toMatch(/cannot connect to http:\/\/127\.0\.0\.1:1/);
    }
  });
});
