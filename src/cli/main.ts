#!/usr/bin/env node
// The `near-dup` command: yargs parses (a plain command line: quick-parse.ts), each command module calls a job and prints.
// Start-up is paid by every command: nothing heavy is imported here. yargs (about 60 ms of loading, as long
// as Node's own start) comes with the parser, and a command's modules with the command (commands/index.ts).
import { UsageError, UserError } from '../errors.js';
import { escaped, escapedLines } from './terminal-text.js';
import { endQuietlyOnClosedPipes } from './closed-pipe.js';
import { cliMessage } from './option-flags.js';
import { asksForVersion, packageVersion } from './package-version.js';

async function main(argv: string[]): Promise<void> {
  // Answered without the parser: yargs would print the same line.
  if (asksForVersion(argv)) return void process.stdout.write(`${packageVersion()}\n`);
  // A plain command line runs without yargs (quick-parse.ts); anything else is parsed, checked and said by it.
  const [{ commandLoaders }, { quickArgv }] = await Promise.all([import('./commands/index.js'), import('./quick-parse.js')]);
  const name = argv[0];
  if (name !== undefined && Object.hasOwn(commandLoaders, name)) {
    const command = await commandLoaders[name]();
    const quick = quickArgv(name, command, argv);
    if (quick) return void (await command.handler(quick as never));
  }
  const { cliParser } = await import('./parser.js');
  await (await cliParser(argv)).parseAsync();
}

/** `--debug` (or NEAR_DUP_DEBUG=1) prints the stack trace of a failure; without it, a user sees one line. */
const debug = process.argv.includes('--debug') || ['1', 'true'].includes(process.env.NEAR_DUP_DEBUG ?? '');

endQuietlyOnClosedPipes();

// A promise that fails before anything looks after it (a read-ahead page refused while the page before is
// worked on) would make Node end the process with a stack trace, even when the job is about to handle it.
// Kept instead; one still unhandled when the process ends is reported as one line, exit code 1.
const unhandled = new Map<Promise<unknown>, unknown>();
process.on('unhandledRejection', (reason, promise) => void unhandled.set(promise, reason));
process.on('rejectionHandled', (promise) => void unhandled.delete(promise));
process.on('exit', () => {
  const [reason] = unhandled.values();
  if (unhandled.size === 0 || process.exitCode) return;
  const message = reason instanceof Error ? reason.message : String(reason);
  process.stderr.write(escaped`near-dup: unexpected error: ${message.replace(/\s*\n\s*/g, ' ').trim()}${debug ? '' : ' (run again with --debug for the stack trace, and report it)'}\n`);
  if (debug && reason instanceof Error && reason.stack) process.stderr.write(escapedLines(reason.stack.split('\n')));
  process.exitCode = 1;
});

// --help-all is --help with the advanced options shown (help.ts reads it from process.argv).
// (yargs' hideBin is process.argv.slice(2) outside Electron, and would load yargs.)
main(
  process.argv
    .slice(2)
    .filter((arg) => arg !== '--debug')
    .map((arg) => (arg === '--help-all' ? '--help' : arg)),
).catch(async (err: unknown) => {
  // The library names option keys; a user of the CLI typed flags (option-flags.ts).
  let message = cliMessage(err);
  if (err instanceof UserError && message.includes('does not exist')) {
    // Loaded only here: the engine client is not for every start.
    const [{ withSimilarIndexNames }, { commandConnection }] = await Promise.all([import('./index-names.js'), import('./connection-options.js')]);
    message = await withSimilarIndexNames(message, commandConnection());
  }
  // One line; an id or a value the message quotes is shown escaped (terminal-text.ts), never acted on by the terminal.
  const line = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();
  if (err instanceof UsageError) {
    process.stderr.write(escaped`near-dup: ${line(message)}\n`);
    process.exitCode = 2;
  } else if (err instanceof UserError) {
    process.stderr.write(escaped`near-dup: ${line(message)}\n`);
    process.exitCode = 1;
  } else {
    // A failure near-dup did not foresee: one line, and how to see more (a bug report wants the trace).
    process.stderr.write(escaped`near-dup: unexpected error: ${line(message)}${debug ? '' : ' (run again with --debug for the stack trace, and report it)'}\n`);
    process.exitCode = 1;
  }
  if (debug && err instanceof Error && err.stack) process.stderr.write(escapedLines(err.stack.split('\n')));
});
