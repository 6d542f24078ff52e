// near-dup sign: the signature of one document, or of every line of a JSON-lines stream.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { UsageError, UserError } from '../../errors.js';
import type { SignerOptions } from '../../signature.js';
import { type ConnectionArgs, connectFromArgs, withConnectionOptions } from '../connection-options.js';
import { advanced } from '../help.js';
import { createSigner, signatureToJson } from '../../signature.js';
import { readAllStdin, decodeText, warnNotUtf8 } from '../input.js';
import { type SignerArgs, signerOptionsFrom, withSignerOptions } from '../signer-options.js';
import { jsonLine } from '../terminal-text.js';
import { examples } from '../help.js';
import { plural } from '../../plural.js';

interface SignArgs extends SignerArgs, ConnectionArgs {
  forIndex?: string;
  templateShare?: number;
  templateSample?: number;
  file?: string;
  jsonl: boolean;
  threads?: number;
  textField: string;
  idField: string;
}

/** `near-dup sign`: the signature of a document, printed as JSON, without a cluster. */
export const signCommand: CommandModule<object, SignArgs> = {
  command: 'sign',
  describe: 'Print the signature (MinHash, LSH band keys, SimHash) of a document as JSON',
  builder: (yargs) =>
    withConnectionOptions(withSignerOptions(yargs))
      .option('for-index', {
        type: 'string',
        describe: "sign as this index's documents are signed: the options of its stored params, with the template tokens it keeps (with --url and the connection options)",
      })
      .option('template-share', advanced({ type: 'number', describe: 'with --for-index: sign with the template tokens the index keeps for this share (as annotate or ingest drew them)' }))
      .option('template-sample', advanced({ type: 'number', describe: 'with --template-share: the sample the set was drawn from [default: 10000]' }))
      .option('file', { alias: 'f', type: 'string', describe: 'read from this file instead of standard input' })
      .option('jsonl', {
        type: 'boolean',
        default: false,
        describe: 'batch mode: JSON lines {"id", "text"} in, one signature line per document out, on every core',
      })
      .option('threads', { type: 'number', describe: 'worker threads for --jsonl (default: every core)' })
      .option('text-field', { type: 'string', default: 'text', describe: 'with --jsonl: the field that holds the text' })
      .option('id-field', { type: 'string', default: 'id', describe: 'with --jsonl: the field that holds the id' })
      .epilogue(
        examples([
          ['near-dup sign --file page.html', 'signature of one file'],
          ['near-dup sign --jsonl < docs.jsonl > signatures.jsonl', 'batch mode'],
          ['near-dup sign --for-index news --url http://localhost:9200 --file page.txt', 'as the index signs (its params, its template tokens)'],
        ]),
      ) as never,
  handler: async (argv) => {
    const options = await signerFor(argv);
    if (argv.jsonl) {
      const input = argv.file ? createReadStream(argv.file) : process.stdin;
      input.on('error', () => undefined); // reported by the read loop below
      // Loaded for batch mode only: one text is signed without it.
      const { signStream } = await import('../../signing/sign-stream.js');
      let summary: Awaited<ReturnType<typeof signStream>>;
      try {
        summary = await signStream(input, process.stdout, {
          signer: options,
          fields: { textField: argv.textField, idField: argv.idField },
          threads: argv.threads,
        });
      } catch (err) {
        throw fileError(err, argv.file);
      }
      warnNotUtf8(argv.file, summary.replaced);
      process.stderr.write(
        `signed ${summary.documents - summary.failed} of ${plural(summary.documents, 'document')} (${summary.empty} empty, ` +
          `${summary.failed} failed) in ${summary.seconds.toFixed(2)} s\n`,
      );
      if (summary.failed > 0) process.exitCode = 1;
      return;
    }
    let bytes: Uint8Array;
    try {
      bytes = argv.file ? await readFile(argv.file) : await readAllStdin();
    } catch (err) {
      throw fileError(err, argv.file);
    }
    const { text, replaced } = decodeText(bytes);
    warnNotUtf8(argv.file, replaced);
    const sign = createSigner(options);
    const sig = sign(text);
    process.stdout.write(jsonLine({ ...signatureToJson(sig), params: sign.settings.params }));
  },
};

/** The signer options of the command line, or those of --for-index's signatures (and template tokens). */
async function signerFor(argv: SignArgs): Promise<SignerOptions> {
  const given = signerOptionsFrom(argv);
  if (argv.forIndex === undefined) {
    if (argv.templateShare !== undefined || argv.templateSample !== undefined) {
      throw new UsageError('sign --template-share needs the index that keeps the template tokens: give --for-index INDEX (and --url), or leave the template options out');
    }
    return given;
  }
  if (argv.templateSample !== undefined && argv.templateShare === undefined) throw new UsageError('--template-sample goes with --template-share: give the share the index\'s set was drawn with');
  const template = argv.templateShare === undefined ? undefined : { share: argv.templateShare, sample: argv.templateSample };
  // Loaded with --for-index only: signing with the given options needs no index.
  const { indexSigner } = await import('../../jobs/index-signer.js');
  const client = await connectFromArgs(argv);
  try {
    return await indexSigner(client, argv.forIndex, { signer: given, template });
  } catch (err) {
    throw client.explain(err, argv.forIndex);
  } finally {
    await client.close();
  }
}

function fileError(err: unknown, file: string | undefined): Error {
  const code = (err as NodeJS.ErrnoException).code;
  if (file && code === 'ENOENT') return new UserError(`file not found: ${file}; check the path given to --file`);
  if (file && code === 'EISDIR') return new UserError(`${file} is a directory; --file takes a file`);
  if (file && code === 'EACCES') return new UserError(`cannot read ${file}: permission denied`);
  return err as Error;
}
