// The `near-dup` command line's parser: every command, the global options, and the checks that run before
// any command (option-ranges.ts). Built here, apart from main.ts, so that tests parse as the CLI does.
import yargs, { type Argv } from 'yargs';
import { commandLoaders } from './commands/index.js';
import { UsageError } from '../errors.js';
import { checkOptionRanges } from './option-ranges.js';
import { checkFlags, withoutSecrets } from './flag-check.js';
import { packageVersion } from './package-version.js';

/** The parser of the command line `argv` (without node and the script): parseAsync() runs the command. */
export async function cliParser(argv: string[]): Promise<Argv> {
  let parser = yargs(argv)
    .scriptName('near-dup')
    .version(packageVersion())
    .strict()
    .demandCommand(1, 'Name a command: see `near-dup --help`.')
    .recommendCommands()
    .help()
    .option('help-all', { type: 'boolean', describe: 'Show help with every option, the advanced ones too' })
    .wrap(Math.min(110, process.stdout.columns ?? 110))
    // A mistyped flag or a flag without its value first, then the numbers' ranges; both before yargs' checks.
    .middleware(checkFlags(argv) as never, true)
    .middleware(checkOptionRanges(argv) as never, true)
    .fail((msg, err) => {
      // A yargs validation message is a usage error (exit 2); anything thrown by a handler is passed on.
      if (err) throw err;
      throw new UsageError(withoutSecrets(msg, argv));
    });
  // Only the command being run is loaded; --help, no command or a misspelt one load them all.
  const named = argv.find((arg) => !arg.startsWith('-'));
  const names = named !== undefined && Object.hasOwn(commandLoaders, named) ? [named] : Object.keys(commandLoaders);
  for (const name of names) parser = parser.command((await commandLoaders[name]()) as never);
  skipHelpCache(parser);
  return parser;
}

/**
 * yargs renders the whole help text of a command each time it runs one, to keep for a failure message that
 * shows help; this CLI's own fail handler never shows it (`--help` renders its own). The rendering measures
 * every line's width (string-width's emoji pattern, wrap-ansi): 30 ms of CPU before `sign` reads a line.
 * The cache is an internal of yargs (17 and 18): where it is missing, nothing changes.
 */
function skipHelpCache(parser: unknown): void {
  const usage = (parser as { getInternalMethods?: () => { getUsageInstance?: () => { cacheHelpMessage?: unknown } } }).getInternalMethods?.().getUsageInstance?.();
  if (usage && typeof usage.cacheHelpMessage === 'function') usage.cacheHelpMessage = () => undefined;
}
