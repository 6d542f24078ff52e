// Commands printed for a user to paste: a word the shell would split or expand is quoted, others are bare.
import { expect, it } from 'vitest';
import { commandLine, flagWords } from '../../src/jobs/command-line.js';

it('quotes only the words the shell would read differently', () => {
  expect(commandLine(['near-dup', 'dedup', '--index', 'news-2024.01', '--min-similarity', '0.85'])).toBe('near-dup dedup --index news-2024.01 --min-similarity 0.85');
  expect(commandLine(['near-dup', 'dedup', '--index', 'news*'])).toBe("near-dup dedup --index 'news*'");
  expect(commandLine(['--field', "it's body"])).toBe(`--field 'it'\\''s body'`);
  expect(commandLine(['--field', ''])).toBe("--field ''");
});

it('a value that starts with a dash is joined to its flag, so that the command line reads it as the value', () => {
  expect(flagWords('--field', '-x')).toEqual(['--field=-x']);
  expect(flagWords('--field', 'body')).toEqual(['--field', 'body']);
  expect(commandLine(['near-dup', 'annotate', ...flagWords('--field', '-x y')])).toBe("near-dup annotate '--field=-x y'");
});
