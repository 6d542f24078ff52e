// near-dup init: map the near-dup fields in an index (creating it if needed) and/or install templates.
import type { CommandModule } from 'yargs';
import { UsageError } from '../../errors.js';
import { DEFAULT_PREFIX, DEFAULT_TEMPLATE_NAME, DEFAULT_TEMPLATE_PRIORITY, prefixPath } from '../../indices/mapping.js';
import { initIndex, initTemplates } from '../../indices/init.js';
import { type ConnectionArgs, connectFromArgs, withConnectionOptions } from '../connection-options.js';
import { escaped } from '../terminal-text.js';
import { advanced, examples } from '../help.js';

interface InitArgs extends ConnectionArgs {
  index?: string;
  prefix: string;
  template?: string[];
  templateName: string;
  templatePriority: number;
}

/** `near-dup init`: the near-dup fields added to an index, or templates for indices to come. */
export const initCommand: CommandModule<object, InitArgs> = {
  command: 'init',
  describe: 'Add the near-dup fields to an index (creating it if missing), or install templates for new indices',
  builder: (yargs) =>
    withConnectionOptions(yargs)
      .option('index', { alias: 'i', type: 'string', describe: 'index (or alias) to add the fields to; created if it does not exist' })
      .option('prefix', advanced({ type: 'string', default: DEFAULT_PREFIX, describe: 'object the fields go under (dots for deeper levels)' }))
      .option('template', {
        type: 'string',
        array: true,
        describe: 'index pattern(s): install an index template so that new matching indices get the fields',
      })
      .option('template-name', advanced({
        type: 'string',
        default: DEFAULT_TEMPLATE_NAME,
        describe: 'name of the index template; the component template is <name>-fields',
      }))
      .option('template-priority', advanced({ type: 'number', default: DEFAULT_TEMPLATE_PRIORITY, describe: 'priority of the index template' }))
      .epilogue(
        examples([
          ['near-dup init --index docs', 'map near_dup.* in the index docs'],
          ['near-dup init --template "crawl-*"', 'new indices crawl-* get the fields'],
        ]),
      ) as never,
  handler: async (argv) => {
    const patterns = (argv.template ?? []).flatMap((p) => p.split(',')).map((p) => p.trim()).filter(Boolean);
    if (!argv.index && patterns.length === 0) throw new UsageError('give --index NAME (an index to map) or --template PATTERN (new indices), or both');
    prefixPath(argv.prefix);
    const client = await connectFromArgs(argv);
    try {
      const where = `${client.info.flavour} ${client.info.version} at ${client.url}`;
      if (argv.index) {
        const result = await initIndex(client, argv.index, argv.prefix);
        const indices = result.indices.length > 1 || result.indices[0] !== result.index ? ` (${result.indices.join(', ')})` : '';
        const line =
          result.indices.length === 0
            ? `no data stream "${result.index}" yet: it will be made from a data stream template at its first document`
            : result.action === 'created'
            ? `created index "${result.index}" with the ${result.added.length} ${argv.prefix} fields`
            : result.action === 'updated'
              ? `added ${result.added.length} ${argv.prefix} fields to index "${result.index}"${indices}`
              : `index "${result.index}"${indices} already has the ${argv.prefix} fields; nothing to change`;
        process.stdout.write(escaped`${line} (${where})\n`);
        for (const t of result.streamTemplates) {
          process.stdout.write(
            t.action === 'added'
              ? escaped`data stream "${t.stream}": its template "${t.template}" is now composed of the near-dup fields, so the backing indices of later rollovers have them\n`
              : escaped`data stream "${t.stream}": its template "${t.template}" already gives new backing indices the near-dup fields\n`,
          );
        }
      }
      if (patterns.length > 0) {
        const result = await initTemplates(client, {
          name: argv.templateName,
          prefix: argv.prefix,
          indexPatterns: patterns,
          priority: argv.templatePriority,
        });
        process.stdout.write(
          escaped`installed component template "${result.componentTemplate}" and index template "${result.indexTemplate}" ` +
            escaped`for new indices matching ${result.indexPatterns.join(', ')} (${where})\n`,
        );
        for (const o of result.outranked) {
          process.stderr.write(
            escaped`but new indices matching "${o.pattern}" take their mapping from the index template "${o.name}" (priority ${o.priority}, above ${argv.templatePriority}), not from "${result.indexTemplate}": ` +
              escaped`add the component template "${result.componentTemplate}" to its composed_of (for a data stream: near-dup init --index STREAM does), or give --template-priority above ${o.priority}\n`,
          );
        }
        if (result.outranked.length > 0) process.exitCode = 1;
      }
    } finally {
      await client.close();
    }
  },
};
