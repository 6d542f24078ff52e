// near-dup similar: documents like a stored one, or like a text.
import { readFile } from 'node:fs/promises';
import type { CommandModule } from 'yargs';
import { prefixPath } from '../../indices/mapping.js';
import { UsageError, UserError } from '../../errors.js';
import type { ContainmentDirection } from '../../jobs/containment-lookup.js';
import { checkSimilarOptions, findSimilar, SIMILAR_DEFAULTS, SIMILAR_MEASURES, type SimilarHit, type SimilarMeasure, type SimilarMethod, type SimilarOptions, type SimilarResult } from '../../jobs/similar.js';
import { olderLayoutNote } from '../../jobs/params-held.js';
import { type ConnectionArgs, connectFromArgs, withConnectionOptions } from '../connection-options.js';
import { decodeText } from '../input.js';
import { givenSignerOptions, type SignerArgs, signerOptionsFrom, withSignerOptions } from '../signer-options.js';
import { escaped, jsonLine, terminalValue } from '../terminal-text.js';
import { advanced, examples } from '../help.js';
import { plural } from '../../plural.js';

interface SimilarArgs extends ConnectionArgs, SignerArgs {
  index: string;
  id?: string;
  routing?: string;
  text?: string;
  file?: string;
  prefix: string;
  minSimilarity?: number;
  measure: string;
  direction: string;
  method: string;
  maxDistance: number;
  limit: number;
  format: string;
}

/** `near-dup similar`: the near-duplicates of one document or text. */
export const similarCommand: CommandModule<object, SimilarArgs> = {
  command: 'similar',
  describe: 'Find the near-duplicates of a stored document (--id) or of a text (--text, --file)',
  builder: (yargs) =>
    withSignerOptions(withConnectionOptions(yargs))
      .option('index', { alias: 'i', type: 'string', demandOption: true, describe: 'annotated index' })
      .option('id', { type: 'string', describe: 'look up this document' })
      .option('routing', advanced({ type: 'string', describe: 'with --id: the custom routing the document was indexed with (without it, every shard is asked)' }))
      .option('text', { type: 'string', describe: 'look up this text' })
      .option('file', { type: 'string', describe: 'look up the text of this file' })
      .option('prefix', advanced({ type: 'string', default: SIMILAR_DEFAULTS.prefix, describe: 'object the near-dup fields are under' }))
      .option('measure', {
        choices: SIMILAR_MEASURES as string[],
        default: SIMILAR_DEFAULTS.measure,
        describe: 'jaccard: near-duplicates; containment: documents that hold the query, or that it holds (partial copies)',
      })
      .option('direction', advanced({
        choices: ['inside', 'holds', 'both'],
        default: SIMILAR_DEFAULTS.direction,
        describe: 'with --measure containment: hits that hold the query (inside), that the query holds (holds, costlier), or either',
      }))
      .option('min-similarity', { type: 'number', describe: 'estimated Jaccard a hit must reach (default 0.5), or containment either way with --measure containment (default 0.8)' })
      .option('method', { choices: ['minhash', 'simhash', 'both'], default: SIMILAR_DEFAULTS.method, describe: 'candidates and verification by MinHash bands, SimHash blocks, or either' })
      .option('max-distance', advanced({ type: 'number', default: SIMILAR_DEFAULTS.maxDistance, describe: 'most differing SimHash bits' }))
      .option('limit', { type: 'number', default: SIMILAR_DEFAULTS.limit, describe: 'most hits to print' })
      .option('format', { choices: ['json', 'table'], default: 'json' })
      .epilogue(
        examples([
          ['near-dup similar --index news --id 42 --format table', 'documents like document 42'],
          ['near-dup similar --index news --file quote.txt --measure containment', 'documents that hold the text of quote.txt'],
        ]),
      ) as never,
  handler: async (argv) => {
    const given = [argv.id, argv.text, argv.file].filter((v) => v !== undefined).length;
    if (given !== 1) throw new UsageError('give exactly one of --id, --text or --file');
    prefixPath(argv.prefix);
    // Only the signature options given: without them the text is signed as the index was.
    const signer = givenSignerOptions(argv).length > 0 ? signerOptionsFrom(argv) : undefined;
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
      routing: argv.routing,
      text,
      signer,
      measure: argv.measure as SimilarMeasure,
      direction: argv.direction as ContainmentDirection,
      minSimilarity: argv.minSimilarity,
      method: argv.method as SimilarMethod,
      maxDistance: argv.maxDistance,
      limit: argv.limit,
    };
    checkSimilarOptions(options); // before connecting: a usage error is said first
    const client = await connectFromArgs(argv);
    const layout = await olderLayoutNote(client, argv.index, argv.prefix);
    if (layout) process.stderr.write(escaped`near-dup: ${layout}\n`);
    try {
      const result = await findSimilar(client, options);
      for (const warning of result.warnings ?? []) process.stderr.write(escaped`warning: ${warning}\n`);
      if (argv.format === 'table') printTable(result);
      else process.stdout.write(jsonLine(result));
      if (result.damaged > 0) {
        const first = result.damagedDocuments?.[0];
        process.stderr.write(
          escaped`warning: ${plural(result.damaged, 'candidate')} left out, their stored signature damaged (first: "${first?.id}" in ${first?.index}: ${first?.reason}); ` +
            `near-dup annotate --force --query '{"ids":{"values":[...]}}' signs them again\n`,
        );
      }
    } finally {
      await client.close();
    }
  },
};

/** The hits as a table on stdout (containment columns when measured), the counts on stderr; ids escaped for the terminal. */
function printTable(result: SimilarResult): void {
  const ids = result.hits.map((h) => terminalValue(h.id));
  const width = Math.max(2, ...ids.map((id) => id.length));
  const contained = result.hits.some((h) => h.containment !== undefined);
  const columns: Array<[string, (h: SimilarHit) => string]> = [
    ...(contained
      ? ([
          ['contained', (h) => h.containment!.toFixed(3)],
          ['holds', (h) => h.reverse_containment!.toFixed(3)],
        ] as Array<[string, (h: SimilarHit) => string]>)
      : []),
    ['jaccard', (h) => h.jaccard.toFixed(3)],
    ['hamming', (h) => String(h.hamming)],
  ];
  const row = (id: string, cells: string[]) => [id.padEnd(width), ...cells.map((c, i) => c.padStart(columns[i][0].length))].join('  ');
  const lines = [row('id', columns.map(([name]) => name)), ...result.hits.map((h, i) => row(ids[i], columns.map(([, cell]) => cell(h))))];
  process.stdout.write(lines.join('\n') + '\n');
  process.stderr.write(`${plural(result.hits.length, 'hit')} from ${plural(result.candidates, 'candidate')}${result.excludedParams ? ` (${result.excludedParams} signed with other parameters, not compared)` : ''} in ${result.tookMs.toFixed(0)} ms\n`);

}
