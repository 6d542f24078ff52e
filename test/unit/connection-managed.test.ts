// Managed services in the connection layer (issue 34 item 4), the parts that need no service: an Elastic
// Cloud id decoded as the official client decodes it, AWS region and service read from the options, the
// host name or the environment, SigV4 turned on only when asked, and the Serverless operations allowlist
// (what near-dup would ask that a collection does not answer is refused before it is sent).
import { describe, expect, it } from 'vitest';
import { dashboardsConnection } from '../../src/cli/commands/dashboards.js';
import { connectionArgsFrom } from '../../src/cli/connection-options.js';
import { awsTarget } from '../../src/engine/aws-sigv4.js';
import { decodeCloudId } from '../../src/engine/cloud-id.js';
import { resolveConnection } from '../../src/engine/connection.js';
import { requireServerlessOperation } from '../../src/engine/serverless.js';
import { UsageError, UserError } from '../../src/errors.js';

const cloudId = (name: string, decoded: string) => `${name}:${Buffer.from(decoded).toString('base64')}`;

describe('Elastic Cloud ids', () => {
  it('decode to the deployment Elasticsearch and Kibana URLs', () => {
    expect(decodeCloudId(cloudId('my-deployment', 'us-east-1.aws.found.io$abc123$def456'))).toEqual({
      name: 'my-deployment',
      elasticsearch: 'https://abc123.us-east-1.aws.found.io',
      kibana: 'https://def456.us-east-1.aws.found.io',
    });
    expect(decodeCloudId(cloudId('dep', 'eu-west-1.aws.found.io:9243$es1')).elasticsearch).toBe('https://es1.eu-west-1.aws.found.io:9243');
    expect(decodeCloudId(cloudId('dep', 'h.io:443$es1')).elasticsearch).toBe('https://es1.h.io');
  });

  it('a value that is not one is one line that never repeats it', () => {
    for (const bad of ['nocolon', 'name:', 'name:!!!', cloudId('dep', 'only-host'), cloudId('dep', 'h$bad id')]) {
      expect(() => decodeCloudId(bad), bad).toThrow(UsageError);
      expect(() => decodeCloudId(bad), bad).not.toThrow(bad.split(':').pop() || 'never');
    }
  });

  it('takes the place of --url, never both, and never with AWS signing', async () => {
    const id = cloudId('dep', 'region.example.io$es9$kb9');
    expect((await resolveConnection({ cloudId: id })).url).toBe('https://es9.region.example.io');
    expect((await resolveConnection({ cloudId: id })).cloudId).toBe(id);
    await expect(resolveConnection({ cloudId: id, url: 'http://h' })).rejects.toThrow(/give --url or --cloud-id/);
    await expect(resolveConnection({ cloudId: id, aws: { region: 'eu-west-1' } })).rejects.toThrow(/does not sign for/);
  });

  it('names the Kibana that dashboards talks to, or says there is none', () => {
    expect(dashboardsConnection({ url: 'http://localhost:5601', cloudId: cloudId('dep', 'region.example.io$es9$kb9') }, {}).url).toBe('https://kb9.region.example.io');
    expect(() => dashboardsConnection({ url: 'http://localhost:5601', cloudId: cloudId('dep', 'region.example.io$es9') }, {})).toThrow(/names no Kibana/);
  });
});

describe('AWS SigV4 settings', () => {
  it('region and service from the options, else the host name, else the environment', () => {
    expect(awsTarget({}, 'https://search-x-abc.eu-west-3.es.amazonaws.com', {})).toEqual({ region: 'eu-west-3', service: 'es' });
    expect(awsTarget({}, 'https://abc123.us-east-1.aoss.amazonaws.com', {})).toEqual({ region: 'us-east-1', service: 'aoss' });
    expect(awsTarget({ region: 'ap-south-1', service: 'aoss' }, 'https://search-x.eu-west-3.es.amazonaws.com', {})).toEqual({ region: 'ap-south-1', service: 'aoss' });
    expect(awsTarget({}, 'http://127.0.0.1:9200', { AWS_REGION: 'ca-central-1' })).toEqual({ region: 'ca-central-1', service: 'es' });
    expect(awsTarget({}, 'http://127.0.0.1:9200', { AWS_DEFAULT_REGION: 'sa-east-1' })).toEqual({ region: 'sa-east-1', service: 'es' });
    expect(() => awsTarget({}, 'http://127.0.0.1:9200', {})).toThrow(/needs a region: give --aws-region/);
    expect(() => awsTarget({ service: 'opensearch' }, 'http://h', { AWS_REGION: 'eu-west-1' })).toThrow(/--aws-service "opensearch" is not a service near-dup signs for/);
    expect(() => awsTarget({ region: 'Europe' }, 'http://h', {})).toThrow(UsageError);
  });

  it('is on only when an --aws-* option or SEARCH_AWS_SERVICE says so (AWS_REGION or AWS_PROFILE alone do not)', () => {
    expect(connectionArgsFrom({}, { AWS_REGION: 'eu-west-1', AWS_PROFILE: 'p' }).aws).toBeUndefined();
    expect(connectionArgsFrom({}, { SEARCH_AWS_SERVICE: 'aoss', AWS_PROFILE: 'p' }).aws).toEqual({ service: 'aoss', region: undefined, profile: 'p' });
    expect(connectionArgsFrom({ awsRegion: 'eu-west-1' }, {}).aws).toEqual({ service: undefined, region: 'eu-west-1', profile: undefined });
  });

  it('is one kind of credentials: with a user, a key or a token it is refused', async () => {
    await expect(resolveConnection({ url: 'https://h', username: 'u', password: 'p', aws: { region: 'eu-west-1' } })).rejects.toThrow(/give one kind of credentials, not --username\/--password and AWS SigV4/);
    await expect(resolveConnection({ url: 'https://h', apiKey: 'k', aws: { region: 'eu-west-1' } })).rejects.toThrow(UsageError);
  });

  it('with no credentials anywhere in the AWS chain, one line saying where they are looked for', async () => {
    const saved = { ...process.env };
    for (const name of ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN', 'AWS_PROFILE', 'AWS_WEB_IDENTITY_TOKEN_FILE', 'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI', 'AWS_CONTAINER_CREDENTIALS_FULL_URI']) delete process.env[name];
    Object.assign(process.env, { AWS_EC2_METADATA_DISABLED: 'true', AWS_SHARED_CREDENTIALS_FILE: '/nonexistent/credentials', AWS_CONFIG_FILE: '/nonexistent/config' });
    try {
      const attempt = resolveConnection({ url: 'http://127.0.0.1:9', aws: { region: 'eu-west-1' } });
      await expect(attempt).rejects.toThrow(UserError);
      expect(await attempt.catch((err: Error) => err.message)).toMatch(/^no AWS credentials for SigV4 \(.*\); set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
    } finally {
      process.env = saved;
    }
  }, 30_000);
});

describe('Amazon OpenSearch Serverless operations', () => {
  it('lets through what near-dup uses that a collection answers', () => {
    for (const [method, path] of [
      ['HEAD', '/news'],
      ['PUT', '/news'],
      ['GET', '/news/_mapping'],
      ['PUT', '/news/_mapping'],
      ['GET', '/news/_settings/index.blocks.*,index.uuid'],
      ['GET', '/_resolve/index/news'],
      ['POST', '/_bulk'],
      ['POST', '/news/_search'],
      ['POST', '/news/_msearch'],
      ['POST', '/news/_count'],
      ['POST', '/_mget'],
      ['POST', '/news/_mget'],
      ['GET', '/_index_template'],
      ['PUT', '/_index_template/near-dup'],
      ['POST', '/news/_search/point_in_time'],
      ['DELETE', '/_search/point_in_time'],
    ]) {
      expect(() => requireServerlessOperation(method, path), `${method} ${path}`).not.toThrow();
    }
  });

  it('refuses the rest in one line naming the operation and the way out', () => {
    expect(() => requireServerlessOperation('POST', '/news/_search', { scroll: '5m' })).toThrow(
      /^Amazon OpenSearch Serverless does not support scroll \(POST \/news\/_search\?scroll=\.\.\.\), which near-dup needs here; Serverless has no scroll, which a sliced scan \(--slices\)/,
    );
    expect(() => requireServerlessOperation('POST', '/_search/scroll')).toThrow(/does not support scroll/);
    expect(() => requireServerlessOperation('PUT', '/_component_template/near-dup')).toThrow(/does not support component templates .*near-dup init --index INDEX instead of --template/);
    expect(() => requireServerlessOperation('GET', '/_nodes/thread_pool,os')).toThrow(/does not support nodes info/);
    expect(() => requireServerlessOperation('GET', '/news/_stats')).toThrow(/does not support index stats/);
    expect(() => requireServerlessOperation('POST', '/news/_refresh')).toThrow(UserError);
  });
});
