// The proxy's pure parts: which indices it signs for, how a bulk body is read, how sources are signed
// without losing their bytes, how answers are joined and filtered, and which requests it handles.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createSigner } from '../../src/signature.js';
import { signSources, withoutPrefixKeys } from '../../src/signing/sign-sources.js';
import { appendMembers as spliceMembers } from '../../src/signing/source-text.js';
import { bulkItems, readAction } from '../../src/proxy/bulk-items.js';
import { resolveDateMath } from '../../src/proxy/date-math.js';
import { isJsonMediaType } from '../../src/proxy/request-body.js';
import { LineTooLongError, lineBatches } from '../../src/signing/line-batches.js';
import { applyFilterPath, mergeBulkAnswers } from '../../src/proxy/bulk-response.js';
import { indexMatcher } from '../../src/proxy/index-pattern.js';
import { routeOf } from '../../src/proxy/server.js';
import { decodeSegment, rawPath } from '../../src/proxy/raw-path.js';
import { parseListen } from '../../src/cli/commands/proxy.js';

describe('index patterns', () => {
  it('names, wildcards, exclusions read left to right, hidden indices only by a dotted pattern', () => {
    const m = indexMatcher('news-*,-news-old*,archive');
    expect(['news-2024', 'archive', 'news-old-1', 'archive2', '.news-x'].map(m)).toEqual([true, true, false, false, false]);
    expect(indexMatcher('*')('.kibana')).toBe(false);
    expect(indexMatcher('.logs*')('.logs-1')).toBe(true);
    expect(indexMatcher('_all')('x')).toBe(true);
    expect(indexMatcher('a.b')('axb')).toBe(false);
    expect(() => indexMatcher('news,,x')).toThrow(/empty name/);
    expect(() => indexMatcher('-news')).toThrow(/starts with an exclusion/);
  });
});

describe('bulk bodies', () => {
  const read = async (text: string, chunk = 7) => {
    const bytes = Buffer.from(text);
    const chunks = [];
    for (let i = 0; i < bytes.length; i += chunk) chunks.push(bytes.subarray(i, i + chunk));
    const out = [];
    for await (const entry of bulkItems(Readable.from(chunks), 'dflt', Number.POSITIVE_INFINITY, 16)) {
      out.push(
        entry.kind === 'raw'
          ? { raw: Buffer.from(entry.bytes).toString() }
          : { p: entry.position, verb: entry.verb, index: entry.index, id: entry.id, source: entry.sourceLine && Buffer.from(entry.sourceLine).toString() },
      );
    }
    return out;
  };

  it('pairs actions with sources across chunk ends, deletes without one, the index from the path by default', async () => {
    const body = '{"index":{"_index":"a","_id":"1"}}\n{"t":"x"}\n{"delete":{"_id":2}}\n\n{"create":{}}\r\n{"t":"y"}\r\n{"update":{"_id":"3"}}\n{"doc":{"t":"z"}}\n';
    expect(await read(body)).toEqual([
      { p: 0, verb: 'index', index: 'a', id: '1', source: '{"t":"x"}' },
      { p: 1, verb: 'delete', index: 'dflt', id: '2', source: undefined },
      { raw: '\n' },
      { p: 2, verb: 'create', index: 'dflt', id: undefined, source: '{"t":"y"}\r' },
      { p: 3, verb: 'update', index: 'dflt', id: '3', source: '{"doc":{"t":"z"}}' },
    ]);
  });

  it('action lines read as the engines read them: comments, anything after the object; an _index that is not a string is read as its text', async () => {
    const body = '/* c */ {"index":{"_index":"a"}} {"junk":1}\n{"t":"x"}\n{"index":{"_index":"b","_id":"{}"}} // note\n{"t":"y"}\n{"index":{"_index":42}}\n{"t":"z"}\n';
    const entries = await read(body);
    expect(entries.slice(0, 3)).toEqual([
      { p: 0, verb: 'index', index: 'a', id: undefined, source: '{"t":"x"}' },
      { p: 1, verb: 'index', index: 'b', id: '{}', source: '{"t":"y"}' },
      { p: 2, verb: 'index', index: '42', id: undefined, source: '{"t":"z"}' },
    ]);
    const action = (line: string) => readAction(Buffer.from(line), 'dflt');
    expect(action('{"index":{"_index":"x\\"}"}} tail')).toMatchObject({ index: 'x"}' });
    expect(action('{"index":{"_index":"a"')).toBeUndefined();
    expect(action('/* never closed {"index":{}}')).toBeUndefined();
  });

  it('the first unreadable line is marked with its number, for the refusal to name', async () => {
    const marks = [];
    for await (const entry of bulkItems(Readable.from([Buffer.from('{"index":{}}\n{"t":1}\n\nnope\n{"index":{}}\n')]), 'd')) if (entry.kind === 'raw') marks.push(entry.unreadable);
    expect(marks).toEqual([undefined, { line: 4 }, undefined]);
  });

  it('a line longer than the limit fails as soon as that many bytes came, without waiting for its end', async () => {
    let served = 0;
    async function* endless() {
      yield Buffer.from('{"a":1}\n');
      for (; served < 64 * 1024 * 1024; served += 64 * 1024) yield Buffer.alloc(64 * 1024, 0x61);
    }
    const reading = async () => {
      for await (const _ of lineBatches(Readable.from(endless()), 8 * 1024, 1024 * 1024)) void _;
    };
    await expect(reading()).rejects.toThrow(new LineTooLongError(1024 * 1024, 2));
    expect(served).toBeLessThan(2 * 1024 * 1024);
  });

  it('an unreadable action line: the rest goes on as raw bytes, for the engine to answer', async () => {
    const entries = await read('{"index":{}}\n{"t":1}\nnot json\n{"index":{}}\n{"t":2}\n', 64);
    expect(entries[0]).toMatchObject({ p: 0, verb: 'index' });
    expect(entries.slice(1).map((e) => (e as { raw: string }).raw).join('')).toBe('not json\n{"index":{}}\n{"t":2}\n');
  });
});

describe('signing sources', () => {
  const signer = createSigner({});
  const options = { fields: ['body'], prefix: 'near_dup', maxChars: 1000 };
  /** One source signed; its new text read back as a string. */
  const sign = (kind: 'index' | 'update', text: string, o = options): { outcome: string; source?: string; reason?: string } => {
    const bytes = Buffer.from(text);
    const out = signSources(signer, [kind], bytes, [bytes.length], o)[0];
    return 'source' in out && out.source !== undefined ? { ...out, source: Buffer.from(out.source).toString('utf8') } : (out as { outcome: string; reason?: string });
  };
  const expected = signer('the quick brown fox jumps over the lazy dog');

  it('a source keeps its bytes: the fields go in before the closing brace', () => {
    const text = '{ "id": 12345678901234567890, "body": "the quick brown fox jumps over the lazy dog", "n": 1.50 }  ';
    const out = sign('index', text);
    expect(out.outcome).toBe('signed');
    const source = out.source as string;
    expect(source.startsWith('{ "id": 12345678901234567890, "body": "the quick brown fox jumps over the lazy dog", "n": 1.50,"near_dup":{')).toBe(true);
    expect(JSON.parse(source).near_dup).toMatchObject({ simhash: expected.simhash, bands: expected.bands, content_hash: expected.content_hash, token_count: expected.tokens });
    expect(spliceMembers('{ }', { a: 1 })).toBe('{"a":1}');
  });

  it('a source that already has the prefix object is written anew with the fields replaced, the rest kept', () => {
    const out = sign('index', JSON.stringify({ body: 'the quick brown fox jumps over the lazy dog', near_dup: { cluster_id: 'c1', simhash: 'stale' } }));
    const doc = JSON.parse(out.source as string);
    expect(doc.near_dup.cluster_id).toBe('c1');
    expect(doc.near_dup.simhash).toBe(expected.simhash);
  });

  it('the new sources of a batch come back as views of one buffer (one copy to the thread that sends them)', () => {
    const texts = ['{"body":"first text here"}', '{"title":"none"}', '{"body":"second text, a little longer"}'];
    const bytes = Buffer.from(texts.join(''));
    const ends = texts.map((_, i) => Buffer.byteLength(texts.slice(0, i + 1).join('')));
    const out = signSources(signer, ['index', 'index', 'index'], bytes, ends, options);
    expect(out.map((o) => o.outcome)).toEqual(['signed', 'failed', 'signed']);
    const [a, , c] = out as Array<{ source: Uint8Array }>;
    expect(a.source.buffer).toBe(c.source.buffer);
    expect(JSON.parse(Buffer.from(c.source).toString()).body).toBe('second text, a little longer');
  });

  it('a client cannot set the near-dup fields: dotted names reaching the prefix are dropped, an update doc loses every key under it', () => {
    const forged = sign('index', '{"body":"the quick brown fox jumps over the lazy dog","near_dup.simhash":"0000000000000000","near_dup.bands":["0:evil"]}');
    const stored = JSON.parse(forged.source as string);
    expect(stored).toEqual({ body: 'the quick brown fox jumps over the lazy dog', near_dup: expect.objectContaining({ simhash: expected.simhash }) });
    expect(JSON.stringify(stored)).not.toContain('evil');
    const update = sign('update', '{"doc":{"views":3,"near_dup":{"simhash":"0000000000000000"},"near_dup.minhash":"AAAA"}}');
    expect(JSON.parse(update.source as string)).toEqual({ doc: { views: 3 } });
    expect(withoutPrefixKeys({ meta: { 'near_dup.bands': 1, keep: 2, near_dup: { x: 1 } }, 'meta.near_dup': {}, other: 1 }, ['meta', 'near_dup'], false)).toEqual({ value: { meta: { keep: 2, near_dup: { x: 1 } }, other: 1 }, removed: true });
    expect(withoutPrefixKeys({ near_dupe: 1, near: 2 }, ['near_dup'], true)).toEqual({ value: { near_dupe: 1, near: 2 }, removed: false });
  });

  it('refusals name the field and the fix', () => {
    expect(sign('index', '{"title":"x"}')).toEqual({ outcome: 'failed', reason: 'no text: field "body" is not in the document' });
    expect(sign('index', '{"body":{"a":1}}')).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/field "body" holds an object, not text; name a text field with --field/) });
    expect(sign('index', '{"body":')).toMatchObject({ outcome: 'failed', reason: 'the document is not valid JSON' });
    const bad = Buffer.from([0x7b, 0x22, 0x62, 0x6f, 0x64, 0x79, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]);
    expect(signSources(signer, ['index'], bad, [bad.length], options)[0]).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/not valid UTF-8/) });
  });

  it('updates: doc with the text signed, without it untouched, with part of it the signature removed; upsert signed; scripts untouched', () => {
    const doc = sign('update', '{"doc":{"body":"the quick brown fox jumps over the lazy dog"},"doc_as_upsert":true}');
    // doc_as_upsert goes on as an explicit upsert (the same to the engines), signed as a whole document.
    const asUpsert = JSON.parse(doc.source as string);
    expect(asUpsert).toMatchObject({ doc: { near_dup: { simhash: expected.simhash } }, upsert: { body: expect.any(String), near_dup: { simhash: expected.simhash } } });
    expect(asUpsert.doc_as_upsert).toBeUndefined();
    expect(sign('update', '{"doc":{"views":3},"doc_as_upsert":true}')).toEqual({ outcome: 'failed', reason: expect.stringMatching(/^with doc_as_upsert, the doc is indexed as a new document when there is none, and it cannot be signed: no text/) });
    expect(sign('update', '{"doc":{"views":3}}')).toEqual({ outcome: 'untouched' });
    expect(sign('update', '{"script":{"source":"ctx._source.n++"}}')).toEqual({ outcome: 'untouched' });
    const two = { ...options, fields: ['title', 'body'] };
    const partial = sign('update', '{"doc":{"title":"new"}}', two);
    expect(partial.outcome).toBe('cleared');
    expect(JSON.parse(partial.source as string)).toEqual({ doc: { title: 'new', near_dup: null } });
    const upsert = sign('update', '{"script":{"source":"x"},"upsert":{"body":"the quick brown fox jumps over the lazy dog"}}');
    expect(JSON.parse(upsert.source as string).upsert.near_dup.simhash).toBe(expected.simhash);
  });
});

describe('answers', () => {
  it('joins the parts and puts refused items back in their places', () => {
    const merged = mergeBulkAnswers(
      [
        { took: 3, errors: false, items: [{ index: { _id: 'a', status: 201 } }] },
        { took: 4, errors: false, items: [{ index: { _id: 'c', status: 201 } }] },
      ],
      [
        { position: 1, verb: 'index', index: 'x', id: 'b', reason: 'no text' },
        { position: 3, verb: 'create', index: 'x', reason: 'no text' },
      ],
    );
    expect(merged.took).toBe(7);
    expect(merged.errors).toBe(true);
    expect(merged.items?.map((i) => (Object.values(i)[0] as { _id: unknown })._id)).toEqual(['a', 'b', 'c', null]);
    expect(merged.items?.[1]).toEqual({ index: { _index: 'x', _id: 'b', status: 400, error: { type: 'near_dup_signing_exception', reason: 'no text' } } });
  });

  it('filter_path as the engines read it', () => {
    const answer = { took: 1, errors: true, items: [{ index: { _id: 'a', status: 201 } }, { index: { _id: 'b', status: 400, error: { type: 't' } } }] };
    expect(applyFilterPath(answer, 'items.*.error')).toEqual({ items: [{ index: { error: { type: 't' } } }] });
    expect(applyFilterPath(answer, 'took,errors')).toEqual({ took: 1, errors: true });
    expect(applyFilterPath(answer, '**.status')).toEqual({ items: [{ index: { status: 201 } }, { index: { status: 400 } }] });
    expect(applyFilterPath(answer, '-items')).toEqual({ took: 1, errors: true });
  });
});

describe('date math in index names, resolved as the engines resolve them', () => {
  const at = new Date('2026-03-31T22:30:15.123Z');
  it.each([
    ['<news-{now/d}>', 'news-2026.03.31'],
    ['<news-{now}>', 'news-2026.03.31'],
    ['<logs-{now/M{yyyy.MM}}>', 'logs-2026.03'],
    ['<logs-{now-1M{yyyy.MM.dd}}>', 'logs-2026.02.28'],
    ['<logs-{now+1d{uuuu-MM-dd|+02:00}}>', 'logs-2026-04-02'],
    ['<logs-{now{yyyy.MM.dd|Europe/Paris}}>', 'logs-2026.04.01'],
    ['<logs-{now/w{yyyy.MM.dd}}>', 'logs-2026.03.30'],
    ['<logs-{now/y{yy}}-{now{HH.mm.ss.SSS}}>', 'logs-26-22.30.15.123'],
    ["<a-{now{yyyy'w'MM}}>", 'a-2026w03'],
    ["<a-{now{yyyy'o''clock'MM''}}>", "a-2026o'clock03'"],
    ['<elastic\\{ON\\}-{now/M}>', 'elastic{ON}-2026.03.01'],
  ])('%s is %s', (name, expected) => {
    expect(resolveDateMath(name, at)).toBe(expected);
  });
  it.each([['<a-{now{EEEE}}>'], ['<a-{yesterday}>'], ['<a-{now/q}>'], ['<a-{now{yyyy|Mars/Olympus}}>'], ['<a-{now>'], ['<a-}>']])('%s cannot be read: undefined, never a wrong name', (name) => {
    expect(resolveDateMath(name, at)).toBeUndefined();
  });
  it('the proxy matches a write by the name it lands in; one it cannot read is taken as matching', () => {
    const today = new Date().toISOString().slice(0, 10).replaceAll('-', '.');
    expect(indexMatcher(`news-${today}`)('<news-{now/d}>')).toBe(true);
    expect(indexMatcher('logs-*')('<news-{now/d}>')).toBe(false);
    expect(indexMatcher('logs-*')('<news-{now{EEEE}}>')).toBe(true);
  });
});

describe('routes', () => {
  it('bulk and document writes are read; everything else passes', () => {
    expect(routeOf('POST', '/_bulk')).toEqual({ kind: 'bulk' });
    expect(routeOf('PUT', '/news/_bulk')).toEqual({ kind: 'bulk', index: 'news' });
    expect(routeOf('POST', '/news/_doc')).toEqual({ kind: 'document', index: 'news', source: 'index' });
    expect(routeOf('PUT', '/news%2Da/_doc/1')).toEqual({ kind: 'document', index: 'news-a', source: 'index' });
    expect(routeOf('PUT', '/news/_create/1')).toEqual({ kind: 'document', index: 'news', source: 'index' });
    expect(routeOf('POST', '/news/_update/1')).toEqual({ kind: 'document', index: 'news', source: 'update' });
    expect(routeOf('GET', '/_near_dup/stats')).toEqual({ kind: 'stats' });
    for (const [method, path] of [['PUT', '/news/_doc'], ['GET', '/news/_doc/1'], ['POST', '/news/_search'], ['HEAD', '/'], ['POST', '/_reindex'], ['PUT', '/news']]) {
      expect(routeOf(method, path)).toEqual({ kind: 'pass' });
    }
  });

  it('paths read as the engines read them: not normalized, percent-decoded as UTF-8 (U+FFFD for what is not), %% a %, a stray % refused by them', () => {
    expect(routeOf('PUT', rawPath('/news/_doc/..'))).toEqual({ kind: 'document', index: 'news', source: 'index' });
    expect(routeOf('PUT', rawPath('/news/_doc/%FF?refresh=true'))).toEqual({ kind: 'document', index: 'news', source: 'index' });
    expect(routeOf('POST', rawPath('/new%73%FF/_bulk'))).toEqual({ kind: 'bulk', index: 'news\uFFFD' });
    expect(['a%', '%2e%2E', 'caf%C3%A9', '%e2%80%a8', '%zz', 'a%%b'].map((s) => decodeSegment(s))).toEqual([undefined, '..', 'café', '\u2028', undefined, 'a%b']);
    expect(rawPath('http://evil/news/_doc/1?x=1')).toBe('/news/_doc/1');
    expect(indexMatcher('news-*')('news-a\nb')).toBe(true);
  });

  it('the typed forms Elasticsearch 7 takes are document writes too', () => {
    expect(routeOf('PUT', '/news/article/1')).toEqual({ kind: 'document', index: 'news', source: 'index' });
    expect(routeOf('POST', '/news/article')).toEqual({ kind: 'document', index: 'news', source: 'index' });
    expect(routeOf('PUT', '/news/article/1/_create')).toEqual({ kind: 'document', index: 'news', source: 'index' });
    expect(routeOf('POST', '/news/article/1/_update')).toEqual({ kind: 'document', index: 'news', source: 'update' });
    for (const [method, path] of [['PUT', '/news/article'], ['PUT', '/news/article/1/_update'], ['POST', '/news/article/1/_explain'], ['POST', '/news/_doc/1/x/y']]) {
      expect(routeOf(method, path)).toEqual({ kind: 'pass' });
    }
  });

  it('JSON by the media type itself, whatever its parameters say', () => {
    for (const type of ['application/json', 'application/x-ndjson; x=smile', 'application/json; charset=utf-8; x=y', 'Application/JSON', 'application/vnd.elasticsearch+json; compatible-with=8', 'application/vnd.elasticsearch+x-ndjson;compatible-with=9']) {
      expect(isJsonMediaType(type), type).toBe(true);
    }
    for (const type of ['application/smile', 'application/cbor; x=json', 'application/yaml', 'text/plain', 'application/vnd.elasticsearch+smile; compatible-with=8', 'json', '']) {
      expect(isJsonMediaType(type), type).toBe(false);
    }
  });

  it('--listen', () => {
    expect(parseListen('127.0.0.1:9290')).toEqual({ host: '127.0.0.1', port: 9290 });
    expect(parseListen('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(parseListen('9290')).toEqual({ host: '127.0.0.1', port: 9290 });
    expect(() => parseListen('localhost')).toThrow(/is not host:port; give one like 127.0.0.1:9290/);
  });
});
