// near-dup dashboards: import the near-dup dashboard for an index into OpenSearch Dashboards or Kibana.
import type { CommandModule } from 'yargs';
import { DEFAULT_PREFIX } from '../../annotation.js';
import { type ImportOptions, importSavedObjects } from '../../dashboards/import.js';
import { nearDupFieldSpecs, savedObjectsFor } from '../../dashboards/saved-objects.js';
import { prefixPath } from '../../indices/mapping.js';
import { inFormat, SAVED_OBJECT_FORMATS, type SavedObjectFormat } from '../../dashboards/saved-object-formats.js';
import { UsageError } from '../../errors.js';
import { latestStatePath, readDedupState } from '../../jobs/dedup/state/state-file.js';
import { parseClusterUrl, redactUrl } from '../../engine/url.js';
import { decodeCloudId } from '../../engine/cloud-id.js';
import { CLOUD_ID_OPTION, CONNECTION_ENV, type ConnectionArgs, connectionArgsFrom, CREDENTIAL_OPTIONS } from '../connection-options.js';
import { aboutText } from './dashboards-about.js';
import { escaped, jsonLine } from '../terminal-text.js';
import { advanced, examples } from '../help.js';

interface DashboardsArgs extends ConnectionArgs {
  url: string;
  index: string;
  prefix: string;
  username?: string;
  password?: string;
  apiKey?: string;
  bearerToken?: string;
  caFile?: string;
  insecure?: boolean;
  space?: string;
  print: boolean;
  format: string;
  titleField?: string;
  dedupState?: string;
}

/** `near-dup dashboards`: the saved objects for one index, imported into Dashboards or Kibana. */
export const dashboardsCommand: CommandModule<object, DashboardsArgs> = {
  command: 'dashboards',
  describe: 'Import the near-dup index pattern, saved search, visualizations and dashboard for an index',
  builder: (yargs) =>
    yargs
      .option('url', { type: 'string', default: process.env.DASHBOARDS_URL ?? 'http://localhost:5601', describe: 'OpenSearch Dashboards or Kibana URL [env DASHBOARDS_URL]' })
      .option('index', { alias: 'i', type: 'string', demandOption: true, describe: 'index (or pattern) the dashboard shows' })
      .option('prefix', advanced({ type: 'string', default: DEFAULT_PREFIX, describe: 'object the near-dup fields are under' }))
      // The credentials and TLS options of every other command, read the same way (engine/connection.ts).
      .option('username', CREDENTIAL_OPTIONS.username)
      .option('password', CREDENTIAL_OPTIONS.password)
      .option('api-key', advanced(CREDENTIAL_OPTIONS['api-key']))
      .option('bearer-token', advanced(CREDENTIAL_OPTIONS['bearer-token']))
      .option('ca-file', { ...CREDENTIAL_OPTIONS['ca-file'], describe: `PEM file of the CA of the Dashboards or Kibana certificate [env ${CONNECTION_ENV.caFile}]` })
      .option('insecure', advanced(CREDENTIAL_OPTIONS.insecure))
      .option('cloud-id', { ...CLOUD_ID_OPTION, describe: `Elastic Cloud id of the deployment, in place of --url: its Kibana [env ${CONNECTION_ENV.cloudId}]` })
      .option('ca-fingerprint', CREDENTIAL_OPTIONS['ca-fingerprint'])
      .option('client-cert', CREDENTIAL_OPTIONS['client-cert'])
      .option('client-key', CREDENTIAL_OPTIONS['client-key'])
      .option('aws-service', CREDENTIAL_OPTIONS['aws-service'])
      .option('aws-region', CREDENTIAL_OPTIONS['aws-region'])
      .option('aws-profile', CREDENTIAL_OPTIONS['aws-profile'])
      .option('space', advanced({ type: 'string', describe: 'Kibana space path, e.g. /s/research' }))
      .option('title-field', { type: 'string', describe: "a field of your documents shown beside each document's id in the clusters and partial-copies tables (a title, or the text)" })
      .option('dedup-state', advanced({ type: 'string', describe: 'the state file of the dedup run to describe (threshold, parameters) [default: the newest .near-dup/dedup-CLUSTER-INDEX.json]' }))
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
    const statePath = argv.dedupState ?? latestStatePath(argv.index);
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
    const result = await importSavedObjects(objects, { ...dashboardsConnection(argv), index: argv.index, prefix: argv.prefix, space: argv.space, format });
    if (!usable) process.stderr.write(escaped`near-dup dashboards: no dedup run of ${argv.index} recorded at ${statePath}${mismatch ? ` (${mismatch})` : ''}: the dashboard's "how to read" panel cannot state the threshold; give --dedup-state\n`);
    for (const warning of result.warnings) process.stderr.write(escaped`near-dup dashboards: ${warning}\n`);
    process.stdout.write(escaped`imported ${result.imported} saved objects into ${result.product} ${result.version ?? ''} (--format ${result.format}); every panel's references resolve; open ${result.dashboardUrl}\n`);
  },
};

/**
 * The URL, credentials and TLS options for Dashboards or Kibana: the options (or the SEARCH_* variables)
 * every command takes, with --url its own (or the Kibana of --cloud-id). A TLS option given on the command
 * line for an http:// URL is refused (it would do nothing); one from the environment, set for the cluster,
 * is left out there.
 */
export function dashboardsConnection(argv: Omit<DashboardsArgs, 'index' | 'prefix' | 'print' | 'format'>, env: NodeJS.ProcessEnv = process.env): ImportOptions {
  const { cloudId, url: _cluster, ...args } = connectionArgsFrom({ ...argv, url: undefined }, env);
  const url = argv.cloudId ? kibanaOf(argv.cloudId) : argv.url;
  const warn = (line: string) => process.stderr.write(escaped`near-dup dashboards: ${line}\n`);
  const https = url
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '')
    .every((u) => parseClusterUrl(u).url.startsWith('https:'));
  if (!https) {
    const tlsOptions = { caFile: '--ca-file', insecure: '--insecure', caFingerprint: '--ca-fingerprint', clientCert: '--client-cert', clientKey: '--client-key' } as const;
    const given = Object.entries(tlsOptions).filter(([key]) => argv[key as keyof typeof tlsOptions]).map(([, option]) => option);
    if (given.length) throw new UsageError(`${given.join(' and ')} ${given.length > 1 ? 'apply' : 'applies'} to an https:// URL, and --url ${redactUrl(url)} is plain HTTP: give the https:// URL of OpenSearch Dashboards or Kibana, or leave ${given.join(' and ')} out`);
    return { ...args, url, caFile: undefined, insecure: undefined, caFingerprint: undefined, clientCert: undefined, clientKey: undefined, warn };
  }
  return { ...args, url, warn };
}

/** The Kibana URL of an Elastic Cloud id (cloudId unused otherwise: dashboards talks to Kibana, not the cluster). */
function kibanaOf(cloudId: string): string {
  const kibana = decodeCloudId(cloudId).kibana;
  if (!kibana) throw new UsageError('--cloud-id names no Kibana for this deployment; give its Kibana URL with --url');
  return kibana;
}
