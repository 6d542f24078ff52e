// near-dup explore: a page for reviewers, served on loopback; runs until Ctrl-C or SIGTERM.
import type { CommandModule } from 'yargs';
import type { EngineClient } from '../../engine/client.js';
import { DEFAULT_PREFIX } from '../../annotation.js';
import { missingStep } from '../../explore/next-step.js';
import { startExplorer } from '../../explore/server.js';
import { UserError } from '../../errors.js';
import { olderLayoutNote } from '../../jobs/params-held.js';
import { type ConnectionArgs, connectFromArgs, withConnectionOptions } from '../connection-options.js';
import { isLoopbackHost, parseListen } from './proxy.js';
import { escaped, escapeTerminal } from '../terminal-text.js';
import { advanced, examples } from '../help.js';

interface ExploreArgs extends ConnectionArgs {
  index: string;
  field: string[];
  listen: string;
  report?: string;
  prefix: string;
  allowHost?: string[];
}

/** What is said when the page listens beyond loopback: anyone who reaches the port reads the index with these credentials. */
export function wideListenWarning(host: string): string | undefined {
  if (isLoopbackHost(host)) return undefined;
  const wildcard = host === '0.0.0.0' || host === '::' || host === '';
  return `near-dup explore: listening on ${wildcard ? 'every network interface' : host}: anyone who can reach this port reads the index with the credentials it was started with, without logging in. Keep it on loopback and reach it by an SSH tunnel, or put a reverse proxy with TLS and authentication in front (README, Safety)${wildcard ? '; give the names it is opened by with --allow-host' : ''}\n`;
}

/** A line when no document of the index has any of the --field fields (the page would show no text); undefined otherwise or when it cannot be asked. */
async function fieldsNoDocumentHas(client: EngineClient, index: string, fields: string[]): Promise<string | undefined> {
  try {
    const count = await client.count(index, { bool: { should: fields.map((field) => ({ exists: { field } })), minimum_should_match: 1 } });
    if (count > 0) return undefined;
  } catch {
    return undefined;
  }
  const named = fields.map((f) => `"${f}"`).join(', ');
  return `no document of "${index}" has ${fields.length > 1 ? 'any of the fields' : 'the field'} ${named}: the page will show no text; give the text field(s) the index was annotated from with --field`;
}

/** `near-dup explore`: the reviewers' web page. */
export const exploreCommand: CommandModule<object, ExploreArgs> = {
  command: 'explore',
  describe: 'Serve a page to review duplicate clusters: members, pairs side by side with differences marked, similar documents',
  builder: (yargs) =>
    withConnectionOptions(yargs)
      .option('index', { alias: 'i', type: 'string', demandOption: true, describe: 'deduplicated index (near-dup dedup) to explore' })
      .option('field', { alias: 'f', type: 'string', array: true, demandOption: true, describe: 'the text field(s) to show' })
      .option('listen', { type: 'string', default: '127.0.0.1:9280', describe: 'host:port of the page (loopback by default: see the README before opening it wider)' })
      .option('report', { type: 'string', describe: 'folder written by near-dup evaluate --out, to show its plots' })
      .option('prefix', advanced({ type: 'string', default: DEFAULT_PREFIX, describe: 'object the near-dup fields are under' }))
      .option('allow-host', advanced({ type: 'string', array: true, describe: 'a host name the page is opened by, beyond the listen host and loopback (requests naming any other Host are refused)' }))
      .epilogue(
        examples([
          ['near-dup explore --index news --field body --report quality/', 'then open http://127.0.0.1:9280'],
        ]),
      ) as never,
  handler: async (argv) => {
    const listen = parseListen(argv.listen);
    const warning = wideListenWarning(listen.host);
    if (warning) process.stderr.write(escapeTerminal(warning.trimEnd()) + '\n');
    const client = await connectFromArgs(argv);
    const layout = await olderLayoutNote(client, argv.index, argv.prefix, argv.field.join(' --field '));
    if (layout) process.stderr.write(escaped`near-dup explore: ${layout}\n`);
    const missing = await fieldsNoDocumentHas(client, argv.index, argv.field);
    if (missing) process.stderr.write(escaped`near-dup explore: ${missing}\n`);
    // The page says it too; the terminal is where the command is run.
    const step = await missingStep(client, { index: argv.index, fields: argv.field, prefix: argv.prefix }).catch(() => undefined);
    if (step) process.stderr.write(escaped`near-dup explore: ${step.why}; run: ${step.command}\n`);
    try {
      // The page is told a failure without the cluster's address; the operator, here, is told all of it.
      const onError = (err: unknown) => process.stderr.write(escaped`near-dup explore: a request failed: ${err instanceof Error ? err.message : String(err)}\n`);
      const explorer = await startExplorer(client, { index: argv.index, fields: argv.field, prefix: argv.prefix, reportDir: argv.report, allowHosts: argv.allowHost, onError, ...listen }).catch((err: NodeJS.ErrnoException) => {
        if (err.code === 'EADDRINUSE') throw new UserError(`--listen ${argv.listen}: the port is in use; choose another`);
        throw err;
      });
      process.stderr.write(escaped`near-dup explore: ${argv.index} on ${client.url} at ${explorer.url} (Ctrl-C to stop)\n`);
      await new Promise<void>((resolve) => {
        process.once('SIGINT', () => resolve());
        process.once('SIGTERM', () => resolve());
      });
      await explorer.close();
    } finally {
      await client.close();
    }
  },
};
