// The secured OpenSearch of scripts/engine ("opensearch-secured"): OpenSearch 2.19.1's integ-test
// distribution with its security plugin (org.opensearch.plugin:opensearch-security, a zip on Maven
// Central), the plugin's demo configuration (demo certificates, TLS on HTTP and transport, the admin user
// with a password of ours), and the test users and roles of secured-users.json created through the
// security REST API. engines.mjs unpacks, starts and stops it like its other distributions; this module
// installs the plugin into the unpacked distribution, gives the node its security settings, and
// provisions the users.
//
// Passwords: the admin password is made once per install and kept beside the distribution (mode 0600);
// each test user's password is derived from it (HMAC), so every checkout that reuses the same engine
// gets the same passwords without a shared secret file. They are written, with the CA's path, to
// .engines/opensearch-secured.credentials.json (mode 0600), which test/secured reads.
import { spawnSync } from 'node:child_process';
import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
/** Users and roles: one data file for the engine script, the tests and the docs. */
export const DEFINITIONS_FILE = path.join(here, 'secured-users.json');

export function securedDefinitions() {
  return JSON.parse(readFileSync(DEFINITIONS_FILE, 'utf8'));
}

export class SecuredError extends Error {
  name = 'SecuredError';
}

// ---------------------------------------------------------------- install

const ADMIN_PASSWORD_FILE = '.near-dup-admin-password';

/** The demo CA that signed the node's certificate: what clients pass as --ca-file. */
export function caFileOf(home) {
  return path.join(home, 'config', 'root-ca.pem');
}

/** The admin password the distribution at `home` was installed with, or undefined when not installed. */
export function adminPasswordOf(home) {
  try {
    return readFileSync(path.join(home, ADMIN_PASSWORD_FILE), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * A password the security plugin's validator takes as strong (length, classes, no dictionary words),
 * with characters that need escaping in URLs and shells, so that the tests see them handled.
 */
function strongPassword(random) {
  return `Nd${random.toString('base64url').replace(/[-_]/g, 'x')}#7:q@Z%`;
}

/** A test user's password: derived from the admin password, so the same on every checkout. */
export function userPassword(adminPassword, username) {
  return strongPassword(createHmac('sha256', adminPassword).update(`near-dup-test-user:${username}`).digest().subarray(0, 15));
}

function run(command, args, options, what) {
  const result = spawnSync(command, args, { encoding: 'utf8', ...options });
  if (result.error) throw new SecuredError(`${what}: ${result.error.message}`);
  if (result.status !== 0) {
    const output = `${result.stdout ?? ''}\n${result.stderr ?? ''}`.trim().split('\n').slice(-25).join('\n');
    throw new SecuredError(`${what} failed (exit ${result.status}):\n${output}`);
  }
  return result.stdout;
}

/**
 * Installs the security plugin from its zip into the distribution at `home` and runs the plugin's demo
 * configuration installer (-y: no questions, -i: the security index is made from the demo files at the
 * first start, -s: nothing changed when opensearch.yml already holds the demo settings) with an admin
 * password of ours. Runs as the caller (root on CI): the node itself runs on a copy of the config.
 */
export function installSecurity({ home, pluginZip, javaHome, log = () => undefined }) {
  const env = { ...process.env, OPENSEARCH_JAVA_HOME: javaHome, JAVA_HOME: javaHome };
  if (!existsSync(path.join(home, 'plugins', 'opensearch-security', 'plugin-descriptor.properties'))) {
    log(`installing the security plugin from ${pluginZip}`);
    run(path.join(home, 'bin', 'opensearch-plugin'), ['install', '--batch', `file://${pluginZip}`], { env }, 'opensearch-plugin install');
  }
  const password = adminPasswordOf(home) ?? strongPassword(randomBytes(18));
  log('running the security demo configuration (demo certificates, TLS on HTTP, the admin password of the script)');
  const installer = path.join(home, 'plugins', 'opensearch-security', 'tools', 'install_demo_configuration.sh');
  run('bash', [installer, '-y', '-i', '-s'], { env: { ...env, OPENSEARCH_INITIAL_ADMIN_PASSWORD: password }, cwd: home }, 'install_demo_configuration.sh');
  if (!existsSync(caFileOf(home)) || securitySettings(home).length === 0) {
    throw new SecuredError(`the demo configuration left no root-ca.pem or no security settings in ${path.join(home, 'config')}`);
  }
  writeFileSync(path.join(home, ADMIN_PASSWORD_FILE), `${password}\n`, { mode: 0o600 });
  chmodSync(path.join(home, ADMIN_PASSWORD_FILE), 0o600);
}

/** The settings the demo configuration added to opensearch.yml (TLS, demo certificates, admin DN...). */
export function securitySettings(home) {
  const text = readFileSync(path.join(home, 'config', 'opensearch.yml'), 'utf8');
  const match = /#{4,} Start OpenSearch Security Demo Configuration #{4,}\n([\s\S]*?)#{4,} End OpenSearch Security Demo Configuration/.exec(text);
  return match ? match[1].split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#')) : [];
}

// ---------------------------------------------------------------- client certificates (mutual TLS)

/** The user a client certificate of the tests authenticates as (its CN), mapped to the near_dup role. */
export const CERT_USER = 'nd_cert';

/**
 * A CA of the tests' own and a client certificate it signed (CN=nd_cert), made once beside the distribution
 * with openssl (the demo's root CA key is not shipped): { ca, cert, key } paths.
 */
export function clientCertificateFiles(home) {
  const dir = path.join(home, 'near-dup-client');
  const files = { ca: path.join(dir, 'ca.pem'), cert: path.join(dir, 'client.pem'), key: path.join(dir, 'client.key') };
  if (existsSync(files.key) && existsSync(files.cert) && existsSync(files.ca)) return files;
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ssl = (...args) => run('openssl', args, { cwd: dir }, `openssl ${args[0]}`);
  const rsa = ['-newkey', 'rsa:2048', '-nodes'];
  ssl('req', '-x509', ...rsa, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '3650', '-subj', '/CN=near-dup test client CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  ssl('req', ...rsa, '-keyout', 'client.key', '-out', 'client.csr', '-subj', `/CN=${CERT_USER}/OU=near-dup tests`);
  writeFileSync(path.join(dir, 'client.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n');
  ssl('x509', '-req', '-in', 'client.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'client.pem', '-days', '3650', '-extfile', 'client.ext');
  chmodSync(files.key, 0o600);
  return files;
}

/**
 * The run's copy of the demo configuration made to test what near-dup's connection options do: the node
 * presents its CA in its HTTPS chain (as Elasticsearch does, so that --ca-fingerprint finds it), trusts the
 * tests' client CA, asks for a client certificate without requiring one, and authenticates by certificate
 * (CN) before HTTP basic. Returns the opensearch.yml lines to add.
 */
export function configureTlsForTests(configDir, home) {
  const client = clientCertificateFiles(home);
  const rootCa = readFileSync(path.join(configDir, 'root-ca.pem'), 'utf8');
  const nodeCert = path.join(configDir, 'esnode.pem');
  const leaf = readFileSync(nodeCert, 'utf8');
  if (!leaf.includes(rootCa.trim())) writeFileSync(nodeCert, `${leaf.trimEnd()}\n${rootCa}`);
  writeFileSync(path.join(configDir, 'root-ca.pem'), `${rootCa.trimEnd()}\n${readFileSync(client.ca, 'utf8')}`);
  const config = path.join(configDir, 'opensearch-security', 'config.yml');
  const text = readFileSync(config, 'utf8');
  const enabled = text.replace(/(clientcert_auth_domain:\s*\n(?:\s+.*\n)*?\s+http_enabled:\s*)false/, '$1true');
  if (enabled === text && !/clientcert_auth_domain:\s*\n(?:\s+.*\n)*?\s+http_enabled:\s*true/.test(text)) {
    throw new SecuredError(`no clientcert_auth_domain to enable in ${config}`);
  }
  writeFileSync(config, enabled);
  return ['plugins.security.ssl.http.clientauth_mode: OPTIONAL'];
}

// ---------------------------------------------------------------- HTTPS

/** One request over HTTPS, trusting `ca`, as `auth`; resolves to { status, body } or undefined when nothing answers. */
export function securedRequest(url, { method = 'GET', path: requestPath = '/', body, auth, ca, timeoutMs = 10_000 } = {}) {
  const target = new URL(requestPath, url);
  const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
  return new Promise((resolve) => {
    const req = https.request(
      target,
      {
        method,
        ca,
        timeout: timeoutMs,
        headers: {
          accept: 'application/json',
          ...(payload ? { 'content-type': 'application/json', 'content-length': payload.length } : {}),
          ...(auth ? { authorization: `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}` } : {}),
        },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed;
          try {
            parsed = JSON.parse(text);
          } catch {
            parsed = text;
          }
          resolve({ status: res.statusCode, headers: res.headers, body: parsed });
        });
        res.on('error', () => resolve(undefined));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end(payload);
  });
}

// ---------------------------------------------------------------- users and roles

const API = '/_plugins/_security/api';

/**
 * A request to the security REST API as `admin`. Changes to the security configuration are serialized by
 * the engine: one made while another is applied (two test runs provisioning at once) is answered 409 or
 * 5xx, and is tried again.
 */
export async function securityApi(url, { method = 'GET', path: apiPath, body, admin, ca }) {
  for (let attempt = 1; ; attempt++) {
    const answer = await securedRequest(url, { method, path: `${API}/${apiPath}`, body, auth: admin, ca });
    const again = !answer || answer.status === 409 || answer.status >= 500;
    if (!again || attempt === 8) return answer;
    await new Promise((r) => setTimeout(r, 250 * attempt));
  }
}

async function put(url, ca, admin, apiPath, body) {
  const answer = await securityApi(url, { method: 'PUT', path: apiPath, body, admin, ca });
  if (!answer) throw new SecuredError(`PUT ${API}/${apiPath}: no answer from ${url}`);
  if (answer.status !== 200 && answer.status !== 201) {
    throw new SecuredError(`PUT ${API}/${apiPath}: ${answer.status} ${typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body)}`);
  }
}

/**
 * Creates (or updates to what secured-users.json says) the test roles and users on a secured OpenSearch,
 * through the security REST API as `admin`, checks that each user can log in with its password and has
 * its roles, and returns the credentials: { url, caFile, users: { admin, <name>: { username, password,
 * roles } } }. Idempotent. With `emptyOwnIndex` (the demo configuration's clusters), the demo's own_index
 * role mapping, which gives every user full access to an index named like the user (bulk, scroll and mget
 * included) and so would hide missing privileges, is emptied.
 */
export async function provision({ url, caFile, admin, definitions = securedDefinitions(), emptyOwnIndex = true, clientCertificate }) {
  const ca = readFileSync(caFile);
  const who = await securedRequest(url, { path: '/_plugins/_security/authinfo', auth: admin, ca });
  if (!who) throw new SecuredError(`nothing answers over HTTPS at ${url} (trusting ${caFile})`);
  if (who.status !== 200) throw new SecuredError(`${url} refused the admin user "${admin.username}": ${who.status}`);

  if (emptyOwnIndex) {
    const own = await securityApi(url, { path: 'rolesmapping/own_index', admin, ca });
    const mapping = own?.status === 200 ? own.body?.own_index : undefined;
    if (mapping && (mapping.users?.length || mapping.backend_roles?.length || mapping.hosts?.length)) {
      await put(url, ca, admin, 'rolesmapping/own_index', { users: [], backend_roles: [], hosts: [], description: 'emptied by near-dup scripts/engine: it would hide missing privileges' });
    }
  }
  for (const [name, role] of Object.entries(definitions.roles)) {
    await put(url, ca, admin, `roles/${encodeURIComponent(name)}`, role);
  }
  const users = { admin: { username: admin.username, password: admin.password, roles: ['all_access'] } };
  for (const [name, user] of Object.entries(definitions.users)) {
    const password = userPassword(admin.password, name);
    await put(url, ca, admin, `internalusers/${encodeURIComponent(name)}`, { password, opendistro_security_roles: user.roles, description: user.description });
    users[name] = { username: name, password, roles: user.roles };
  }
  for (const user of Object.values(users)) {
    const info = await securedRequest(url, { path: '/_plugins/_security/authinfo', auth: user, ca });
    const missing = user.roles.filter((role) => !info?.body?.roles?.includes(role));
    if (info?.status !== 200 || missing.length > 0) {
      throw new SecuredError(`user "${user.username}" cannot log in at ${url} with its roles (${info?.status ?? 'no answer'}; missing ${missing.join(', ') || 'none'})`);
    }
  }
  // A client certificate authenticates as its CN, a user of no internal database: its role comes by mapping.
  let certUser;
  if (clientCertificate) {
    await put(url, ca, admin, `rolesmapping/${encodeURIComponent(definitions.certUserRole ?? 'near_dup')}`, { users: [CERT_USER], backend_roles: [], hosts: [] });
    certUser = { username: CERT_USER, role: definitions.certUserRole ?? 'near_dup', cert: clientCertificate.cert, key: clientCertificate.key };
  }
  return { url, caFile, users, certUser };
}

/** Writes the credentials where only their owner can read them. */
export function writeCredentials(file, credentials) {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(credentials, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}

export function readCredentials(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}
