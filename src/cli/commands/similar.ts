// near-dup similar: documents like a stored one, or like a text.
import { readFile } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { DEFAULT_PREFIX } from '../../annotation.js';
import { prefixPath } from '../../engine/mapping.js';
import { UsageError, UserError } from '../../errors.js';
import { checkSimilarOptions, findSimilar, type SimilarMethod, type SimilarOptions } from '../../jobs/similar.js';
import { type ConnectionArgs, connectFromArgs, withConnectionOptions } from '../connection-options.js';
import { decodeText } from '../input.js';
import { type SignerArgs, signerOptionsFrom, withSignerOptions } from '../signer-options.js';

interface SimilarArgs extends ConnectionArgs, SignerArgs {
  index: string;
  id?: string;
  text?: string;
  file?: string;
  prefix: string;
  minSimilarity: number;
  method: string;
  maxDistance: number;
  limit: number;
  format: string;
}

export const similarCommand: CommandModule<object, SimilarArgs> = {
  command: 'similar',
  describe: 'Find the near-duplicates of a stored document (--id) or of a text (--text, --file)',
  builder: (yargs) =>
    withSignerOptions(withConnectionOptions(yargs))
      .option('index', { alias: 'i', type: 'string', demandOption: true, describe: 'annotated index' })
      .option('id', { type: 'string', describe: 'look up this document' })
      .option('text', { type: 'string', describe: 'look up this text' })
      .option('file', { type: 'string', describe: 'look up the text of this file' })
      .option('prefix', { type: 'string', default: DEFAULT_PREFIX, describe: 'object the near-dup fields are under' })
      .option('min-similarity', { type: 'number', default: 0.5, describe: 'estimated Jaccard a MinHash hit must reach' })
      .option('method', { choices: ['minhash', 'simhash', 'both'], default: 'both', describe: 'candidates and verification by MinHash bands, SimHash blocks, or either' })
      .option('max-distance', { type: 'number', default: 3, describe: 'most differing SimHash bits' })
      .option('limit', { type: 'number', default: 10, describe: 'most hits to print' })
      .option('format', { choices: ['json', 'table'], default: 'json' })
      .example('near-dup similar --index news --id 42 --format table', 'documents like document 42') as never,
  handler: async (argv) => {
    const given = [argv.id, argv.text, argv.file].filter((v) => v !== undefined).length;
    if (given !== 1) throw new UsageError('give exactly one of --id, --text or --file');
    prefixPath(argv.prefix);
    const signer = signerOptionsFrom(argv);
    let text = argv.text;
    if (argv.file !== undefined) {
      try {
        text = decodeText(await readFile(argv.file)).text;
      } catch (err) {
        throw new UserError(`cannot read ${argv.file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`);
      }
    }
    const options: SimilarOptions = {
      index: argv.index,
      prefix: argv.prefix,
      id: argv.id,
      text,
      signer,
      minSimilarity: argv.minSimilarity,
      method: argv.method as SimilarMethod,
      maxDistance: argv.maxDistance,
      limit: argv.limit,
    };
    checkSimilarOptions(options); // before connecting: a usage error is said first
    const client = await connectFromArgs(argv);
    try {
      const result = await findSimilar(client, options);
      if (argv.format === 'table') {
        const width = Math.max(2, ...result.hits.map((h) => h.id.length));
        const lines = [`${'id'.padEnd(width)}  jaccard  hamming`, ...result.hits.map((h) => `${h.id.padEnd(width)}  ${h.jaccard.toFixed(3).padStart(7)}  ${String(h.hamming).padStart(7)}`)];
        process.stdout.write(lines.join('\n') + '\n');
        process.stderr.write(`${result.hits.length} hits from ${result.candidates} candidates${result.excludedParams ? ` (${result.excludedParams} signed with other parameters, not compared)` : ''} in ${result.tookMs.toFixed(0)} ms\n`);
      } else {
        process.stdout.write(JSON.stringify(result) + '\n');
      }
    } finally {
      await client.close();
    }
  },
};
