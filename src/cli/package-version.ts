// The version `near-dup --version` prints, read without loading the parser (the answer is wanted at once).
import { readFileSync } from 'node:fs';

/**
 * The version of the package this file was installed with, read beside dist/. Not left to yargs, which
 * reads the package.json above the node_modules folder holding yargs: where npm hoisted yargs into a
 * project that installed near-dup, that is the project's ("unknown" when it has no version).
 */
export function packageVersion(): string {
  try {
    return (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/**
 * Whether the command line only asks for the version: `--version` anywhere before `--`, without `--help`
 * (which yargs shows instead). yargs prints the version then whatever else is on the line; so does this.
 */
export function asksForVersion(args: readonly string[]): boolean {
  const flags = args.includes('--') ? args.slice(0, args.indexOf('--')) : args;
  return flags.includes('--version') && !flags.includes('--help');
}
