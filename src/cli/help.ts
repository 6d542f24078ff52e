// What `--help` shows: the options most runs need. The others (the signature's fine tuning, bulk sizes,
// files and pages) are hidden there and shown by `--help-all`; they work the same either way. Examples are
// printed whole, one command a line, not cut into yargs' two columns.

/** Whether this run asked for every option (`--help-all`, read once from the command line). */
export const HELP_ALL = process.argv.includes('--help-all');

/** An option shown only by --help-all. */
export function advanced<T extends object>(option: T): T & { hidden: boolean } {
  return { ...option, hidden: !HELP_ALL };
}

/** The examples of a command as its help's last lines: what each does, then the whole command on its own line. */
export function examples(list: ReadonlyArray<readonly [command: string, what: string]>): string {
  const hint = HELP_ALL ? '' : '\n\nMore options (signature tuning, bulk sizes, files): --help-all';
  return `Examples:\n${list.map(([command, what]) => `  ${what}:\n    ${command}`).join('\n')}${hint}`;
}
