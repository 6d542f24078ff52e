// Template tokens on the secured OpenSearch, through the CLI as users run it: annotate --template-share as
// the near_dup role draws a set and keeps it in near-dup-templates (made by that run), and the read-only
// role's similar --text finds it there and signs its query with it (scripts/engine/secured-users.json grants both).
import { beforeAll, expect, it } from 'vitest';
import { TEMPLATE_INDEX } from '../../src/indices/template-store.js';
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
