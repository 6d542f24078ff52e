// A plain command line is parsed without yargs (src/cli/quick-parse.ts): the argv a command is handed must
// be the one yargs hands it, for every option of every command, and every line that is not plain (a
// mistake, a spelling only yargs knows, help) must be left to yargs, whose checks and messages are the CLI's.
import type { Argv } from 'yargs';
import { describe, expect, it } from 'vitest';
import { commandLoaders } from '../../src/cli/commands/index.js';
import { rangeOf } from '../../src/cli/option-ranges.js';
import { cliParser } from '../../src/cli/parser.js';
import { declaredBy, quickArgv } from '../../src/cli/quick-parse.js';
import { REQUIRED_ARGS } from '../support/required-args.js';


class Reached extends Error {
  constructor(readonly argv: Record<string, unknown>) {
    super('the command would have run');
  }
}

/** The argv yargs hands the command for `args`, or the error it stops with. */
async function yargsArgv(args: string[]): Promise<Record<string, unknown> | Error> {
  const parser = await cliParser(args);
  parser.middleware(((argv: Record<string, unknown>) => {
    throw new Reached({ ...argv });
  }) as never);
  try {
    await parser.parseAsync();
  } catch (err) {
    return err instanceof Reached ? err.argv : (err as Error);
  }
  throw new Error(`${args.join(' ')}: parsed without reaching the command`);
}

async function quick(args: string[]) {
  return quickArgv(args[0], await commandLoaders[args[0]](), args);
}

/** A value yargs takes for the option, as typed. */
function plainValue(command: string, name: string, option: { type?: string; choices?: unknown; default?: unknown }): string[] {
  if (option.type === 'boolean') return [];
  if (Array.isArray(option.choices)) return [String(option.choices.at(-1))];
  if (option.type === 'number') {
    const range = rangeOf(command, `--${name}`)!;
    return [String(range.fraction ? (range.min + range.max) / 2 : range.min + 1 <= range.max ? range.min + 1 : range.min)];
  }
  return ['some-value'];
}

describe('a plain command line, without yargs', () => {
  it('every command, with each of its options and with all of them: the argv yargs would give', async () => {
    let compared = 0;
    for (const command of Object.keys(commandLoaders)) {
      const declared = declaredBy(await commandLoaders[command]());
      expect(declared, `${command}: its builder only declares options`).toBeDefined();
      const base = [command, ...(REQUIRED_ARGS[command] ?? [])];
      const lines = [base];
      const all = [...base];
      for (const [name, option] of declared!) {
        if (base.includes(`--${name}`)) continue;
        const flag = [`--${name}`, ...plainValue(command, name, option as never)];
        lines.push([...base, ...flag]);
        all.push(...flag);
      }
      lines.push(all);
      for (const args of lines) {
        const expected = await yargsArgv(args);
        expect(expected, args.join(' ')).not.toBeInstanceOf(Error);
        expect(await quick(args), args.join(' ')).toEqual(expected);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(150);
  }, 120_000);

  it('short aliases, --flag=value, repeated array values', async () => {
    for (const args of [
      ['similar', '-i', 'docs', '--text', 'hello there', '--limit=3', '--format', 'table'],
      ['annotate', '-i', 'docs', '-f', 'title', '--field', 'body', '-q', '{"match_all":{}}', '--dry-run'],
      ['sign', '-f', 'page.html', '--threshold', '0.8'],
    ]) {
      expect(await quick(args), args.join(' ')).toEqual(await yargsArgv(args));
    }
  });

  it.each([
    ['a mistyped flag', ['annotate', '--index', 'docs', '--feild', 'body']],
    ['a single-dash long option', ['annotate', '--index', 'docs', '--field', 'body', '-dry-run']],
    ['a flag without its value', ['similar', '--index', 'docs', '--limit', '--format', 'table']],
    ['a flag without its value, last', ['similar', '--index', 'docs', '--limit']],
    ['a required option left out', ['annotate', '--index', 'docs']],
    ['a number out of range', ['similar', '--index', 'docs', '--limit', '0']],
    ['a number as yargs alone reads it', ['annotate', '--index', 'docs', '--field', 'f', '--threads', '1e0']],
    ['a negative number', ['annotate', '--index', 'docs', '--field', 'f', '--threads', '-1']],
    ['a choice not offered', ['similar', '--index', 'docs', '--format', 'yaml']],
    ['a flag given twice', ['similar', '--index', 'docs', '--limit', '3', '--limit', '4']],
    ['camel case', ['similar', '--index', 'docs', '--minSimilarity', '0.5']],
    ['a negation', ['annotate', '--index', 'docs', '--field', 'f', '--no-dry-run']],
    ['a value glued to a short alias', ['similar', '-idocs']],
    ['array values after one flag', ['annotate', '--index', 'docs', '--field', 'a', 'b']],
    ['a positional', ['sign', 'page.html']],
    ['a lone dash as a value', ['sign', '--file', '-']],
    ['a double dash', ['sign', '--', '--jsonl']],
    ['help', ['sign', '--help']],
    ['help with every option', ['sign', '--help-all']],
    ['the version', ['sign', '--version']],
  ])('%s: left to yargs', async (_what, args) => {
    expect(await quick(args)).toBeUndefined();
  });

  it('a builder that does more than declare options is left to yargs', () => {
    const checked = { command: 'x', describe: 'x', builder: (yargs: Argv) => yargs.option('a', { type: 'string' }).check(() => true), handler: () => undefined };
    expect(declaredBy(checked as never)).toBeUndefined();
    expect(quickArgv('x', checked as never, ['x', '--a', 'b'])).toBeUndefined();
  });
});
