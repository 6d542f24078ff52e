// The command line's flags read before yargs' own checks: a mistyped flag is named with the nearest declared
// one (before "Missing required argument"), a single-dash long option is named with its two-dash form, and
// every option that takes a value refuses to be given none (yargs gave it its default, silently). Through
// the CLI's own parser for every option of every command, and through the real CLI process for the
// commands of the issue.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Argv } from 'yargs';
import { describe, expect, it } from 'vitest';
import { commandLoaders } from '../../src/cli/commands/index.js';
import { declaredOptions, editDistance, nearestFlag, withoutSecrets } from '../../src/cli/flag-check.js';
import { describeRange, rangeOf } from '../../src/cli/option-ranges.js';
import { cliParser } from '../../src/cli/parser.js';
import { UsageError } from '../../src/errors.js';
import { REQUIRED_ARGS } from '../support/required-args.js';

const CLI = path.resolve(__dirname, '../../dist/cli/main.js');


/** Thrown by the test's own middleware, after yargs' validation: the command would have run. */
class Reached extends Error {
  constructor(readonly declared: ReturnType<typeof declaredOptions>) {
    super('the command would have run');
  }
}

/** Parses as the CLI does, stopping before the command's handler: the error, or Reached. */
async function parse(args: string[]): Promise<unknown> {
  const parser = await cliParser(args);
  parser.middleware(((_argv: unknown, yargs: Argv) => {
    throw new Reached(declaredOptions(yargs));
  }) as never);
  try {
    await parser.parseAsync();
  } catch (err) {
    return err;
  }
  throw new Error(`${args.join(' ')}: parsed without reaching the command`);
}

async function message(args: string[]): Promise<string> {
  const result = await parse(args);
  expect(result, args.join(' ')).toBeInstanceOf(UsageError);
  return (result as Error).message;
}

describe('a mistyped flag is named, with the nearest declared one', () => {
  it('the distance counts a swap of neighbours as one edit', () => {
    expect(editDistance('feild', 'field')).toBe(1);
    expect(editDistance('min-similarty', 'min-similarity')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
    expect(nearestFlag('feild', ['index', 'field', 'f'])).toBe('--field');
    expect(nearestFlag('zzzzzz', ['index', 'field'])).toBeUndefined();
  });

  it.each([
    [['annotate', '--index', 'docs', '--feild', 'body'], 'unknown option --feild (did you mean --field?)'],
    [['similar', '--index', 'docs', '--min-similarty', '0.8'], 'unknown option --min-similarty (did you mean --min-similarity?)'],
    [['similar', '--index', 'docs', '--min-similarty=0.8'], 'unknown option --min-similarty (did you mean --min-similarity?)'],
    [['dedup', '--index', 'docs', '--Dry-Run'], 'unknown option --Dry-Run (did you mean --dry-run?)'],
    [['annotate', '--index', 'docs', '--field', 'body', '-dry-run'], '-dry-run: did you mean --dry-run?'],
    [['annotate', '--index', 'docs', '--field', 'body', '-dryrun'], '-dryrun: did you mean --dry-run?'],
    [['similar', '--index', 'docs', '-dry-run'], 'unknown option -dry-run (long options take two dashes; see near-dup similar --help)'],
    [['similar', '--index', 'docs', '--zzzzzz'], 'unknown option --zzzzzz (see near-dup similar --help)'],
    [['similar', '--index', 'docs', '-z', 'x'], 'unknown option -z (see near-dup similar --help)'],
    [['--verison'], 'unknown option --verison (did you mean --version?)'],
  ])('near-dup %j', async (args, line) => {
    expect(await message(args)).toBe(line);
  });

  it('a value given to a mistyped flag is not quoted (it may be a password)', async () => {
    const line = await message(['annotate', '--index', 'docs', '--field', 'body', '--pasword=hunter2']);
    expect(line).toBe('unknown option --pasword (did you mean --password?)');
    expect(await message(['annotate', '--index', 'docs', '--field', 'body', '--password', '-hunter2'])).not.toContain('hunter2');
  });

  it('every spelling yargs takes is still taken', async () => {
    const similar = ['similar', '--index', 'docs'];
    for (const args of [
      [...similar, '--minSimilarity', '0.5'],
      [...similar, '--min-similarity=0.5', '--limit', '3', '--format', 'table'],
      ['similar', '-i', 'docs', '--text', 'hello'],
      ['similar', '-i=docs', '--text', 'hello'],
      ['annotate', '--index', 'docs', '--field', 'a', 'b', '--no-dry-run', '--dryRun', '--', '--not-a-flag'],
      ['sign', '--seed', '0', '--jsonl', '--threads', '2'],
    ]) {
      expect(await parse(args), args.join(' ')).toBeInstanceOf(Reached);
    }
    // A negative number is a value (refused by its range), not a flag.
    expect(await message(['annotate', '--index', 'docs', '--field', 'body', '--threads', '-1'])).toMatch(/^--threads must be .*, got -1$/);
  });
});

/** Every option of every command that takes a value, with the command's declared options. */
async function valueOptions(): Promise<Array<{ command: string; flag: string; declared: ReturnType<typeof declaredOptions> }>> {
  const found: Array<{ command: string; flag: string; declared: ReturnType<typeof declaredOptions> }> = [];
  for (const command of Object.keys(commandLoaders)) {
    const reached = await parse([command, ...(REQUIRED_ARGS[command] ?? [])]);
    expect(reached, command).toBeInstanceOf(Reached);
    const { declared } = reached as Reached;
    for (const name of declared.names) {
      if (name.length > 1 && !declared.flagsOnly.has(name) && !declared.canonical.has(name)) found.push({ command, flag: `--${name}`, declared });
    }
  }
  return found;
}

describe('an option given without its value is refused, naming the flag and what it takes', () => {
  it('every option that takes a value, of every command: last on the line, or followed by another flag', async () => {
    const options = await valueOptions();
    expect(options.length).toBeGreaterThan(150);
    for (const { command, flag, declared } of options) {
      const key = flag.slice(2);
      const range = rangeOf(command, flag);
      const choices = declared.choices[key] as string[] | undefined;
      const takes = declared.numbers.has(key) ? describeRange(range!) : choices?.length ? choices.at(-1)! : (declared.descriptions[key] ?? '');
      expect(takes, `${command} ${flag}: something to say it takes`).not.toBe('');
      const required = REQUIRED_ARGS[command] ?? [];
      for (const args of [[command, ...required, flag], [command, flag, ...required, '--help-all']]) {
        const line = await message(args);
        expect(line, args.join(' ')).toMatch(new RegExp(`^${flag} needs a value\\b`));
        expect(line, args.join(' ')).toContain(takes);
      }
    }
  }, 120_000);

  it('the lines of the issue', async () => {
    const similar = ['similar', '--index', 'docs', '--text', 'hello'];
    expect(await message([...similar, '--limit', '--format', 'table'])).toBe('--limit needs a value: a whole number from 1 to 10000, e.g. --limit 10');
    expect(await message([...similar, '--min-similarity', '--format', 'table'])).toBe('--min-similarity needs a value: a number from 0 to 1');
    expect(await message([...similar, '--format', '--limit', '3'])).toBe('--format needs a value: json or table');
    expect(await message(['similar', '--text', 'hello', '-i'])).toBe('-i needs a value (annotated index)');
    expect(await message(['annotate', '--index', 'docs', '--field', '--dry-run'])).toMatch(/^--field needs a value \(.+\)$/);
  });
});

describe.skipIf(!existsSync(CLI))('the real CLI process', () => {
  // Port 1 refuses connections: each mistake must be said before any is tried.
  const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', input: '', timeout: 20_000 });
  const url = ['--url', 'http://127.0.0.1:1'];

  it.each([
    [['annotate', '--index', 'docs', '--feild', 'body', ...url], 'unknown option --feild (did you mean --field?)'],
    [['similar', '--index', 'docs', '--min-similarty', '0.8', ...url], 'unknown option --min-similarty (did you mean --min-similarity?)'],
    [['annotate', '--index', 'docs', '--field', 'body', '-dry-run', ...url], '-dry-run: did you mean --dry-run?'],
    [['similar', '--index', 'docs', '--text', 'hello', '--limit', '--format', 'table', ...url], '--limit needs a value: a whole number from 1 to 10000, e.g. --limit 10'],
    [['similar', '--index', 'docs', '--text', 'hello', '--min-similarity', '--format', 'table', ...url], '--min-similarity needs a value: a number from 0 to 1'],
  ])('near-dup %j: exit 2, one line', (args, line) => {
    const result = run(args);
    expect(result.stderr).toBe(`near-dup: ${line}\n`);
    expect(result.status).toBe(2);
  });
});

describe('a secret option\'s value is in no message, nor any piece of it', () => {
  const SECRETS = ['--password', '--api-key', '--bearer-token'];
  const VALUES = ['-5ecret', 'my secret', '--x'];
  /** The value's words, and every run of three of its characters or more (`5ecret`, `ecr`): none may be said. */
  const pieces = (value: string) => {
    const found = new Set(value.split(/\s+/).filter((w) => w.length > 1));
    for (let from = 0; from < value.length; from++) for (let to = from + 3; to <= value.length; to++) if (!value.slice(from, to).startsWith('--')) found.add(value.slice(from, to));
    return [...found];
  };
  /** The command lines that give `value` to `flag`: as one word, unquoted (its words apart), after `=`, with a flag after it. */
  const lines = (command: string, flag: string, value: string) => {
    const base = [command, ...REQUIRED_ARGS[command]];
    return [[...base, flag, value], [...base, flag, ...value.split(' ')], [...base, `${flag}=${value}`], [...base, flag, ...value.split(' '), '--limt', '3']];
  };

  for (const command of ['annotate', 'similar', 'dashboards']) {
    it.each(SECRETS.flatMap((flag) => VALUES.map((value) => [flag, value])))(`${command} %s %j`, async (flag, value) => {
      for (const args of lines(command, flag, value)) {
        const result = await parse(args);
        if (result instanceof Reached) continue;
        const said = (result as Error).message;
        // Letters one by one (yargs' "Unknown arguments: 5, e, c, r, t") or a word of it.
        expect(said, args.join(' ')).not.toMatch(/\b\w, \w, \w\b/);
        for (const piece of pieces(value)) expect(said, args.join(' ')).not.toContain(piece);
      }
    });
  }

  it('the command line says what is wrong without the value', async () => {
    expect(await message(['annotate', ...REQUIRED_ARGS.annotate, '--password', '-5ecret'])).toMatch(/^--password needs a value/);
    expect(await message(['annotate', ...REQUIRED_ARGS.annotate, '--password', 'my', 'secret'])).toBe(
      'a word after the value of --password (quote a value that holds spaces; this command takes no words but its flags and their values)',
    );
  });

  it("yargs' own message that names a piece of a secret is said without it; any other is left as it is", () => {
    const args = ['annotate', '--index', 'x', '--field', 'f', '--password', '-5ecret', '--apiKey=my secret'];
    for (const said of ['Unknown arguments: 5, e, c, r, t', 'Unknown argument: secret', 'Invalid values: my secret']) {
      const line = withoutSecrets(said, args);
      expect(line).toMatch(/^the value of --password, --api-key or --bearer-token could not be read as one value/);
      for (const piece of ['5', 'ecret', 'secret', 'my']) expect(line).not.toContain(piece);
    }
    expect(withoutSecrets('Unknown argument: zz', args)).toBe('Unknown argument: zz');
    expect(withoutSecrets('Unknown argument: e', ['annotate', '--index', 'e'])).toBe('Unknown argument: e');
  });
});
