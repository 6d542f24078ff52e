// near-dup explore against a real engine with an annotated, deduplicated and evaluated corpus: its API
// pages through clusters and members (past the engine's result window) and finds clusters by id and by
// text; in Chromium a reviewer opens a cluster, compares two members (as compared and as stored, a shared
// passage and a difference marked), opens similar documents and sees the evaluation plots. A screenshot of each step goes to test/output/explore/.
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningExplorer, startExplorer } from '../../src/explore/server.js';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { dedupIndex } from '../../src/jobs/dedup.js';
import { evaluateIndex } from '../../src/jobs/evaluate.js';
import { createSigner } from '../../src/signature.js';
import { inExplorerPage } from '../support/browser.js';
import { fixtureSample } from '../support/corpus.js';
import { indexDocuments } from '../support/documents.js';
import { forEachEngine } from './harness.js';

const docs = fixtureSample(12, { seed: 41 });
const output = path.resolve(__dirname, '../output/explore');

forEachEngine('explore', (ctx) => {
  const index = ctx.index('explore');
  const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-explore-'));
  let explorer: RunningExplorer;
  const api = async (p: string) => {
    const res = await fetch(explorer.url + p);
    expect(res.status, p).toBe(200);
    return (await res.json()) as any;
  };

  beforeAll(async () => {
    await indexDocuments(ctx.client, index, docs);
    await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, state: { checkpointFile: path.join(tmp, 'cp.json') }, output: { prefix: 'near_dup', errorsFile: path.join(tmp, 'e.jsonl') } });
    await dedupIndex(ctx.client, { index, state: { stateFile: path.join(tmp, 'dedup.json') }, output: { errorsFile: path.join(tmp, 'dedup-errors.jsonl') } });
    await ctx.client.refresh(index);
    await evaluateIndex(ctx.client, { index, fields: ['text'], prefix: 'near_dup', sample: docs.length, seed: 1, neighbours: 20, randomPartners: 5, maxChars: 1e7, out: path.join(tmp, 'report'), currentThreshold: 0.5 });
    explorer = await startExplorer(ctx.client, { index, fields: ['text'], prefix: 'near_dup', host: '127.0.0.1', port: 0, reportDir: path.join(tmp, 'report') });
  });
  afterAll(async () => explorer?.close());

  /** Every entry of a list, asked `size` at a time, each page after the `next` of the one before. */
  const pageThrough = async (first: string, key: 'clusters' | 'members', total: number) => {
    const seen: any[] = [];
    for (let after: string | undefined, pages = 0; ; pages++) {
      const page = await api(first + (after ? `&after=${encodeURIComponent(after)}` : ''));
      expect(page.total).toBe(total);
      seen.push(...page[key]);
      after = page.next;
      if (!after) return seen;
      expect(pages).toBeLessThan(total); // a list that never ends
    }
  };

  it('answers only requests addressed to it by a name it knows, is never framed, and holds at most 8 member scrolls open', async () => {
    const port = new URL(explorer.url).port;
    const asked = (host: string) => new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
      http.get({ host: '127.0.0.1', port, path: '/api/info', headers: { host } }, (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      }).on('error', reject);
    });
    // A page on another site that rebinds its own name to 127.0.0.1 still sends its own name as Host.
    const rebound = await asked(`attacker.example:${port}`);
    expect([rebound.status, JSON.parse(rebound.body).error]).toEqual([403, expect.stringContaining('--allow-host attacker.example')]);
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost']) expect((await asked(host)).status, host).toBe(200);
    const page = await asked(`localhost:${port}`);
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['x-frame-options']).toBe('DENY');

    const openContexts = async () => {
      const stats = await ctx.client.request<any>('GET', '/_nodes/stats/indices/search');
      return Object.values(stats.nodes).reduce((n: number, node: any) => n + node.indices.search.open_contexts, 0);
    };
    const before = await openContexts();
    const { clusters } = await api('/api/clusters?size=1');
    const members = `/api/clusters/${encodeURIComponent(clusters[0].clusterId)}/members?size=1`;
    const firsts = [];
    for (let i = 0; i < 20; i++) firsts.push(await api(members));
    expect(firsts.every((p) => p.next !== undefined)).toBe(true);
    const shards = Number((await ctx.client.request<any>('GET', `/${index}/_settings`))[index].settings.index.number_of_shards);
    expect((await openContexts()) - before).toBeLessThanOrEqual(8 * shards);
    const evicted = await fetch(`${explorer.url}${members}&after=${encodeURIComponent(firsts[0].next)}`);
    expect([evicted.status, ((await evicted.json()) as any).error]).toEqual([400, expect.stringContaining('closed for newer ones')]);
    const kept = await api(`${members}&after=${encodeURIComponent(firsts[19].next)}`);
    expect(kept.members.length).toBe(1);
    // A scroll of the cluster the explorer did not open (or another cluster's page) is not followed.
    const foreign = await ctx.client.request<any>('POST', `/${index}/_search`, { size: 1, query: { match_all: {} } }, { scroll: '1m' });
    const refused = await fetch(`${explorer.url}${members}&after=${encodeURIComponent(foreign._scroll_id)}`);
    expect([refused.status, ((await refused.json()) as any).error]).toEqual([400, expect.stringContaining('never opened here')]);
    await ctx.client.request('DELETE', '/_search/scroll', { scroll_id: [foreign._scroll_id] });
    expect(kept.next === undefined || !String(kept.next).includes(foreign._scroll_id.slice(0, 12))).toBe(true);
    const badId = await fetch(`${explorer.url}/api/documents/%ZZ`);
    expect(badId.status).toBe(400);
  });

  it('clusters largest first, each list paged through whole past the result window, found by id and by text', async () => {
    const { clusters, total } = await api('/api/clusters?size=200');
    expect(total).toBe(clusters.length);
    const sizes = clusters.map((c: any) => c.size);
    expect(sizes).toEqual([...sizes].sort((a: number, b: number) => b - a));
    const largest = clusters[0];
    // The engine's result window made smaller than the largest cluster and the list of clusters: from + size
    // paging would be refused past it (the default window is 10,000). One, as at dedup's default bar the
    // largest cluster of this corpus may be a pair; pages of one.
    const window = 1;
    expect(Math.min(largest.size, clusters.length)).toBeGreaterThan(window);
    const setWindow = (value: number | null) => ctx.client.request('PUT', `/${index}/_settings`, { index: { max_result_window: value } });
    let members: any[] = [], listed: any[] = [];
    await setWindow(window);
    try {
      members = await pageThrough(`/api/clusters/${encodeURIComponent(largest.clusterId)}/members?size=${window}`, 'members', largest.size);
      listed = await pageThrough(`/api/clusters?size=${window}`, 'clusters', total);
    } finally {
      await setWindow(null);
    }
    const seen = members.map((m) => m.id);
    expect(seen.length).toBe(largest.size);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen[0]).toBe(largest.canonical.id);
    expect(listed.map((c) => c.clusterId)).toEqual(clusters.map((c: any) => c.clusterId));
    const badCursor = await fetch(`${explorer.url}/api/clusters?size=2&after=not-a-position`);
    expect([badCursor.status, ((await badCursor.json()) as any).error]).toEqual([400, expect.stringMatching(/not a position in the list/)]);
    const byId = await api(`/api/clusters?q=${encodeURIComponent(seen[seen.length - 1])}`);
    expect(byId.clusters.map((c: any) => c.clusterId)).toEqual([largest.clusterId]);
    const words = docs.find((d) => d.id === seen[0])!.text.split(/\s+/).filter((w) => /^[a-z]{6,}$/i.test(w)).slice(0, 3).join(' ');
    expect((await api(`/api/clusters?q=${encodeURIComponent(words)}`)).clusters.map((c: any) => c.clusterId)).toContain(largest.clusterId);
  });

  describe('in Chromium', () => {
    it('a reviewer opens a cluster, compares two members, opens similar documents, sees the plots', async (test) => {
      await inExplorerPage(test, explorer.url, { output, prefix: `${ctx.engine.flavour}-${ctx.engine.version}` }, async (page, { errors, shot }) => {
        await page.screenshot({ path: shot('cluster') });
        const rows = page.locator('tr.member');
        const count = await rows.count();
        expect(count).toBeGreaterThan(1);
        // The canonical and the member least like it (the last row of the page).
        await rows.nth(0).locator('input.pick').check();
        await rows.nth(count - 1).locator('input.pick').check();
        await page.locator('#compare').click();
        await page.locator('.side.left mark.shared').first().waitFor();
        expect(await page.locator('.side mark.shared').count()).toBeGreaterThan(0);
        expect(await page.locator('.side.left del, .side.right ins').count()).toBeGreaterThan(0);
        // Both sides hold their whole text as the signatures saw it (after the index's normalizer), shared
        // passages included; the stored text is one click away (explore-texts.test.ts checks both closely).
        const [a, b] = await Promise.all([rows.nth(0).getAttribute('data-id'), rows.nth(count - 1).getAttribute('data-id')]);
        const text = (id: string | null) => docs.find((d) => d.id === id)!.text;
        const normalize = createSigner({}).normalize;
        expect(await page.locator('.side.left').textContent()).toBe(normalize(text(a)));
        expect(await page.locator('.side.right').textContent()).toBe(normalize(text(b)));
        await page.screenshot({ path: shot('pair'), fullPage: true });
        await page.locator('#view-raw').check();
        await page.locator('#pair[data-view=raw]').waitFor();
        expect(await page.locator('.side.left').textContent()).toBe(text(a));
        expect(await page.locator('.side.right').textContent()).toBe(text(b));
        await rows.nth(0).locator('button.open-similar').click();
        await page.locator('#similar-hits li[data-id]').first().waitFor();
        const plots = page.locator('img.plot');
        await expect.poll(() => plots.count()).toBe(4);
        await expect.poll(() => plots.evaluateAll((imgs) => imgs.every((i) => (i as unknown as { naturalWidth: number }).naturalWidth > 0))).toBe(true);
        await page.screenshot({ path: shot('similar-and-report'), fullPage: true });
        expect(errors).toEqual([]);
      });
    }, 120_000);
  });
});
