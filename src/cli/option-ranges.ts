// The range of every numeric option of every command, in one table keyed by flag, and the one check that
// holds each value to it right after parsing, before any command runs: `--threads 1e6` would start a
// million signing threads, and NaN, a negative or a zero reached the jobs (or a library under them) as
// "unexpected error"s. A value out of range is one usage line naming the flag, the value as typed, and the
// range. The jobs still check what they are given (the library is called without this CLI).
import os from 'node:os';
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { MAX_SHARES } from '../jobs/dedup/split/plan.js';
import { MAX_LINE_BYTES } from '../signing/line-batches.js';

/** The range a numeric option is held to, and whether it takes fractions. */
export interface OptionRange {
  min: number;
  max: number;
  /** Any number in the range, not only whole ones. */
  fraction?: boolean;
  /** `min` itself is out of range: above it. */
  aboveMin?: boolean;
  /** `max` itself is out of range: below it. */
  belowMax?: boolean;
  /** Why the range ends where it does, said after it. */
  why?: string;
}

const whole = (min: number, max: number, why?: string): OptionRange => ({ min, max, why });
const fraction = (min: number, max: number, ends: Pick<OptionRange, 'aboveMin' | 'belowMax'> = {}, why?: string): OptionRange => ({ min, max, fraction: true, ...ends, why });

const CORES = os.availableParallelism();
/** More signing threads than this only share the same cores, at about 4 MB of memory each. */
export const MAX_THREADS = 4 * CORES;
/** The engines' index.max_result_window: a search page or a hit count past it is refused by the engine. */
const RESULT_WINDOW = 10_000;
/** The index.max_slices_per_scroll of both engines. */
const MAX_SLICES = 1024;
/** A document count: near-dup numbers the documents of a run with 32 bits. */
const MAX_DOCUMENTS = 2 ** 32 - 1;
const MB = 1024 * 1024;

/** Every numeric flag of every command, by flag. A flag whose range depends on the command is in BY_COMMAND as well. */
export const OPTION_RANGES: Readonly<Record<string, OptionRange>> = {
  // signing (signer-options.ts)
  '--threshold': fraction(0, 1, { aboveMin: true, belowMax: true }),
  '--seed': whole(0, 2 ** 32 - 1),
  '--false-negative-weight': fraction(0, 1),
  '--bands': whole(1, 65_536),
  '--rows': whole(1, 65_536),
  '--simhash-blocks': whole(2, 64),
  '--containment-sample': whole(0, 1024, '0 for no sample'),
  '--key-encoding': whole(1, 2),
  '--num-perm': whole(2, 65_536),
  // writing (signer-options.ts)
  '--bulk-size': whole(1, 100_000),
  '--bulk-bytes': whole(1024, MAX_LINE_BYTES, 'a request body is one string'),
  '--concurrency': whole(1, 256),
  // reading and signing
  '--threads': whole(1, MAX_THREADS, `4 for each of the ${CORES} cores`),
  '--max-chars': whole(1, MAX_LINE_BYTES, 'a text is one string'),
  '--max-line-bytes': whole(1, MAX_LINE_BYTES, 'a line is read as one string'),
  '--page-size': whole(1, RESULT_WINDOW, "the engines' index.max_result_window"),
  '--slices': whole(1, MAX_SLICES, "the engines' index.max_slices_per_scroll"),
  '--slice': whole(0, MAX_SLICES - 1, 'and below --slices'),
  // annotate, ingest, proxy, sign: template tokens (jobs/template-sample.ts)
  '--template-share': fraction(0, 1, { belowMax: true }, 'the share of the documents a template token is in; 0 for none'),
  '--template-sample': whole(1, MAX_DOCUMENTS),
  // similar, evaluate
  '--min-similarity': fraction(0, 1),
  '--max-distance': whole(0, 64, 'bits of a SimHash'),
  '--limit': whole(1, RESULT_WINDOW),
  '--sample': whole(2, RESULT_WINDOW),
  '--neighbours': whole(1, RESULT_WINDOW),
  // dedup
  '--containment': fraction(0, 1, { aboveMin: true }),
  '--max-cached-signatures': whole(1, MAX_DOCUMENTS),
  '--max-cached-members': whole(1, MAX_DOCUMENTS),
  '--max-family-lookups': whole(0, MAX_DOCUMENTS),
  '--from-shares': whole(1, MAX_SHARES),
  // init
  '--template-priority': whole(0, Number.MAX_SAFE_INTEGER),
  // proxy
  '--max-upstream-mb': fraction(0, MAX_LINE_BYTES / MB, { aboveMin: true }, 'a part is one string'),
  '--max-body-mb': fraction(0, 2048, { aboveMin: true }, "the engines' largest http.max_content_length"),
  '--max-line-mb': fraction(0, MAX_LINE_BYTES / MB, { aboveMin: true }, 'a line is read as one string'),
  '--max-concurrent-writes': whole(1, 256),
  '--max-writes-per-client': whole(1, 256),
  '--max-buffered-mb': fraction(0, 1024 * 1024, { aboveMin: true }),
  '--body-timeout': fraction(0, 86_400, { aboveMin: true }, 'seconds: a day'),
  '--body-idle-timeout': fraction(0, 86_400, { aboveMin: true }, 'seconds: a day'),
};

/** Flags whose range differs in one command. */
const BY_COMMAND: Readonly<Record<string, Readonly<Record<string, OptionRange>>>> = {
  dedup: { '--min-similarity': fraction(0, 1, { aboveMin: true }) },
};

/** The range of `flag` in `command`, if it has one. */
export function rangeOf(command: string | undefined, flag: string): OptionRange | undefined {
  return (command !== undefined ? BY_COMMAND[command]?.[flag] : undefined) ?? OPTION_RANGES[flag];
}

/** "a whole number from 1 to 8 (4 for each of the 2 cores)", "a number above 0 and at most 1". */
export function describeRange(range: OptionRange): string {
  const { min, max } = range;
  if (!range.fraction && max === min + 1) return `${min} or ${max}${range.why ? ` (${range.why})` : ''}`;
  const span =
    range.aboveMin || range.belowMax
      ? `${range.aboveMin ? `above ${min}` : `at least ${min}`} and ${range.belowMax ? `below ${max}` : `at most ${max}`}`
      : `from ${min} to ${max}`;
  return `${range.fraction ? 'a number' : 'a whole number'} ${span}${range.why ? ` (${range.why})` : ''}`;
}

/** Whether `value` is in `range`. */
export function inRange(value: number, range: OptionRange): boolean {
  if (!(range.fraction ? Number.isFinite(value) : Number.isInteger(value))) return false;
  return (range.aboveMin ? value > range.min : value >= range.min) && (range.belowMax ? value < range.max : value <= range.max);
}

/** `max-chars` -> `maxChars`: yargs takes either spelling. */
function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/**
 * What the user typed for `flag`, as typed (`abc`, `1e6`, where yargs has NaN and 1000000): the last
 * `--flag VALUE` or `--flag=VALUE` before `--`, or `--no-flag` (which yargs reads as 0). Undefined when it is
 * not on the command line.
 */
export function typedValue(args: readonly string[], flag: string): { typed: true; text?: string } | undefined {
  const names = new Set([flag, `--${camel(flag.slice(2))}`]);
  const negated = new Set([...names].map((name) => `--no-${name.slice(2)}`));
  let found: { typed: true; text?: string } | undefined;
  for (let i = 0; i < args.length && args[i] !== '--'; i++) {
    const arg = args[i];
    const eq = arg.indexOf('=');
    if (eq !== -1 && names.has(arg.slice(0, eq))) found = { typed: true, text: arg.slice(eq + 1) };
    else if (names.has(arg)) found = { typed: true, text: args[i + 1] };
    else if (negated.has(arg)) found = { typed: true, text: arg };
  }
  return found;
}

/** A value as the message quotes it: as typed, quoted only when it would not read as one word. */
function quoted(text: string): string {
  return /^\S+$/.test(text) ? text : JSON.stringify(text);
}

/**
 * The problem with the value `argv` holds for `flag`, as one line, or undefined when there is none (in
 * range, or not given). `args` is the command line, for the value as typed.
 */
export function rangeProblem(flag: string, value: unknown, range: OptionRange, args: readonly string[]): string | undefined {
  const typed = typedValue(args, flag);
  if (value === undefined) {
    // yargs leaves an option typed without a value (`--threads --dry-run`) undefined: the default, silently.
    return typed ? `${flag} needs a value: ${describeRange(range)}` : undefined;
  }
  if (Array.isArray(value)) return `${flag} is given ${value.length} times (${value.join(', ')}); give it once: ${describeRange(range)}`;
  if (typeof value === 'number' && inRange(value, range)) return undefined;
  return `${flag} must be ${describeRange(range)}, got ${quoted(typed?.text ?? String(value))}`;
}

/**
 * The check itself, as a yargs middleware run before yargs' own validation (its "Invalid values" for
 * `choices` names neither the flag nor what was typed): every numeric option of the command being run
 * that has a range, held to it.
 */
export function checkOptionRanges(args: readonly string[]) {
  return (argv: Record<string, unknown>, yargs: Argv): void => {
    if (argv.help) return;
    const command = typeof argv._ === 'object' && Array.isArray(argv._) ? String(argv._[0]) : undefined;
    for (const key of numericOptions(yargs)) {
      const flag = `--${key}`;
      const range = rangeOf(command, flag);
      if (!range) continue;
      const problem = rangeProblem(flag, argv[key], range, args);
      if (problem) throw new UsageError(problem);
    }
  };
}

/** The options of the command being parsed that yargs reads as numbers (their names as declared, kebab case). */
export function numericOptions(yargs: Argv): string[] {
  const options = (yargs as unknown as { getOptions?: () => { number?: string[] } }).getOptions?.();
  return options?.number ?? [];
}
