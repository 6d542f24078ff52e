// near-dup dashboards: import the near-dup dashboard for an index into OpenSearch Dashboards or Kibana.
import type { CommandModule } from 'yargs';
import { DEFAULT_PREFIX } from '../../annotation.js';
import { importSavedObjects, savedObjectsFor } from '../../engine/dashboards.js';
import { prefixPath } from '../../engine/mapping.js';
import { inFormat, SAVED_OBJECT_FORMATS, type SavedObjectFormat } from '../../engine/saved-object-formats.js';
import { UsageError } from '../../errors.js';
import { CONNECTION_ENV } from '../connection-options.js';

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
}

export const dashboardsCommand: CommandModule<object, DashboardsArgs> = {
  command: 'dashboards',
  describe: 'Import the near-dup index pattern, saved search, visualizations and dashboard for an index',
  builder: (yargs) =>
    yargs
      .option('url', { type: 'string', default: process.env.DASHBOARDS_URL ?? 'http://localhost:5601', describe: 'OpenSearch Dashboards or Kibana URL [env DASHBOARDS_URL]' })
      .option('index', { alias: 'i', type: 'string', demandOption: true, describe: 'index (or pattern) the dashboard shows' })
      .option('prefix', { type: 'string', default: DEFAULT_PREFIX, describe: 'object the near-dup fields are under' })
      .option('username', { type: 'string', describe: `user [env ${CONNECTION_ENV.username}]` })
      .option('password', { type: 'string', describe: `password [env ${CONNECTION_ENV.password}]` })
      .option('api-key', { type: 'string', describe: `Kibana API key [env ${CONNECTION_ENV.apiKey}]` })
      .option('bearer-token', { type: 'string', describe: `bearer token [env ${CONNECTION_ENV.bearerToken}]` })
      .option('space', { type: 'string', describe: 'Kibana space path, e.g. /s/research' })
      .option('print', { type: 'boolean', default: false, describe: 'print the saved objects as NDJSON instead of importing them (with --format)' })
      .option('format', {
        type: 'string',
        choices: ['auto', ...SAVED_OBJECT_FORMATS],
        default: 'auto',
        describe: 'saved-object format: OpenSearch Dashboards 2.x/3.x, Kibana 8.9+/9.x, or auto (the product at --url)',
      })
      .example('near-dup dashboards --url http://localhost:5601 --index news', 'import, then open the printed link') as never,
  handler: async (argv) => {
    prefixPath(argv.prefix);
    const objects = savedObjectsFor(argv.index, argv.prefix);
    const format = argv.format === 'auto' ? undefined : (argv.format as SavedObjectFormat);
    if (argv.print) {
      if (!format) throw new UsageError('--print needs --format opensearch-dashboards or --format kibana (nothing is asked of a server)');
      process.stdout.write(inFormat(objects, format).map((o) => JSON.stringify(o)).join('\n') + '\n');
      return;
    }
    const env = process.env;
    const result = await importSavedObjects(objects, {
      url: argv.url,
      username: argv.username ?? env[CONNECTION_ENV.username],
      password: argv.password ?? env[CONNECTION_ENV.password],
      apiKey: argv.apiKey ?? env[CONNECTION_ENV.apiKey],
      bearerToken: argv.bearerToken ?? env[CONNECTION_ENV.bearerToken],
      space: argv.space,
      format,
    });
    process.stdout.write(`imported ${result.imported} saved objects into ${result.product}; open ${result.dashboardUrl}\n`);
  },
};
