// What each command demands on its command line, so that a test's parsing reaches the options it walks
// (cli-args, quick-parse and option-ranges tests walk every option of every command).
export const REQUIRED_ARGS: Readonly<Record<string, readonly string[]>> = {
  annotate: ['--index', 'x', '--field', 'f'],
  ingest: ['--index', 'x', '--field', 'f'],
  similar: ['--index', 'x'],
  dedup: ['--index', 'x'],
  evaluate: ['--index', 'x', '--field', 'f', '--out', 'o'],
  explore: ['--index', 'x', '--field', 'f'],
  proxy: ['--index', 'x', '--field', 'f'],
  dashboards: ['--index', 'x'],
};
