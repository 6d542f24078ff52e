// near-dup dashboards: import the near-dup dashboard for an index into OpenSearch Dashboards or Kibana.
import type { CommandModule } from 'yargs';
import { DEFAULT_PREFIX } from '../../annotation.js';
import { importSavedObjects, nearDupFieldSpecs, savedObjectsFor } from '../../engine/dashboards.js';
import { prefixPath } from '../../engine/mapping.js';
import { inFormat, SAVED_OBJECT_FORMATS, type SavedObjectFormat } from '../../engine/saved-object-formats.js';
import { UsageError } from '../../errors.js';
import { defaultStatePath, readDedupState } from '../../jobs/dedup/state.js';
import { CONNECTION_ENV } from '../connection-options.js';
import { aboutText } from './dashboards-about.js';
import { escaped, jsonLine } from '../terminal-text.js';
import { advanced, examples } from '../help.js';

interface DashboardsArgs {
  url: string;
  index: string;
  prefix: string;
  username?: string;
  password?: string;
  apiKey?: string;
  bearerToken?: string;
  space?: string;
  print: boolean;
  format: string;
  titleField?: string;
  dedupState?: string;
}

export const dashboardsCommand: CommandModule<object, DashboardsArgs> = {
  command: 'dashboards',
  describe: 'Import the near-dup index pattern, saved search, visualizations and dashboard for an index',
  builder: (yargs) =>
    yargs
      .option('url', { type: 'string', default: process.env.DASHBOARDS_URL ?? 'http://localhost:5601', describe: 'OpenSearch Dashboards or Kibana URL [env DASHBOARDS_URL]' })
      .option('index', { alias: 'i', type: 'string', demandOption: true, describe: 'index (or pattern) the dashboard shows' })
      .option('prefix', advanced({ type: 'string', default: DEFAULT_PREFIX, describe: 'object the near-dup fields are under' }))
      .option('username', { type: 'string', describe: `user [env ${CONNECTION_ENV.username}]` })
      .option('password', { type: 'string', describe: `password [env ${CONNECTION_ENV.password}]` })
      .option('api-key', advanced({ type: 'string', describe: `Kibana API key [env ${CONNECTION_ENV.apiKey}]` }))
      .option('bearer-token', advanced({ type: 'string', describe: `bearer token [env ${CONNECTION_ENV.bearerToken}]` }))
      .option('space', advanced({ type: 'string', describe: 'Kibana space path, e.g. /s/research' }))
      .option('title-field', { type: 'string', describe: "a field of your documents shown beside each document's id in the clusters and partial-copies tables (a title, or the text)" })
      .option('dedup-state', advanced({ type: 'string', describe: 'the state file of the dedup run to describe (threshold, parameters) [default: .near-dup/dedup-INDEX.json]' }))
      .option('print', { type: 'boolean', default: false, describe: 'print the saved objects as NDJSON instead of importing them (with --format)' })
      .option('format', {
        type: 'string',
        choices: ['auto', ...SAVED_OBJECT_FORMATS],
        default: 'auto',
        describe: 'saved-object format: opensearch-dashboards (OpenSearch Dashboards, Kibana 7.10 to 8.8), kibana (Kibana 8.9+/9.x), or auto (from the product and version at --url)',
      })
      .epilogue(
        examples([
          ['near-dup dashboards --url http://localhost:5601 --index news --title-field headline', 'import, check, then open the printed link'],
        ]),
      ) as never,
  handler: async (argv) => {
    prefixPath(argv.prefix);
    if (argv.titleField !== undefined && argv.titleField.trim() === '') throw new UsageError('--title-field is empty: name a field of your documents, e.g. --title-field title');
    const statePath = argv.dedupState ?? defaultStatePath(argv.index);
    const { state, note } = await readDedupState(statePath);
    const usable = state && state.index === argv.index && state.prefix === argv.prefix ? state : undefined;
    const mismatch = state && !usable ? `it describes index "${state.index}" with prefix "${state.prefix}"` : note;
    const objects = savedObjectsFor({ index: argv.index, prefix: argv.prefix, titleField: argv.titleField, about: aboutText(argv.index, usable, statePath, mismatch) });
    const format = argv.format === 'auto' ? undefined : (argv.format as SavedObjectFormat);
    if (argv.print) {
      if (!format) throw new UsageError('--print needs --format opensearch-dashboards or --format kibana (nothing is asked of a server)');
      process.stdout.write(inFormat(objects, format, format === 'opensearch-dashboards' ? nearDupFieldSpecs(argv.prefix) : undefined).map((o) => jsonLine(o)).join(''));
      return;
    }
    const env = process.env;
    const result = await importSavedObjects(objects, {
      url: argv.url,
      index: argv.index,
      prefix: argv.prefix,
      username: argv.username ?? env[CONNECTION_ENV.username],
      password: argv.password ?? env[CONNECTION_ENV.password],
      apiKey: argv.apiKey ?? env[CONNECTION_ENV.apiKey],
      bearerToken: argv.bearerToken ?? env[CONNECTION_ENV.bearerToken],
      space: argv.space,
      format,
    });
    if (!usable) process.stderr.write(escaped`near-dup dashboards: no dedup run of ${argv.index} recorded at ${statePath}${mismatch ? ` (${mismatch})` : ''}: the dashboard's "how to read" panel cannot state the threshold; give --dedup-state\n`);
    for (const warning of result.warnings) process.stderr.write(escaped`near-dup dashboards: ${warning}\n`);
    process.stdout.write(escaped`imported ${result.imported} saved objects into ${result.product} ${result.version ?? ''} (--format ${result.format}); every panel's references resolve; open ${result.dashboardUrl}\n`);
  },
};
