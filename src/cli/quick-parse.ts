// A command line with nothing to say about it, parsed without yargs. Loading yargs takes about 60 ms,
// as long as Node's own start: `near-dup sign` of one short text spent a third of its time on it. The
// options are those the command's builder declares (read by running the builder on a recorder), parsed by
// Node's util.parseArgs, and only when everything is plain: every flag declared and spelt as declared, each
// given once with a value of its type, in range and among its choices, nothing required left out, no help.
// Anything else (a mistake, `--no-x`, camel case, `--help`) is left to yargs, whose checks and messages
// (flag-check.ts, option-ranges.ts) are the command line's. The argv handed to the command is the one yargs
// would hand it (test/unit/quick-parse.test.ts holds the two to it).
import { parseArgs } from 'node:util';
import type { CommandModule, Options } from 'yargs';
import { inRange, rangeOf } from './option-ranges.js';

/** The options a builder declares, by name; undefined when it does anything but declare options and an epilogue. */
export function declaredBy(command: CommandModule<any, any>): Map<string, Options> | undefined {
  const options = new Map<string, Options>();
  let plain = typeof command.builder === 'function';
  const recorder: object = new Proxy(
    {},
    {
      get: (_, method) => {
        if (method === 'option') {
          return (name: string, option: Options = {}) => {
            options.set(name, option);
            return recorder;
          };
        }
        if (method !== 'epilogue') plain = false;
        return () => recorder;
      },
    },
  );
  if (plain) (command.builder as (yargs: object) => unknown)(recorder);
  return plain ? options : undefined;
}

/** `max-chars` -> `maxChars`, as yargs adds it. */
function camel(name: string): string {
  return name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

/** A value as yargs would give it for `option`, or undefined when the text is not plainly one. */
function readValue(option: Options, text: string): unknown {
  if (option.type === 'number') return /^\d+(\.\d+)?$/.test(text) ? Number(text) : undefined;
  if (option.type === 'string') return text;
  // An option with neither type is read by yargs as a number when it looks like one.
  return option.type === undefined && /^[a-z][a-z-]*$/i.test(text) ? text : undefined;
}

/** What the option says it can be, checked: its choices and its range. */
function allowed(command: string, name: string, option: Options, value: unknown): boolean {
  if (option.choices && !(option.choices as unknown[]).includes(value)) return false;
  const range = option.type === 'number' ? rangeOf(command, `--${name}`) : undefined;
  return range === undefined || inRange(value as number, range);
}

/** The options of util.parseArgs for what the builder declared; undefined for a kind it cannot read as yargs does. */
function parseArgsOptions(declared: Map<string, Options>) {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const [name, option] of declared) {
    const aliases = ([] as string[]).concat(option.alias ?? []);
    if (aliases.some((alias) => alias.length !== 1) || aliases.length > 1 || option.coerce || option.nargs || option.count) return undefined;
    if (option.type !== undefined && !['string', 'number', 'boolean'].includes(option.type)) return undefined;
    // (util.parseArgs refuses `short` or `multiple` set to undefined.)
    options[name] = { type: option.type === 'boolean' ? 'boolean' : 'string', ...(aliases[0] ? { short: aliases[0] } : {}), ...(option.array ? { multiple: true } : {}) };
  }
  return options;
}

/**
 * The argv yargs would give `command` (named `name`) for `args` (the whole command line, the name first),
 * or undefined when the line is not plain enough to be read without yargs.
 */
export function quickArgv(name: string, command: CommandModule<any, any>, args: readonly string[]): Record<string, unknown> | undefined {
  const declared = declaredBy(command);
  const options = declared && parseArgsOptions(declared);
  if (!declared || !options || args[0] !== name) return undefined;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args: args.slice(1), options, strict: true, allowPositionals: false, tokens: true });
  } catch {
    return undefined;
  }
  const seen = new Set<string>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option') return undefined;
    // `-idocs` is `-i docs` to util.parseArgs and five flags to yargs; a flag given twice is an array to yargs.
    if ((token.rawName.length === 2 && token.inlineValue) || (seen.has(token.name) && !options[token.name].multiple)) return undefined;
    // yargs takes no word starting with a dash as a value (`--file -`: an empty file name and a stray `-`).
    if (!token.inlineValue && token.value?.startsWith('-')) return undefined;
    seen.add(token.name);
  }
  const argv: Record<string, unknown> = { _: [name], $0: 'near-dup' };
  for (const [key, option] of declared) {
    const given = parsed.values[key];
    let value: unknown = option.default;
    if (given !== undefined) {
      value = Array.isArray(given) ? given.map((text) => readValue(option, String(text))) : typeof given === 'string' ? readValue(option, given) : given;
      const values = Array.isArray(value) ? value : [value];
      if (values.some((one) => one === undefined || !allowed(name, key, option, one))) return undefined;
    }
    if (value === undefined) {
      if (option.demandOption) return undefined;
      continue;
    }
    for (const spelling of new Set([key, camel(key), ...([] as string[]).concat(option.alias ?? [])])) argv[spelling] = value;
  }
  return argv;
}
