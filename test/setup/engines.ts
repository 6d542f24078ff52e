// Vitest globalSetup for the integration tests: the one place that decides which real engines they run on.
//
// The engines are those of the engine support table (src/engine/support.json: one per supported major, named
// as scripts/engine names them), so a new major there is a new engine here.
//
// 1. Explicit URLs win: <NAME>_URL for each engine name in upper case: OPENSEARCH_URL, OPENSEARCH1_URL (an
//    OpenSearch 1.x), OPENSEARCH3_URL (3.x), ELASTICSEARCH_URL, ELASTICSEARCH7_URL (an Elasticsearch 7.x),
//    ELASTICSEARCH9_URL (9.x); or SEARCH_URL (flavour detected),
//    with credentials and TLS from SEARCH_USERNAME, SEARCH_PASSWORD, SEARCH_API_KEY, SEARCH_BEARER_TOKEN,
//    SEARCH_CA_FILE, SEARCH_INSECURE. An explicit URL that does not answer fails the run.
// 2. Otherwise, when a Docker daemon answers: a container of each (testcontainers), the flavour's image
//    (support.json) at the version scripts/engine pins (OpenSearch 1.3, 2.19 and 3.8, Elasticsearch 7.17,
//    8.19 and 9.5), or <NAME>_IMAGE.
// 3. Otherwise: the embedded engines of scripts/engine (Java 17, Java 21 for OpenSearch 3 and Elasticsearch
//    9, and Maven), the same six, reused when already running, started (and stopped again afterwards) when not.
// NEAR_DUP_ENGINES=docker|embedded forces 2 or 3. Under CI=true a missing engine fails the run; elsewhere
// the integration tests are skipped with a loud message.
//
// The cluster tests get a cluster of three OpenSearch nodes: OPENSEARCH_CLUSTER_URL, or scripts/engine's
// opensearch-cluster.
//
// The newest major of each flavour runs the whole integration suite, the older ones the smoke subset
// (engine-types.ts, assignSuites); NEAR_DUP_FULL_SUITE=all runs the whole suite on every engine.
import type { TestProject } from 'vitest/node';
import { runTeardown } from './teardown.js';
import { connect } from '../../src/engine/client.js';
import type { Flavour } from '../../src/engine/detect.js';
import { SUPPORT } from '../../src/engine/support.js';
import { connectionArgsFrom } from '../../src/cli/connection-options.js';
import { assignSuites, engineName, type TestCluster, type TestEngine } from './engine-types.js';

/** An engine found, before the suites are assigned. */
type Found = Omit<TestEngine, 'suite'>;

/** The engines the tests run on, by the names scripts/engine gives them: one per supported major. */
const NAMES: string[] = SUPPORT.majors.map((m) => m.engine.name);
const flavourOfEngine = (name: string): Flavour => SUPPORT.majors.find((m) => m.engine.name === name)!.flavour;
/** `opensearch3` -> OPENSEARCH3: the prefix of its environment variables (OPENSEARCH3_URL, OPENSEARCH3_IMAGE). */
const envPrefix = (name: string) => name.toUpperCase().replace(/-/g, '_');
/** Container image for the Docker path: the flavour's image at the version scripts/engine pins (as docker-compose.yml). */
function imageOf(name: string, engines: { ENGINES: Record<string, { release: string }> }): string {
  return process.env[`${envPrefix(name)}_IMAGE`] ?? `${SUPPORT.flavours[flavourOfEngine(name)].image}:${engines.ENGINES[name].release}`;
}
/** OpenSearch first, then Elasticsearch, newest major first. */
const FLAVOUR_ORDER = Object.keys(SUPPORT.flavours);
const byEngineOrder = (a: Found, b: Found) =>
  FLAVOUR_ORDER.indexOf(a.flavour) - FLAVOUR_ORDER.indexOf(b.flavour) || Number.parseInt(b.version, 10) - Number.parseInt(a.version, 10);

const inCi = ['true', '1'].includes((process.env.CI ?? '').toLowerCase());
const say = (line: string) => process.stderr.write(`[engines] ${line}\n`);

interface Resolution {
  engines: Found[];
  missing: string[];
  teardown: Array<() => Promise<void>>;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const resolution = await resolveEngines();
  const missingText = resolution.missing.join('; ');
  if (resolution.missing.length > 0) {
    if (inCi) {
      await runTeardown(resolution.teardown, say);
      throw new Error(`CI=true and the integration tests have no engine: ${missingText}`);
    }
    const bar = '!'.repeat(100);
    say(bar);
    say(`INTEGRATION TESTS ${resolution.engines.length === 0 ? 'SKIPPED' : 'INCOMPLETE'}: ${missingText}`);
    say('Start the engines with `npm run engine:start` (Java 17 + Maven), `docker compose up -d`, or set SEARCH_URL.');
    say(bar);
  }
  const everywhere = process.env.NEAR_DUP_FULL_SUITE === 'all';
  const engines = assignSuites(resolution.engines, everywhere);
  for (const e of engines) say(`${engineName(e.flavour, e.version)}: ${e.flavour} ${e.version} at ${e.url} (${e.source}), ${e.suite} suite`);
  project.provide('engines', engines);
  project.provide('enginesMissing', missingText);
  const cluster = await resolveCluster(resolution.teardown);
  if (!cluster.cluster) {
    if (inCi) {
      await runTeardown(resolution.teardown, say);
      throw new Error(`CI=true and the cluster tests have no cluster: ${cluster.missing}`);
    }
    say(`CLUSTER TESTS SKIPPED: ${cluster.missing}`);
  } else say(`cluster: opensearch ${cluster.cluster.version}, ${cluster.cluster.nodes.length} nodes at ${cluster.cluster.url}`);
  project.provide('cluster', cluster.cluster);
  project.provide('clusterMissing', cluster.missing);
  return () => runTeardown(resolution.teardown, say);
}

/**
 * The cluster for the cluster tests: OPENSEARCH_CLUSTER_URL (node URLs, comma-separated) when set, else
 * scripts/engine's opensearch-cluster (three nodes, one JVM each), reused or started, unless engines were
 * given by URL or run in Docker (then none, and CI fails).
 */
async function resolveCluster(teardown: Resolution['teardown']): Promise<{ cluster: TestCluster | null; missing: string }> {
  // @ts-expect-error: plain JavaScript module without type declarations
  const engines = await import('../../scripts/engine/engines.mjs');
  const nodeNames: string[] = engines.GROUPS['opensearch-cluster'];
  const managedName = (url: string) => nodeNames.find((name) => engines.engineUrl(name) === url.replace(/\/+$/, ''));
  const given = process.env.OPENSEARCH_CLUSTER_URL;
  let urls: string[];
  if (given) urls = given.split(',').map((u) => u.trim()).filter(Boolean);
  else if (explicitUrls().length > 0 || process.env.NEAR_DUP_ENGINES === 'docker' || (await dockerAnswers())) {
    return { cluster: null, missing: 'no OPENSEARCH_CLUSTER_URL (start one with `npm run engine:start -- opensearch-cluster`)' };
  } else {
    try {
      for (const name of nodeNames) engines.resolveArtifacts(name);
      const started = await Promise.all(nodeNames.map((name) => engines.start(name)));
      const keep = ['1', 'true'].includes((process.env.NEAR_DUP_KEEP_ENGINES ?? '').toLowerCase());
      started.forEach((r: { reused: boolean }, i: number) => {
        if (!r.reused && !keep) teardown.push(async () => void (await engines.stop(nodeNames[i])));
      });
      urls = started.map((r: { url: string }) => r.url);
    } catch (err) {
      return { cluster: null, missing: `embedded opensearch-cluster: ${(err as Error).message}` };
    }
  }
  const client = await connect({ ...connectionArgsFrom({}), url: urls.join(',') });
  try {
    const nodes = (await client.request('GET', '/_cat/nodes', undefined, { format: 'json', h: 'name' })) as unknown[];
    if (nodes.length < 2) return { cluster: null, missing: `the cluster at ${client.url} has ${nodes.length} node; the cluster tests need 3` };
    return { cluster: { url: client.url, version: client.info.version, nodes: urls.map((url) => ({ url, name: managedName(url) })) }, missing: '' };
  } finally {
    await client.close();
  }
}


async function resolveEngines(): Promise<Resolution> {
  const explicit = explicitUrls();
  if (explicit.length > 0) return fromUrls(explicit);
  const mode = process.env.NEAR_DUP_ENGINES ?? 'auto';
  if (!['auto', 'docker', 'embedded'].includes(mode)) throw new Error(`NEAR_DUP_ENGINES="${mode}": use auto, docker or embedded`);
  if (mode === 'docker' || (mode === 'auto' && (await dockerAnswers()))) return fromContainers();
  return fromEmbedded();
}

function explicitUrls(): Array<{ url: string; flavour?: Flavour }> {
  const env = process.env;
  const urls: Array<{ url: string; flavour?: Flavour }> = [];
  for (const name of NAMES) {
    const url = env[`${envPrefix(name)}_URL`];
    if (url) urls.push({ url, flavour: flavourOfEngine(name) });
  }
  if (env.SEARCH_URL && !urls.some((u) => u.url === env.SEARCH_URL)) urls.push({ url: env.SEARCH_URL });
  return urls;
}

async function identify(url: string, source: TestEngine['source']): Promise<Found> {
  const client = await connect({ ...connectionArgsFrom({}), url });
  try {
    return { flavour: client.info.flavour, url: client.url, version: client.info.version, source };
  } finally {
    await client.close();
  }
}

async function fromUrls(urls: Array<{ url: string; flavour?: Flavour }>): Promise<Resolution> {
  const engines: Found[] = [];
  for (const { url, flavour } of urls) {
    // An explicit URL that does not work is a mistake to report, never a reason to skip.
    const engine = await identify(url, 'url');
    if (flavour && engine.flavour !== flavour) {
      throw new Error(`${flavour.toUpperCase()}_URL=${engine.url} is ${engine.flavour} ${engine.version}, not ${flavour}`);
    }
    engines.push(engine);
  }
  return { engines, missing: [], teardown: [] };
}

async function dockerAnswers(): Promise<boolean> {
  const { existsSync } = await import('node:fs');
  if (!process.env.DOCKER_HOST && !existsSync('/var/run/docker.sock') && !existsSync(`${process.env.HOME}/.docker/run/docker.sock`)) {
    return false;
  }
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await Promise.race([getContainerRuntimeClient(), new Promise((_, reject) => setTimeout(() => reject(new Error('timeout')), 10_000))]);
    return true;
  } catch {
    return false;
  }
}

async function fromContainers(): Promise<Resolution> {
  const { GenericContainer, Wait } = await import('testcontainers');
  // @ts-expect-error: plain JavaScript module without type declarations
  const scripts = await import('../../scripts/engine/engines.mjs');
  // Single node, security off, a bounded heap: each flavour's settings.
  const environments: Record<Flavour, Record<string, string>> = {
    opensearch: {
      'discovery.type': 'single-node',
      DISABLE_SECURITY_PLUGIN: 'true',
      DISABLE_INSTALL_DEMO_CONFIG: 'true',
      OPENSEARCH_JAVA_OPTS: '-Xms512m -Xmx512m',
    },
    elasticsearch: {
      'discovery.type': 'single-node',
      'xpack.security.enabled': 'false',
      ES_JAVA_OPTS: '-Xms512m -Xmx512m',
    },
  };
  const resolution: Resolution = { engines: [], missing: [], teardown: [] };
  await Promise.all(
    NAMES.map(async (flavour) => {
      const began = Date.now();
      const image = imageOf(flavour, scripts);
      try {
        const container = await new GenericContainer(image)
          .withEnvironment(environments[flavourOfEngine(flavour)])
          .withExposedPorts(9200)
          .withWaitStrategy(Wait.forHttp('/_cluster/health?wait_for_status=yellow&timeout=1s', 9200).forStatusCode(200))
          .withStartupTimeout(300_000)
          .start();
        resolution.teardown.push(async () => {
          await container.stop();
        });
        const url = `http://${container.getHost()}:${container.getMappedPort(9200)}`;
        resolution.engines.push(await identify(url, 'docker'));
        say(`${flavour}: container ${image} up in ${((Date.now() - began) / 1000).toFixed(1)} s`);
      } catch (err) {
        resolution.missing.push(`${flavour} container ${image} did not start: ${(err as Error).message}`);
      }
    }),
  );
  resolution.engines.sort(byEngineOrder);
  return resolution;
}

async function fromEmbedded(): Promise<Resolution> {
  // @ts-expect-error: plain JavaScript module without type declarations
  const engines = await import('../../scripts/engine/engines.mjs');
  const resolution: Resolution = { engines: [], missing: [], teardown: [] };
  const keep = ['1', 'true'].includes((process.env.NEAR_DUP_KEEP_ENGINES ?? '').toLowerCase());
  const ready: string[] = [];
  for (const flavour of NAMES) {
    try {
      engines.resolveArtifacts(flavour);
      ready.push(flavour);
    } catch (err) {
      resolution.missing.push(`embedded ${flavour}: ${(err as Error).message}`);
    }
  }
  const results = await Promise.allSettled(ready.map((flavour) => engines.start(flavour)));
  for (const [i, result] of results.entries()) {
    const flavour = ready[i];
    if (result.status === 'rejected') {
      resolution.missing.push(`embedded ${flavour}: ${(result.reason as Error).message}`);
      continue;
    }
    const r = result.value as { url: string; reused: boolean; seconds: number };
    if (r.reused) say(`${flavour}: reusing the engine already running at ${r.url}`);
    else {
      say(`${flavour}: started at ${r.url} in ${r.seconds.toFixed(1)} s${keep ? ' (kept running: NEAR_DUP_KEEP_ENGINES)' : ', stopped after the tests'}`);
      if (!keep) resolution.teardown.push(async () => void (await engines.stop(flavour)));
    }
    try {
      resolution.engines.push(await identify(r.url, 'embedded'));
    } catch (err) {
      resolution.missing.push(`embedded ${flavour} at ${r.url}: ${(err as Error).message}`);
    }
  }
  resolution.engines.sort(byEngineOrder);
  return resolution;
}
