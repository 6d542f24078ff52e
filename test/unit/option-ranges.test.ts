// Every numeric option of every command is held to its range before the command runs, in one line naming
// the flag, the value as typed and the range (exit code 2). Through the CLI's own parser for every option
// and every kind of bad value, and through the real CLI process for the cases that ran away or said
// "unexpected error" (annotate --threads 1e6 started threads without end; proxy --threads NaN served).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Argv } from 'yargs';
import { describe, expect, it } from 'vitest';
import { commandLoaders } from '../../src/cli/commands/index.js';
import { describeRange, inRange, numericOptions, OPTION_RANGES, rangeOf } from '../../src/cli/option-ranges.js';
import { cliParser } from '../../src/cli/parser.js';
import { UsageError } from '../../src/errors.js';
import { REQUIRED_ARGS } from '../support/required-args.js';

const CLI = path.resolve(__dirname, '../../dist/cli/main.js');


/** Thrown by the test's own middleware, after yargs' validation: the command would have run. */
class Reached extends Error {
  constructor(readonly numeric: string[]) {
    super('the command would have run');
  }
}

/** Parses as the CLI does, stopping before the command's handler. */
async function parse(args: string[]): Promise<unknown> {
  const parser = await cliParser(args);
  parser.middleware(((_argv: unknown, yargs: Argv) => {
    throw new Reached(numericOptions(yargs));
  }) as never);
  try {
    await parser.parseAsync();
  } catch (err) {
    return err;
  }
  throw new Error(`${args.join(' ')}: parsed without reaching the command`);
}

/** The numeric options of each command, read from the parser itself. */
async function numericOptionsByCommand(): Promise<Array<[command: string, flag: string]>> {
  const pairs: Array<[string, string]> = [];
  for (const command of Object.keys(commandLoaders)) {
    const reached = await parse([command, ...(REQUIRED_ARGS[command] ?? [])]);
    expect(reached, command).toBeInstanceOf(Reached);
    for (const key of (reached as Reached).numeric) pairs.push([command, `--${key}`]);
  }
  return pairs;
}

const BAD = ['NaN', '-1', '0', '1e6', 'abc'];

describe('every numeric option has a range, and is held to it by the parser', () => {
  it('every numeric option of every command has a range, and every range a numeric option', async () => {
    const pairs = await numericOptionsByCommand();
    expect(pairs.length).toBeGreaterThan(50);
    expect(pairs.filter(([command, flag]) => !rangeOf(command, flag))).toEqual([]);
    const used = new Set(pairs.map(([, flag]) => flag));
    expect(Object.keys(OPTION_RANGES).filter((flag) => !used.has(flag))).toEqual([]);
    // The options of the issue, by name.
    for (const expected of [['annotate', '--threads'], ['proxy', '--threads'], ['ingest', '--max-line-bytes'], ['proxy', '--max-body-mb'], ['dedup', '--from-shares']]) {
      expect(pairs).toContainEqual(expected);
    }
  });

  it(`NaN, -1, 0, 1e6 and abc for every numeric option of every command: refused in one line naming the flag, the value and the range, or taken when in range`, async () => {
    const pairs = await numericOptionsByCommand();
    let refused = 0;
    for (const [command, flag] of pairs) {
      const range = rangeOf(command, flag)!;
      for (const value of BAD) {
        const result = await parse([command, ...(REQUIRED_ARGS[command] ?? []), flag, value]);
        const what = `${command} ${flag} ${value}`;
        if (inRange(Number(value), range)) {
          expect(result, what).toBeInstanceOf(Reached);
          continue;
        }
        refused++;
        expect(result, what).toBeInstanceOf(UsageError);
        expect((result as Error).message, what).toBe(`${flag} must be ${describeRange(range)}, got ${value}`);
      }
    }
    expect(refused).toBeGreaterThan(4 * pairs.length);
  }, 120_000);

  it('the flag as --flag=VALUE or in camel case, given twice, or given without a value', async () => {
    const threads = describeRange(rangeOf('annotate', '--threads')!);
    const annotate = ['annotate', ...REQUIRED_ARGS.annotate];
    const message = async (...args: string[]) => ((await parse([...annotate, ...args])) as Error).message;
    expect(await message('--threads=abc')).toBe(`--threads must be ${threads}, got abc`);
    expect(await message('--maxChars', '0x')).toBe(`--max-chars must be ${describeRange(rangeOf('annotate', '--max-chars')!)}, got 0x`);
    expect(await message('--threads', '')).toBe(`--threads must be ${threads}, got ""`);
    expect(await message('--threads', 'Infinity')).toBe(`--threads must be ${threads}, got Infinity`);
    expect(await message('--threads', '2.5')).toBe(`--threads must be ${threads}, got 2.5`);
    expect(await message('--threads', '2', '--threads', '3')).toBe(`--threads is given 2 times (2, 3); give it once: ${threads}`);
    expect(await message('--threads', '--dry-run')).toBe(`--threads needs a value: ${threads}`);
    expect(await message('--threads')).toBe(`--threads needs a value: ${threads}`);
    expect(await message('--no-threads')).toBe(`--threads must be ${threads}, got --no-threads`);
  });

  it('ranges read as a user would write them', () => {
    expect(describeRange(rangeOf('annotate', '--threads')!)).toBe(`a whole number from 1 to ${4 * os.availableParallelism()} (4 for each of the ${os.availableParallelism()} cores)`);
    expect(describeRange(rangeOf('sign', '--threshold')!)).toBe('a number above 0 and below 1');
    expect(describeRange(rangeOf('dedup', '--min-similarity')!)).toBe('a number above 0 and at most 1');
    expect(describeRange(rangeOf('similar', '--min-similarity')!)).toBe('a number from 0 to 1');
    expect(describeRange(rangeOf('sign', '--key-encoding')!)).toBe('1 or 2');
  });
});

describe.skipIf(!existsSync(CLI))('the real CLI process', () => {
  // Port 1 refuses connections: the mistake is said before any is tried.
  const run = (args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', input: '', timeout: 20_000 });
  const url = ['--url', 'http://127.0.0.1:1'];
  const threads = describeRange(rangeOf('annotate', '--threads')!);

  it.each([
    [['annotate', '--index', 'docs', '--field', 'text', '--dry-run', '--threads', '1e6', ...url], `--threads must be ${threads}, got 1e6`],
    [['proxy', '--index', 'docs', '--field', 'text', '--threads', 'NaN', ...url], `--threads must be ${threads}, got NaN`],
    [['proxy', '--index', 'docs', '--field', 'text', '--threads', '-1', ...url], `--threads must be ${threads}, got -1`],
    [['proxy', '--index', 'docs', '--field', 'text', '--threads', '0', ...url], `--threads must be ${threads}, got 0`],
    [['ingest', '--index', 'docs', '--field', 'text', '--bulk-bytes', 'abc', ...url], `--bulk-bytes must be ${describeRange(rangeOf('ingest', '--bulk-bytes')!)}, got abc`],
    [['sign', '--key-encoding', '3'], '--key-encoding must be 1 or 2, got 3'],
  ])('near-dup %j: exit 2, one line', (args, line) => {
    const result = run(args);
    expect(result.stderr).toBe(`near-dup: ${line}\n`);
    expect(result.status).toBe(2);
  });
});
