// Vitest globalSetup of the secured suite (test/secured): a real OpenSearch with its security plugin (TLS
// on HTTP, internal users and roles), and the test users and roles of scripts/engine/secured-users.json on
// it.
//
// 1. OPENSEARCH_SECURED_URL names a secured OpenSearch. Its admin credentials and CA come from the
//    credentials file scripts/engine writes (OPENSEARCH_SECURED_CREDENTIALS, default
//    .engines/opensearch-secured.credentials.json), or from OPENSEARCH_SECURED_CA_FILE,
//    OPENSEARCH_SECURED_ADMIN_USERNAME (default admin) and OPENSEARCH_SECURED_ADMIN_PASSWORD. An explicit
//    URL that does not work fails the run.
// 2. Otherwise scripts/engine's opensearch-secured (OpenSearch 2.19.1 and the security plugin from Maven
//    Central, Java 17 and Maven), reused when running, started (and stopped afterwards) when not.
// Either way the test roles and users are created or brought up to date through the security REST API.
// Under CI=true a missing secured engine fails the run; elsewhere the secured tests are skipped, loudly.
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { runTeardown } from '../setup/teardown.js';
import { connect } from '../../src/engine/client.js';
import type { SecuredEngine } from './secured-types.js';

const inCi = ['true', '1'].includes((process.env.CI ?? '').toLowerCase());
const say = (line: string) => process.stderr.write(`[secured] ${line}\n`);
const NAME = 'opensearch-secured';

interface Credentials {
  url: string;
  caFile: string;
  users: Record<string, { username: string; password: string; roles: string[] }>;
  certUser?: { username: string; cert: string; key: string };
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const teardown: Array<() => Promise<void>> = [];
  let engine: SecuredEngine | null = null;
  let missing = '';
  try {
    engine = await resolve(teardown);
  } catch (err) {
    missing = (err as Error).message;
  }
  if (!engine) {
    // An explicit URL that does not work is a mistake to report, never a reason to skip.
    if (inCi || process.env.OPENSEARCH_SECURED_URL) {
      await runTeardown(teardown, say);
      throw new Error(`${inCi ? 'CI=true and the' : 'The'} secured tests have no secured OpenSearch: ${missing}`);
    }
    const bar = '!'.repeat(100);
    say(bar);
    say(`SECURED TESTS SKIPPED: ${missing}`);
    say('Start one with `npm run engine:start -- opensearch-secured` (Java 17 + Maven), or set OPENSEARCH_SECURED_URL.');
    say(bar);
  } else say(`opensearch ${engine.version} with security at ${engine.url} (${engine.source}); users ${Object.keys(engine.users).join(', ')}`);
  project.provide('secured', engine);
  project.provide('securedMissing', missing);
  return () => runTeardown(teardown, say);
}

async function resolve(teardown: Array<() => Promise<void>>): Promise<SecuredEngine> {
  // @ts-expect-error: plain JavaScript module without type declarations
  const engines = await import('../../scripts/engine/engines.mjs');
  // @ts-expect-error: plain JavaScript module without type declarations
  const secured = await import('../../scripts/engine/secured.mjs');
  const given = process.env.OPENSEARCH_SECURED_URL;
  const file = process.env.OPENSEARCH_SECURED_CREDENTIALS ?? engines.credentialsPath(NAME);
  let credentials: Credentials;
  let source: SecuredEngine['source'];
  if (given) {
    source = 'url';
    const fromFile: Credentials | undefined = existsSync(file) ? secured.readCredentials(file) : undefined;
    const caFile = process.env.OPENSEARCH_SECURED_CA_FILE ?? fromFile?.caFile;
    const password = process.env.OPENSEARCH_SECURED_ADMIN_PASSWORD ?? fromFile?.users.admin?.password;
    if (!caFile || !password) {
      throw new Error(`OPENSEARCH_SECURED_URL=${given} but no credentials: neither ${file} nor OPENSEARCH_SECURED_CA_FILE and OPENSEARCH_SECURED_ADMIN_PASSWORD`);
    }
    const admin = { username: process.env.OPENSEARCH_SECURED_ADMIN_USERNAME ?? fromFile?.users.admin?.username ?? 'admin', password };
    // Someone else's cluster: its role mappings are left alone.
    // A client certificate scripts/engine made (and mapped) comes with its credentials file.
    const clientCertificate = fromFile?.certUser ? { cert: fromFile.certUser.cert, key: fromFile.certUser.key } : undefined;
    credentials = await secured.provision({ url: given.replace(/\/+$/, ''), caFile: path.resolve(caFile), admin, emptyOwnIndex: fromFile !== undefined, clientCertificate });
  } else {
    source = 'embedded';
    engines.resolveArtifacts(NAME);
    const started = await engines.start(NAME);
    const keep = ['1', 'true'].includes((process.env.NEAR_DUP_KEEP_ENGINES ?? '').toLowerCase());
    if (started.reused) say(`reusing the secured OpenSearch already running at ${started.url}`);
    else {
      say(`started the secured OpenSearch at ${started.url} in ${started.seconds.toFixed(1)} s${keep ? ' (kept running: NEAR_DUP_KEEP_ENGINES)' : ', stopped after the tests'}`);
      if (!keep) teardown.push(async () => void (await engines.stop(NAME)));
    }
    credentials = secured.readCredentials(started.credentials);
  }
  // The engine as near-dup sees it, through the same connection code the commands use.
  const admin = credentials.users.admin;
  const client = await connect({ url: credentials.url, username: admin.username, password: admin.password, caFile: credentials.caFile });
  try {
    if (client.info.flavour !== 'opensearch') throw new Error(`${credentials.url} is ${client.info.flavour}, not OpenSearch`);
    const definitions = secured.securedDefinitions();
    const certUser = credentials.certUser ? { username: credentials.certUser.username, cert: credentials.certUser.cert, key: credentials.certUser.key } : undefined;
    return { url: client.url, version: client.info.version, source, caFile: credentials.caFile, users: credentials.users, indexPattern: definitions.indexPattern, certUser };
  } finally {
    await client.close();
  }
}
