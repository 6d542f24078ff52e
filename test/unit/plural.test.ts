// Counts in the summaries are in the right number (issue 50: "1 hits from 2 candidates", "1 documents whose ...").
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { plural } from '../../src/plural.js';

describe('plural', () => {
  it('gives the singular for one and the plural otherwise, irregular ones included', () => {
    expect(plural(1, 'hit')).toBe('1 hit');
    expect(plural(0, 'hit')).toBe('0 hits');
    expect(plural(2, 'candidate')).toBe('2 candidates');
    expect(plural(1, 'family')).toBe('1 family');
    expect(plural(3, 'family')).toBe('3 families');
    expect(plural(2, 'index')).toBe('2 indices');
    expect(plural(2, 'pass')).toBe('2 passes');
  });
});

/** The files whose summaries, notes and refusals print counts. */
const SUMMARY_FILES = [
  'src/cli/commands/annotate.ts',
  'src/cli/commands/ingest.ts',
  'src/cli/commands/dedup.ts',
  'src/cli/commands/similar.ts',
  'src/cli/commands/sign.ts',
  'src/cli/commands/evaluate.ts',
  'src/jobs/annotate.ts',
  'src/jobs/ingest.ts',
  'src/jobs/dedup.ts',
  'src/jobs/evaluate.ts',
  'src/jobs/stored-sources.ts',
  // Every module of dedup's stages (in their folders), of evaluate and of signing: their notes and refusals count too.
  ...['src/jobs/dedup', 'src/jobs/evaluate', 'src/signing'].flatMap((dir) =>
    readdirSync(path.resolve(__dirname, '../..', dir), { recursive: true, encoding: 'utf8' })
      .filter((name) => name.endsWith('.ts'))
      .map((name) => `${dir}/${name}`),
  ),
];

/** A count put straight before a plural noun in a template: "${n} documents" reads "1 documents" for one (a choice, "${a ? 'their' : 'its'} documents", is no count). */
const FIXED_PLURAL = /\$\{[^{}?]+\} (documents|hits|candidates|clusters|duplicates|pairs|bands|lines|families|shares|buckets|lookups|passes|sweeps|scans|writes|members|attempts|keys|problems|pages|hashes|ids|sources|groups)\b/g;

describe('the summaries', () => {
  for (const file of SUMMARY_FILES) {
    it(`${file} puts no count before a fixed plural`, () => {
      const text = readFileSync(path.resolve(__dirname, '../..', file), 'utf8');
      expect(text.match(FIXED_PLURAL) ?? []).toEqual([]);
    });
  }
});
