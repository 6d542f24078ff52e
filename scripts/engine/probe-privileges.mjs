#!/usr/bin/env node
// Which privileges each near-dup command needs, found on the secured OpenSearch of scripts/engine
// (npm run engine:start -- opensearch-secured; the CLI from dist/, so npm run build first).
//
//   node scripts/engine/probe-privileges.mjs observe [SCENARIO...]   the actions each command asks for
//   node scripts/engine/probe-privileges.mjs remove  [SCENARIO...]   each command with exactly those, then
//                                                                    with each taken away in turn
//
// observe: runs each scenario as a user whose role allows everything, with the security plugin's audit log
// recording granted privileges (GRANTED_PRIVILEGES, switched on for the run and off again), and prints the
// cluster-level and index-level actions the user was granted. remove: for each scenario, a role with
// exactly the actions observe found (exact names, no wildcards, index actions on nd-secured-* only), then
// one run per action with that action taken away: the exit code, the first line of stderr, and whether a
// stack trace was printed. Results go to stdout as JSON lines; progress to stderr. For the notes
// (notes/secured-privileges.md), not for CI: it takes several minutes.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { credentialsPath } from './engines.mjs';
import { readCredentials, securedRequest, securityApi, userPassword } from './secured.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const CLI = path.resolve(here, '..', '..', 'dist', 'cli', 'main.js');
const credentials = readCredentials(process.env.OPENSEARCH_SECURED_CREDENTIALS ?? credentialsPath('opensearch-secured'));
const { url, caFile } = credentials;
const admin = credentials.users.admin;
const say = (line) => process.stderr.write(`probe: ${line}\n`);

// ---------------------------------------------------------------- the cluster, as admin

async function call(method, requestPath, body, auth = admin) {
  const answer = await securedRequest(url, { method, path: requestPath, body, auth, ca: readFileSync(caFile), timeoutMs: 60_000 });
  if (!answer) throw new Error(`${method} ${requestPath}: no answer`);
  return answer;
}

async function must(method, requestPath, body) {
  const answer = await call(method, requestPath, body);
  if (answer.status >= 300) throw new Error(`${method} ${requestPath}: ${answer.status} ${JSON.stringify(answer.body).slice(0, 300)}`);
  return answer.body;
}

/** Documents of a few families, each a text and edited copies of it: near-duplicates for dedup. */
function documents(count, offset = 0) {
  let seed = 7 + offset;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
  const words = Array.from({ length: 400 }, (_, i) => `word${i}`);
  const bases = Array.from({ length: 5 }, () => Array.from({ length: 120 }, () => words[Math.floor(random() * words.length)]));
  return Array.from({ length: count }, (_, i) => {
    const text = [...bases[i % bases.length]];
    for (let e = 0; e < Math.floor(i / bases.length) * 4; e++) text[Math.floor(random() * text.length)] = words[Math.floor(random() * words.length)];
    return { id: `d${i + offset}`, title: `document ${i + offset}`, body: text.join(' ') };
  });
}

async function freshIndex(index, docs = documents(20)) {
  await call('DELETE', `/${index}`);
  await must('PUT', `/${index}`, { settings: { number_of_shards: 1, number_of_replicas: 0 } });
  if (docs.length > 0) await bulk(index, docs);
}

async function bulk(index, docs) {
  const lines = docs.flatMap((d) => [JSON.stringify({ index: { _index: index, _id: d.id } }), JSON.stringify(d)]).join('\n') + '\n';
  const auth = `Basic ${Buffer.from(`${admin.username}:${admin.password}`).toString('base64')}`;
  const answer = await new Promise((resolve, reject) => {
    const req = https.request(new URL(`/${index}/_bulk?refresh=true`, url), { method: 'POST', ca: readFileSync(caFile), headers: { 'content-type': 'application/x-ndjson', authorization: auth } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    });
    req.on('error', reject);
    req.end(lines);
  });
  if (answer.errors) throw new Error(`bulk into ${index} failed: ${JSON.stringify(answer).slice(0, 300)}`);
}

// ---------------------------------------------------------------- near-dup, as a user

/** Runs the CLI as `user` (credentials and CA through the environment), in `cwd` (checkpoints, journals). */
function cli(user, args, cwd) {
  const env = { ...process.env, SEARCH_URL: url, SEARCH_USERNAME: user.username, SEARCH_PASSWORD: user.password, SEARCH_CA_FILE: caFile };
  const result = spawnSync(process.execPath, [CLI, ...args], { cwd, env, encoding: 'utf8', timeout: 180_000 });
  return { code: result.status, stdout: result.stdout ?? '', stderr: result.stderr ?? '' };
}

/** A long-running command (explore, proxy): started, asked `requests` once it listens, then stopped. */
async function served(user, args, cwd, port, requests) {
  const env = { ...process.env, SEARCH_URL: url, SEARCH_USERNAME: user.username, SEARCH_PASSWORD: user.password, SEARCH_CA_FILE: caFile };
  const child = spawn(process.execPath, [CLI, ...args, '--listen', `127.0.0.1:${port}`], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  const deadline = Date.now() + 30_000;
  while (!/listening|open http|http:\/\/127/.test(stderr + stdout) && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 100));
  const answers = child.exitCode === null ? await requests(`http://127.0.0.1:${port}`) : [];
  child.kill('SIGTERM');
  const code = await Promise.race([exited, new Promise((r) => setTimeout(() => r('killed'), 15_000))]);
  if (code === 'killed') child.kill('SIGKILL');
  return { code, stdout, stderr, answers };
}

function httpRequest(target, { method = 'GET', body, auth, type = 'application/json' } = {}) {
  return new Promise((resolve) => {
    const headers = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = type;
    if (auth) headers.authorization = `Basic ${Buffer.from(`${auth.username}:${auth.password}`).toString('base64')}`;
    const req = http.request(target, { method, headers, timeout: 60_000 }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed = text;
        try {
          parsed = JSON.parse(text);
        } catch {}
        resolve({ status: res.statusCode, body: parsed });
      });
    });
    req.on('error', (err) => resolve({ status: 0, body: err.message }));
    req.end(body);
  });
}

// ---------------------------------------------------------------- scenarios

const helper = () => ({ username: 'nd_admin', password: userPassword(admin.password, 'nd_admin') });
const ok = (r) => r.code === 0;

/**
 * Each scenario: prepare (as admin and nd_admin, so that the user's run starts from the same state every
 * time), run (as the user under test), and whether it succeeded.
 */
const SCENARIOS = {
  'init-new': {
    prepare: async (s) => void (await call('DELETE', `/${s.index}`)),
    run: (s, user) => cli(user, ['init', '--index', s.index], s.cwd),
  },
  'init-existing': {
    prepare: (s) => freshIndex(s.index),
    run: (s, user) => cli(user, ['init', '--index', s.index], s.cwd),
  },
  'init-template': {
    prepare: async () => {
      await call('DELETE', '/_index_template/nd-secured-probe-tpl');
      await call('DELETE', '/_component_template/nd-secured-probe-tpl-fields');
    },
    run: (s, user) => cli(user, ['init', '--template', 'nd-secured-probe-tpl-*', '--template-name', 'nd-secured-probe-tpl'], s.cwd),
  },
  annotate: {
    prepare: (s) => freshIndex(s.index),
    run: (s, user) => cli(user, ['annotate', '--index', s.index, '--field', 'body'], s.cwd),
  },
  'annotate-nothing-new': {
    prepare: async (s) => {
      await freshIndex(s.index);
      cli(helper(), ['annotate', '--index', s.index, '--field', 'body'], s.cwd);
    },
    run: (s, user) => cli(user, ['annotate', '--index', s.index, '--field', 'body'], s.cwd),
  },
  'annotate-force': {
    prepare: async (s) => {
      await freshIndex(s.index);
      cli(helper(), ['annotate', '--index', s.index, '--field', 'body'], s.cwd);
    },
    run: (s, user) => cli(user, ['annotate', '--index', s.index, '--field', 'body', '--force'], s.cwd),
  },
  'ingest-new': {
    prepare: async (s) => {
      await call('DELETE', `/${s.index}`);
      writeFileSync(path.join(s.cwd, 'in.ndjson'), documents(10).map((d) => JSON.stringify(d)).join('\n') + '\n');
    },
    run: (s, user) => cli(user, ['ingest', '--index', s.index, '--field', 'body', '--id-field', 'id', '--file', 'in.ndjson'], s.cwd),
  },
  'ingest-existing': {
    prepare: async (s) => {
      await freshIndex(s.index);
      cli(helper(), ['init', '--index', s.index], s.cwd);
      writeFileSync(path.join(s.cwd, 'in.ndjson'), documents(10, 100).map((d) => JSON.stringify(d)).join('\n') + '\n');
    },
    run: (s, user) => cli(user, ['ingest', '--index', s.index, '--field', 'body', '--id-field', 'id', '--file', 'in.ndjson'], s.cwd),
  },
  'similar-id': {
    prepare: async (s) => {
      await freshIndex(s.index);
      cli(helper(), ['annotate', '--index', s.index, '--field', 'body'], s.cwd);
    },
    run: (s, user) => cli(user, ['similar', '--index', s.index, '--id', 'd0'], s.cwd),
  },
  'similar-text': {
    prepare: async (s) => {
      await freshIndex(s.index);
      cli(helper(), ['annotate', '--index', s.index, '--field', 'body'], s.cwd);
    },
    run: (s, user) => cli(user, ['similar', '--index', s.index, '--text', documents(1)[0].body], s.cwd),
  },
  'similar-containment': {
    prepare: async (s) => {
      await freshIndex(s.index);
      cli(helper(), ['annotate', '--index', s.index, '--field', 'body'], s.cwd);
    },
    run: (s, user) => cli(user, ['similar', '--index', s.index, '--measure', 'containment', '--text', documents(1)[0].body.split(' ').slice(0, 60).join(' ')], s.cwd),
  },
  'dedup-full': {
    prepare: async (s) => {
      await freshIndex(s.index);
      cli(helper(), ['annotate', '--index', s.index, '--field', 'body'], s.cwd);
    },
    run: (s, user) => cli(user, ['dedup', '--index', s.index, '--full'], s.cwd),
  },
  'dedup-share': {
    prepare: async (s) => {
      await freshIndex(s.index);
      await call('DELETE', `/${s.index}-pairs`);
      cli(helper(), ['annotate', '--index', s.index, '--field', 'body'], s.cwd);
    },
    run: (s, user) => cli(user, ['dedup', '--index', s.index, '--share', '1/1', '--pairs-index', `${s.index}-pairs`], s.cwd),
  },
  'dedup-from-shares': {
    prepare: async (s) => {
      await freshIndex(s.index);
      await call('DELETE', `/${s.index}-pairs`);
      cli(helper(), ['annotate', '--index', s.index, '--field', 'body'], s.cwd);
      cli(helper(), ['dedup', '--index', s.index, '--share', '1/1', '--pairs-index', `${s.index}-pairs`], s.cwd);
    },
    run: (s, user) => cli(user, ['dedup', '--index', s.index, '--from-shares', '1', '--pairs-index', `${s.index}-pairs`], s.cwd),
  },
  'dedup-incremental': {
    prepare: async (s) => {
      await freshIndex(s.index);
      cli(helper(), ['annotate', '--index', s.index, '--field', 'body'], s.cwd);
      cli(helper(), ['dedup', '--index', s.index, '--full'], s.cwd);
      await bulk(s.index, documents(5, 200));
      cli(helper(), ['annotate', '--index', s.index, '--field', 'body'], s.cwd);
    },
    run: (s, user) => cli(user, ['dedup', '--index', s.index], s.cwd),
  },
  evaluate: {
    prepare: async (s) => {
      await freshIndex(s.index);
      cli(helper(), ['annotate', '--index', s.index, '--field', 'body'], s.cwd);
    },
    run: (s, user) => cli(user, ['evaluate', '--index', s.index, '--field', 'body', '--out', 'report', '--sample', '10'], s.cwd),
  },
  explore: {
    prepare: async (s) => {
      await freshIndex(s.index);
      cli(helper(), ['annotate', '--index', s.index, '--field', 'body'], s.cwd);
      cli(helper(), ['dedup', '--index', s.index, '--full'], s.cwd);
    },
    run: (s, user) =>
      served(user, ['explore', '--index', s.index, '--field', 'body'], s.cwd, 9287, async (base) => {
        const answers = [];
        const get = async (p) => {
          const a = await httpRequest(`${base}${p}`);
          answers.push({ path: p, status: a.status, error: a.status === 200 ? undefined : JSON.stringify(a.body).slice(0, 200) });
          return a.body;
        };
        const clusters = await get('/api/clusters?size=10');
        const cluster = clusters?.clusters?.[0]?.clusterId;
        if (cluster) await get(`/api/clusters/${encodeURIComponent(cluster)}/members?size=10`);
        await get('/api/documents/d0');
        await get('/api/documents/d0/similar');
        await get('/api/pair?a=d0&b=d5');
        return answers;
      }),
    ok: (r) => r.answers.length >= 4 && r.answers.every((a) => a.status === 200),
  },
  proxy: {
    prepare: async (s) => void (await call('DELETE', `/${s.index}`)),
    run: (s, user) =>
      served({ username: '', password: '' }, ['proxy', '--url', url, '--ca-file', caFile, '--index', s.index, '--field', 'body'], s.cwd, 9288, async (base) => {
        const body = documents(4).flatMap((d) => [JSON.stringify({ index: { _index: s.index, _id: d.id } }), JSON.stringify(d)]).join('\n') + '\n';
        const answers = [];
        const b = await httpRequest(`${base}/_bulk`, { method: 'POST', body, auth: user, type: 'application/x-ndjson' });
        answers.push({ path: 'POST /_bulk', status: b.status, error: b.status === 200 && b.body?.errors === false ? undefined : JSON.stringify(b.body).slice(0, 300) });
        const d = await httpRequest(`${base}/${s.index}/_doc/one`, { method: 'PUT', body: JSON.stringify({ body: documents(1)[0].body }), auth: user });
        answers.push({ path: 'PUT /_doc/one', status: d.status, error: d.status < 300 ? undefined : JSON.stringify(d.body).slice(0, 300) });
        return answers;
      }),
    ok: (r) => r.answers.length === 2 && r.answers.every((a) => a.error === undefined),
  },
};

// ---------------------------------------------------------------- the audit log

async function setGrantedAudit(on) {
  const current = (await securityApi(url, { path: 'audit', admin, ca: readFileSync(caFile) })).body.config;
  const categories = (list) => (on ? list.filter((c) => c !== 'GRANTED_PRIVILEGES') : [...new Set([...list, 'GRANTED_PRIVILEGES'])]);
  current.audit.disabled_rest_categories = categories(current.audit.disabled_rest_categories);
  current.audit.disabled_transport_categories = categories(current.audit.disabled_transport_categories);
  current.audit.ignore_users = on ? [...new Set([...current.audit.ignore_users, admin.username, 'nd_admin'])] : current.audit.ignore_users.filter((u) => u !== admin.username && u !== 'nd_admin');
  const answer = await securityApi(url, { method: 'PUT', path: 'audit/config', body: current, admin, ca: readFileSync(caFile) });
  if (answer?.status !== 200) throw new Error(`PUT audit/config: ${answer?.status} ${JSON.stringify(answer?.body)}`);
}

async function auditEvents(user, since) {
  await new Promise((r) => setTimeout(r, 2500)); // the audit log is written asynchronously
  await call('POST', '/security-auditlog-*/_refresh');
  const answer = await call('POST', '/security-auditlog-*/_search', {
    size: 10000,
    sort: [{ '@timestamp': 'asc' }],
    query: { bool: { filter: [{ range: { '@timestamp': { gte: new Date(since).toISOString() } } }, { match_phrase: { audit_request_effective_user: user } }] } },
  });
  return (answer.body?.hits?.hits ?? []).map((h) => h._source);
}

const INDEX_REQUESTS_WITHOUT_NAMES = new Set(['PutMappingRequest']);

/** Granted and missing actions, cluster-level (no index named) apart from index-level (with the indices). */
function summarize(events) {
  const cluster = new Set();
  const index = new Map();
  const missing = new Map();
  for (const e of events) {
    const privilege = e.audit_request_privilege;
    if (!privilege) continue;
    const indices = [...new Set([...(e.audit_trace_resolved_indices ?? []), ...(e.audit_trace_indices ?? [])])].filter((i) => i && !i.startsWith('security-auditlog'));
    if (e.audit_category === 'MISSING_PRIVILEGES') missing.set(privilege, indices.length > 0 ? 'index' : 'cluster');
    if (e.audit_category !== 'GRANTED_PRIVILEGES') continue;
    // A put mapping names its index by UUID, which the audit log does not resolve: index-level all the same.
    if (indices.length === 0 && !INDEX_REQUESTS_WITHOUT_NAMES.has(e.audit_transport_request_type)) cluster.add(privilege);
    else {
      const set = index.get(privilege) ?? new Set();
      for (const i of indices) set.add(i);
      index.set(privilege, set);
    }
  }
  return {
    cluster: [...cluster].sort(),
    index: Object.fromEntries([...index].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => [k, [...v].sort()])),
    missing: [...missing.keys()].sort(),
    missingLevels: Object.fromEntries(missing),
  };
}

// ---------------------------------------------------------------- runs

async function setUser(name, role) {
  const ca = readFileSync(caFile);
  for (const [apiPath, body] of [
    [`roles/${name}`, role],
    [`internalusers/${name}`, { password: userPassword(admin.password, name), opendistro_security_roles: [name] }],
  ]) {
    const answer = await securityApi(url, { method: 'PUT', path: apiPath, body, admin, ca });
    if (!answer || answer.status >= 300) throw new Error(`PUT ${apiPath}: ${answer?.status} ${JSON.stringify(answer?.body)}`);
  }
  return { username: name, password: userPassword(admin.password, name) };
}

function outcome(scenario, result) {
  const text = `${result.stderr}`;
  const succeeded = (scenario.ok ?? ok)(result);
  const firstLine = text.split('\n').find((l) => l.trim() !== '' && !/^near-dup: no --url given/.test(l)) ?? '';
  return {
    succeeded,
    code: result.code,
    stackTrace: /\n\s+at [^\n]+:\d+:\d+\)?/.test(text),
    stderr: firstLine.slice(0, 400),
    answers: result.answers,
  };
}

async function runScenario(name, user, { audit = false } = {}) {
  const scenario = SCENARIOS[name];
  const cwd = mkdtempSync(path.join(os.tmpdir(), `nd-probe-${name}-`));
  const s = { index: `nd-secured-probe-${name}`, cwd };
  try {
    await scenario.prepare(s);
    const began = Date.now();
    const raw = await scenario.run(s, user);
    const result = outcome(scenario, raw);
    // What the engine refused, as its audit log names it, and as its answers name it: a bulk item is
    // refused for the shard request and the item's own action together ("no permissions for
    // [indices:data/write/bulk[s], indices:data/write/update]"), which the audit log records as the first only.
    if (audit) {
      const summary = summarize(await auditEvents(user.username, began - 1000));
      const errorFiles = readdirSync(cwd).filter((f) => f.startsWith('near-dup-errors-')).map((f) => readFileSync(path.join(cwd, f), 'utf8'));
      const said = [raw.stdout, raw.stderr, JSON.stringify(raw.answers ?? []), ...errorFiles].join('\n');
      const named = new Set([...said.matchAll(/no permissions for \[((?:[^[\]]|\[[^\]]*\])*)\]/g)].flatMap((m) => m[1].split(/,\s*/)));
      result.refused = [...new Set([...summary.missing, ...named])].sort();
      result.refusedLevels = { ...Object.fromEntries([...named].map((a) => [a, 'index'])), ...summary.missingLevels };
    }
    return { began, result };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}

async function observe(names) {
  const user = await setUser('nd_probe', { cluster_permissions: ['*'], index_permissions: [{ index_patterns: ['*'], allowed_actions: ['*'] }] });
  await setGrantedAudit(true);
  const found = {};
  try {
    for (const name of names) {
      say(`observe ${name}`);
      const { began, result } = await runScenario(name, user);
      const summary = summarize(await auditEvents(user.username, began - 1000));
      found[name] = summary;
      process.stdout.write(`${JSON.stringify({ phase: 'observe', scenario: name, ...result, ...summary })}\n`);
    }
  } finally {
    await setGrantedAudit(false);
  }
  return found;
}

async function remove(names, found) {
  for (const name of names) {
    const cluster = [...found[name].cluster];
    const indexActions = Object.keys(found[name].index);
    const role = (dropped) => ({
      cluster_permissions: cluster.filter((a) => a !== dropped),
      index_permissions: [{ index_patterns: ['nd-secured-*'], allowed_actions: indexActions.filter((a) => a !== dropped) }],
    });
    // The audit log does not record every granted action (bulk shard requests, for one), nor always the
    // level at which one is checked: what the engine refuses with exactly the observed actions is added
    // (or moved from index to cluster level), until the scenario succeeds.
    let all;
    for (let attempt = 1; ; attempt++) {
      say(`remove ${name}: exactly ${cluster.length + indexActions.length} actions (attempt ${attempt})`);
      all = await runScenario(name, await setUser('nd_probe_min', role(undefined)), { audit: true });
      const refused = all.result.refused ?? [];
      if (all.result.succeeded || refused.length === 0 || attempt === 4) break;
      for (const privilege of refused) {
        if (indexActions.includes(privilege)) {
          indexActions.splice(indexActions.indexOf(privilege), 1);
          cluster.push(privilege);
        } else if (cluster.includes(privilege)) {
          if (all.result.refusedLevels[privilege] !== 'index') continue; // refused along with another: that one is the cause
          cluster.splice(cluster.indexOf(privilege), 1);
          indexActions.push(privilege);
        } else (all.result.refusedLevels[privilege] === 'index' ? indexActions : cluster).push(privilege);
      }
    }
    process.stdout.write(`${JSON.stringify({ phase: 'exact', scenario: name, cluster, index: indexActions, ...all.result })}\n`);
    for (const dropped of [...cluster, ...indexActions]) {
      say(`remove ${name}: without ${dropped}`);
      const user = await setUser('nd_probe_min', role(dropped));
      const run = await runScenario(name, user, { audit: true });
      process.stdout.write(`${JSON.stringify({ phase: 'without', scenario: name, dropped, level: cluster.includes(dropped) ? 'cluster' : 'index', ...run.result })}\n`);
    }
  }
}

async function main([mode = 'observe', ...only]) {
  const names = only.length > 0 ? only : Object.keys(SCENARIOS);
  for (const name of names) if (!SCENARIOS[name]) throw new Error(`no scenario "${name}": ${Object.keys(SCENARIOS).join(', ')}`);
  const found = await observe(names);
  if (mode === 'remove') await remove(names, found);
  for (const name of names) await call('DELETE', `/nd-secured-probe-${name}`);
  await call('DELETE', '/_index_template/nd-secured-probe-tpl');
  await call('DELETE', '/_component_template/nd-secured-probe-tpl-fields');
  for (const name of ['nd_probe', 'nd_probe_min']) {
    for (const kind of ['internalusers', 'roles']) await securityApi(url, { method: 'DELETE', path: `${kind}/${name}`, admin, ca: readFileSync(caFile) });
  }
}

main(process.argv.slice(2)).catch((err) => {
  process.stderr.write(`probe: ${err.stack ?? err}\n`);
  process.exitCode = 1;
});
