// near-dup ingest: index NDJSON documents, annotated on the way in.
import { createReadStream, fstatSync, type ReadStream } from 'node:fs';
import type { CommandModule } from 'yargs';
import { prefixPath } from '../../indices/mapping.js';
import { UserError } from '../../errors.js';
import { checkIngestOptions, INGEST_DEFAULTS, type IngestOptions, ingestStream } from '../../jobs/ingest.js';
import { retriesNote } from './annotate.js';
import { type ConnectionArgs, connectFromArgs, withConnectionOptions } from '../connection-options.js';
import { createProgressPrinter } from '../progress.js';
import { escaped, jsonLine } from '../terminal-text.js';
import { type SignerArgs, signerOptionsFrom, withSignerOptions } from '../signer-options.js';
import { type BulkArgs, bulkOptionsFrom, withBulkOptions } from '../bulk-options.js';
import { advanced, examples } from '../help.js';
import { plural } from '../../plural.js';
import { templateRequestOf } from '../template-flags.js';

interface IngestArgs extends ConnectionArgs, SignerArgs, BulkArgs {
  index: string;
  field: string[];
  prefix: string;
  file?: string;
  idField?: string;
  errorsFile?: string;
  maxChars: number;
  threads?: number;
  maxLineBytes: number;
  templateShare?: number;
  templateSample?: number;
}

/**
 * --template-share and --template-sample as ingest's `template` option (template-flags.ts); `regular` when
 * --file is a regular file, the only input that can be read again from its start.
 */
function templateOption(argv: IngestArgs, regular: boolean): Pick<IngestOptions, 'template' | 'reread'> {
  const { template } = templateRequestOf(argv);
  if (template === false) return { template };
  // A regular file is read twice (the sample, then every line). Anything else (standard input, a pipe, a
  // FIFO, /dev/stdin, <(zcat ...)) opened again would go on where the first read stopped, losing the
  // sample's lines: its sample lines are held instead.
  const file = argv.file;
  return { ...(template ? { template } : {}), ...(file && regular ? { reread: () => createReadStream(file) } : {}) };
}

/** The descriptor of --file once it is open, or one line naming the file and why it cannot be read. */
function opened(input: ReadStream, file: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    input.once('open', (fd: number) => resolve(fd)).once('error', (err: NodeJS.ErrnoException) =>
      reject(new UserError(err.code === 'ENOENT' ? `file not found: ${file}; check the path given to --file` : `cannot read ${file}: ${err.message}`)),
    );
  });
}

/** `near-dup ingest`: NDJSON documents indexed with their fields already in them. */
export const ingestCommand: CommandModule<object, IngestArgs> = {
  command: 'ingest',
  describe: 'Index NDJSON documents (stdin or --file) with their near-dup fields already in them',
  builder: (yargs) =>
    withBulkOptions(withSignerOptions(withConnectionOptions(yargs)))
      .option('index', { alias: 'i', type: 'string', demandOption: true, describe: 'index to write to (created with the near-dup fields if missing)' })
      .option('field', { alias: 'f', type: 'string', array: true, demandOption: true, describe: 'text field(s) to sign' })
      .option('file', { type: 'string', describe: 'read NDJSON from this file instead of standard input' })
      .option('id-field', { type: 'string', describe: 'use this field as the document _id' })
      .option('prefix', advanced({ type: 'string', default: INGEST_DEFAULTS.prefix, describe: 'object the near-dup fields go under' }))
      .option('errors-file', advanced({ type: 'string', describe: 'where failed lines go [default: near-dup-errors-INDEX.jsonl]' }))
      .option('max-chars', advanced({ type: 'number', default: INGEST_DEFAULTS.maxChars, describe: 'cut longer texts (reported)' }))
      .option('threads', advanced({ type: 'number', describe: 'signing threads [default: every core]' }))
      .option('max-line-bytes', advanced({
        type: 'number',
        default: INGEST_DEFAULTS.maxLineBytes,
        defaultDescription: '104857600, 100 MB',
        describe: 'longest line read: a longer one is passed over unread and fails alone (listed with its number and length); the others go on',
      }))
      .option('template-share', advanced({
        type: 'number',
        describe: "compare documents by their own text: the tokens in more than this share of the first documents are template text (shared headings, notices), marked in each signature: the index's set for the same draw, else one drawn from the input and kept with the index; 0 for none [default: 0.005, drawn when the input has 2,000 documents or more]",
      }))
      .option('template-sample', advanced({ type: 'number', describe: 'with --template-share: how many documents (the first of the input) the set is drawn from; standard input or a --file that is not a regular file (a pipe, a FIFO) holds their lines in memory, up to 256 MB [default: 10000]' }))
      .epilogue(
        examples([
          ['near-dup ingest --index news --field body --id-field id < news.ndjson', 'index and annotate'],
        ]),
      ) as never,
  handler: async (argv) => {
    const signer = signerOptionsFrom(argv);
    prefixPath(argv.prefix);
    const bulk = bulkOptionsFrom(argv);
    const input = argv.file ? createReadStream(argv.file) : process.stdin;
    // What was opened, not the path again: the path may name something else by the time it is read twice.
    const regular = argv.file ? fstatSync(await opened(input as ReadStream, argv.file)).isFile() : false;
    const progress = createProgressPrinter('ingest', process.stderr, ['indexed', 'failed']);
    const options: IngestOptions = {
      index: argv.index,
      fields: argv.field,
      signer,
      ...templateOption(argv, regular),
      onWarning: (line) => process.stderr.write(escaped`near-dup ingest: ${line}\n`),
      output: { prefix: argv.prefix, idField: argv.idField, errorsFile: argv.errorsFile },
      limits: { maxChars: argv.maxChars, threads: argv.threads, maxLineBytes: argv.maxLineBytes, bulk },
      // The line counts documents settled (indexed and acknowledged, or failed), not read: the writes take time too.
      onProgress: (p) => progress.update({ ...p, seen: p.done }),
    };
    checkIngestOptions(options); // before connecting: a usage error is said first
    const client = await connectFromArgs(argv);
    try {
      const summary = await ingestStream(client, input, options);
      progress.done();
      process.stderr.write(
        escaped`indexed ${summary.indexed} of ${plural(summary.seen, 'document')} in ${summary.seconds.toFixed(1)} s (${summary.empty} empty, ` +
          `${summary.failed} failed, ${summary.cut} cut at --max-chars, ${summary.blank} blank lines skipped)` +
          `${summary.firstTooLong ? `; ${plural(summary.tooLong, 'line')} longer than --max-line-bytes passed over unread (the first: line ${summary.firstTooLong.line}, ${summary.firstTooLong.bytes} bytes)` : ''}` +
          escaped`${summary.errorsFile ? `; failures listed in ${summary.errorsFile}` : ''}${retriesNote(summary)}` +
          `${summary.resent ? `; ${plural(summary.resent, 'document')} sent again after a lost answer, none doubled` : ''}` +
          `${summary.unchanged ? `; ${plural(summary.unchanged, 'document')} already in the data stream, the same, not written again` : ''}` +
          escaped`${summary.notes.map((note) => `; ${note}`).join('')}\n`,
      );
      process.stdout.write(jsonLine(summary));
      if (summary.failed > 0) process.exitCode = 1;
    } finally {
      await client.close();
    }
  },
};
