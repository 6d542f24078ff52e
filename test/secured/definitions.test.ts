// The users and roles of the secured engine (scripts/engine/secured-users.json) hold together, and the
// passwords the script derives for them are strong, distinct, and the same on every checkout.
import { describe, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript module without type declarations
import { securedDefinitions, userPassword } from '../../scripts/engine/secured.mjs';

const definitions = securedDefinitions() as {
  indexPattern: string;
  lockIndex: string;
  roles: Record<string, { cluster_permissions: string[]; index_permissions: Array<{ index_patterns: string[]; allowed_actions: string[] }> }>;
  users: Record<string, { roles: string[] }>;
};
/** Roles of the security plugin's own configuration that a test user may be given. */
const BUILT_IN = ['all_access'];

describe('secured-users.json', () => {
  it('gives each user roles that exist, and each role only the test indices (and near_dup dedup\'s lock index)', () => {
    for (const [name, user] of Object.entries(definitions.users)) {
      expect(user.roles.length, name).toBeGreaterThan(0);
      for (const role of user.roles) expect([...Object.keys(definitions.roles), ...BUILT_IN], `${name}: ${role}`).toContain(role);
    }
    for (const [name, role] of Object.entries(definitions.roles)) {
      const patterns = role.index_permissions.map((grant) => grant.index_patterns);
      expect(patterns, name).toEqual(name === 'near_dup' ? [[definitions.indexPattern], [definitions.lockIndex]] : [[definitions.indexPattern]]);
    }
  });

  it("names dedup's lock index as dedup does, and grants there only what the lock takes", async () => {
    const { DEFAULT_LOCK_INDEX } = await import('../../src/jobs/dedup/run-lock.js');
    expect(definitions.lockIndex).toBe(DEFAULT_LOCK_INDEX);
    const lockGrant = definitions.roles.near_dup.index_permissions[1];
    expect(lockGrant.allowed_actions.sort()).toEqual(['indices:admin/create', 'indices:data/read/mget[shard]', 'indices:data/write/bulk[s]', 'indices:data/write/index']);
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
