// near-dup sign: the signature of one document, or of every line of a JSON-lines stream.
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { UserError } from '../../errors.js';
import { signStream } from '../../signing/sign-stream.js';
import { createSigner, signatureToJson } from '../../signature.js';
import { readAllStdin, decodeText, warnNotUtf8 } from '../input.js';
import { type SignerArgs, signerOptionsFrom, withSignerOptions } from '../signer-options.js';
import { jsonLine } from '../terminal-text.js';
import { examples } from '../help.js';
import { plural } from '../../plural.js';

interface SignArgs extends SignerArgs {
  file?: string;
  jsonl: boolean;
  threads?: number;
  textField: string;
  idField: string;
}

export const signCommand: CommandModule<object, SignArgs> = {
  command: 'sign',
  describe: 'Print the signature (MinHash, LSH band keys, SimHash) of a document as JSON',
  builder: (yargs) =>
    withSignerOptions(yargs)
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
        ]),
      ) as never,
  handler: async (argv) => {
    const options = signerOptionsFrom(argv);
    if (argv.jsonl) {
      const input = argv.file ? createReadStream(argv.file) : process.stdin;
      input.on('error', () => undefined); // reported by the read loop below
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

function fileError(err: unknown, file: string | undefined): Error {
  const code = (err as NodeJS.ErrnoException).code;
  if (file && code === 'ENOENT') return new UserError(`file not found: ${file}; check the path given to --file`);
  if (file && code === 'EISDIR') return new UserError(`${file} is a directory; --file takes a file`);
  if (file && code === 'EACCES') return new UserError(`cannot read ${file}: permission denied`);
  return err as Error;
}
