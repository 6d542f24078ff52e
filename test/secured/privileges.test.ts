// Each command as a user whose role is the near_dup role (scripts/engine/secured-users.json) with one
// privilege taken away, in turn, for every privilege the command needs (issue 34 item 2): the command fails
// (exit 1) in one line that names the privilege as the engine named it and says what to grant, prints no
// stack trace, and leaves the index, the checkpoint and the journal as they were. One small index per
// command, prepared once: a refusal changes nothing, so the next one starts from the same state (and a
// refusal that did change something is caught there). The roles and users are made through the security
// REST API for this file and removed after it.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript module without type declarations
import { securedDefinitions, securityApi } from '../../scripts/engine/secured.mjs';
import { fixtureSample } from '../support/corpus.js';
import { type CliResult, describeSecured, filesUnder, hasStackTrace, type SecuredContext } from './harness.js';
import type { SecuredUser } from './secured-types.js';

const docs = fixtureSample(4).slice(0, 12);

interface Role {
  cluster_permissions: string[];
  index_permissions: Array<{ index_patterns: string[]; allowed_actions: string[] }>;
}

/** The near_dup role with its wildcards spelt out: every action one that can be taken away alone. */
function nearDupRole(): Role {
  const role = securedDefinitions().roles.near_dup as Role;
  const spelt = (a: string) =>
    a === 'indices:admin/refresh*'
      ? ['indices:admin/refresh', 'indices:admin/refresh[s]']
      : a === 'indices:admin/mappings/fields/get*'
        ? ['indices:admin/mappings/fields/get', 'indices:admin/mappings/fields/get[index]']
        : [a];
  return {
    cluster_permissions: role.cluster_permissions.flatMap(spelt),
    index_permissions: role.index_permissions.map((g) => ({ ...g, allowed_actions: g.allowed_actions.flatMap(spelt) })),
  };
}

function without(role: Role, action: string): Role {
  return {
    cluster_permissions: role.cluster_permissions.filter((a) => a !== action),
    index_permissions: role.index_permissions.map((g) => ({ ...g, allowed_actions: g.allowed_actions.filter((a) => a !== action) })),
  };
}

/** What must hold still across a refused run: the index (its mapping and every document) and the files of the working folder. */
interface State {
  index: string;
  files: string;
}

interface Scenario {
  name: string;
  /** The privileges the command needs (docs/secured.md): each is taken away in turn. */
  needs: string[];
  /** Makes the index and the files the command starts from (as admin), once. */
  prepare(ctx: SecuredContext, index: string): Promise<void>;
  /** Brings a cell's leftovers back to the prepared state, where the command cannot refuse before changing something (said in `later`). */
  reset?(ctx: SecuredContext, index: string): Promise<void>;
  args(ctx: SecuredContext, index: string): string[];
  /**
   * Privileges the command can only find missing once it writes (the engine refuses the first bulk's items):
   * then it must still stop there, in one line naming the privilege, with no document of its stored.
   */
  later?: string[];
}

const MAIN = 'cluster:monitor/main';

async function bulkAsAdmin(ctx: SecuredContext, index: string): Promise<void> {
  await ctx.admin.request('PUT', `/${index}`, { settings: { number_of_shards: 1, number_of_replicas: 0 } });
  const lines = docs.flatMap((d) => [{ index: { _index: index, _id: d.id } }, { family: d.family, text: d.text }]);
  expect((await ctx.admin.bulk(lines)).errors).toBe(false);
  await ctx.admin.refresh(index);
}

function asAdmin(ctx: SecuredContext, args: string[]): void {
  const result = ctx.cli(ctx.user('nd_admin'), args);
  expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(0);
}

/** The index made and annotated by the admin. */
async function annotatedAsAdmin(ctx: SecuredContext, index: string): Promise<void> {
  await bulkAsAdmin(ctx, index);
  asAdmin(ctx, ['annotate', '--index', index, '--field', 'text']);
}

/** What a job that scans the index and writes partial updates needs (annotate --force, dedup --full). */
const SCANS_AND_UPDATES = [
  MAIN,
  'indices:data/read/scroll',
  'indices:data/write/bulk',
  'indices:data/read/search',
  'indices:admin/mappings/get',
  'indices:monitor/settings/get',
  'indices:admin/refresh',
  'indices:admin/refresh[s]',
  'indices:data/write/bulk[s]',
  'indices:data/write/update',
];

const SCENARIOS: Scenario[] = [
  {
    name: 'init-new',
    needs: [MAIN, 'indices:admin/index_template/get', 'indices:admin/create', 'indices:admin/mappings/get'],
    prepare: async (ctx, index) => void (await ctx.admin.deleteIndex(index)),
    reset: async (ctx, index) => void (await ctx.admin.deleteIndex(index)),
    args: (_ctx, index) => ['init', '--index', index],
  },
  {
    name: 'init-existing',
    needs: [MAIN, 'indices:admin/mapping/put', 'indices:admin/mappings/get'],
    prepare: bulkAsAdmin,
    args: (_ctx, index) => ['init', '--index', index],
  },
  {
    // A first run on an index: it adds the fields to the mapping.
    name: 'annotate',
    needs: [
      MAIN,
      'indices:data/read/scroll',
      'indices:data/write/bulk',
      'indices:data/read/search',
      'indices:admin/mappings/get',
      'indices:admin/mapping/put',
      'indices:monitor/settings/get',
      'indices:admin/refresh',
      'indices:admin/refresh[s]',
      'indices:data/write/bulk[s]',
      'indices:data/write/update',
    ],
    prepare: bulkAsAdmin,
    args: (_ctx, index) => ['annotate', '--index', index, '--field', 'text'],
  },
  {
    // A complete checkpoint is there: a refused run leaves it complete.
    name: 'annotate-force',
    needs: SCANS_AND_UPDATES,
    prepare: annotatedAsAdmin,
    args: (_ctx, index) => ['annotate', '--index', index, '--field', 'text', '--force'],
  },
  {
    name: 'ingest-new',
    needs: [
      MAIN,
      'indices:admin/index_template/get',
      'indices:data/write/bulk',
      'indices:data/read/mget',
      'indices:admin/create',
      'indices:admin/mappings/get',
      'indices:admin/mapping/put',
      'indices:admin/refresh',
      'indices:admin/refresh[s]',
      'indices:data/read/mget[shard]',
      'indices:data/write/bulk[s]',
      'indices:data/write/index',
    ],
    // The index is made before a document goes in: what is refused after that leaves it made, empty. The
    // documents' own fields are mapped by their first bulk (checked as mapping/put): found there.
    later: [
      'indices:data/write/bulk',
      'indices:data/read/mget',
      'indices:admin/mapping/put',
      'indices:admin/refresh',
      'indices:admin/refresh[s]',
      'indices:data/read/mget[shard]',
      'indices:data/write/bulk[s]',
      'indices:data/write/index',
    ],
    prepare: async (ctx, index) => {
      await ctx.admin.deleteIndex(index);
      writeFileSync(path.join(ctx.dir, 'ingest.ndjson'), docs.map((d) => JSON.stringify({ id: d.id, text: d.text })).join('\n') + '\n');
    },
    reset: async (ctx, index) => void (await ctx.admin.deleteIndex(index)),
    args: (_ctx, index) => ['ingest', '--index', index, '--field', 'text', '--id-field', 'id', '--file', 'ingest.ndjson'],
  },
  {
    name: 'similar',
    needs: [MAIN, 'indices:data/read/search'],
    prepare: annotatedAsAdmin,
    args: (_ctx, index) => ['similar', '--index', index, '--id', docs[0].id],
  },
  {
    // A complete run is recorded (its state file): a refused run leaves it, and starts no journal. Its lock
    // (near-dup-locks, made by the admin's run in prepare) is read with _mget and taken with _create.
    name: 'dedup-full',
    needs: [...SCANS_AND_UPDATES, 'indices:data/read/mget', 'indices:data/read/mget[shard]', 'indices:data/write/index'],
    prepare: async (ctx, index) => {
      await annotatedAsAdmin(ctx, index);
      asAdmin(ctx, ['dedup', '--index', index, '--full']);
    },
    args: (_ctx, index) => ['dedup', '--index', index, '--full'],
  },
  {
    name: 'evaluate',
    needs: [MAIN, 'indices:data/read/msearch', 'indices:data/read/mtv', 'indices:data/read/search'],
    prepare: annotatedAsAdmin,
    args: (ctx, index) => ['evaluate', '--index', index, '--field', 'text', '--out', path.join(ctx.dir, 'report'), '--sample', '8'],
  },
];

/** Where two states first differ, for the failure message. */
function difference(before: string, after: string): string {
  let i = 0;
  while (i < before.length && before[i] === after[i]) i++;
  return `at ${i}: was ...${before.slice(Math.max(0, i - 120), i + 120)}... now ...${after.slice(Math.max(0, i - 120), i + 120)}...`;
}

/** The user whose role lacks `action`, by action (made in beforeAll). */
const lacking = new Map<string, SecuredUser>();
const slug = (action: string) => action.replace(/[^a-z0-9]+/gi, '_').replace(/^_|_$/g, '').toLowerCase();

describeSecured('each privilege of the near_dup role taken away in turn', (ctx) => {
  const full = nearDupRole();
  const actions = [...new Set(SCENARIOS.flatMap((s) => s.needs))];
  const api = (method: string, apiPath: string, body?: unknown) =>
    securityApi(ctx.engine.url, { method, path: apiPath, body, admin: ctx.user('admin'), ca: readFileSync(ctx.engine.caFile) });
  const password = () => `${ctx.user('nd_user').password}-minus`;

  beforeAll(async () => {
    const missing = actions.filter((a) => !full.cluster_permissions.includes(a) && !full.index_permissions.some((g) => g.allowed_actions.includes(a)));
    expect(missing, 'privileges a command needs that the near_dup role does not hold').toEqual([]);
    for (const action of actions) {
      const name = `nd_minus_${slug(action)}`;
      const role = await api('PUT', `roles/${name}`, without(full, action));
      expect(role?.status, `PUT roles/${name}: ${JSON.stringify(role?.body)}`).toBeLessThan(300);
      const user = await api('PUT', `internalusers/${name}`, { password: password(), opendistro_security_roles: [name] });
      expect(user?.status, `PUT internalusers/${name}: ${JSON.stringify(user?.body)}`).toBeLessThan(300);
      lacking.set(action, { username: name, password: password(), roles: [name] });
    }
  });

  afterAll(async () => {
    for (const [, user] of lacking) {
      await api('DELETE', `internalusers/${user.username}`).catch(() => undefined);
      await api('DELETE', `roles/${user.username}`).catch(() => undefined);
    }
  });

  /** The index (mapping and documents, or its absence) and the files of the working folder named after it, as text. */
  async function state(index: string): Promise<State> {
    // This command's files: its checkpoint, its dedup state and journal, its errors file (each named after the index).
    const files = JSON.stringify([...filesUnder(ctx.dir)].filter(([f]) => path.basename(f).includes(index)).sort());
    if (!(await ctx.admin.indexExists(index))) return { index: 'absent', files };
    await ctx.admin.refresh(index);
    const mapping = await ctx.admin.getMapping(index);
    const found = await ctx.admin.search(index, { size: 100, sort: [{ _id: 'asc' }], version: true, query: { match_all: {} } });
    const documents = found.hits.hits.map((h) => ({ id: h._id, version: (h as { _version?: number })._version, source: h._source }));
    return { index: JSON.stringify({ mapping, documents }), files };
  }

  /** Checks the run's one line: the privilege named, what to grant, no stack trace. */
  function expectOneLineNaming(result: CliResult, action: string, label: string): void {
    expect(result.code, `${label}: exit code; stderr: ${result.stderr}; stdout: ${result.stdout}`).toBe(1);
    expect(hasStackTrace(result.stderr), `${label}: a stack trace\n${result.stderr}`).toBe(false);
    const lines = result.stderr.split('\n').filter((l) => l.trim() !== '');
    expect(lines, `${label}: one line on stderr`).toHaveLength(1);
    expect(lines[0], label).toContain(action);
    expect(lines[0], label).toMatch(/the user lacks the privileges? /);
    expect(lines[0], label).toMatch(/to its (cluster|index)_permissions/);
  }

  for (const scenario of SCENARIOS) {
    it(`${scenario.name}: refused in one line naming each missing privilege, nothing changed`, async () => {
      const index = ctx.index(`priv-${scenario.name}`);
      await scenario.prepare(ctx, index);
      const before = await state(index);
      const failures: string[] = [];
      for (const action of scenario.needs) {
        const label = `${scenario.name} without ${action}`;
        const result = ctx.cli(lacking.get(action), scenario.args(ctx, index));
        try {
          expectOneLineNaming(result, action, label);
          const after = await state(index);
          if (scenario.later?.includes(action)) {
            // Found at the first write: stopped there, nothing of it stored.
            if (after.index !== 'absent') expect(await ctx.admin.count(index, { match_all: {} }), `${label}: documents stored`).toBe(0);
          } else {
            expect(after.index === before.index, `${label}: the index changed: ${difference(before.index, after.index)}`).toBe(true);
            expect(after.files === before.files, `${label}: the checkpoint, journal or other files changed: ${difference(before.files, after.files)}`).toBe(true);
          }
        } catch (err) {
          failures.push((err as Error).message.split('\n').slice(0, 3).join(' | '));
        } finally {
          await scenario.reset?.(ctx, index);
          if (scenario.later?.includes(action)) {
            // Files a write-time refusal leaves (its errors file) are not the next cell's.
            for (const file of filesUnder(ctx.dir).keys()) if (path.basename(file).startsWith('near-dup-errors-')) rmSync(file);
          }
        }
      }
      expect(failures, failures.join('\n')).toEqual([]);
    });
  }
});

describeSecured('the proxy and a client that lacks a privilege', (ctx) => {
  const full = nearDupRole();
  const api = (method: string, apiPath: string, body?: unknown) =>
    securityApi(ctx.engine.url, { method, path: apiPath, body, admin: ctx.user('admin'), ca: readFileSync(ctx.engine.caFile) });
  const users = new Map<string, SecuredUser>();

  beforeAll(async () => {
    for (const action of ['indices:data/write/index', 'indices:admin/mappings/get']) {
      const name = `nd_proxy_minus_${slug(action)}`;
      expect((await api('PUT', `roles/${name}`, without(full, action)))?.status).toBeLessThan(300);
      const password = `${ctx.user('nd_user').password}-proxy`;
      expect((await api('PUT', `internalusers/${name}`, { password, opendistro_security_roles: [name] }))?.status).toBeLessThan(300);
      users.set(action, { username: name, password, roles: [name] });
    }
  });

  afterAll(async () => {
    for (const user of users.values()) {
      await api('DELETE', `internalusers/${user.username}`).catch(() => undefined);
      await api('DELETE', `roles/${user.username}`).catch(() => undefined);
    }
  });

  /** The proxy (no credentials of its own), a client's bulk of `docs` and a single document through it, as `user`; then its counters. */
  async function throughProxy(user: SecuredUser, index: string) {
    const nobody = { username: '', password: '', roles: [] };
    const auth = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString('base64')}`;
    return ctx.serve(nobody, ['proxy', '--index', index, '--field', 'text'], async (url) => {
      const body = docs.slice(0, 4).flatMap((d) => [JSON.stringify({ index: { _index: index, _id: d.id } }), JSON.stringify({ text: d.text })]).join('\n') + '\n';
      const bulk = await fetch(`${url}/_bulk`, { method: 'POST', body, headers: { authorization: auth, 'content-type': 'application/x-ndjson' } });
      const bulkAnswer = (await bulk.json()) as { errors: boolean; items: Array<Record<string, { status: number }>> };
      const one = await fetch(`${url}/${index}/_doc/one`, { method: 'PUT', body: JSON.stringify({ text: docs[5].text }), headers: { authorization: auth, 'content-type': 'application/json' } });
      await one.text();
      const stats = (await (await fetch(`${url}/_near_dup/stats`)).json()) as { documents: Record<string, number>; refused_by_cluster: { documents: number } };
      return { bulk: { status: bulk.status, answer: bulkAnswer }, one: one.status, stats };
    });
  }

  it('counts what the engine refused as refused by it, not as signed', async () => {
    const index = ctx.index('proxy-refused');
    const { value } = await throughProxy(users.get('indices:data/write/index')!, index);
    expect(value.bulk.status).toBe(200);
    expect(value.bulk.answer.items.map((i) => Object.values(i)[0].status)).toEqual([403, 403, 403, 403]);
    expect(value.one).toBe(403);
    expect(value.stats.documents).toMatchObject({ signed: 0 });
    expect(value.stats.refused_by_cluster).toEqual({ documents: 5 });
    expect(await ctx.admin.count(index, { match_all: {} }).catch(() => 0)).toBe(0);
  });

  it('counts as signed what the engine stored, and hints at a command that exists when it cannot give the index the fields', async () => {
    const index = ctx.index('proxy-no-mapping');
    const { value, result } = await throughProxy(users.get('indices:admin/mappings/get')!, index);
    expect(value.bulk.answer.errors, JSON.stringify(value.bulk.answer)).toBe(false);
    expect(value.stats.documents).toMatchObject({ signed: 5 });
    expect(value.stats.refused_by_cluster).toEqual({ documents: 0 });
    expect(result.stderr).toMatch(/could not give index .* the near-dup fields/);
    expect(result.stderr).toContain(`near-dup init --index ${index}`);
    expect(result.stderr).toContain("near-dup init --template 'PATTERN'");
    expect(result.stderr).not.toContain('--pattern');
    expect(hasStackTrace(result.stderr)).toBe(false);
  });
});
