// Template tokens on the secured OpenSearch, through the CLI as users run it: annotate --template-share as
// the near_dup role draws a set and keeps it in near-dup-templates (made by that run), and the read-only
// role's similar --text finds it there and signs its query with it (scripts/engine/secured-users.json grants both).
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
// @ts-expect-error: plain JavaScript module without type declarations
import { securedDefinitions, securityApi } from '../../scripts/engine/secured.mjs';
import { DEFAULT_TEMPLATE_REQUEST, TEMPLATE_INDEX } from '../../src/indices/template-store.js';
import { templatedPages } from '../support/templated-pages.js';
import { describeSecured, hasStackTrace } from './harness.js';

const pages = templatedPages(40);
const json = (text: string) => JSON.parse(text.trim().split('\n').pop()!);

describeSecured('template tokens as the near_dup and reader roles', (ctx) => {
  const index = ctx.index('templates');

  beforeAll(async () => {
    const lines = pages.flatMap((d) => [{ index: { _index: index, _id: d.id } }, { text: d.text }]);
    expect((await ctx.admin.bulk(lines)).errors).toBe(false);
    await ctx.admin.refresh(index);
    // The store made by this block's run, as the first run on a cluster makes it.
    await ctx.admin.request('DELETE', `/${TEMPLATE_INDEX}`, undefined, { expand_wildcards: 'all' }).catch(() => undefined);
  });

  it('annotate --template-share as near_dup draws a set and keeps it in near-dup-templates, which it makes', async () => {
    const result = ctx.cli(ctx.user('nd_user'), ['annotate', '--index', index, '--field', 'text', '--template-share', '0.05', '--template-sample', '1000']);
    expect(result.code, result.stderr).toBe(0);
    expect(json(result.stdout)).toMatchObject({ annotated: pages.length, failed: 0, complete: true });
    const digest = String(json(result.stdout).params).split(';core=')[1];
    expect(digest).toMatch(/^[0-9a-f]{12}$/);
    const [uuid] = await ctx.admin.indexUuids(index);
    const kept = await ctx.admin.request('POST', `/${TEMPLATE_INDEX}/_search`, { query: { term: { uuid } } });
    expect(kept.hits.hits.map((h: { _source: { digest: string } }) => h._source.digest)).toEqual([digest]);
  });

  it('similar --text as the reader signs with the set the index keeps (--id reads the stored signature): a page finds only its edited copy', () => {
    const page = pages.find((d) => d.id === 'p2')!;
    // Signed without the set, every other page would pass 0.5 too (60 of their 85 words are the template's).
    const expected = [[['--text', page.text], ['p2', 'p2-edit']], [[`--id=${page.id}`], ['p2-edit']]];
    for (const [args, ids] of expected) {
      const result = ctx.cli(ctx.user('nd_reader'), ['similar', '--index', index, '--min-similarity', '0.5', ...args]);
      expect(result.code, result.stderr).toBe(0);
      expect(hasStackTrace(result.stderr)).toBe(false);
      const hits = json(result.stdout).hits as Array<{ id: string }>;
      expect(hits.map((h) => h.id).sort()).toEqual(ids);
    }
  });
});

describeSecured('the default template request as a user the template store refuses', (ctx) => {
  const index = ctx.index('templates-refused');
  const name = 'nd_no_templates';
  const user = { username: name, password: `${ctx.user('nd_user').password}-no-templates`, roles: [name] };
  const api = (method: string, apiPath: string, body?: unknown) =>
    securityApi(ctx.engine.url, { method, path: apiPath, body, admin: ctx.user('admin'), ca: readFileSync(ctx.engine.caFile) });
  // Enough documents that the default draws a set (DEFAULT_TEMPLATE_REQUEST.atLeast), so that the store is asked.
  const many = templatedPages(DEFAULT_TEMPLATE_REQUEST.atLeast ?? 2000);

  beforeAll(async () => {
    // The near_dup role without its grant on the template sets' index: it may annotate its indices, not read or make a set.
    const role = securedDefinitions().roles.near_dup as { index_permissions: Array<{ index_patterns: string[] }> };
    const withoutStore = { ...role, index_permissions: role.index_permissions.filter((g) => !g.index_patterns.includes(TEMPLATE_INDEX)) };
    expect(withoutStore.index_permissions.length).toBe(role.index_permissions.length - 1);
    expect((await api('PUT', `roles/${name}`, withoutStore))?.status).toBeLessThan(300);
    expect((await api('PUT', `internalusers/${name}`, { password: user.password, opendistro_security_roles: [name] }))?.status).toBeLessThan(300);
    for (let at = 0; at < many.length; at += 500) {
      const lines = many.slice(at, at + 500).flatMap((d) => [{ index: { _index: index, _id: d.id } }, { text: d.text }]);
      expect((await ctx.admin.bulk(lines)).errors).toBe(false);
    }
    await ctx.admin.refresh(index);
  }, 120_000);

  afterAll(async () => {
    await api('DELETE', `internalusers/${name}`).catch(() => undefined);
    await api('DELETE', `roles/${name}`).catch(() => undefined);
  });

  it('annotate at the defaults signs every document without template tokens and says why in its notes; an explicit share fails in one line', async () => {
    const result = ctx.cli(user, ['annotate', '--index', index, '--field', 'text']);
    expect(result.code, result.stderr).toBe(0);
    expect(hasStackTrace(result.stderr)).toBe(false);
    const summary = json(result.stdout);
    expect(summary).toMatchObject({ annotated: many.length, failed: 0, complete: true });
    expect(String(summary.params)).not.toContain(';core=');
    expect(summary.notes).toHaveLength(1);
    expect(summary.notes[0]).toMatch(/^signed without template tokens, as the template store refused this user/);
    expect(summary.notes[0]).not.toContain(user.password);
    const [uuid] = await ctx.admin.indexUuids(index);
    const kept = await ctx.admin.request('POST', `/${TEMPLATE_INDEX}/_search`, { query: { term: { uuid } } }).catch(() => ({ hits: { hits: [] } }));
    expect(kept.hits.hits).toEqual([]);
    // Asked for by the user, a set the store refuses is an error, not a quiet fallback.
    const asked = ctx.cli(user, ['annotate', '--index', index, '--field', 'text', '--template-share', '0.05', '--force']);
    expect(asked.code).toBe(1);
    expect(asked.stderr.trim().split('\n')).toHaveLength(1);
    expect(hasStackTrace(asked.stderr)).toBe(false);
  }, 180_000);
});
