// AWS Signature Version 4 for Amazon OpenSearch Service (service "es") and Serverless ("aoss"): which region
// and service, the credentials from the usual AWS chain (environment, shared config and credentials files
// with AWS_PROFILE, SSO, web identity, container and instance roles), and the signature of one request.
// The OpenSearch client signs its own requests with its AwsSigv4Signer and these credentials; the requests
// near-dup makes without a client (identifying the cluster, dashboards, the proxy's upstream) are signed
// here with AWS's own signer, over the exact bytes sent.
import { createHash } from 'node:crypto';
import { UsageError, UserError } from '../errors.js';

/** Which AWS service a request is signed for: es (managed domains) or aoss (Serverless). */
export type AwsService = 'es' | 'aoss';

/** What the user says of SigV4 signing; every field left out is found from the host name or the AWS environment. */
export interface AwsOptions {
  /** Region of the domain or collection; else read from its host name, else AWS_REGION / AWS_DEFAULT_REGION. */
  region?: string;
  /** es (managed domains) or aoss (Serverless); else read from the host name, else es. */
  service?: string;
  /** A profile of ~/.aws/config and ~/.aws/credentials (else AWS_PROFILE, else the default chain). */
  profile?: string;
}

/** Credentials as the AWS provider chain gives them (temporary ones expire). */
export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
  expiration?: Date;
}

/** Everything a request needs to be signed, resolved once per connection. */
export interface AwsSigning {
  region: string;
  service: AwsService;
  /** The credentials, cached and refreshed by the AWS chain when they expire. */
  credentials: () => Promise<AwsCredentials>;
}

/** One request as it goes on the wire: its path and query string exactly as sent. */
export interface RequestToSign {
  method: string;
  /** "https:" or "http:". */
  protocol: string;
  /** host[:port], as the Host header carries it. */
  host: string;
  path: string;
  /** The query string without "?", as sent (may be empty). */
  query: string;
  body?: Uint8Array | string;
  /** Headers to sign besides host and the x-amz ones (content-type, say), lower-case names. */
  headers?: Record<string, string>;
}

const AWS_HOST = /\.([a-z]{2}(?:-[a-z]+)+-\d)\.(es|aoss)\.amazonaws\.com(?:\.cn)?$/;

/** Region and service: as given, else from an *.REGION.es|aoss.amazonaws.com host, else the environment. */
export function awsTarget(options: AwsOptions, url: string, env: NodeJS.ProcessEnv = process.env): { region: string; service: AwsService } {
  const fromHost = AWS_HOST.exec(new URL(url).hostname);
  const service = options.service ?? fromHost?.[2] ?? 'es';
  if (service !== 'es' && service !== 'aoss') {
    throw new UsageError(`--aws-service "${service}" is not a service near-dup signs for: give es (Amazon OpenSearch Service domains) or aoss (OpenSearch Serverless collections)`);
  }
  const region = options.region ?? fromHost?.[1] ?? (env.AWS_REGION || env.AWS_DEFAULT_REGION);
  if (!region) throw new UsageError('AWS SigV4 needs a region: give --aws-region (or set AWS_REGION), e.g. --aws-region eu-west-1');
  if (!/^[a-z]{2}(-[a-z]+)+-\d$/.test(region)) throw new UsageError(`--aws-region "${region}" is not an AWS region name; give one like eu-west-1`);
  return { region, service };
}

/**
 * The signing settings, with credentials asked of the AWS chain once now (so that none found is said before
 * any work, in one line) and then as they expire.
 */
export async function awsSigning(options: AwsOptions, url: string): Promise<AwsSigning> {
  const target = awsTarget(options, url);
  const { fromNodeProviderChain } = await import('@aws-sdk/credential-providers');
  const chain = fromNodeProviderChain(options.profile ? { profile: options.profile } : {});
  const credentials = async () => {
    try {
      return await chain();
    } catch (err) {
      throw noCredentials(err, options.profile);
    }
  };
  await credentials();
  return { ...target, credentials };
}

function noCredentials(err: unknown, profile: string | undefined): UserError {
  const why = String((err as Error)?.message ?? err).split('\n')[0];
  return new UserError(
    `no AWS credentials for SigV4${profile ? ` in profile "${profile}"` : ''} (${why}); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), ` +
      'or AWS_PROFILE (or --aws-profile) for ~/.aws, or run where a role is attached (instance, container, web identity)',
    { cause: err },
  );
}

/** Hex SHA-256 of a body, what x-amz-content-sha256 carries (Serverless requires the header). */
export function payloadHash(body: Uint8Array | string | undefined): string {
  return createHash('sha256').update(body ?? '').digest('hex');
}

/** The headers that sign `request`: authorization, x-amz-date, x-amz-content-sha256 and, with temporary credentials, x-amz-security-token. */
export async function signatureHeaders(signing: AwsSigning, request: RequestToSign): Promise<Record<string, string>> {
  const [{ SignatureV4 }, { Sha256 }] = await Promise.all([import('@smithy/signature-v4'), import('@aws-crypto/sha256-js')]);
  const signer = new SignatureV4({ service: signing.service, region: signing.region, credentials: signing.credentials, sha256: Sha256, uriEscapePath: true });
  const [hostname, port] = splitHost(request.host);
  const headers: Record<string, string> = { ...(request.headers ?? {}), host: request.host, 'x-amz-content-sha256': payloadHash(request.body) };
  const signed = await signer.sign({ method: request.method, protocol: request.protocol, hostname, port, path: request.path, query: queryObject(request.query), headers, body: request.body });
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) {
    const lower = name.toLowerCase();
    if (lower === 'authorization' || lower.startsWith('x-amz-')) out[lower] = String(value);
  }
  return out;
}

function splitHost(host: string): [string, number | undefined] {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(host);
  return [match?.[1] ?? host, match?.[2] ? Number(match[2]) : undefined];
}

/** A query string as the signer takes it: each name with its decoded value(s), as the server decodes them. */
function queryObject(query: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of new URLSearchParams(query)) {
    const had = out[name];
    out[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
  return out;
}
