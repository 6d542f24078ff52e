// Which index a write goes to, read as the engines read it (issue 37, item 3), and which refusals of a bulk
// part are an item's (item 4). The expected names of date math are the engines' own answers (GET
// /_resolve/index/<expr> on OpenSearch 2.19 and 3.8 and Elasticsearch 9.5 agreed on each);
// test/integration/proxy-targets.test.ts asks them again, live. The cluster here is a small HTTP server
// that answers as an engine does: these tests are about what the proxy asks and decides.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Upstream } from '../../src/proxy/forward.js';
import { readAction, withIndex } from '../../src/proxy/bulk-items.js';
import { readDateMath, resolveDateMath } from '../../src/proxy/date-math.js';
import { indexMatcher } from '../../src/proxy/index-pattern.js';
import { decodeSegment, lastParam, queryParams, queryString, withFirstSegment } from '../../src/proxy/raw-path.js';
import { isWritableName, WriteTargets, writeIndexOf } from '../../src/proxy/targets.js';
import { itemRefusal, UpstreamParts } from '../../src/proxy/upstream-parts.js';

describe('query strings and paths, as the engines read them', () => {
  const index = (target: string) => {
    const params = queryParams(target);
    return params && lastParam(params, 'index');
  };

  it('a parameter given twice counts by its last value; `;` separates parameters too; the query ends at #', () => {
    expect(index('/_bulk?index=a&index=b')).toBe('b');
    expect(index('/_bulk?index=a;index=b')).toBe('b');
    expect(index('/_bulk?index=a#&index=b')).toBe('a');
    expect(index('/x#y/_bulk?index=b')).toBeUndefined();
    expect(index('/_bulk?index=a&index')).toBe('');
    expect(queryParams('/_bulk?=index')?.map((p) => [p.name, p.value])).toEqual([['index', '']]);
    expect(index('/_bulk?index=a=b')).toBe('a=b');
  });

  it('+ is a space in a query string and a + in a path; %% is a %; a bad escape makes the engines refuse the request', () => {
    expect(index('/_bulk?index=news+a')).toBe('news a');
    expect(index('/_bulk?index=news%2Ba')).toBe('news+a');
    expect(index('/_bulk?index=%3Cnews-%7Bnow%2Fd%7D%3E')).toBe('<news-{now/d}>');
    expect(queryParams('/_bulk?index=news%zz')).toBeUndefined();
    expect(queryParams('/_bulk?refresh=true&x=%')).toBeUndefined();
    expect(decodeSegment('news+a')).toBe('news+a');
    expect(decodeSegment('news%%a')).toBe('news%a');
    expect(decodeSegment('news%2')).toBeUndefined();
  });

  it('a query string sent on keeps its parameters as they came; a path takes a resolved index in place of the first segment', () => {
    const params = queryParams('/_bulk?filter_path=items.*.error;refresh=wait_for&index=%3Ca%3E') ?? [];
    expect(queryString(params, ['filter_path', 'index'], ['index=a-1'])).toBe('?refresh=wait_for&index=a-1');
    expect(withFirstSegment('/%3Cnews-%7Bnow%2Fd%7D%3E/_doc/1?refresh=true', 'news-2026.03.29')).toBe('/news-2026.03.29/_doc/1?refresh=true');
  });
});

describe('action lines, as the engines read them', () => {
  const action = (line: string, dflt = 'dflt') => readAction(Buffer.from(line), dflt);

  it('the first verb is the action and what follows its object is left aside (OpenSearch writes there; Elasticsearch refuses the line)', () => {
    // JSON.parse would take the last: the proxy signed for b while OpenSearch wrote to a.
    expect(action('{"index":{"_index":"a"},"index":{"_index":"b"}}')).toMatchObject({ verb: 'index', index: 'a' });
    expect(action('{"index":{"_index":"a"},"create":{"_index":"b"}}')).toMatchObject({ verb: 'index', index: 'a' });
  });

  it('a key given twice in the metadata is refused by the engines: unreadable', () => {
    expect(action('{"index":{"_index":"a","_index":"b"}}')).toBeUndefined();
    expect(action('{"index":{"_id":"1","_id":"2"}}')).toBeUndefined();
  });

  it('values read as their text; null, or no _index, leaves the default; escapes, a byte order mark, comments', () => {
    expect(action('{"index":{"_index":42}}')).toMatchObject({ index: '42', ownIndex: true });
    expect(action('{"index":{"_index":1.50,"_id":1e3}}')).toMatchObject({ index: '1.50', id: '1e3' });
    expect(action('{"index":{"_index":true}}')).toMatchObject({ index: 'true' });
    expect(action('{"index":{"_index":null}}')).toMatchObject({ index: 'dflt', ownIndex: false });
    expect(action('{"index":{}}')).toMatchObject({ index: 'dflt', ownIndex: false });
    expect(action('{"index":{"\\u005findex":"b"}}')).toMatchObject({ index: 'b' });
    expect(action('\uFEFF{"create":{"_index":"b"}}')).toMatchObject({ verb: 'create', index: 'b' });
    expect(action('/* a */ {"index" /* b */ : {"_index":"c"}} // d')).toMatchObject({ index: 'c' });
    expect(action('/* only a comment */')).toBe('blank');
    expect(action('{"index":{"_index":"a","_source":{"includes":["x"]}}}')).toMatchObject({ index: 'a' });
  });

  it('what the engines refuse is unreadable: an array or an object for a simple value, an unknown verb, bad JSON, bytes that are not UTF-8', () => {
    for (const line of ['{"index":{"_index":["a"]}}', '{"index":{"_index":{"x":1}}}', '{"upsert":{}}', '{"index":{"_index":"a",}}', '{"index":"a"}', '{}', "{'index':{}}", '# c']) {
      expect(action(line), line).toBeUndefined();
    }
    expect(readAction(Buffer.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0x7b, 0x7d, 0x7d]), 'd')).toBeUndefined();
  });

  it('a resolved index goes in place of the _index string, the rest of the line as it was', () => {
    const line = Buffer.from('{ "index" : { "_index" : "<news-{now/d}>", "_id": 12345678901234567890 } } ');
    const read = action(line.toString());
    if (!read || read === 'blank' || !read.indexSpan) throw new Error('not read');
    expect(Buffer.from(withIndex(line, read.indexSpan, 'news-2026.03.29')).toString()).toBe('{ "index" : { "_index" : "news-2026.03.29", "_id": 12345678901234567890 } } ');
  });
});

describe('date math: the engines full syntax', () => {
  // The engines' answers, from GET /_resolve/index/<expr> on OpenSearch 2.19, 3.8 and Elasticsearch 9.5.
  it.each([
    ['<logs-{2026.03.29||+1d{yyyy.MM[.dd]}}>', 'logs-2026.03.30'],
    ['<logs-{2026.03||{yyyy[.MM[.dd]]}}>', 'logs-2026.03.01'],
    ['<logs-{2026.03.29.01.30||+1h{yyyy.MM.dd.HH.mm|Europe/Paris}}>', 'logs-2026.03.29.03.30'],
    ['<logs-{2026.03.28.02.30||+1d{yyyy.MM.dd.HH.mm|Europe/Paris}}>', 'logs-2026.03.29.03.30'],
    ['<logs-{2026.10.25.02.30||+1h{yyyy.MM.dd.HH.mm|Europe/Paris}}>', 'logs-2026.10.25.02.30'],
    ['<logs-{2026.10.24.02.30||+1d{yyyy.MM.dd.HH.mm|Europe/Paris}}>', 'logs-2026.10.25.02.30'],
    ['<logs-{2026.10.25.02.30||/h+1h{yyyy.MM.dd.HH.mm|Europe/Paris}}>', 'logs-2026.10.25.02.00'],
    ['<logs-{2018.11.04.12.00||/d{yyyy.MM.dd.HH.mm|America/Sao_Paulo}}>', 'logs-2018.11.04.01.00'],
    ['<logs-{2024.02.29||+1y{yyyy.MM.dd}}>', 'logs-2025.02.28'],
    ['<logs-{2024.01.31||+1M{uuuu.MM.dd}}>', 'logs-2024.02.29'],
    ['<logs-{2024.03.31||-1M/M}>', 'logs-2024.02.01'],
    ['<logs-{2026.03.29||/w{yyyy.MM.dd|-0930}}>', 'logs-2026.03.23'],
    ['<logs-{0001.01.01||-1d{uuuu.MM.dd}}>', 'logs-0000.12.31'],
    ['<logs-{0001.01.01||-1d{yyyy.MM.dd}}>', 'logs-0001.12.31'],
    ['<logs-{2026.3.9||+1M{uuuu.M.d}}>', 'logs-2026.4.9'],
    ['<x\\{y\\}-{2026.03.29||+1d}>', 'x{y}-2026.03.30'],
    ['<x\\\\y-{2026.03.29}>', 'x\\y-2026.03.29'],
    ['<x-{2026.03.29||+1d{yyyy.MM.dd|UTC+05:30}}>', 'x-2026.03.30'],
    ["<logs-{2026.03.29 x||{yyyy.MM.dd[ 'x']}}>", 'logs-2026.03.29 x'],
    ['<logs-{2018.11.04.00||{yyyy.MM.dd.HH|America/Sao_Paulo}}>', 'logs-2018.11.04.01'],
    ['<logs-{0000.01.01||{uuuu.MM.dd}}>', 'logs-0000.01.01'],
  ])('%s is %s', (name, expected) => {
    expect(readDateMath(name, Date.now())).toEqual({ name: expected });
  });

  // 2026-11-27T00:16:33.123Z, a Friday: the engines' answers at that time (now-relative, read back live).
  const at = Date.UTC(2026, 10, 27, 0, 16, 33, 123);
  it.each([
    ['<a-{now}>', 'a-2026.11.27'],
    ['<a-{now+d}>', 'a-2026.11.28'],
    ['<a-{now/1d}>', 'a-2026.11.27'],
    ['<a-{now{8yyyy}}>', 'a-2026'],
    ['<a-{now{ yyyy }}>', 'a-2026'],
    ['<a-{now{yyyy.MM.dd.HH|ROC}}>', 'a-2026.11.27.08'],
    ['<a-{now{yyyyMMddX|+05:30}}>', 'a-20261127+0530'],
    ['<a-{now{x|+05:30}}>', 'a-+0530'],
    ['<a-{now{k.K.h}}>', 'a-24.0.12'],
    ['<a-{now{u.uuu.uuuuu.yy}}>', 'a-2026.2026.02026.26'],
    ['<a-{now{D.DD.g.Q}}>', 'a-331.331.61371.4'],
    ['<a-{now{YYYY.ww.e.W}}>', 'a-2026.48.6.4'],
    ['<a-{now+2d{YYYY.ww.e}}>', 'a-2026.49.1'],
    ['<a-{now+35d{YYYY.ww.e}}>', 'a-2027.01.6'],
    ['<a-{now{ppd}}>', 'a-27'],
    ['<a-{now{S.SSSS.n}}>', 'a-1.1230.123000000'],
    ['<a-{now{strict_date}}>', 'a-2026-11-27'],
    ['<a-{now{basic_date}}>', 'a-20261127'],
    ['<a-{now{year_month}}>', 'a-2026-11'],
    ['<a-{now{ordinal_date}}>', 'a-2026-331'],
    ['<a-{now/s{epoch_second}}>', 'a-1795738593'],
    ['<a-{now{epoch_second}}>', 'a-1795738593.123'],
    ['<a-{now{epoch_millis}}>', 'a-1795738593123'],
    ["<x-{now{'q'yyyy''}}>", "x-q2026'"],
    ['<x-{now/d\\\\{yyyy}}>', 'x-\\2026'],
    ['<x-{now{yyyy}}{now{MM}}>', 'x-202611'],
  ])('%s at a fixed time is %s', (name, expected) => {
    expect(readDateMath(name, at)).toEqual({ name: expected });
  });

  it.each([
    ['<a-{now/2d}>', 'rounding'],
    ['<a-{now-1}>', 'truncated'],
    ['<a-{now+1d/d }>', 'operator'],
    ['<a-{ now}>', 'failed to parse'],
    ['<a-{now{yyyy]}}>', 'without previous'],
    ['<a-{now{pd}}>', 'pad width'],
    ['<a-{now{pmd}}>', 'padded number'],
    ['<a-{now{DDDD}}>', 'too many'],
    ['<a-{now{SSSSSSSSSS}}>', 'from 0 to 9'],
    ['<a-{now{yyyy|+1:00}}>', 'offset'],
    ['<a-{now{yyyy| UTC}}>', 'time zone'],
    ["<a-{now{yyyy'}}>", 'incomplete'],
    ['<a-{now/d{yyyy\\}MM}}>', 'reserved character'],
    ['<a-{now/d{yyyy}MM}>', 'missing closing'],
    ['<x\\\\{y-{now/d}>', 'open ended'],
    ['<>', 'nothing captured'],
  ])('%s is refused by the engines, and said so', (name, why) => {
    expect(readDateMath(name, at)).toEqual({ refused: expect.stringContaining(why) });
  });

  it.each([['<a-{now{MMM}}>'], ['<a-{now{EEE}}>'], ['<a-{now{F}}>'], ['<a-{now{basicDate}}>'], ['<a-{now{date_hour}}>'], ['<a-{now{yyyy|europe/paris}}>'], ['<a-{now+500000000d}>'], ['<a-{2026.003.01||{yyyy.M.dd}}>']])(
    '%s is not resolved: unsupported, never a guessed name',
    (name) => {
      expect(readDateMath(name, at)).toEqual({ unsupported: expect.any(String) });
      expect(resolveDateMath(name, new Date(at))).toBeUndefined();
    },
  );
});

describe('index names, aliases, data streams', () => {
  it('--index covers an index as the engines expand it: by its name, an alias of it, or its data stream; an exact exclusion takes away that name only', () => {
    const m = indexMatcher('news-*,edition');
    expect(m.covers({ index: 'archive-1', hidden: false, through: ['edition'] })).toBe(true); // the alias edition names it
    expect(m.covers({ index: 'archive-1', hidden: false, through: ['old'] })).toBe(false);
    expect(indexMatcher('ed*').covers({ index: 'archive-1', hidden: false, through: ['edition'] })).toBe(true);
    // Tested on both engines: GET /t37e-*,-t37ex-al/_alias keeps the index behind the alias; -t37ex-* leaves it out.
    expect(indexMatcher('news-*,-news-old').covers({ index: 'news-2', hidden: false, through: ['news-old'] })).toBe(true);
    expect(indexMatcher('news-*,-news-old*').covers({ index: 'news-2', hidden: false, through: ['news-old'] })).toBe(false);
    expect(indexMatcher('*,-news-2').covers({ index: 'news-2', hidden: false, through: ['edition'] })).toBe(false);
    expect(indexMatcher('edition,-news-2').covers({ index: 'news-2', hidden: false, through: ['edition'] })).toBe(true);
    expect(indexMatcher('edition,news-1,-edition').covers({ index: 'news-2', hidden: false, through: ['edition'] })).toBe(false);
    expect(indexMatcher('news-*,-news-old').excludes).toBe(true);
    expect(indexMatcher('logs-*').covers({ index: 'logs-hidden', hidden: true, through: [] })).toBe(false);
    expect(indexMatcher('logs-hidden').covers({ index: 'logs-hidden', hidden: true, through: [] })).toBe(true);
    expect(indexMatcher('logs-*').covers({ index: '.ds-logs-app-000001', hidden: true, through: ['logs-app'] })).toBe(true);
    expect(indexMatcher('.ds-logs-*').covers({ index: '.ds-logs-app-000001', hidden: true, through: ['logs-app'] })).toBe(true);
    expect(indexMatcher('*').covers({ index: '.mine', hidden: false, through: [] })).toBe(true);
    expect(indexMatcher('*')('.mine')).toBe(false); // by its name alone, a dotted index is taken as hidden
  });

  it('an alias writes to its write index, or its only index; none, and the engine refuses the write', () => {
    expect(writeIndexOf('al', { w1: { aliases: { al: { is_write_index: false }, x: {} } }, w2: { aliases: { al: { is_write_index: true } } } })).toEqual({ index: 'w2', hidden: false, through: ['al'] });
    expect(writeIndexOf('al', { w1: { aliases: { al: {}, other: {} } } })).toEqual({ index: 'w1', hidden: false, through: ['al', 'other'] });
    expect(writeIndexOf('al', { w1: { aliases: { al: {} } }, w2: { aliases: { al: {} } } })).toBeUndefined();
    expect(writeIndexOf('al', { w1: { aliases: { al: { is_write_index: false } } } })).toBeUndefined();
  });

  it('names no index or alias can have are refused by the engines (upper case aside: an alias may have it)', () => {
    for (const name of ['a,b', '*', 'news-*', '_all', '-a', '+a', 'a b', 'a:b', 'a#b', 'a/b', '.', '..', '', 'x'.repeat(256)]) expect(isWritableName(name), name).toBe(false);
    for (const name of ['News', 'a..', '.kibana', 'é'.repeat(127)]) expect(isWritableName(name), name).toBe(true);
  });
});

/** A cluster that answers the lookups of WriteTargets from a table, and counts them. */
function fakeCluster(answer: (method: string, url: string) => [number, unknown]) {
  const seen: string[] = [];
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      seen.push(`${req.method} ${req.url}`);
      const [status, body] = answer(req.method ?? '', req.url ?? '');
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(typeof body === 'string' ? body : JSON.stringify(body));
    });
  });
  return { server, seen };
}

const notFound = (index: string): [number, unknown] => [404, { error: { type: 'index_not_found_exception', reason: `no such index [${index}]`, index }, status: 404 }];

describe('where a write lands: asking the cluster', () => {
  const cluster = fakeCluster((method, url) => {
    const path = decodeURIComponent(url.split('?')[0]);
    if (path === '/_resolve/index/to-signed') return [200, { indices: [], aliases: [{ name: 'to-signed', indices: ['signed-1', 'signed-2'] }], data_streams: [] }];
    if (path === '/to-signed/_alias') return [200, { 'signed-1': { aliases: { 'to-signed': { is_write_index: false } } }, 'signed-2': { aliases: { 'to-signed': { is_write_index: true } } } }];
    if (path === '/_resolve/index/to-other') return [200, { indices: [], aliases: [{ name: 'to-other', indices: ['signed-3', 'other-1'] }], data_streams: [] }];
    if (path === '/to-other/_alias') return [200, { 'signed-3': { aliases: { 'to-other': {} } }, 'other-1': { aliases: { 'to-other': { is_write_index: true } } } }];
    if (path === '/_resolve/index/stream') return [200, { indices: [], aliases: [], data_streams: [{ name: 'stream', backing_indices: ['.ds-stream-000001', '.ds-stream-000002'] }] }];
    if (path === '/_resolve/index/behind-edition') return [200, { indices: [{ name: 'behind-edition', aliases: ['edition'], attributes: ['open'] }], aliases: [], data_streams: [] }];
    if (path === '/_resolve/index/plain') return [200, { indices: [{ name: 'plain', attributes: ['open'] }], aliases: [], data_streams: [] }];
    if (path === '/_resolve/index/secret') return [403, { error: { type: 'security_exception', reason: 'action [indices:admin/resolve/index] is unauthorized for user [ann]' }, status: 403 }];
    if (path.startsWith('/_resolve/index/')) return notFound(path.slice('/_resolve/index/'.length));
    if (path === '/_index_template/_simulate_index/fresh-templated') return [200, { template: { aliases: { edition: {} } } }];
    if (path === '/_index_template/_simulate_index/fresh-legacy') return [200, {}];
    if (path.startsWith('/_index_template/_simulate_index/')) return [200, {}];
    if (path === '/_template' && method === 'GET') return [200, { old: { index_patterns: ['fresh-leg*'], aliases: { '{index}-alias': {}, edition: {} } } }];
    return [400, { error: { type: 'illegal_argument_exception', reason: `unexpected ${method} ${url}` } }];
  });
  let targets: WriteTargets;
  let upstream: Upstream;

  beforeAll(async () => {
    await new Promise<void>((resolve) => cluster.server.listen(0, '127.0.0.1', resolve));
    upstream = new Upstream({ url: `http://127.0.0.1:${(cluster.server.address() as AddressInfo).port}` });
    targets = new WriteTargets(upstream, indexMatcher('signed-*,.ds-stream-*,edition'), () => undefined);
  });
  afterAll(() => {
    upstream?.close();
    cluster.server.close();
  });

  const decide = (name: string) => targets.decide(name, ['authorization', 'Basic YW5uOnB3'], Date.UTC(2026, 2, 29, 12));

  it('an alias whose write index is signed is signed, whatever its name; one whose write index is not goes on as other', async () => {
    expect(await decide('to-signed')).toEqual({ kind: 'signed', index: 'to-signed', rewritten: false });
    expect(await decide('to-other')).toEqual({ kind: 'other', index: 'to-other', rewritten: false });
  });

  it('a data stream by its write index; an index by an alias --index names; a new index by the aliases its template gives', async () => {
    expect((await decide('stream')).kind).toBe('signed');
    expect((await decide('behind-edition')).kind).toBe('signed');
    expect((await decide('plain')).kind).toBe('other');
    expect((await decide('fresh-templated')).kind).toBe('signed');
    expect((await decide('fresh-legacy')).kind).toBe('signed');
    expect((await decide('fresh-plain')).kind).toBe('other');
  });

  it('a name --index matches needs no lookup; one no index can have neither; answers are kept a few seconds', async () => {
    const before = cluster.seen.length;
    expect(await decide('signed-9')).toEqual({ kind: 'signed', index: 'signed-9', rewritten: false });
    expect(await decide('a,b')).toEqual({ kind: 'other', index: 'a,b', rewritten: false });
    expect((await decide('to-signed')).kind).toBe('signed');
    expect(cluster.seen.length).toBe(before);
  });

  it('date math is resolved and the request sent on with the name it resolves to; what cannot be resolved exactly is undecided', async () => {
    expect(await decide('<signed-{now/d}>')).toEqual({ kind: 'signed', index: 'signed-2026.03.29', rewritten: true });
    expect(await decide('<other-{now/M{yyyy.MM}}>')).toEqual({ kind: 'other', index: 'other-2026.03', rewritten: true });
    expect(await decide('<signed-{now{F}}>')).toEqual({ kind: 'undecided', reason: expect.stringContaining('cannot resolve "F"') });
  });

  it('a lookup the cluster refuses (the client may not view the index) leaves the write undecided, with the reason and no credential in it', async () => {
    const decided = await decide('secret');
    expect(decided).toEqual({ kind: 'undecided', reason: expect.stringMatching(/could not tell which index a write to "secret" lands in .*403 security_exception/) });
    expect(JSON.stringify(decided)).not.toContain('YW5u');
    expect(cluster.seen.filter((s) => s.includes('/_resolve/index/secret')).length).toBe(1);
    expect(targets.failedLookups).toBeGreaterThanOrEqual(1);
  });

  it('with an exclusion in --index, a name it matches is looked up too: left out through its alias by a wildcard, not by the exact name', async () => {
    const ex = new WriteTargets(upstream, indexMatcher('*,-edi*'), () => undefined);
    expect((await ex.decide('behind-edition', [])).kind).toBe('other');
    expect((await ex.decide('plain', [])).kind).toBe('signed');
    const exact = new WriteTargets(upstream, indexMatcher('*,-edition'), () => undefined);
    expect((await exact.decide('behind-edition', [])).kind).toBe('signed');
  });
});

describe('a refusal of a bulk part: an item\'s, or the request\'s', () => {
  const validation = (reason: string) => JSON.stringify({ error: { root_cause: [], type: 'action_request_validation_exception', reason }, status: 400 });
  const unknownParameter = JSON.stringify({ error: { type: 'illegal_argument_exception', reason: 'request [/_bulk] contains unrecognized parameter: [foo]' }, status: 400 });

  it('only a 413 or the validation of the items is an item\'s', () => {
    expect(itemRefusal(413, '')).toBe(true);
    expect(itemRefusal(400, validation('Validation Failed: 1: id [x] is too long'))).toBe(true);
    expect(itemRefusal(400, unknownParameter)).toBe(false);
    expect(itemRefusal(400, '{"error":{"type":"x_content_parse_exception","reason":"[1:2] Unexpected character"}}')).toBe(false);
    expect(itemRefusal(400, 'not json')).toBe(false);
    expect(itemRefusal(429, validation('x'))).toBe(false);
  });

  // The engine: a request with ?foo is refused whole; with item "bad" its validation fails (naming it); with
  // ?everything every request fails validation alike.
  let requests = 0;
  const engine = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      requests++;
      const ids = body
        .split('\n')
        .filter((l) => l.startsWith('{"index"'))
        .map((l) => JSON.parse(l).index._id as string);
      res.setHeader('content-type', 'application/json');
      if (req.url?.includes('foo=')) res.writeHead(400).end(unknownParameter);
      else if (req.url?.includes('everything=')) res.writeHead(400).end(validation('Validation Failed: 1: no requests added;'));
      else if (ids.includes('bad')) res.writeHead(400).end(validation('Validation Failed: 1: id [bad] is too long;'));
      else res.writeHead(200).end(JSON.stringify({ took: 1, errors: false, items: ids.map((id) => ({ index: { _id: id, status: 201 } })) }));
    });
  });
  let upstream: Upstream;
  beforeAll(async () => {
    await new Promise<void>((resolve) => engine.listen(0, '127.0.0.1', resolve));
    upstream = new Upstream({ url: `http://127.0.0.1:${(engine.address() as AddressInfo).port}` });
  });
  afterAll(() => {
    upstream?.close();
    engine.close();
  });

  /** 300 items through UpstreamParts in one part; the answers, as text, and the requests made. */
  async function send(query: string, bad = -1) {
    requests = 0;
    const parts = new UpstreamParts(upstream, 'POST', `/_bulk${query}`, ['content-type', 'application/x-ndjson'], 1 << 30);
    for (let i = 0; i < 300; i++) {
      const id = i === bad ? 'bad' : `d${i}`;
      await parts.write([Buffer.from(`{"index":{"_id":"${id}"}}\n{"t":${i}}\n`)], { verb: 'index', index: 'x', id });
    }
    const answers = await parts.finish(true);
    const texts = await Promise.all(answers.map(async (a) => ({ status: a.status, text: await new Response(a.body as unknown as ReadableStream).text() })));
    return { texts, requests };
  }

  it('an unknown query parameter: the engine\'s 400 as it gave it, after one request (it was split in halves: 599 requests)', async () => {
    const { texts, requests: made } = await send('?foo=1');
    expect(made).toBe(1);
    expect(texts).toEqual([{ status: 400, text: unknownParameter }]);
  });

  it('one item the engine refuses: split down to it, the others applied', async () => {
    const { texts, requests: made } = await send('', 137);
    expect(texts.length).toBe(1);
    const joined = JSON.parse(texts[0].text);
    expect(joined.items.length).toBe(300);
    expect(joined.items.filter((i: { index: { status: number } }) => i.index.status >= 300).map((i: { index: { _id: string } }) => i.index._id)).toEqual(['bad']);
    expect(made).toBeLessThan(40);
  });

  it('a validation refusal every request gets alike: splitting stops at the first two halves refused alike, and the refusal goes back as the engine gave it', async () => {
    const { texts, requests: made } = await send('?everything=1');
    expect(texts).toEqual([{ status: 400, text: validation('Validation Failed: 1: no requests added;') }]);
    expect(made).toBeLessThanOrEqual(12);
  });
});
