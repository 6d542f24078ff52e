#!/usr/bin/env node
// The `near-dup` command: yargs parses, each command module calls a job and prints.
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { commands } from './commands/index.js';
import { UsageError, UserError } from '../errors.js';

async function main(argv: string[]): Promise<void> {
  let parser = yargs(argv)
    .scriptName('near-dup')
    .strict()
    .demandCommand(1, 'Name a command: see `near-dup --help`.')
    .recommendCommands()
    .help()
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    .fail((msg, err) => {
      // A yargs validation message is a usage error (exit 2); anything thrown by a handler is passed on.
      if (err) throw err;
      throw new UsageError(msg);
    });
  for (const command of commands) parser = parser.command(command as never);
  await parser.parseAsync();
}

main(hideBin(process.argv)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    process.stderr.write(`near-dup: ${err.message}\n`);
    process.exitCode = 2;
  } else if (err instanceof UserError) {
    process.stderr.write(`near-dup: ${err.message}\n`);
    process.exitCode = 1;
  } else {
    process.stderr.write(`near-dup: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  }
});
