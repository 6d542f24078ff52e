// near-dup annotate: add the near-dup fields to every document of an existing index.
import type { CommandModule } from 'yargs';
import { prefixPath } from '../../indices/mapping.js';
import { UsageError } from '../../errors.js';
import type { RetrySnapshot } from '../../engine/retry.js';
import { ANNOTATE_DEFAULTS, type AnnotateOptions, type AnnotateSummary, annotateIndex, checkAnnotateOptions, checkSlice } from '../../jobs/annotate.js';
import { type FollowOptions, followIndex, parseInterval } from '../../jobs/follow.js';
import type { EngineClient } from '../../engine/client.js';
import { olderLayoutNote } from '../../jobs/params-held.js';
import { type ConnectionArgs, connectFromArgs, withConnectionOptions } from '../connection-options.js';
import { createProgressPrinter } from '../progress.js';
import { type SignerArgs, signerOptionsFrom, withSignerOptions } from '../signer-options.js';
import { type BulkArgs, bulkOptionsFrom, withBulkOptions } from '../bulk-options.js';
import { escaped, escapeTerminal, jsonLine } from '../terminal-text.js';
import { advanced, examples } from '../help.js';
import { cliMessage } from '../option-flags.js';
import { templateRequestOf } from '../template-flags.js';
import { forCount, plural } from '../../plural.js';

interface AnnotateArgs extends ConnectionArgs, SignerArgs, BulkArgs {
  index: string;
  field: string[];
  prefix: string;
  query?: string;
  slices?: number;
  slice?: number;
  resume: boolean;
  checkpoint?: string;
  errorsFile?: string;
  dryRun: boolean;
  force: boolean;
  keepVersion: boolean;
  maxChars: number;
  threads?: number;
  pageSize: number;
  follow: boolean;
  interval: string;
  templateShare?: number;
  templateSample?: number;
}

/**
 * `--query` as the engine takes it: a JSON object, unwrapped when given as `{"query": ...}`; bad JSON refused in one
 * usage line with an example.
 */
export function parseQuery(text: string | undefined): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let query: unknown;
  try {
    query = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`--query is not valid JSON (${(err as Error).message}); give a query object, e.g. '{"term": {"lang": "en"}}'`);
  }
  if (typeof query !== 'object' || query === null || Array.isArray(query)) {
    throw new UsageError(`--query must be a JSON object in the engine's query DSL, e.g. '{"match_all": {}}'`);
  }
  const q = query as Record<string, unknown>;
  return 'query' in q && Object.keys(q).length === 1 ? (q.query as Record<string, unknown>) : q;
}

/** `--slices N --slice I` checked together: both or neither, I below N. */
export function validateSlice(slices: number | undefined, slice: number | undefined): { id: number; max: number } | undefined {
  if (slices === undefined && slice === undefined) return undefined;
  if (slices === undefined || slice === undefined) throw new UsageError('give --slices N and --slice I together (I from 0 to N-1)');
  checkSlice({ id: slice, max: slices }); // also for --slices 1, which then needs no slice
  return slices > 1 ? { id: slice, max: slices } : undefined;
}

/** What the network cost, when it cost anything: retries by cause, restarted scans, sweeps. */
export function retriesNote(summary: { retries: RetrySnapshot; restarts?: number; sweeps?: number }): string {
  const r = summary.retries;
  const parts = [
    r.status429 ? `${r.status429} after 429` : '',
    r.status5xx ? `${r.status5xx} after 5xx` : '',
    r.timeout ? `${r.timeout} after timeouts` : '',
    r.connection ? `${r.connection} after dropped connections` : '',
  ].filter(Boolean);
  const extra = [
    summary.restarts ? `${plural(summary.restarts, 'scan')} restarted from what was left` : '',
    summary.sweeps ? `${plural(summary.sweeps, 'sweep')} of documents still unsigned` : '',
  ].filter(Boolean);
  if (parts.length === 0 && extra.length === 0) return '';
  return `; ${[parts.length ? `retries: ${parts.join(', ')} (${r.waitedSeconds.toFixed(1)} s waiting)` : '', ...extra].filter(Boolean).join('; ')}`;
}

/**
 * Annotate's summary: one line for people on stderr (what is left to do said with its command), the JSON line on
 * stdout.
 */
export function printSummary(summary: AnnotateSummary, verb: string): void {
  const human =
    `${summary.dryRun ? `dry run: would have ${verb}` : verb} ${summary.annotated} of ${plural(summary.seen, 'document')} in ${summary.seconds.toFixed(1)} s ` +
    `(${summary.unchanged} unchanged, ${summary.empty} empty, ${summary.failed} failed, ${summary.cut} cut at --max-chars, ` +
    `${summary.conflicts} changed meanwhile and redone)` +
    (summary.errorsFile ? `; failures listed in ${summary.errorsFile}` : '') +
    retriesNote(summary) +
    (summary.missing > 0
      ? `; INCOMPLETE: ${plural(summary.missing, 'document')} still ${forCount(summary.missing, 'has', 'have')} no signature (listed); run the same command with --resume`
      : summary.complete
        ? ''
        : `; interrupted: run the same command with --resume to continue`) +
    summary.notes.map((note) => `; ${note}`).join('') +
    (summary.closedIndices.length > 0
      ? `; not read: the closed ${summary.closedIndices.length > 1 ? 'indices' : 'index'} ${summary.closedIndices.join(', ')} (open ${summary.closedIndices.length > 1 ? 'them' : 'it'} and run again to sign ${summary.closedIndices.length > 1 ? 'their' : 'its'} documents)`
      : '');
  process.stderr.write(escapeTerminal(human) + '\n');
  process.stdout.write(jsonLine(summary));
}


/** `near-dup annotate`: sign every document of an index and write the fields back. */
export const annotateCommand: CommandModule<object, AnnotateArgs> = {
  command: 'annotate',
  describe: 'Add near-dup fields to every document of an existing index (bulk partial updates, resumable)',
  builder: (yargs) =>
    withBulkOptions(withSignerOptions(withConnectionOptions(yargs)))
      .option('index', { alias: 'i', type: 'string', demandOption: true, describe: 'index or alias to annotate' })
      .option('field', { alias: 'f', type: 'string', array: true, demandOption: true, describe: 'text field(s) to sign; several are joined' })
      .option('prefix', advanced({ type: 'string', default: ANNOTATE_DEFAULTS.prefix, describe: 'object the near-dup fields go under' }))
      .option('query', { alias: 'q', type: 'string', describe: 'only documents matching this query (JSON DSL)' })
      .option('slices', advanced({ type: 'number', describe: 'split the work into N parts for N processes or machines' }))
      .option('slice', advanced({ type: 'number', describe: 'which part this process does, 0 to N-1' }))
      .option('resume', { type: 'boolean', default: false, describe: 'continue an interrupted run from its checkpoint' })
      .option('checkpoint', advanced({ type: 'string', describe: 'checkpoint file [default: .near-dup/annotate-INDEX.json]' }))
      .option('errors-file', advanced({ type: 'string', describe: 'where failed ids and reasons go [default: near-dup-errors-INDEX.jsonl]' }))
      .option('dry-run', { type: 'boolean', default: false, describe: 'report what would be written, write nothing' })
      .option('force', { type: 'boolean', default: false, describe: 'sign again even documents whose stored signature is current' })
      .option('keep-version', advanced({
        type: 'boolean',
        default: false,
        describe: 'keep each document\'s _version as it was (for producers that index with version_type=external): the whole document is written back at its own version (version_type=external_gte) instead of a partial update',
      }))
      .option('max-chars', advanced({ type: 'number', default: ANNOTATE_DEFAULTS.maxChars, describe: 'cut longer texts (reported in the summary)' }))
      .option('threads', advanced({ type: 'number', describe: 'signing threads [default: every core]' }))
      .option('page-size', advanced({ type: 'number', default: ANNOTATE_DEFAULTS.pageSize, describe: 'documents per search page' }))
      .option('template-share', advanced({
        type: 'number',
        describe: 'compare documents by their own text: the tokens in more than this share of a sample of the documents are template text (shared headings, notices), marked in each signature, the set kept in near-dup-templates; 0 for none [default: 0.005, drawn when the index has 2,000 documents or more]',
      }))
      .option('template-sample', advanced({ type: 'number', describe: 'with --template-share: how many documents (the first scanned) the set is drawn from [default: 10000]' }))
      .option('follow', { type: 'boolean', default: false, describe: 'keep annotating what is new or changed every --interval, until Ctrl-C' })
      .option('interval', advanced({ type: 'string', default: '10s', describe: 'with --follow: time between passes (10s, 500ms, 2m)' }))
      .epilogue(
        examples([
          ['near-dup annotate --index news --field title --field body', 'annotate every document'],
          ['near-dup annotate --index news --field body --slices 4 --slice 0', 'one of four parallel workers'],
          ['near-dup annotate --index news --field body --follow --interval 30s', 'annotate new and changed documents as they come'],
        ]),
      ) as never,
  handler: async (argv) => {
    const signer = signerOptionsFrom(argv);
    prefixPath(argv.prefix);
    const bulk = bulkOptionsFrom(argv);
    const slice = validateSlice(argv.slices, argv.slice);
    const query = parseQuery(argv.query);
    const progress = createProgressPrinter('annotate', process.stderr, ['annotated', 'unchanged', 'failed']);
    const controller = new AbortController();
    const options: AnnotateOptions = {
      index: argv.index,
      fields: argv.field,
      signer,
      ...templateRequestOf(argv),
      read: { query, slice },
      limits: { pageSize: argv.pageSize, threads: argv.threads, maxChars: argv.maxChars, bulk },
      state: { resume: argv.resume, checkpointFile: argv.checkpoint },
      output: { prefix: argv.prefix, dryRun: argv.dryRun, force: argv.force, keepVersion: argv.keepVersion, errorsFile: argv.errorsFile },
      // The bar counts documents settled (written and acknowledged, current, or failed), not read: the writes take time too.
      onProgress: (p) => progress.update({ ...p, seen: p.done }),
      signal: controller.signal,
    };
    checkAnnotateOptions(options); // before connecting: a usage error is said first
    const intervalMs = argv.follow ? parseInterval(argv.interval) : 0;
    if (argv.follow && argv.dryRun) throw new UsageError('--follow writes as it goes; drop --dry-run (or --follow)');
    const client = await connectFromArgs(argv);
    const layout = await olderLayoutNote(client, argv.index, argv.prefix, argv.field.join(' --field '));
    if (layout) process.stderr.write(escaped`near-dup: ${layout}\n`);
    const onSigint = () => {
      if (controller.signal.aborted) process.exit(130);
      process.stderr.write('\nstopping: finishing the requests in flight and writing the checkpoint (Ctrl-C again to quit now)\n');
      controller.abort();
    };
    process.on('SIGINT', onSigint);
    process.on('SIGTERM', onSigint);
    try {
      if (argv.follow) return await follow(client, { ...options, onProgress: undefined, intervalMs });
      const summary = await annotateIndex(client, options);
      progress.done();
      printSummary(summary, 'annotated');
      if (summary.failed > 0 || !summary.complete) process.exitCode = 1;
    } finally {
      process.off('SIGINT', onSigint);
      process.off('SIGTERM', onSigint);
      await client.close();
    }
  },
};

/** annotate --follow: a status line between passes (JSON lines when not on a terminal), the totals on stdout at the end. */
async function follow(client: EngineClient, options: FollowOptions): Promise<void> {
  const tty = process.stderr.isTTY === true;
  const say = (record: Record<string, unknown>, human: string) => process.stderr.write(tty ? `\r${escapeTerminal(human).padEnd(100)}` : jsonLine({ job: 'annotate-follow', ...record }));
  const totals = await followIndex(client, {
    ...options,
    onPass: ({ pass, whole, summary, totals }) =>
      say(
        { pass, whole, annotated: summary.annotated, unchanged: summary.unchanged, failed: summary.failed, complete: summary.complete, totals },
        `following ${options.index}: pass ${pass}${whole ? ' (whole index)' : ''}: ${summary.annotated} annotated, ${summary.unchanged} unchanged, ${summary.failed} failed; ` +
          `${totals.annotated} annotated in all`,
      ),
    onWait: ({ nextInMs, totals }) =>
      tty && process.stderr.write(escaped`\rfollowing ${options.index}: ${totals.annotated} annotated in ${plural(totals.passes, 'pass')}; next pass in ${(nextInMs / 1000).toFixed(0)} s`.padEnd(100)),
    onNote: (line) => process.stderr.write(`${tty ? '\n' : ''}${escaped`near-dup: ${line}\n`}`),
    onPassError: (error, pass) => process.stderr.write(`${tty ? '\n' : ''}${escaped`near-dup: pass ${pass} failed (${cliMessage(error)}); trying again at the next pass\n`}`),
  });
  if (tty) process.stderr.write('\n');
  process.stderr.write(escaped`stopped following ${options.index} after ${plural(totals.passes, 'pass')}: ${totals.annotated} annotated, ${totals.failed} failed\n`);
  process.stdout.write(jsonLine({ index: options.index, follow: true, ...totals }));
}
