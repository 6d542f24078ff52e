// Issue 37, items 3 and 4, on real engines. Which index a write goes to, as the engine decides it: repeated
// query parameters, action lines with a key or a verb given twice, date math in its full syntax (each
// expression compared with the engine's own GET /_resolve/index answer), aliases with a write index, data
// streams, templates that give a new index an alias. What must hold with --on-error reject: no unsigned
// document reaches an index the proxy signs for, whatever the client sends; and a refusal of a whole
// request (an unknown query parameter) comes back as the engine gave it, after one request upstream.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { rawRequest } from '../support/raw-request.js';
import { EngineResponseError } from '../../src/engine/errors.js';
import { readDateMath } from '../../src/proxy/date-math.js';
import { type ProxyOptions, type RunningProxy, startProxy } from '../../src/proxy/server.js';
import { fixtureSample, seededRandom } from '../support/corpus.js';
import { FaultProxy } from '../support/fault-proxy.js';
import { type EngineContext, forEachEngine } from './harness.js';

const docs = fixtureSample(6, { seed: 37 });
const text = (i: number) => ({ text: `${docs[i % docs.length].text} ${i}` });
const ndjson = (lines: unknown[]) => `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`;
const ND = { 'content-type': 'application/x-ndjson' };

const send = rawRequest;

/** The documents of the indices matching `pattern` (hidden ones too), by index and id; those without the near-dup fields. */
async function stored(ctx: EngineContext, pattern: string): Promise<{ ids: string[]; unsigned: string[] }> {
  const q = { ignore_unavailable: true, allow_no_indices: true, expand_wildcards: 'all' };
  await ctx.client.request('POST', `/${pattern}/_refresh`, undefined, q).catch(() => undefined);
  const found = await ctx.client.request<any>('POST', `/${pattern}/_search`, { size: 1000, query: { match_all: {} } }, q);
  const hits = found.hits.hits as Array<{ _index: string; _id: string; _source: Record<string, unknown> }>;
  const name = (h: (typeof hits)[number]) => `${h._index}/${h._id}`;
  return { ids: hits.map(name).sort(), unsigned: hits.filter((h) => h._source.near_dup === undefined).map(name).sort() };
}

/** What the engine resolves a date math expression to: the name its GET /_resolve/index answer names, or its refusal. */
async function engineResolves(ctx: EngineContext, expression: string): Promise<{ name: string } | { error: string }> {
  try {
    await ctx.client.request('GET', `/_resolve/index/${encodeURIComponent(expression)}`, undefined, undefined, { retry: false });
    return { error: 'exists' };
  } catch (err) {
    if (err instanceof EngineResponseError && err.statusCode === 404 && err.type === 'index_not_found_exception' && err.index !== undefined) return { name: err.index };
    if (err instanceof EngineResponseError) return { error: `${err.statusCode} ${err.type}: ${err.reason}` };
    throw err;
  }
}

/** Expressions across the syntax: escapes, placeholders, math, named formats, java.time patterns, time zones, fixed dates. */
const EXPRESSIONS = [
  '<x-{now}>',
  '<x-{now/d}>',
  '<x-{now+d}>',
  '<x-{now-1y-2M+3w-4d+5h-6m+7s{yyyy.MM.dd.HH.mm.ss}}>',
  '<x-{now/M{yyyy.MM}}>',
  '<x-{now/w{yyyy.MM.dd|America/New_York}}>',
  '<x-{now/y{yyyy.MM.dd.HH.mm|Europe/Paris}}>',
  '<x-{now{yyyy.MM.dd.HH|Asia/Kathmandu}}>',
  '<x-{now{yyyy.MM.dd.HH|UTC+05:45}}>',
  '<x-{now{yyyy.MM.dd.HH|-0930}}>',
  '<x-{now{yyyy.MM.dd.HH|EST}}>',
  '<x-{now{yyyy.MM.dd.HH|ROC}}>',
  '<x-{now{yyyy[.MM[.dd]]}}>',
  '<x-{now{yyyy[MM}}>',
  '<x-{now{yyyy]}}>',
  "<x-{now{'q'yyyy''}}>",
  "<x-{now{yyyy'}}>",
  '<x-{now{8yyyy}}>',
  '<x-{now{ yyyy }}>',
  '<x-{now{u.uuu.uuuuu.yy.y}}>',
  '<x-{now{D.DD.g.Q.qq}}>',
  '<x-{now{YYYY.ww.e.W.c}}>',
  '<x-{now+2d{YYYY.ww.e}}>',
  '<x-{now+35d{YYYY.YY.w.ee}}>',
  '<x-{now{k.K.h.H.m.s}}>',
  '<x-{now{S.SSS.SSSSSSSSS.n.A.N}}>',
  '<x-{now{SSSSSSSSSS}}>',
  '<x-{now{X.XX.XXX.x.xx.Z.ZZZZZ|+05:30}}>',
  '<x-{now{ppd}}>',
  '<x-{now{pd}}>',
  '<x-{now{pmd}}>',
  '<x-{now{pmpd}}>',
  '<x-{now{DDDD}}>',
  '<x-{now{F}}>',
  '<x-{now{MMM}}>',
  '<x-{now{j}}>',
  '<x-{now{yyyy#}}>',
  '<x-{now{strict_date}}>',
  '<x-{now{basic_date}}>',
  '<x-{now{basicDate}}>',
  '<x-{now{ordinal_date}}>',
  '<x-{now{year_month}}>',
  '<x-{now/s{epoch_second}}>',
  '<x-{now{date_hour}}>',
  '<x-{now/2d}>',
  '<x-{now-1}>',
  '<x-{now+1x}>',
  '<x-{ now}>',
  '<x-{now{yyyy|europe/paris}}>',
  '<x-{now{yyyy|+1:00}}>',
  '<x-{now{yyyy| UTC}}>',
  '<x-{2024.02.29||+1y}>',
  '<x-{2024.01.31||+1M{uuuu.MM.dd}}>',
  '<x-{2026.03||{yyyy[.MM[.dd]]}}>',
  '<x-{2026.03.29.01.30||+1h{yyyy.MM.dd.HH.mm|Europe/Paris}}>',
  '<x-{2026.10.25.02.30||/h+1h{yyyy.MM.dd.HH.mm|Europe/Paris}}>',
  '<x-{2018.11.04.00||{yyyy.MM.dd.HH|America/Sao_Paulo}}>',
  '<x-{0001.01.01||-1d{uuuu.yyyy}}>',
  '<x-{2026.02.30||{yyyy.MM.dd}}>',
  '<x\\{y\\}-{now/d}>',
  '<x\\\\y-{now/d}>',
  '<x-{now/d\\\\{yyyy}}>',
  '<x-{now/d{yyyy\\}MM}}>',
  '<x-{now{yyyy}}{now{MM}}>',
  '<x-{now/d{}}>',
  '<x-{now>',
  '<x-}>',
  '<{now/d}>',
  '<>',
];

/** More, drawn at random (seeded) from pieces of the syntax. */
function drawnExpressions(count: number): string[] {
  const random = seededRandom(3737);
  const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)];
  const letters = 'uuyyYYDDMMddQqwWeecHhKkmsSSAnNgXXxxZZpp[]]\'..-_8';
  const out = new Set<string>();
  while (out.size < count) {
    const pattern = Array.from({ length: 1 + Math.floor(random() * 7) }, () => pick([...letters])).join('');
    const math = pick(['now', 'now/d', 'now+1M', 'now-13h', 'now/w', 'now+400d/y', 'now-2000d', 'now+1d/M-2h']);
    const zone = pick(['', '|+03:30', '|America/New_York', '|-11', '|Asia/Kathmandu', '|Australia/Lord_Howe']);
    out.add(`<f-{${math}{${pattern}${zone}}}>`);
  }
  return [...out];
}

forEachEngine('proxy: the index a write goes to, as the engine decides it', (ctx) => {
  const p = ctx.name('tg');
  const signedPattern = `${p}-s-*,${p}-named,.ds-${p}-dsb-*,${p}-tmpl-alias`;
  const faults = new FaultProxy(ctx.engine.url);
  let upstreamBulks = 0;
  /** Bulk requests upstream that held the action line with an unknown key. */
  let foreignKeyBulks = 0;
  let proxy: RunningProxy;
  let passing: RunningProxy;
  let counted: RunningProxy;

  const start = (extra: Partial<ProxyOptions> = {}) =>
    startProxy({ upstream: { url: ctx.engine.url }, host: '127.0.0.1', port: 0, index: signedPattern, fields: ['text'], prefix: 'near_dup', signer: {}, maxChars: 1e7, threads: 1, warn: () => undefined, onError: 'reject', maxUpstreamBytes: 16 * 1024 * 1024, ...extra });
  const stats = async (proxy: RunningProxy) => (await send(proxy.url, 'GET', '/_near_dup/stats', {})).json;

  beforeAll(async () => {
    proxy = await start();
    passing = await start({ onError: 'pass' });
    faults.decide = (r) => {
      if (r.kind === 'bulk') upstreamBulks++;
      if (r.kind === 'bulk' && r.body.includes('"foo":1')) foreignKeyBulks++;
      return 'pass';
    };
    counted = await start({ upstream: { url: await faults.start() }, maxUpstreamBytes: 64 * 1024 });
  });
  afterAll(async () => {
    await proxy?.close();
    await passing?.close();
    await counted?.close();
    await faults.stop();
    await ctx.client.request('DELETE', `/_data_stream/${p}-*`).catch(() => undefined);
    await ctx.client.request('DELETE', `/${p}-*`, undefined, { expand_wildcards: 'all' }).catch(() => undefined);
    await ctx.client.request('DELETE', `/_index_template/${p}-*`).catch(() => undefined);
    await ctx.client.request('DELETE', `/_template/${p}-*`).catch(() => undefined);
  });

  it('a query parameter given twice, or after a `;`, counts as the engine counts it: by its last value; filter_path too', async () => {
    const body = ndjson([{ index: { _id: 'q1' } }, text(1)]);
    // The proxy read the first (an index it does not sign), the engine wrote to the last.
    const twice = await send(proxy.url, 'POST', `/_bulk?index=${p}-o-first&index=${p}-s-last&refresh=true`, ND, body);
    expect([twice.status, twice.json.items[0].index._index, twice.json.items[0].index.status]).toEqual([200, `${p}-s-last`, 201]);
    const semicolon = await send(proxy.url, 'POST', `/_bulk?index=${p}-o-first;index=${p}-s-semi&refresh=true`, ND, body);
    expect(semicolon.json.items[0].index._index).toBe(`${p}-s-semi`);
    const filtered = await send(proxy.url, 'POST', `/_bulk?index=${p}-s-last&filter_path=took&filter_path=items.*._id`, ND, ndjson([{ index: { _id: 'q2' } }, text(2), { index: { _id: 'q3' } }, { other: 1 }]));
    expect(filtered.json).toEqual({ items: [{ index: { _id: 'q2' } }, { index: { _id: 'q3' } }] });
    expect(await stored(ctx, `${p}-s-*`)).toEqual({ ids: [`${p}-s-last/q1`, `${p}-s-last/q2`, `${p}-s-semi/q1`], unsigned: [] });
  });

  it('an action line with its verb twice is read as OpenSearch reads it (the first); a key twice is refused, as both engines refuse it', async () => {
    const line = `{"index":{"_index":"${p}-s-dup","_id":"v1"},"index":{"_index":"${p}-o-dup","_id":"v1"}}`;
    const twice = await send(proxy.url, 'POST', '/_bulk?refresh=true', ND, ndjson([line, text(3)]));
    if (ctx.engine.flavour === 'opensearch') expect([twice.status, twice.json.items[0].index._index]).toEqual([200, `${p}-s-dup`]);
    else expect([twice.status, twice.json.error.type]).toEqual([400, 'x_content_parse_exception']);
    expect((await stored(ctx, `${p}-s-dup*`)).unsigned).toEqual([]);
    const key = await send(proxy.url, 'POST', '/_bulk?refresh=true', ND, ndjson([`{"index":{"_index":"${p}-s-key","_index":"${p}-o-key","_id":"k1"}}`, text(4)]));
    expect([key.status, key.json.error.reason]).toEqual([400, expect.stringContaining('line 1')]);
    // "_index": null leaves the default, as in the engines: signed, where the proxy used to refuse the line.
    const nul = await send(proxy.url, 'POST', `/${p}-s-null/_bulk?refresh=true`, ND, ndjson(['{"index":{"_index":null,"_id":"n1"}}', text(5)]));
    expect([nul.status, nul.json.items[0].index._index, nul.json.items[0].index.status]).toEqual([200, `${p}-s-null`, 201]);
    const { ids, unsigned } = await stored(ctx, `${p}-s-dup*,${p}-s-key*,${p}-s-null*,${p}-o-dup*,${p}-o-key*`);
    expect(unsigned).toEqual([]);
    expect(ids).toEqual(ctx.engine.flavour === 'opensearch' ? [`${p}-s-dup/v1`, `${p}-s-null/n1`] : [`${p}-s-null/n1`]);
  });

  it('date math: the proxy resolves each expression to the name the engine resolves it to (GET /_resolve/index), or says it cannot; never another name', async () => {
    const mismatches: string[] = [];
    let resolved = 0;
    for (const expression of [...EXPRESSIONS, ...drawnExpressions(150)]) {
      const from = Date.now();
      const engine = await engineResolves(ctx, expression);
      const to = Date.now();
      const mine = new Set<string>();
      const kinds = new Set<string>();
      for (let t = from; t <= to; t++) {
        const outcome = readDateMath(expression, t);
        kinds.add(Object.keys(outcome)[0]);
        if ('name' in outcome) mine.add(outcome.name);
      }
      const said = `${expression}: engine ${JSON.stringify(engine)}, proxy ${[...kinds].join('/')} ${[...mine].slice(0, 2).join(' | ')}`;
      if ('name' in engine) {
        if (kinds.has('name')) resolved++;
        if (kinds.has('refused') || (kinds.has('name') && !mine.has(engine.name))) mismatches.push(said);
      } else if (kinds.has('name') && !(engine.error.includes('Cross-cluster') || engine.error.includes("must not start with '_'"))) {
        // Elasticsearch 9 refuses a name with `:` or a leading `_` here, as every engine refuses such a write.
        mismatches.push(said);
      }
    }
    expect(mismatches).toEqual([]);
    expect(resolved).toBeGreaterThan(120);
  }, 120_000);

  it('date math in a bulk _index, a bulk path and a document path: written where the engine resolves it, and signed; the brackets of a format read as an optional section', async () => {
    // ['-s-'] is an optional section to the engine: the index is ${p}-s-YYYY, which the proxy signs for.
    const bracketed = `<${p}{now{['-s-']yyyy}}>`;
    const bulk = await send(proxy.url, 'POST', '/_bulk?refresh=true', ND, ndjson([{ index: { _index: bracketed, _id: 'b1' } }, text(6), { create: { _index: `<${p}-o-dm-{now/d}>`, _id: 'b2' } }, text(7)]));
    const year = new Date().getUTCFullYear();
    expect(bulk.json.items.map((i: any) => [(Object.values(i)[0] as any)._index, (Object.values(i)[0] as any).status])).toEqual([
      [`${p}-s-${year}`, 201],
      [expect.stringMatching(new RegExp(`^${p}-o-dm-\\d{4}\\.\\d{2}\\.\\d{2}$`)), 201],
    ]);
    const doc = await send(proxy.url, 'PUT', `/${encodeURIComponent(`<${p}-s-doc-{now/d{yyyy[.MM]}}>`)}/_doc/d1?refresh=true`, { 'content-type': 'application/json' }, JSON.stringify(text(8)));
    expect([doc.status, doc.json._index]).toEqual([201, expect.stringMatching(new RegExp(`^${p}-s-doc-\\d{4}\\.\\d{2}$`))]);
    const inPath = await send(proxy.url, 'POST', `/${encodeURIComponent(`<${p}-s-path-{now/M{yyyy.MM}}>`)}/_bulk?refresh=true`, ND, ndjson([{ index: { _id: 'p1' } }, text(9)]));
    expect(inPath.json.items[0].index.status).toBe(201);
    const inQuery = await send(proxy.url, 'POST', `/_bulk?refresh=true&index=${encodeURIComponent(`<${p}-s-query-{now/M{yyyy.MM}}>`)}`, ND, ndjson([{ index: { _id: 'p2' } }, text(10)]));
    expect(inQuery.json.items[0].index.status).toBe(201);
    expect((await stored(ctx, `${p}-s-*`)).unsigned).toEqual([]);
    expect((await stored(ctx, `${p}-o-dm-*`)).unsigned).toEqual([`${bulk.json.items[1].create._index}/b2`]);
    const mapping = await ctx.client.request<any>('GET', `/${p}-s-${year}/_mapping`);
    expect(mapping[`${p}-s-${year}`].mappings.properties.near_dup.properties.minhash.type).toBe('binary');
  });

  it('date math the proxy cannot resolve exactly (F: OpenSearch 2 and 3 print it differently) is refused with --on-error reject, sent on unsigned and counted with pass', async () => {
    const expression = `<${p}-s-f{now{F}}>`;
    const before = (await stats(passing)).documents.passed;
    const refused = await send(proxy.url, 'POST', '/_bulk?refresh=true', ND, ndjson([{ index: { _index: expression, _id: 'f1' } }, text(11), { index: { _index: `${p}-s-fine`, _id: 'f2' } }, text(12)]));
    expect(refused.json.items.map((i: any) => i.index.status)).toEqual([400, 201]);
    expect(refused.json.items[0].index.error.reason).toMatch(/cannot tell which index .* names \(near-dup cannot resolve "F"/);
    const doc = await send(proxy.url, 'PUT', `/${encodeURIComponent(expression)}/_doc/f3`, { 'content-type': 'application/json' }, JSON.stringify(text(13)));
    expect([doc.status, doc.json.error?.reason]).toEqual([400, expect.stringContaining('cannot resolve "F"')]);
    expect((await stored(ctx, `${p}-s-f*`)).ids).toEqual([`${p}-s-fine/f2`]);
    const passed = await send(passing.url, 'POST', '/_bulk?refresh=true', ND, ndjson([{ index: { _index: expression, _id: 'f4' } }, text(14)]));
    expect(passed.json.items[0].index.status).toBe(201);
    expect((await stats(passing)).documents.passed).toBe(before + 1);
  });

  it('an alias is signed by its write index, whatever its name; an index by an alias --index names; a data stream by its write index; a new index by the alias its template gives it', async () => {
    for (const index of [`${p}-s-w1`, `${p}-s-w2`, `${p}-o-w3`, `${p}-o-w4`]) await ctx.client.request('PUT', `/${index}`);
    await ctx.client.request('POST', '/_aliases', {
      actions: [
        { add: { index: `${p}-s-w1`, alias: `${p}-al-signed`, is_write_index: false } },
        { add: { index: `${p}-s-w2`, alias: `${p}-al-signed`, is_write_index: true } },
        { add: { index: `${p}-o-w3`, alias: `${p}-al-other`, is_write_index: true } },
        { add: { index: `${p}-s-w1`, alias: `${p}-al-other` } },
        { add: { index: `${p}-s-w2`, alias: `${p}-Al-Upper` } },
        { add: { index: `${p}-o-w4`, alias: `${p}-named` } },
      ],
    });
    await ctx.client.request('PUT', `/_index_template/${p}-dsb`, { index_patterns: [`${p}-dsb-*`], data_stream: {}, priority: 900, template: { mappings: { properties: { text: { type: 'text' } } } } });
    await ctx.client.request('PUT', `/_index_template/${p}-t`, { index_patterns: [`${p}-t-*`], priority: 900, template: { aliases: { [`${p}-tmpl-alias`]: {} } } });
    await ctx.client.request('PUT', `/_template/${p}-leg`, { index_patterns: [`${p}-leg-*`], aliases: { [`${p}-tmpl-alias`]: {} } });
    // The data stream exists before the proxy writes to it (its backing index is what --index names).
    await ctx.client.request('POST', `/${p}-dsb-1/_doc?refresh=true`, { '@timestamp': '2026-01-01T00:00:00Z', text: 'made directly' });
    const at = (i: number) => ({ '@timestamp': new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString(), ...text(i) });
    const items = [
      [{ index: { _index: `${p}-al-signed`, _id: 'a1' } }, text(20)],
      [{ index: { _index: `${p}-al-other`, _id: 'a2' } }, text(21)],
      [{ index: { _index: `${p}-Al-Upper`, _id: 'a3' } }, text(22)],
      [{ index: { _index: `${p}-o-w4`, _id: 'a4' } }, text(23)],
      [{ index: { _index: `${p}-named`, _id: 'a5' } }, text(24)],
      [{ create: { _index: `${p}-dsb-1` } }, at(25)],
      [{ index: { _index: `${p}-t-1`, _id: 'a7' } }, text(26)],
      [{ index: { _index: `${p}-leg-1`, _id: 'a8' } }, text(27)],
    ].flat();
    const bulk = await send(proxy.url, 'POST', '/_bulk?refresh=true', ND, ndjson(items));
    expect(bulk.json.items.map((i: any) => [(Object.values(i)[0] as any)._index, (Object.values(i)[0] as any).status])).toEqual([
      [`${p}-s-w2`, 201],
      [`${p}-o-w3`, 201],
      [`${p}-s-w2`, 201],
      [`${p}-o-w4`, 201],
      [`${p}-o-w4`, 201],
      [expect.stringMatching(new RegExp(`^\\.ds-${p}-dsb-1-`)), 201],
      [`${p}-t-1`, 201],
      [`${p}-leg-1`, 201],
    ]);
    const signedOnes = await stored(ctx, `${p}-s-w*,${p}-o-w4,.ds-${p}-dsb-*,${p}-t-*,${p}-leg-*`);
    expect(signedOnes.unsigned.map((id) => id.replace(/\/[^/]*$/, ''))).toEqual([expect.stringMatching(new RegExp(`^\\.ds-${p}-dsb-1-`))]); // only the one made directly
    expect(signedOnes.ids.length).toBe(8);
    // The alias whose write index the proxy does not sign for: its document goes on as it was, counted.
    expect((await stored(ctx, `${p}-o-w3`)).unsigned).toEqual([`${p}-o-w3/a2`]);
    // A single document through the alias too.
    const one = await send(proxy.url, 'PUT', `/${p}-al-signed/_doc/a9?refresh=true`, { 'content-type': 'application/json' }, JSON.stringify({ title: 'no text' }));
    expect([one.status, one.json.error?.type]).toEqual([400, 'near_dup_signing_exception']);
    const lookups = (await stats(proxy)).target_lookups;
    expect(lookups.made).toBeGreaterThan(0);
  });

  it('an exclusion through an alias, as the engines expand it: a wildcard leaves out the indices behind it, the exact name does not', async () => {
    for (const index of [`${p}-e-1`, `${p}-e-2`]) await ctx.client.request('PUT', `/${index}`);
    await ctx.client.request('POST', '/_aliases', { actions: [{ add: { index: `${p}-e-2`, alias: `${p}-ex-al` } }] });
    for (const [pattern, expected] of [
      [`${p}-e-*,-${p}-ex-*`, [`${p}-e-1`]],
      [`${p}-e-*,-${p}-ex-al`, [`${p}-e-1`, `${p}-e-2`]],
    ] as const) {
      // The engine's own expansion of the pattern...
      const expansion = Object.keys(await ctx.client.request<Record<string, unknown>>('GET', `/${pattern}/_alias`)).sort();
      expect(expansion).toEqual(expected);
      // ...is what the proxy signs for.
      const excluding = await start({ index: pattern });
      try {
        await send(excluding.url, 'POST', '/_bulk?refresh=true', ND, ndjson([{ index: { _index: `${p}-e-1`, _id: pattern } }, text(30), { index: { _index: `${p}-e-2`, _id: pattern } }, text(31)]));
      } finally {
        await excluding.close();
      }
      const found = await ctx.client.request<any>('POST', `/${p}-e-*/_search`, { query: { ids: { values: [pattern] } }, size: 10 });
      const signedIn = found.hits.hits.filter((h: any) => h._source.near_dup !== undefined).map((h: any) => h._index).sort();
      expect(signedIn).toEqual(expected);
    }
  });

  it('a refusal of the request itself (an unknown query parameter) comes back as the engine gave it, after one request upstream; one item the engine refuses is still narrowed down to', async () => {
    const lines = Array.from({ length: 300 }, (_, i) => [{ index: { _index: `${p}-s-i4`, _id: `u${i}` } }, text(i)]).flat();
    const direct = await send(ctx.engine.url, 'POST', '/_bulk?foo=1', ND, ndjson(lines));
    upstreamBulks = 0;
    const answer = await send(counted.url, 'POST', '/_bulk?foo=1', ND, ndjson(lines));
    expect(answer.status).toBe(400);
    expect(answer.json.error.type).toBe('illegal_argument_exception');
    expect(answer.json).toEqual(direct.json);
    expect(upstreamBulks).toBe(1);
    expect(await ctx.client.count(`${p}-s-i4`).catch(() => 0)).toBe(0);
    // The same 300 items with one id the engine refuses: that item alone fails, in its place.
    upstreamBulks = 0;
    const long = 'x'.repeat(600);
    const oneBad = await send(counted.url, 'POST', '/_bulk?refresh=true', ND, ndjson(lines.map((l, i) => (i === 2 * 150 ? { index: { _index: `${p}-s-i4`, _id: long } } : l))));
    expect(oneBad.status).toBe(200);
    expect(oneBad.json.items.filter((i: any) => i.index.status >= 300).map((i: any) => [i.index._id, i.index.error.type])).toEqual([[long, 'action_request_validation_exception']]);
    expect(upstreamBulks).toBeGreaterThan(1);
    expect(upstreamBulks).toBeLessThan(60);
  });

  it('a refusal of a later part for the request itself (an unknown key in an action line): the earlier parts were applied and said so, the rest answered with the engine\'s error, nothing split', async () => {
    const index = `${p}-s-later`;
    const lines = Array.from({ length: 1000 }, (_, i) => [i === 700 ? `{"index":{"_index":"${index}","_id":"l${i}","foo":1}}` : { index: { _index: index, _id: `l${i}` } }, text(i)]).flat();
    foreignKeyBulks = 0;
    const answer = await send(counted.url, 'POST', '/_bulk?refresh=true', ND, ndjson(lines));
    expect(answer.status).toBe(200);
    const items = answer.json.items.map((i: any) => i.index);
    expect(items.length).toBe(1000);
    const failed = items.filter((i: any) => i.status >= 300);
    expect(new Set(failed.map((i: any) => i.error.type))).toEqual(new Set(['illegal_argument_exception']));
    expect(failed[0].error.reason).toMatch(/unknown parameter \[foo\]/);
    const applied = items.filter((i: any) => i.status < 300).length;
    expect(applied).toBeGreaterThan(0);
    expect(items.slice(0, applied).every((i: any) => i.status < 300)).toBe(true);
    expect(await ctx.client.count(index)).toBe(applied);
    // The part holding that line went once: not again in halves.
    expect(foreignKeyBulks).toBe(1);
  });
});
