// A command line a user can paste into a shell: the words as given, each quoted only where the shell
// would otherwise read it differently (an index name with a space, a pattern with a star).
const PLAIN = /^[A-Za-z0-9_./:=@%+,-]+$/;

/** One word as the shell reads it back: bare when safe, else in single quotes. */
export function shellWord(word: string): string {
  return PLAIN.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** The words joined into one line, each quoted as needed. */
export function commandLine(words: readonly string[]): string {
  return words.map(shellWord).join(' ');
}

/** A flag and its value as two words, or as one (`--field=-x`) when the value starts with a dash and would be read as a flag. */
export function flagWords(name: string, value: string): string[] {
  return value.startsWith('-') ? [`${name}=${value}`] : [name, value];
}
