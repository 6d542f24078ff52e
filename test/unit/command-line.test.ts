// Commands printed for a user to paste: a word the shell would split or expand is quoted, others are bare.
import { expect, it } from 'vitest';
import { commandLine } from '../../src/jobs/command-line.js';

it('quotes only the words the shell would read differently', () => {
  expect(commandLine(['near-dup', 'dedup', '--index', 'news-2024.01', '--min-similarity', '0.85'])).toBe('near-dup dedup --index news-2024.01 --min-similarity 0.85');
  expect(commandLine(['near-dup', 'dedup', '--index', 'news*'])).toBe("near-dup dedup --index 'news*'");
  expect(commandLine(['--field', "it's body"])).toBe(`--field 'it'\\''s body'`);
  expect(commandLine(['--field', ''])).toBe("--field ''");
});
