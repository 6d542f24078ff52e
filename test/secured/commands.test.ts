// near-dup's commands on a real secured OpenSearch (TLS on HTTP, internal users), through the CLI from
// dist/ as a user runs it: as a user with only the near_dup role (scripts/engine/secured-users.json), with
// --ca-file, every command works and gives what it gives as admin; the password appears in nothing
// printed or written; refusals (a read-only user, a wrong password, an untrusted certificate) are one
// line, no stack trace, and change nothing.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { findSimilar } from '../../src/jobs/similar.js';
import { fixtureSample } from '../support/corpus.js';
// @ts-expect-error: plain JavaScript module without type declarations
import { securedRequest, securityApi } from '../../scripts/engine/secured.mjs';
import { describeSecured, filesUnder, hasStackTrace, secretForms } from './harness.js';

const docs = fixtureSample(6);
/** The family with the most versions: its first version has near-duplicates to find. */
const family = [...new Set(docs.map((d) => d.family))].sort((a, b) => docs.filter((d) => d.family === b).length - docs.filter((d) => d.family === a).length)[0];
const query = docs.find((d) => d.family === family && d.version === 0)!;

const json = (text: string) => JSON.parse(text.trim().split('\n').pop()!);

describeSecured('near-dup as the near_dup role', (ctx) => {
  const index = ctx.index('commands');
  const user = () => ctx.user('nd_user');

  beforeAll(async () => {
    const lines = docs.flatMap((d) => [{ index: { _index: index, _id: d.id } }, { family: d.family, date: d.date, text: d.text }]);
    expect((await ctx.admin.bulk(lines)).errors).toBe(false);
    await ctx.admin.refresh(index);
  });

  it('init creates an index with the near-dup fields', async () => {
    const created = ctx.index('init');
    const result = ctx.cli(user(), ['init', '--index', created]);
    expect(result.code, result.stderr).toBe(0);
    const mapping = await ctx.admin.request('GET', `/${created}/_mapping`);
    expect(Object.keys(mapping[created].mappings.properties.near_dup.properties)).toEqual(expect.arrayContaining(['bands', 'minhash', 'params']));
  });

  it('annotate signs every document (credentials on the command line)', async () => {
    const result = ctx.cli(user(), ['annotate', '--index', index, '--field', 'text'], { via: 'flags' });
    expect(result.code, result.stderr).toBe(0);
    expect(json(result.stdout)).toMatchObject({ seen: docs.length, annotated: docs.length, failed: 0, complete: true });
    await ctx.admin.refresh(index);
    expect(await ctx.admin.count(index, { exists: { field: 'near_dup.params' } })).toBe(docs.length);
  });

  it('similar --id and --text find what they find as admin', async () => {
    const byId = ctx.cli(user(), ['similar', '--index', index, '--id', query.id]);
    expect(byId.code, byId.stderr).toBe(0);
    const hits = json(byId.stdout).hits as Array<{ id: string; jaccard: number }>;
    expect(hits.length).toBeGreaterThan(0);
    expect(hits.every((h) => h.id.startsWith(`${family}@`))).toBe(true);
    const asAdmin = await findSimilar(ctx.admin, { index, id: query.id });
    expect(hits.map((h) => [h.id, h.jaccard])).toEqual(asAdmin.hits.map((h) => [h.id, h.jaccard]));

    const byText = ctx.cli(user(), ['similar', '--index', index, '--text', query.text]);
    expect(byText.code, byText.stderr).toBe(0);
    expect(json(byText.stdout).hits[0]).toMatchObject({ id: query.id, jaccard: 1 });
  });

  it('dedup --full writes the clusters back', async () => {
    const result = ctx.cli(user(), ['dedup', '--index', index, '--full']);
    expect(result.code, result.stderr).toBe(0);
    const summary = json(result.stdout);
    expect(summary).toMatchObject({ complete: true, failed: 0 });
    expect(summary.duplicates).toBeGreaterThan(0);
    await ctx.admin.refresh(index);
    expect(await ctx.admin.count(index, { exists: { field: 'near_dup.duplicate_of' } })).toBe(summary.duplicates);
    // The query document and its closest version are one cluster.
    const found = await ctx.admin.request('POST', `/${index}/_search`, { query: { ids: { values: [query.id] } }, _source: ['near_dup.cluster_id'] });
    const cluster = found.hits.hits[0]._source.near_dup.cluster_id;
    expect(await ctx.admin.count(index, { term: { 'near_dup.cluster_id': cluster } })).toBeGreaterThan(1);
  });

  it('annotate --force signs every document again', () => {
    const result = ctx.cli(user(), ['annotate', '--index', index, '--field', 'text', '--force']);
    expect(result.code, result.stderr).toBe(0);
    expect(json(result.stdout)).toMatchObject({ annotated: docs.length, unchanged: 0, failed: 0, complete: true });
  });

  it('ingest creates an index and indexes signed documents', async () => {
    const target = ctx.index('ingest');
    const file = path.join(ctx.dir, 'ingest.ndjson');
    writeFileSync(file, docs.map((d) => JSON.stringify({ id: d.id, text: d.text })).join('\n') + '\n');
    const result = ctx.cli(user(), ['ingest', '--index', target, '--field', 'text', '--id-field', 'id', '--file', file]);
    expect(result.code, result.stderr).toBe(0);
    await ctx.admin.refresh(target);
    expect(await ctx.admin.count(target, { exists: { field: 'near_dup.params' } })).toBe(docs.length);
  });

  it("explore's API lists clusters, their members and similar documents", async () => {
    const { value, result } = await ctx.serve(user(), ['explore', '--index', index, '--field', 'text'], async (url) => {
      const get = async (p: string) => {
        const res = await fetch(`${url}${p}`);
        return { status: res.status, body: (await res.json()) as any };
      };
      const clusters = await get('/api/clusters?size=10');
      const first = clusters.body.clusters?.[0]?.clusterId;
      const members = await get(`/api/clusters/${encodeURIComponent(first)}/members?size=10`);
      const similar = await get(`/api/documents/${encodeURIComponent(query.id)}/similar`);
      return { clusters, members, similar };
    });
    expect(value.clusters.status, JSON.stringify(value.clusters.body)).toBe(200);
    expect(value.clusters.body.clusters.length).toBeGreaterThan(0);
    expect(value.members.status, JSON.stringify(value.members.body)).toBe(200);
    expect(value.members.body.members.length).toBeGreaterThan(1);
    expect(value.similar.status, JSON.stringify(value.similar.body)).toBe(200);
    expect(hasStackTrace(result.stderr)).toBe(false);
  });

  it('evaluate writes its report', () => {
    const out = path.join(ctx.dir, 'report');
    const result = ctx.cli(user(), ['evaluate', '--index', index, '--field', 'text', '--out', out, '--sample', '10']);
    expect(result.code, result.stderr).toBe(0);
    expect([...filesUnder(out).keys()].map((f) => path.basename(f))).toContain('report.json');
  });

  it('the password appears in nothing printed and nothing written (checkpoints, journals, reports)', () => {
    expect(ctx.printed.length).toBeGreaterThanOrEqual(8);
    const files = filesUnder(ctx.dir);
    // The commands above wrote checkpoints: the check reads real files.
    expect([...files.keys()].some((f) => f.includes(`${path.sep}.near-dup${path.sep}`))).toBe(true);
    for (const secret of secretForms(user())) {
      for (const [i, text] of ctx.printed.entries()) expect(text.includes(secret), `run ${i} printed a form of the password`).toBe(false);
      for (const [file, text] of files) expect(text.includes(secret), `${file} holds a form of the password`).toBe(false);
    }
  });
});

describeSecured('refusals on a secured engine', (ctx) => {
  const index = ctx.index('refusals');

  beforeAll(async () => {
    const lines = docs.slice(0, 6).flatMap((d) => [{ index: { _index: index, _id: d.id } }, { text: d.text }]);
    expect((await ctx.admin.bulk(lines)).errors).toBe(false);
    await ctx.admin.refresh(index);
  });

  const mappingOf = async () => JSON.stringify(await ctx.admin.request('GET', `/${index}/_mapping`));

  it("a read-only user's annotate fails in one line, names the privilege, and writes nothing", async () => {
    const before = await mappingOf();
    const result = ctx.cli(ctx.user('nd_reader'), ['annotate', '--index', index, '--field', 'text']);
    expect(result.code).toBe(1);
    expect(hasStackTrace(result.stderr)).toBe(false);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(/403|denied/);
    expect(result.stderr).toMatch(/indices:[a-z/_]+/);
    expect(await mappingOf()).toBe(before);
    expect(await ctx.admin.count(index, { exists: { field: 'near_dup.params' } })).toBe(0);
  });

  it('a wrong password is refused in one line that does not repeat it', () => {
    const wrong = { ...ctx.user('nd_user'), password: `${ctx.user('nd_user').password}-wrong` };
    const result = ctx.cli(wrong, ['similar', '--index', index, '--text', 'some words'], { via: 'flags' });
    expect(result.code).toBe(1);
    expect(hasStackTrace(result.stderr)).toBe(false);
    expect(result.stderr).toMatch(/401/);
    for (const secret of secretForms(wrong)) expect(`${result.stdout}${result.stderr}`.includes(secret)).toBe(false);
  });

  it('without --ca-file the certificate is not trusted, and the message says to give it', () => {
    const result = ctx.cli(ctx.user('nd_user'), ['similar', '--index', index, '--text', 'some words'], { caFile: null });
    expect(result.code).toBe(1);
    expect(hasStackTrace(result.stderr)).toBe(false);
    expect(result.stderr).toMatch(/--ca-file/);
  });

  it("no user gets an index named like itself (the demo's own_index mapping is emptied)", async () => {
    // A user outside the roles' index pattern, and an index of its own name: with the demo's own_index
    // mapping in place, it could write there.
    const name = `ndown${randomBytes(4).toString('hex')}`;
    const password = `${ctx.user('nd_reader').password}x`;
    const admin = { auth: ctx.user('admin'), ca: readFileSync(ctx.engine.caFile) };
    const api = (method: string, p: string, body?: unknown) => securedRequest(ctx.engine.url, { method, path: p, body, ...admin });
    const users = (method: string, body?: unknown) => securityApi(ctx.engine.url, { method, path: `internalusers/${name}`, body, admin: admin.auth, ca: admin.ca });
    expect((await users('PUT', { password, opendistro_security_roles: ['near_dup_reader'] }))?.status).toBe(201);
    try {
      expect((await api('PUT', `/${name}/_doc/1?refresh=true`, { text: docs[0].text }))?.status).toBe(201);
      const result = ctx.cli({ username: name, password, roles: [] }, ['annotate', '--index', name, '--field', 'text']);
      expect(result.code).toBe(1);
      expect(result.stderr).toMatch(/403/);
      expect(hasStackTrace(result.stderr)).toBe(false);
      expect((await api('GET', `/${name}/_count?q=_exists_:near_dup.params`))?.body.count).toBe(0);
    } finally {
      await api('DELETE', `/${name}`);
      await users('DELETE');
    }
  });
});
