// The users and roles of the secured engine (scripts/engine/secured-users.json) hold together, and the
// passwords the script derives for them are strong, distinct, and the same on every checkout.
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript module without type declarations
import { securedDefinitions, userPassword } from '../../scripts/engine/secured.mjs';

const definitions = securedDefinitions() as {
  indexPattern: string;
  lockIndex: string;
  templateIndex: string;
  roles: Record<string, { cluster_permissions: string[]; index_permissions: Array<{ index_patterns: string[]; allowed_actions: string[] }> }>;
  users: Record<string, { roles: string[] }>;
};
/** Roles of the security plugin's own configuration that a test user may be given. */
const BUILT_IN = ['all_access'];

describe('secured-users.json', () => {
  it("gives each user roles that exist, and each role only the test indices (and dedup's lock index, the template sets' index)", () => {
    for (const [name, user] of Object.entries(definitions.users)) {
      expect(user.roles.length, name).toBeGreaterThan(0);
      for (const role of user.roles) expect([...Object.keys(definitions.roles), ...BUILT_IN], `${name}: ${role}`).toContain(role);
    }
    for (const [name, role] of Object.entries(definitions.roles)) {
      const patterns = role.index_permissions.map((grant) => grant.index_patterns);
      const own = name === 'near_dup' ? [[definitions.lockIndex]] : [];
      expect(patterns, name).toEqual([[definitions.indexPattern], ...own, [definitions.templateIndex]]);
    }
  });

  it("names dedup's lock index as dedup does, and grants there only what the lock takes", async () => {
    const { DEFAULT_LOCK_INDEX } = await import('../../src/jobs/dedup/state/run-lock.js');
    expect(definitions.lockIndex).toBe(DEFAULT_LOCK_INDEX);
    const lockGrant = definitions.roles.near_dup.index_permissions[1];
    expect(lockGrant.allowed_actions.sort()).toEqual(['indices:admin/create', 'indices:data/read/mget[shard]', 'indices:data/write/bulk[s]', 'indices:data/write/index']);
  });

  it('names the template sets\' index as the store does: near_dup may make it and write sets, the reader only read them', async () => {
    const { TEMPLATE_INDEX } = await import('../../src/indices/template-store.js');
    expect(definitions.templateIndex).toBe(TEMPLATE_INDEX);
    const grant = (role: string) => definitions.roles[role].index_permissions.find((g) => g.index_patterns[0] === TEMPLATE_INDEX)?.allowed_actions.sort();
    const reads = ['indices:data/read/mget[shard]', 'indices:data/read/search'];
    expect(grant('near_dup')).toEqual(['indices:admin/create', ...reads, 'indices:data/write/bulk[s]', 'indices:data/write/index', 'indices:monitor/settings/get']);
    expect(grant('near_dup_reader')).toEqual(reads);
    // What an index is (its uuid, data stream, rollover aliases) says where its sets are kept.
    for (const role of ['near_dup', 'near_dup_reader']) expect(definitions.roles[role].index_permissions[0].allowed_actions).toContain('indices:admin/get');
  });

  it('has a near_dup user, a read-only user whose role writes nothing, and an administrator', () => {
    expect(definitions.users.nd_user.roles).toEqual(['near_dup']);
    expect(definitions.users.nd_admin.roles).toEqual(['all_access']);
    const reader = definitions.roles[definitions.users.nd_reader.roles[0]];
    const actions = [...reader.cluster_permissions, ...reader.index_permissions.flatMap((g) => g.allowed_actions)];
    expect(actions.filter((a) => /write|create|mapping\/put|^crud$|^manage|^indices_all$|^\*$|^indices:\*$/.test(a))).toEqual([]);
  });

  it('derives strong, distinct passwords that depend on the admin password only', () => {
    const a = userPassword('Admin-Password-1!', 'nd_user');
    expect(userPassword('Admin-Password-1!', 'nd_user')).toBe(a);
    expect(userPassword('Admin-Password-1!', 'nd_reader')).not.toBe(a);
    expect(userPassword('Admin-Password-2!', 'nd_user')).not.toBe(a);
    expect(a.length).toBeGreaterThanOrEqual(20);
    for (const kind of [/[a-z]/, /[A-Z]/, /[0-9]/, /[^A-Za-z0-9]/]) expect(a).toMatch(kind);
  });
});
