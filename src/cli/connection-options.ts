// How every command reaches a cluster: the same options, each with an environment variable behind it.
// Secrets are never given defaults (yargs would print them in --help) and never printed.
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { type EngineClient, connect } from '../engine/client.js';
import type { ConnectionOptions } from '../engine/connection.js';
import { chooseUrl } from '../engine/locate.js';
import { redactUrl } from '../engine/url.js';
import { escaped } from './terminal-text.js';

/** Option -> environment variable, as the README lists them. */
export const CONNECTION_ENV = {
  url: 'SEARCH_URL',
  username: 'SEARCH_USERNAME',
  password: 'SEARCH_PASSWORD',
  apiKey: 'SEARCH_API_KEY',
  bearerToken: 'SEARCH_BEARER_TOKEN',
  caFile: 'SEARCH_CA_FILE',
  insecure: 'SEARCH_INSECURE',
} as const;

const group = 'Connection:';

/**
 * Credentials and TLS trust, as every command that makes a request declares them (the cluster commands
 * below, and `dashboards` for OpenSearch Dashboards or Kibana): one definition, one environment variable each.
 */
export const CREDENTIAL_OPTIONS = {
  username: { type: 'string', describe: `user, for basic authentication [env ${CONNECTION_ENV.username}]` },
  password: { type: 'string', describe: `password, for basic authentication [env ${CONNECTION_ENV.password}]` },
  'api-key': { type: 'string', describe: `Elasticsearch API key, encoded or id:key [env ${CONNECTION_ENV.apiKey}]` },
  'bearer-token': { type: 'string', describe: `bearer token [env ${CONNECTION_ENV.bearerToken}]` },
  'ca-file': { type: 'string', describe: `PEM file of the CA of the cluster's certificate [env ${CONNECTION_ENV.caFile}]` },
  insecure: { type: 'boolean', describe: `skip TLS certificate checks (trusted networks only) [env ${CONNECTION_ENV.insecure}=true]` },
} as const;

export function withConnectionOptions<T>(yargs: Argv<T>) {
  return yargs
    .option('url', {
      type: 'string',
      describe: `cluster URL [env ${CONNECTION_ENV.url}; default: a local engine on 9201, 9211 or 9200]`,
      group,
    })
    .option('username', { ...CREDENTIAL_OPTIONS.username, group })
    .option('password', { ...CREDENTIAL_OPTIONS.password, group })
    .option('api-key', { ...CREDENTIAL_OPTIONS['api-key'], group })
    .option('bearer-token', { ...CREDENTIAL_OPTIONS['bearer-token'], group })
    .option('ca-file', { ...CREDENTIAL_OPTIONS['ca-file'], group })
    .option('insecure', { ...CREDENTIAL_OPTIONS.insecure, group });
}

/** The connection options as the commands take them: each may be missing (then from the environment). */
export type ConnectionArgs = Partial<Pick<ConnectionOptions, 'url' | 'username' | 'password' | 'apiKey' | 'bearerToken' | 'caFile' | 'insecure'>>;

/** Options from argv, each falling back to its environment variable; url stays undefined if neither has it. */
export function connectionArgsFrom(argv: ConnectionArgs, env: NodeJS.ProcessEnv = process.env): ConnectionArgs {
  const pick = (value: string | undefined, name: string): string | undefined => {
    if (value !== undefined && value !== '') return value;
    const fromEnv = env[name];
    return fromEnv !== undefined && fromEnv !== '' ? fromEnv : undefined;
  };
  return {
    url: pick(argv.url, CONNECTION_ENV.url),
    username: pick(argv.username, CONNECTION_ENV.username),
    password: pick(argv.password, CONNECTION_ENV.password),
    apiKey: pick(argv.apiKey, CONNECTION_ENV.apiKey),
    bearerToken: pick(argv.bearerToken, CONNECTION_ENV.bearerToken),
    caFile: pick(argv.caFile, CONNECTION_ENV.caFile),
    insecure: argv.insecure ?? parseBooleanEnv(env[CONNECTION_ENV.insecure], CONNECTION_ENV.insecure),
  };
}

export function parseBooleanEnv(value: string | undefined, name: string): boolean | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const v = value.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(v)) return true;
  if (['0', 'false', 'no', 'off'].includes(v)) return false;
  throw new UsageError(`${name}="${value}" is not a boolean; use true or false`);
}

/**
 * Connects as the options and environment say; without a URL, to a local engine that answers (said on
 * stderr). Every failure is a one-line UserError or UsageError.
 */
export async function connectFromArgs(argv: ConnectionArgs, env: NodeJS.ProcessEnv = process.env): Promise<EngineClient> {
  const args = connectionArgsFrom(argv, env);
  const url = await chooseUrl(args.url, (found) => process.stderr.write(escaped`near-dup: no --url given; using ${redactUrl(found)}\n`));
  const options: ConnectionOptions = { ...args, url };
  lastConnection = options;
  return connect(options);
}

let lastConnection: ConnectionOptions | undefined;

/** The connection the command made (for a second look at the cluster after a failure: index-names.ts). */
export function commandConnection(): ConnectionOptions | undefined {
  return lastConnection;
}
