// The command line read flag by flag against the options the command declares, before yargs' own checks:
// yargs says "Missing required argument: field" for `--feild body`, "Unknown arguments: d, r, y" for
// `-dry-run`, and gives an option typed without its value (`--limit --format table`) its default, silently.
// Here the first such mistake is one usage line naming what was typed and the fix. Values are never quoted
// (one may be a password), and a secret's value is kept out of yargs' own messages too (`withoutSecrets`).
import type { Argv } from 'yargs';
import type { CREDENTIAL_OPTIONS } from './connection-options.js';
import { UsageError } from '../errors.js';
import { describeRange, rangeOf } from './option-ranges.js';

/** What the parser knows of the options of the command being run (yargs' getOptions, and descriptions). */
interface Declared {
  /** Every option name and alias, as declared. */
  names: Set<string>;
  /** Names (and aliases) that take no value. */
  flagsOnly: Set<string>;
  /** Names (and aliases) that take several values. */
  arrays: Set<string>;
  /** The name an alias stands for. */
  canonical: Map<string, string>;
  choices: Record<string, unknown[]>;
  defaults: Record<string, unknown>;
  descriptions: Record<string, string | undefined>;
  numbers: Set<string>;
}

interface YargsOptions {
  key: Record<string, unknown>;
  alias: Record<string, string[]>;
  boolean: string[];
  count: string[];
  array: string[];
  number: string[];
  choices: Record<string, unknown[]>;
  default: Record<string, unknown>;
}

type Internals = { getInternalMethods?: () => { getUsageInstance?: () => { getDescriptions?: () => Record<string, string | undefined> } } };

/** The options of the command `yargs` is parsing, as declared. */
export function declaredOptions(yargs: Argv): Declared {
  const options = (yargs as unknown as { getOptions: () => YargsOptions }).getOptions();
  const canonical = new Map<string, string>();
  for (const [key, aliases] of Object.entries(options.alias)) for (const alias of aliases) canonical.set(alias, key);
  const withAliases = (keys: string[]) => new Set(keys.flatMap((key) => [key, ...(options.alias[key] ?? [])]));
  return {
    names: new Set([...Object.keys(options.key), ...canonical.keys()]),
    flagsOnly: withAliases([...options.boolean, ...options.count]),
    arrays: withAliases(options.array),
    numbers: withAliases(options.number),
    canonical,
    choices: options.choices,
    defaults: options.default,
    descriptions: (yargs as unknown as Internals).getInternalMethods?.().getUsageInstance?.().getDescriptions?.() ?? {},
  };
}

/** Optimal string alignment distance: Levenshtein with a swap of two neighbours as one edit (`feild`). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...new Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The declared long flag nearest to `typed` (without dashes), if one is near enough to be what was meant. */
export function nearestFlag(typed: string, names: Iterable<string>): string | undefined {
  const lower = typed.toLowerCase();
  const most = lower.length < 5 ? 1 : 2;
  let best: { name: string; distance: number } | undefined;
  for (const name of names) {
    if (name.length < 2) continue;
    const distance = editDistance(lower, name.toLowerCase());
    if (distance <= most && (!best || distance < best.distance)) best = { name, distance };
  }
  return best && `--${best.name}`;
}

/** `max-chars` -> `maxChars`: yargs takes either spelling. */
function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** The declared name `typed` (without dashes) is a spelling of: itself, its camel case, or `no-` before either. */
function knownName(typed: string, declared: Declared): string | undefined {
  const bare = typed.startsWith('no-') && typed.length > 3 ? [typed, typed.slice(3)] : [typed];
  for (const candidate of bare) {
    for (const name of declared.names) if (name === candidate || camel(name) === candidate) return name;
  }
  return undefined;
}

/** The options whose values are secrets: never in a message, whole or in pieces. */
const SECRET_OPTIONS: ReadonlyArray<keyof typeof CREDENTIAL_OPTIONS> = ['password', 'api-key', 'bearer-token'];

/** A negative number as yargs-parser reads one (its own pattern): the only word starting with a dash it takes as a value. */
const NEGATIVE = /^-([0-9]+(\.[0-9]+)?|\.[0-9]+)$/;

/** yargs reads a word after an option as its value unless it starts with a dash (a negative number does not count). */
function isValue(word: string | undefined): boolean {
  return word !== undefined && (!word.startsWith('-') || NEGATIVE.test(word));
}

/** Whether `name` (declared, or an alias) is a secret option. */
function isSecret(name: string, declared: Declared): boolean {
  return (SECRET_OPTIONS as readonly string[]).includes(declared.canonical.get(name) ?? name);
}

/** "a whole number from 1 to 10000, e.g. --limit 10", "json or table", "(annotated index)": what `name` takes. */
export function whatItTakes(name: string, command: string | undefined, declared: Declared): string {
  const key = declared.canonical.get(name) ?? name;
  const flag = `--${key}`;
  const example = declared.defaults[key] !== undefined && declared.defaults[key] !== '' && !Array.isArray(declared.defaults[key]) ? `, e.g. ${flag} ${declared.defaults[key]}` : '';
  const range = declared.numbers.has(key) ? rangeOf(command, flag) : undefined;
  if (range) return `: ${describeRange(range)}${example}`;
  const choices = declared.choices[key];
  if (choices?.length) return `: ${choices.length === 1 ? choices[0] : `${choices.slice(0, -1).join(', ')} or ${choices.at(-1)}`}`;
  if (declared.numbers.has(key)) return `: a number${example}`;
  const about = declared.descriptions[key];
  return about ? ` (${about})${example}` : example;
}

/** Where the command's help is, for a flag nothing declared is near. */
function helpHint(command: string | undefined): string {
  return `see near-dup ${command ? `${command} ` : ''}--help`;
}

/**
 * The first mistake in the flags of `args` (the command line, without node and the script), as one line, or
 * undefined when every flag is declared and has its value. Words after `--` are not flags.
 */
export function flagProblem(args: readonly string[], command: string | undefined, declared: Declared): string | undefined {
  const suggest = (typed: string) => nearestFlag(typed, declared.names);
  for (let i = 0; i < args.length && args[i] !== '--'; i++) {
    const word = args[i];
    if (isValue(word) || word === '-') continue;
    const long = word.startsWith('--');
    const eq = word.indexOf('=');
    const typed = word.slice(long ? 2 : 1, eq === -1 ? undefined : eq);
    // A single dash takes one letter: `-i docs`, `-i=docs`; `-dry-run` is three letters and a word to yargs.
    const name = long || typed.length === 1 ? knownName(typed, declared) : undefined;
    if (name === undefined && !long && typed.length > 1) {
      const near = knownName(typed, declared) ? `--${typed}` : suggest(typed);
      return near ? `-${typed}: did you mean ${near}?` : `unknown option -${typed} (long options take two dashes; ${helpHint(command)})`;
    }
    if (name === undefined) {
      const near = suggest(typed);
      return `unknown option ${long ? '--' : '-'}${typed} (${near ? `did you mean ${near}?` : helpHint(command)})`;
    }
    if (declared.flagsOnly.has(name) || typed.startsWith('no-')) continue;
    if (eq === -1) {
      if (!isValue(args[i + 1])) return `${long ? '--' : '-'}${typed} needs a value${whatItTakes(name, command, declared)}`;
      i++;
    }
    if (declared.arrays.has(name)) while (isValue(args[i + 1])) i++;
    // yargs would name the next word ("Unknown argument: secret"): a piece of an unquoted secret.
    else if (isSecret(name, declared) && isValue(args[i + 1]) && args[i + 1] !== '--') {
      return `a word after the value of ${long ? '--' : '-'}${typed} (quote a value that holds spaces; this command takes no words but its flags and their values)`;
    }
  }
  return undefined;
}

/** The values given to secret options in `args` (after the flag, or after its `=`), by any spelling yargs takes. */
function secretValues(args: readonly string[]): string[] {
  const secrets = new Set<string>([...SECRET_OPTIONS, ...SECRET_OPTIONS.map(camel)]);
  const values: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const [flag, ...rest] = args[i].replace(/^--?/, '').split('=');
    if (!args[i].startsWith('-') || !secrets.has(flag)) continue;
    if (rest.length > 0) values.push(rest.join('='));
    else if (args[i + 1] !== undefined) values.push(args[i + 1]);
  }
  return values;
}

/**
 * yargs' message without any piece of a secret's value: a message that names one (an unknown argument that is
 * part of it, a word of it) becomes a line that names the option alone.
 */
export function withoutSecrets(message: string, args: readonly string[]): string {
  const values = secretValues(args).filter((v) => v.length > 0);
  if (values.length === 0) return message;
  const listed = /^Unknown arguments?: (.*)$/s.exec(message)?.[1].split(', ').map((w) => w.replace(/^"(.*)"$/, '$1')) ?? [];
  const named = listed.some((word) => values.some((v) => v.includes(word)));
  const quoted = values.some((v) => v.split(/\s+/).some((word) => word.length > 2 && message.includes(word)));
  return named || quoted ? 'the value of --password, --api-key or --bearer-token could not be read as one value (it is not shown): quote it, or give it by its environment variable' : message;
}

/**
 * The check as a yargs middleware run before yargs' own validation (so before "Missing required argument"),
 * and before the ranges of option-ranges.ts. `--help` and `--version` are left to yargs.
 */
export function checkFlags(args: readonly string[]) {
  return (argv: Record<string, unknown>, yargs: Argv): void => {
    if (argv.help || argv.version) return;
    const command = Array.isArray(argv._) && argv._.length > 0 ? String(argv._[0]) : undefined;
    const problem = flagProblem(args, command, declaredOptions(yargs));
    if (problem) throw new UsageError(problem);
  };
}
