// Issue 35's pure parts: the pace of progress lines, a garbage params value read as damage, similar index
// names, --field checked on the first lines of an ingest, and help that fits a screen with whole examples.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createProgressPrinter } from '../../src/cli/progress.js';
import { similarNames } from '../../src/cli/index-names.js';
import { checkFieldsPresent } from '../../src/jobs/ingest.js';
import { checkStored, isParameterSet } from '../../src/stored/read.js';
import { createSigner } from '../../src/signature.js';
import { nearDupFields } from '../../src/stored/write.js';

const CLI = path.resolve(__dirname, '../../dist/cli/main.js');

/** A stream that keeps what is written, as a terminal or not. */
function sink(isTTY: boolean) {
  const written: string[] = [];
  return { written, stream: { isTTY, columns: 120, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream };
}

describe('progress pace', () => {
  it('without a terminal: nothing for a sub-second job, then at most one line every few seconds', () => {
    let now = 0;
    const { written, stream } = sink(false);
    const progress = createProgressPrinter('dedup', stream, [], { lineSeconds: 5, now: () => now });
    for (let i = 1; i <= 27; i++) {
      now = (i * 0.4) / 27; // 27 reports in 0.4 s, as dedup made them for a small index
      progress.update({ seen: i, total: 27, elapsedSeconds: now });
    }
    progress.done();
    expect(written).toHaveLength(0);
    for (let t = 1; t <= 600; t++) {
      now = 0.4 + t * 0.05; // 30 s more, a report every 50 ms
      progress.update({ seen: 27 + t, elapsedSeconds: now });
    }
    expect(written.length).toBeGreaterThanOrEqual(5);
    expect(written.length).toBeLessThanOrEqual(7);
    expect(JSON.parse(written[0])).toMatchObject({ job: 'dedup' });
  });

  it('on a terminal: the bar is redrawn at most ten times a second and ends at the last count', () => {
    let now = 0;
    const { written, stream } = sink(true);
    const progress = createProgressPrinter('evaluate', stream, [], { now: () => now });
    for (let i = 1; i <= 1000; i++) {
      now = i * 0.001;
      progress.update({ seen: i, total: 1000, elapsedSeconds: now });
    }
    progress.done();
    expect(written.length).toBeLessThanOrEqual(13);
    expect(written.at(-2)).toMatch(/1000\/1000/);
    expect(written.at(-1)).toBe('\n');
  });
});

describe('a params value that is not a parameter set', () => {
  const sign = createSigner({});
  const raw = nearDupFields(sign('some words to sign here and there'), sign.settings) as unknown as Record<string, unknown>;

  it('is damage, not a document signed with other params', () => {
    expect(isParameterSet(sign.settings.params)).toBe(true);
    for (const garbage of ['hello garbage', '42', 'a;b;c', 'x;seed=1']) {
      expect(isParameterSet(garbage)).toBe(false);
      const problem = checkStored({ ...raw, params: garbage }, ['minhash'], sign.settings.params);
      expect(problem?.otherParams).toBe(false);
      expect(problem?.reason).toMatch(/not a parameter set/);
    }
    // Another parameter set stays "other params".
    const other = createSigner({ seed: 7 }).settings.params;
    expect(checkStored({ ...raw, params: other }, ['minhash'], sign.settings.params)?.otherParams).toBe(true);
  });
});

describe('similar index names', () => {
  it('finds a typo and a part of the name, not unrelated names', () => {
    const names = ['near-dup-demo-licenses', 'news', 'logs-2026', '.kibana'];
    expect(similarNames('near-dup-demo-licences', names)).toEqual(['near-dup-demo-licenses']);
    expect(similarNames('licenses', names)).toEqual(['near-dup-demo-licenses']);
    expect(similarNames('nwes', names)).toEqual(['news']);
    expect(similarNames('kibana', names)).toEqual([]);
    expect(similarNames('metrics', names)).toEqual([]);
  });
});

describe('ingest --field on the first lines', () => {
  const lines = (docs: unknown[]) => new TextEncoder().encode(docs.map((d) => JSON.stringify(d)).join('\n') + '\n');

  it('refuses a field no document has, naming theirs', () => {
    expect(() => checkFieldsPresent(lines([{ id: 1, body: 'a' }, { id: 2, body: 'b' }]), ['bdy'], 'news')).toThrow(/none of the first 2 documents has the field "bdy"; their fields are "id", "body"/);
  });

  it('takes a field that one document has, a dotted path, and leaves lines that are not JSON to the signing', () => {
    expect(() => checkFieldsPresent(lines([{ id: 1 }, { id: 2, body: 'b' }]), ['body'], 'news')).not.toThrow();
    expect(() => checkFieldsPresent(lines([{ a: { b: 'text' } }]), ['a.b'], 'news')).not.toThrow();
    expect(() => checkFieldsPresent(new TextEncoder().encode('not json\n'), ['body'], 'news')).not.toThrow();
  });
});

describe('help', () => {
  const commands = ['sign', 'init', 'annotate', 'ingest', 'similar', 'dedup', 'dashboards', 'proxy', 'evaluate', 'explore'];
  it.each(commands)('%s --help fits a screen, its examples whole commands; --help-all shows the rest', (command) => {
    const help = spawnSync(process.execPath, [CLI, command, '--help'], { encoding: 'utf8', env: { ...process.env, COLUMNS: '110' } }).stdout;
    expect(help.split('\n').length).toBeLessThanOrEqual(45);
    const examples = help.slice(help.indexOf('Examples:'));
    // Every example command is on one line, from "near-dup" to its end.
    for (const line of examples.split('\n').filter((l) => l.trim().startsWith('near-dup '))) expect(line.trim()).toMatch(/^near-dup \S+( \S+)*$/);
    expect(examples.split('\n').filter((l) => l.trim().startsWith('near-dup ')).length).toBeGreaterThan(0);
    const all = spawnSync(process.execPath, [CLI, command, '--help-all'], { encoding: 'utf8' }).stdout;
    expect(all.split('\n').length).toBeGreaterThanOrEqual(help.split('\n').length);
  });

  it('annotate --help-all lists the signature options --help leaves out, and they still work', () => {
    const help = spawnSync(process.execPath, [CLI, 'annotate', '--help'], { encoding: 'utf8' }).stdout;
    const all = spawnSync(process.execPath, [CLI, 'annotate', '--help-all'], { encoding: 'utf8' }).stdout;
    for (const option of ['--seed', '--scheme', '--bands', '--rows', '--key-encoding']) {
      expect(help).not.toContain(option);
      expect(all).toContain(option);
    }
    const signed = spawnSync(process.execPath, [CLI, 'sign', '--seed', '7', '--bands', '16', '--rows', '8'], { input: 'some words', encoding: 'utf8' });
    expect(JSON.parse(signed.stdout).params).toMatch(/seed=7;scheme=affine32;b=16;r=8;/);
  });
});
