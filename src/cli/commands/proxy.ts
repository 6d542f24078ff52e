// near-dup proxy: put signing in the path of any client (Logstash, Beats, Fluent Bit, the official clients'
// bulk helpers). Runs until SIGINT or SIGTERM.
import { readFileSync } from 'node:fs';
import type { CommandModule } from 'yargs';
import { DEFAULT_MAX_CHARS, DEFAULT_PREFIX } from '../../annotation.js';
import { chooseUrl } from '../../engine/locate.js';
import { prefixPath } from '../../indices/mapping.js';
import { parseClusterUrl, redactUrl } from '../../engine/url.js';
import { UsageError, UserError } from '../../errors.js';
import { indexMatcher } from '../../proxy/index-pattern.js';
import { type ProxyOptions, STATS_PATH, startProxy } from '../../proxy/server.js';
import { resolveConnection } from '../../engine/connection.js';
import { CLOUD_ID_OPTION, CONNECTION_ENV, connectionArgsFrom, CREDENTIAL_OPTIONS } from '../connection-options.js';
import { type SignerArgs, signerOptionsFrom, withSignerOptions } from '../signer-options.js';
import { escaped, jsonLine } from '../terminal-text.js';
import { advanced, examples } from '../help.js';
import { templateRequestOf } from '../template-flags.js';

interface ProxyArgs extends SignerArgs {
  url?: string;
  listen: string;
  index: string;
  field: string[];
  prefix: string;
  onError: string;
  cert?: string;
  key?: string;
  caFile?: string;
  caFingerprint?: string;
  clientCert?: string;
  clientKey?: string;
  cloudId?: string;
  awsService?: string;
  awsRegion?: string;
  awsProfile?: string;
  insecure?: boolean;
  maxChars: number;
  threads?: number;
  maxUpstreamMb: number;
  maxBodyMb: number;
  maxLineMb?: number;
  maxConcurrentWrites?: number;
  maxWritesPerClient?: number;
  maxBufferedMb?: number;
  bodyTimeout: number;
  bodyIdleTimeout: number;
  templateShare?: number;
  templateSample?: number;
}

/** "host:port", "[::1]:port" or a bare port (loopback). */
export function parseListen(text: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]*)):(\d+)$/.exec(text.trim()) ?? (/^\d+$/.test(text.trim()) ? [text, undefined, '127.0.0.1', text.trim()] : null);
  const port = match ? Number(match[3]) : Number.NaN;
  if (!match || !(port >= 0 && port <= 65535)) throw new UsageError(`--listen "${text}" is not host:port; give one like 127.0.0.1:9290`);
  return { host: match[1] ?? (match[2] || '127.0.0.1'), port };
}

const MB = 1024 * 1024;

/** A listen host only this machine reaches. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

function readPem(path: string | undefined, option: string): string | undefined {
  if (path === undefined) return undefined;
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    throw new UserError(`cannot read ${option} ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}; give the path of a PEM file`);
  }
}

/**
 * The cluster, from the same options and environment variables as every command's connection (engine/
 * connection.ts): URL or cloud id, CA file or fingerprint, --insecure, AWS SigV4. Credentials of its own are
 * refused: the proxy passes each client's identity on. SigV4 is the exception, since a signature over a body
 * the proxy rewrites can only be the proxy's: it is said at start.
 */
async function upstreamFrom(argv: ProxyArgs, warn: (line: string) => void): Promise<ProxyOptions['upstream']> {
  // SEARCH_USERNAME and the like, set for the other commands, are not the proxy's: left out, as before.
  const { clientCert, clientKey, username: _u, password: _p, apiKey: _k, bearerToken: _t, ...connection } = connectionArgsFrom(argv);
  if (clientCert || clientKey) {
    throw new UsageError(
      `the proxy passes each client's own identity to the cluster, and a client certificate of its own (--client-cert, ${CONNECTION_ENV.clientCert}) would authenticate every client's request as that certificate's user: leave it out, and give the clients their credentials`,
    );
  }
  const url = connection.cloudId ? undefined : await chooseUrl(connection.url, (found) => warn(`no --url given; using ${redactUrl(found)}`));
  if (url !== undefined && parseClusterUrl(url).username !== undefined) {
    throw new UsageError("--url must not carry credentials: the proxy passes each client's own credentials on; give them to the clients");
  }
  const resolved = await resolveConnection({ ...connection, url, warn });
  if (resolved.nodes.length > 1) throw new UsageError(`--url names ${resolved.nodes.length} nodes; the proxy forwards to one URL (a load balancer, or one node)`);
  if (resolved.aws) {
    warn(
      `signing every request with this process's AWS credentials (SigV4, ${resolved.aws.service}, ${resolved.aws.region}): each client acts with them, whatever credentials it sends; keep --listen on loopback, or serve only clients you trust`,
    );
  }
  return { url: resolved.url, ca: resolved.ca, insecure: resolved.insecure, aws: resolved.aws };
}

/** The proxy's options from the command line, each checked before anything listens (a bad value is one usage line). */
export async function proxyOptionsFrom(argv: ProxyArgs, warn: (line: string) => void): Promise<ProxyOptions> {
  const signer = signerOptionsFrom(argv);
  prefixPath(argv.prefix);
  indexMatcher(argv.index);
  if (argv.onError !== 'reject' && argv.onError !== 'pass') throw new UsageError(`--on-error must be reject or pass, got "${argv.onError}"`);
  if ((argv.cert === undefined) !== (argv.key === undefined)) throw new UsageError('give --cert and --key together to serve HTTPS');
  const upstream = await upstreamFrom(argv, warn);
  const cert = readPem(argv.cert, '--cert');
  const key = readPem(argv.key, '--key');
  return {
    upstream,
    ...parseListen(argv.listen),
    index: argv.index,
    fields: argv.field,
    prefix: argv.prefix,
    signer,
    ...templateRequestOf(argv),
    maxChars: argv.maxChars,
    onError: argv.onError,
    threads: argv.threads,
    maxUpstreamBytes: Math.round(argv.maxUpstreamMb * MB),
    maxBodyBytes: Math.round(argv.maxBodyMb * MB),
    maxLineBytes: Math.round((argv.maxLineMb ?? argv.maxBodyMb) * MB),
    maxConcurrentWrites: argv.maxConcurrentWrites,
    maxWritesPerClient: argv.maxWritesPerClient,
    maxBufferedBytes: argv.maxBufferedMb === undefined ? undefined : Math.round(argv.maxBufferedMb * MB),
    bodyTimeoutMs: Math.round(argv.bodyTimeout * 1000),
    bodyIdleTimeoutMs: Math.round(argv.bodyIdleTimeout * 1000),
    tls: cert && key ? { cert, key } : undefined,
    warn,
  };
}

/** `near-dup proxy`: the signing proxy in front of a cluster. */
export const proxyCommand: CommandModule<object, ProxyArgs> = {
  command: 'proxy',
  describe: 'Serve the cluster API to any client, adding the near-dup fields to documents written to --index',
  builder: (yargs) =>
    withSignerOptions(yargs)
      .option('url', { type: 'string', describe: `the cluster [env ${CONNECTION_ENV.url}; default: a local engine on 9201, 9211 or 9200]` })
      .option('listen', { type: 'string', default: '127.0.0.1:9290', describe: 'host:port clients connect to' })
      .option('index', { alias: 'i', type: 'string', demandOption: true, describe: 'indices whose documents are signed: names, * patterns, -pattern to leave out, comma-separated' })
      .option('field', { alias: 'f', type: 'string', array: true, demandOption: true, describe: 'text field(s) to sign; several are joined' })
      .option('prefix', advanced({ type: 'string', default: DEFAULT_PREFIX, describe: 'object the near-dup fields go under' }))
      .option('on-error', { type: 'string', choices: ['reject', 'pass'], default: 'pass', describe: 'a document without text to sign: indexed unsigned and counted (pass), or a failed item (reject)' })
      .option('cert', { type: 'string', describe: 'PEM certificate, to serve HTTPS (with --key)' })
      .option('key', { type: 'string', describe: 'PEM private key of --cert' })
      .option('cloud-id', CLOUD_ID_OPTION)
      .option('ca-file', { type: 'string', describe: `PEM file with the CA of the cluster's certificate [env ${CONNECTION_ENV.caFile}]` })
      .option('ca-fingerprint', CREDENTIAL_OPTIONS['ca-fingerprint'])
      .option('insecure', { type: 'boolean', describe: `skip verifying the cluster's certificate [env ${CONNECTION_ENV.insecure}=true]` })
      .option('aws-service', CREDENTIAL_OPTIONS['aws-service'])
      .option('aws-region', CREDENTIAL_OPTIONS['aws-region'])
      .option('aws-profile', CREDENTIAL_OPTIONS['aws-profile'])
      // Declared to be refused with the reason (the clients' identities pass through), not as unknown options.
      .option('client-cert', { ...CREDENTIAL_OPTIONS['client-cert'], hidden: true })
      .option('client-key', { ...CREDENTIAL_OPTIONS['client-key'], hidden: true })
      .option('max-chars', advanced({ type: 'number', default: DEFAULT_MAX_CHARS, describe: 'cut longer texts before signing' }))
      .option('template-share', advanced({
        type: 'number',
        describe: 'sign each index with the template tokens it keeps for this share (as annotate or ingest drew them; an index that keeps none is signed without); 0 for none [default: 0.005, as annotate and ingest draw by default]',
      }))
      .option('template-sample', advanced({ type: 'number', describe: 'with --template-share: the sample the set was drawn from [default: 10000]' }))
      .option('threads', advanced({ type: 'number', describe: 'signing threads [default: every core]' }))
      .option('max-upstream-mb', advanced({ type: 'number', default: 16, describe: 'a bulk body goes to the cluster in parts of about this size, in order' }))
      .option('max-body-mb', advanced({ type: 'number', default: 100, describe: "largest request body, decompressed (the engines' http.max_content_length); larger ones are answered 413" }))
      .option('max-line-mb', advanced({ type: 'number', describe: 'longest line of a bulk body [default: --max-body-mb]' }))
      .option('max-concurrent-writes', advanced({
        type: 'number',
        describe:
          'bulk and document requests read, signed and sent upstream at once, fixed; more wait their turn, unread (memory holds at most this many bodies). Default: chosen from the cluster (data nodes, write threads; at most 16, 16 when the cluster does not say), lowered when it answers 429 or slows down',
      }))
      .option('max-writes-per-client', advanced({
        type: 'number',
        describe: 'write slots one client address may hold at once (slow or greedy connections from one address cannot take them all; everyone behind one NAT or reverse proxy shares an address) [default: half of --max-concurrent-writes, at least 1]',
      }))
      .option('max-buffered-mb', advanced({
        type: 'number',
        describe:
          'room for the large documents and bulk lines (over 1 MB) held at once to be signed; signing one takes about 8 times its size in memory. A request past it waits its turn; one larger than it all is answered 413; one whose size was not said (chunked, compressed) that cannot go on while all the room is held, 429 with Retry-After [default: --max-body-mb]',
      }))
      .option('body-timeout', advanced({ type: 'number', default: 60, describe: "seconds spent waiting for a request body's bytes, in all (not counting the time the proxy holds the client back); past it, 408" }))
      .option('body-idle-timeout', advanced({ type: 'number', default: 30, describe: 'seconds waiting for the next byte of a request body; past it, 408' }))
      .epilogue(
        examples([
          ['near-dup proxy --url http://localhost:9200 --index "news-*" --field body', 'then point the clients at http://127.0.0.1:9290'],
        ]),
      ) as never,
  handler: async (argv) => {
    const warn = (line: string) => process.stderr.write(escaped`near-dup proxy: ${line}\n`);
    const options = await proxyOptionsFrom(argv, warn);
    if (!isLoopbackHost(options.host) && !options.tls) warn(`listening beyond loopback (${options.host}) over plain HTTP: the clients' credentials and documents cross the network unencrypted; serve HTTPS with --cert and --key (README, Safety)`);
    const proxy = await startProxy(options).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'EADDRINUSE') throw new UserError(`--listen ${argv.listen}: the port is in use; choose another`);
      throw err;
    });
    warn(`listening on ${proxy.url}, signing documents of "${options.index}" (field ${options.fields.join(', ')}) for ${redactUrl(options.upstream.url)}; counters at ${proxy.url}${STATS_PATH}`);
    await new Promise<void>((resolve) => {
      const stop = () => resolve();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    });
    await proxy.close();
    process.stdout.write(jsonLine(proxy.stats.snapshot()));
  },
};
