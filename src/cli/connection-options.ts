// How every command reaches a cluster: the same options, each with an environment variable behind it.
// Secrets are never given defaults (yargs would print them in --help) and never printed.
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import type { EngineClient } from '../engine/client.js';
import type { ConnectionOptions } from '../engine/connection.js';
import { advanced } from './help.js';
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
  caFingerprint: 'SEARCH_CA_FINGERPRINT',
  clientCert: 'SEARCH_CLIENT_CERT',
  clientKey: 'SEARCH_CLIENT_KEY',
  cloudId: 'SEARCH_CLOUD_ID',
  awsService: 'SEARCH_AWS_SERVICE',
  awsRegion: 'AWS_REGION',
  awsProfile: 'AWS_PROFILE',
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
  'ca-fingerprint': advanced({ type: 'string' as const, describe: `SHA-256 fingerprint of the CA in the cluster's certificate chain, as Elasticsearch prints it at first start [env ${CONNECTION_ENV.caFingerprint}]` }),
  'client-cert': advanced({ type: 'string' as const, describe: `PEM client certificate, for mutual TLS (with --client-key) [env ${CONNECTION_ENV.clientCert}]` }),
  'client-key': advanced({ type: 'string' as const, describe: `PEM private key of --client-cert, unencrypted [env ${CONNECTION_ENV.clientKey}]` }),
  'aws-service': advanced({ type: 'string' as const, describe: `sign requests with AWS SigV4 for es (Amazon OpenSearch Service) or aoss (Serverless); credentials from the AWS chain (environment, profile, role) [env ${CONNECTION_ENV.awsService}]` }),
  'aws-region': advanced({ type: 'string' as const, describe: `AWS region for SigV4 (turns signing on) [env ${CONNECTION_ENV.awsRegion}; default: from the host name]` }),
  'aws-profile': advanced({ type: 'string' as const, describe: `AWS profile for SigV4 credentials (turns signing on) [env ${CONNECTION_ENV.awsProfile}]` }),
} as const;

/** --cloud-id, in place of --url: the Elasticsearch (or, for dashboards, Kibana) URL of an Elastic Cloud deployment. */
export const CLOUD_ID_OPTION = advanced({ type: 'string' as const, describe: `Elastic Cloud id of the deployment, in place of --url [env ${CONNECTION_ENV.cloudId}]` } as const);

/**
 * The connection options every command that talks to a cluster takes, with the environment variables that stand for
 * them.
 */
export function withConnectionOptions<T>(yargs: Argv<T>): Argv<T> {
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
    .option('insecure', { ...CREDENTIAL_OPTIONS.insecure, group })
    .option('cloud-id', { ...CLOUD_ID_OPTION, group })
    .option('ca-fingerprint', { ...CREDENTIAL_OPTIONS['ca-fingerprint'], group })
    .option('client-cert', { ...CREDENTIAL_OPTIONS['client-cert'], group })
    .option('client-key', { ...CREDENTIAL_OPTIONS['client-key'], group })
    .option('aws-service', { ...CREDENTIAL_OPTIONS['aws-service'], group })
    .option('aws-region', { ...CREDENTIAL_OPTIONS['aws-region'], group })
    .option('aws-profile', { ...CREDENTIAL_OPTIONS['aws-profile'], group });
}

/** The connection options as the commands take them: each may be missing (then from the environment). */
export type ConnectionArgs = Partial<
  Pick<ConnectionOptions, 'url' | 'username' | 'password' | 'apiKey' | 'bearerToken' | 'caFile' | 'insecure' | 'caFingerprint' | 'clientCert' | 'clientKey' | 'cloudId' | 'aws'>
> & { awsService?: string; awsRegion?: string; awsProfile?: string };

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
    caFingerprint: pick(argv.caFingerprint, CONNECTION_ENV.caFingerprint),
    clientCert: pick(argv.clientCert, CONNECTION_ENV.clientCert),
    clientKey: pick(argv.clientKey, CONNECTION_ENV.clientKey),
    cloudId: pick(argv.cloudId, CONNECTION_ENV.cloudId),
    aws: awsArgsFrom(argv, env),
  };
}

/**
 * SigV4 is on when --aws-service, --aws-region or --aws-profile is given, or SEARCH_AWS_SERVICE is set:
 * AWS_REGION or AWS_PROFILE alone (set on many machines for other tools) do not turn it on.
 */
function awsArgsFrom(argv: ConnectionArgs, env: NodeJS.ProcessEnv): ConnectionOptions['aws'] {
  if (argv.aws) return argv.aws;
  const service = argv.awsService || env[CONNECTION_ENV.awsService] || undefined;
  if (service === undefined && !argv.awsRegion && !argv.awsProfile) return undefined;
  return { service, region: argv.awsRegion || undefined, profile: argv.awsProfile || env[CONNECTION_ENV.awsProfile] || undefined };
}

/**
 * A yes/no environment variable: unset or empty is undefined, anything but true/false (1/0, yes/no, on/off) is refused
 * naming the variable.
 */
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
  // Loaded here, not with the options: a command that declares them (sign, for --for-index) may never connect.
  const [{ connect }, { chooseUrl }, { redactUrl }] = await Promise.all([import('../engine/client.js'), import('../engine/locate.js'), import('../engine/url.js')]);
  const args = connectionArgsFrom(argv, env);
  const url = args.cloudId ? args.url : await chooseUrl(args.url, (found) => process.stderr.write(escaped`near-dup: no --url given; using ${redactUrl(found)}\n`));
  const options: ConnectionOptions = { ...args, url };
  lastConnection = options;
  return connect(options);
}

let lastConnection: ConnectionOptions | undefined;

/** The connection the command made (for a second look at the cluster after a failure: index-names.ts). */
export function commandConnection(): ConnectionOptions | undefined {
  return lastConnection;
}
