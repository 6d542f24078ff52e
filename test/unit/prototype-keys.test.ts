// Keys that name an object's prototype (issue 37, item 2): a document's "__proto__" or "constructor" is a
// field like any other. Reading a field path follows own keys only, copying keys never sets a prototype,
// an answer holding such keys is read (every official client near-dup uses), the signature is always of the
// document's own text, and near-dup refuses such a key under its own fields (the proxy, ingest, the library).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { annotateDocument, DocumentTextError, extractText, mergeUnderPrefix, valueAt } from '../../src/annotation.js';
import { connect } from '../../src/engine/client.js';
import { fieldPresence } from '../../src/indices/fields.js';
import { planMapping } from '../../src/indices/mapping.js';
import { ownValue, prototypeKeyUnder, setOwn } from '../../src/own-keys.js';
import { createSigner } from '../../src/signature.js';
import { annotateBatch } from '../../src/signing/annotate-batch.js';
import { ingestBytes } from '../../src/signing/ingest-lines.js';
import { type SignedSource, type SourceKind, signSources, withoutPrefixKeys } from '../../src/signing/sign-sources.js';
import { storedIn } from '../../src/stored/read.js';
import { StoredLayout } from '../../src/stored/layout.js';
import { nearDupFields } from '../../src/stored/write.js';

const signer = createSigner({});
const OWN = 'the words this document holds itself, and no other';
const PLANTED = 'another document entirely, whose signature must not be stored here';
const signatureOf = (text: string) => {
  const { annotated_at: _t, ...fields } = nearDupFields(signer(text), signer.settings);
  return fields;
};

/** Object.prototype is never given a field by anything below. */
afterEach(() => {
  for (const key of ['text', 'params', 'near_dup', 'bands', 'doc']) expect(Object.hasOwn(Object.prototype, key), key).toBe(false);
});

describe('own keys', () => {
  it('valueAt follows own keys only: "constructor", "toString" and "__proto__" are fields or nothing', () => {
    const doc = JSON.parse(`{"__proto__":{"text":${JSON.stringify(PLANTED)}},"constructor":{"prototype":{"text":"p"}}}`);
    expect(valueAt(doc, 'text')).toBeUndefined();
    expect(valueAt(doc, '__proto__.text')).toBe(PLANTED);
    expect(valueAt(doc, 'constructor.prototype.text')).toBe('p');
    expect(valueAt({}, 'constructor')).toBeUndefined();
    expect(valueAt({}, 'toString')).toBeUndefined();
    expect(valueAt({ a: {} }, 'a.constructor.prototype')).toBeUndefined();
    expect(valueAt([{}, { text: 'x' }], 'hasOwnProperty')).toBeUndefined();
    // A field named like a member of Object.prototype is no text until the document has it.
    expect(() => extractText({}, ['constructor'])).toThrow(/no text: field "constructor" is not in the document/);
    expect(extractText(doc, ['text', '__proto__.text']).text).toBe(PLANTED);
  });

  it('setOwn and ownValue treat "__proto__" as a key', () => {
    const target: Record<string, unknown> = {};
    setOwn(target, '__proto__', { text: PLANTED });
    expect(Object.getPrototypeOf(target)).toBe(Object.prototype);
    expect(target.text).toBeUndefined();
    expect(ownValue(target, '__proto__')).toEqual({ text: PLANTED });
    expect(ownValue({}, 'constructor')).toBeUndefined();
    expect(JSON.stringify(target)).toBe(`{"__proto__":{"text":${JSON.stringify(PLANTED)}}}`);
  });

  it('prototypeKeyUnder finds such keys at or under a path, nested, dotted or in arrays, and nowhere else', () => {
    const under = ['near_dup'];
    const parse = (text: string) => JSON.parse(text) as unknown;
    expect(prototypeKeyUnder(parse('{"near_dup":{"__proto__":{"params":"x"}}}'), under)).toBe('near_dup.__proto__');
    expect(prototypeKeyUnder(parse('{"near_dup":{"constructor":{"prototype":{"params":"x"}}}}'), under)).toBe('near_dup.constructor.prototype');
    expect(prototypeKeyUnder(parse('{"near_dup.__proto__.params":"x"}'), under)).toBe('near_dup.__proto__');
    expect(prototypeKeyUnder(parse('{"near_dup":{"constructor.prototype":1}}'), under)).toBe('near_dup.constructor.prototype');
    expect(prototypeKeyUnder(parse('{"near_dup":[{"a":{"__proto__":1}}]}'), under)).toBe('near_dup.a.__proto__');
    expect(prototypeKeyUnder(parse('{"meta":{"near_dup":{"__proto__":1}}}'), ['meta', 'near_dup'])).toBe('meta.near_dup.__proto__');
    expect(prototypeKeyUnder(parse('{"meta.near_dup":{"__proto__":1}}'), ['meta', 'near_dup'])).toBe('meta.near_dup.__proto__');
    // Elsewhere: the document's own fields.
    expect(prototypeKeyUnder(parse('{"__proto__":{"near_dup":1},"constructor":{"prototype":1},"near_dup":{"constructor":1,"bands":[]}}'), under)).toBeUndefined();
    expect(prototypeKeyUnder(parse('{"meta":{"__proto__":1}}'), ['meta', 'near_dup'])).toBeUndefined();
  });

  it('withoutPrefixKeys and mergeUnderPrefix copy "__proto__" as an own key, never as the copy\'s prototype', () => {
    const doc = JSON.parse(`{"__proto__":{"text":${JSON.stringify(PLANTED)}},"meta":{"__proto__":{"x":1}},"near_dup.bands":["forged"]}`);
    const { value, removed } = withoutPrefixKeys(doc, ['near_dup'], false);
    expect(removed).toBe(true);
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(value.text).toBeUndefined();
    expect(Object.hasOwn(value, '__proto__')).toBe(true);
    expect(JSON.stringify(value)).toBe(`{"__proto__":{"text":${JSON.stringify(PLANTED)}},"meta":{"__proto__":{"x":1}}}`);
    const merged = mergeUnderPrefix(value, 'near_dup', { params: 'p' });
    expect(Object.getPrototypeOf(merged)).toBe(Object.prototype);
    expect(JSON.parse(JSON.stringify(merged))).toEqual(JSON.parse(`{"__proto__":{"text":${JSON.stringify(PLANTED)}},"meta":{"__proto__":{"x":1}},"near_dup":{"params":"p"}}`));
    // A prefix that names such keys (the library takes any) makes own keys too.
    const odd = mergeUnderPrefix({}, '__proto__.constructor', { params: 'p' });
    expect(Object.getPrototypeOf(odd)).toBe(Object.prototype);
    expect(JSON.stringify(odd)).toBe('{"__proto__":{"constructor":{"params":"p"}}}');
    // Fields read through the prototype are never taken for the object at the prefix.
    expect(JSON.stringify(mergeUnderPrefix({}, 'constructor', { params: 'p' }))).toBe('{"constructor":{"params":"p"}}');
  });

  it('storedIn reads the stored object by own keys', () => {
    const layout = new StoredLayout('near_dup');
    expect(storedIn(JSON.parse('{"__proto__":{"near_dup":{"params":"x"}}}'), layout)).toMatchObject({ reason: 'no near-dup signature (no near_dup)' });
    expect(storedIn({}, new StoredLayout('constructor'))).toMatchObject({ reason: 'no near-dup signature (no constructor)' });
  });
});

describe('mappings holding such names', () => {
  const mappings = JSON.parse('{"properties":{"__proto__":{"properties":{"text":{"type":"text"}}},"constructor":{"properties":{"prototype":{"properties":{"text":{"type":"text"}}}}},"text":{"type":"text"}}}');

  it('fieldPresence finds mapped fields by own names only', () => {
    expect(fieldPresence(mappings, '__proto__.text')).toBe('mapped');
    expect(fieldPresence(mappings, 'constructor.prototype.text')).toBe('mapped');
    expect(fieldPresence(mappings, 'text')).toBe('mapped');
    expect(fieldPresence({ properties: {} }, 'constructor')).toBe('absent');
    expect(fieldPresence({ properties: {} }, 'toString')).toBe('absent');
  });

  it('planMapping reads a prefix named like a member of Object.prototype as absent until mapped', () => {
    expect(planMapping({ properties: {} }, 'constructor').missing.length).toBeGreaterThan(0);
    expect(planMapping(mappings, 'near_dup').conflicts).toEqual([]);
  });
});

describe('signing', () => {
  const options = { fields: ['text'], prefix: 'near_dup', maxChars: 1e7 };

  function sign(kind: SourceKind, text: string): SignedSource & { json?: any } {
    const bytes = Buffer.from(text);
    const [outcome] = signSources(signer, [kind], bytes, [bytes.length], options);
    return 'source' in outcome && outcome.source ? { ...outcome, json: JSON.parse(Buffer.from(outcome.source).toString()) } : outcome;
  }

  it('the proxy: an update doc whose text is behind "__proto__" is not signed with that text (issue 37)', () => {
    const outcome = sign('update', `{"doc":{"__proto__":{"text":${JSON.stringify(PLANTED)}}}}`);
    // Nothing to sign: the doc holds no text field of its own. The bytes go on as they are.
    expect(outcome.outcome).toBe('untouched');
    expect('source' in outcome ? outcome.source : undefined).toBeUndefined();
    // Beside a key under the prefix (dropped): the rewritten doc keeps "__proto__" as a key, unsigned.
    const dropped = sign('update', `{"doc":{"__proto__":{"text":${JSON.stringify(PLANTED)}},"near_dup.bands":["forged"]}}`);
    expect(dropped.outcome).toBe('untouched');
    expect(dropped.json).toEqual(JSON.parse(`{"doc":{"__proto__":{"text":${JSON.stringify(PLANTED)}}}}`));
  });

  it('the proxy: an upsert or a doc_as_upsert whose text is behind such a key is refused for want of text', () => {
    for (const body of [
      `{"doc":{"other":1},"upsert":{"__proto__":{"text":${JSON.stringify(PLANTED)}},"near_dup":{"bands":["x"]}}}`,
      `{"doc":{"__proto__":{"text":${JSON.stringify(PLANTED)}}},"doc_as_upsert":true}`,
      `{"doc":{"constructor":{"prototype":{"text":${JSON.stringify(PLANTED)}}}},"doc_as_upsert":true}`,
    ]) {
      const outcome = sign('update', body);
      expect(outcome, body).toMatchObject({ outcome: 'failed', reason: expect.stringMatching(/no text/) });
    }
  });

  it('the proxy: such keys elsewhere leave a document signed from its own text, the keys kept', () => {
    for (const doc of [
      `{"text":${JSON.stringify(OWN)},"__proto__":{"text":${JSON.stringify(PLANTED)}}}`,
      `{"constructor":{"prototype":{"text":${JSON.stringify(PLANTED)}}},"text":${JSON.stringify(OWN)}}`,
      `{"text":${JSON.stringify(OWN)},"__proto__":{"text":${JSON.stringify(PLANTED)}},"near_dup":{"cluster_id":"kept"}}`,
    ]) {
      const outcome = sign('index', doc);
      expect(outcome.outcome, doc).toBe('signed');
      const { annotated_at: _t, cluster_id: _c, ...stored } = outcome.json.near_dup;
      expect(stored, doc).toEqual(signatureOf(OWN));
      const { near_dup: _n, ...rest } = outcome.json;
      const { near_dup: _o, ...given } = JSON.parse(doc);
      expect(rest, doc).toEqual(given);
    }
    const update = sign('update', `{"doc":{"text":${JSON.stringify(OWN)},"__proto__":{"text":${JSON.stringify(PLANTED)}}}}`);
    expect(update.outcome).toBe('signed');
    const { annotated_at: _t, ...stored } = update.json.doc.near_dup;
    expect(stored).toEqual(signatureOf(OWN));
    expect(Object.hasOwn(update.json.doc, '__proto__')).toBe(true);
  });

  it('the proxy: such a key under the prefix refuses the document or the update, naming it', () => {
    const cases: Array<[SourceKind, string, string]> = [
      ['index', `{"text":${JSON.stringify(OWN)},"near_dup":{"__proto__":{"params":"forged"}}}`, 'near_dup.__proto__'],
      ['index', `{"text":${JSON.stringify(OWN)},"near_dup":{"constructor":{"prototype":{"params":"forged"}}}}`, 'near_dup.constructor.prototype'],
      ['index', `{"text":${JSON.stringify(OWN)},"near_dup.__proto__.params":"forged"}`, 'near_dup.__proto__'],
      ['update', `{"doc":{"near_dup":{"__proto__":{"params":"forged"}}}}`, 'near_dup.__proto__'],
      ['update', `{"doc":{"text":${JSON.stringify(OWN)},"near_dup.constructor.prototype":1}}`, 'near_dup.constructor.prototype'],
      ['update', `{"doc":{"other":1},"upsert":{"text":${JSON.stringify(OWN)},"near_dup":{"__proto__":{}}}}`, 'near_dup.__proto__'],
    ];
    for (const [kind, body, key] of cases) {
      const outcome = sign(kind, body);
      expect(outcome.outcome, body).toBe('failed');
      expect((outcome as { reason: string }).reason, body).toContain(`the key "${key}" names an object's prototype, under the near-dup fields ("near_dup")`);
      // What --on-error pass sends on: the document without the prefix's keys.
      expect(JSON.stringify(outcome.json), body).not.toContain('near_dup');
    }
  });

  it('the proxy: a document it cannot sign carries, for --on-error pass, its source without the near-dup fields its client put there', () => {
    const forged = sign('index', '{"title":"no text","near_dup":{"bands":["forged"],"minhash":"AAAA"},"near_dup.simhash":"0000000000000000"}');
    expect(forged.outcome).toBe('failed');
    expect(forged.json).toEqual({ title: 'no text' });
    const poisoned = sign('index', '{"text":"a text","near_dup":{"__proto__":{"params":"x"}}}');
    expect(poisoned.outcome).toBe('failed');
    expect(Object.keys(poisoned.json)).toEqual(['text']);
    const update = sign('update', '{"doc":{"near_dup":{"__proto__":{"bands":["x"]}},"other":1},"upsert":{"near_dup.bands":["y"],"k":2}}');
    expect(update.outcome).toBe('failed');
    expect(update.json).toEqual({ doc: { other: 1 }, upsert: { k: 2 } });
    // Nothing of near-dup's there: nothing rewritten, the original bytes go on.
    const plain = sign('index', '{"title":"no text"}');
    expect([plain.outcome, 'source' in plain ? plain.source : undefined]).toEqual(['failed', undefined]);
  });

  it('the proxy: a scripted upsert is not signed with its upsert (the script makes the document); "true" as a string is true', () => {
    const scripted = sign('update', '{"script":{"source":"ctx._source.text = params.t","params":{"t":"B"}},"upsert":{"text":"A","near_dup":{"bands":["forged"]}},"scripted_upsert":true}');
    expect(scripted.outcome).toBe('untouched');
    expect(scripted.json.upsert).toEqual({ text: 'A' });
    const plainScripted = sign('update', '{"script":{"source":"ctx._source.n++"},"upsert":{"text":"A"},"scripted_upsert":"true"}');
    expect([plainScripted.outcome, 'source' in plainScripted ? plainScripted.source : undefined]).toEqual(['untouched', undefined]);
    // doc_as_upsert given as the string "true": the doc may become the document, so without text it is refused.
    expect(sign('update', '{"doc":{"other":1},"doc_as_upsert":"true"}').outcome).toBe('failed');
    const asString = sign('update', `{"doc":{"text":${JSON.stringify(OWN)}},"doc_as_upsert":"true"}`);
    expect(asString.outcome).toBe('signed');
    expect(asString.json.upsert.near_dup).toBeDefined();
  });

  it('annotate: a scanned document is signed from its own text; one with text only behind such a key fails alone', () => {
    const docs = [
      { id: 'own', source: JSON.parse(`{"text":${JSON.stringify(OWN)},"__proto__":{"text":${JSON.stringify(PLANTED)}}}`) },
      { id: 'behind', source: JSON.parse(`{"__proto__":{"text":${JSON.stringify(PLANTED)}}}`) },
      { id: 'ctor', source: JSON.parse(`{"constructor":{"prototype":{"text":${JSON.stringify(PLANTED)}}},"text":${JSON.stringify(OWN)}}`) },
    ];
    const results = annotateBatch(signer, docs, { ...options, force: false, keyLists: 'lists' });
    expect(results.map((r) => r.status)).toEqual(['annotated', 'failed', 'annotated']);
    for (const r of [results[0], results[2]]) {
      if (r.status !== 'annotated') throw new Error(r.status);
      const { annotated_at: _t, ...fields } = r.fields;
      expect(fields).toEqual(signatureOf(OWN));
    }
  });

  it('ingest: a line with such a key under the prefix fails alone, with the reason; elsewhere it is signed from its own text', () => {
    const lines = [
      `{"id":"a","text":${JSON.stringify(OWN)},"__proto__":{"text":${JSON.stringify(PLANTED)}}}`,
      `{"id":"b","text":${JSON.stringify(OWN)},"near_dup":{"__proto__":{"params":"forged"}}}`,
      `{"id":"c","text":${JSON.stringify(OWN)}}`,
    ];
    const results = ingestBytes(signer, Buffer.from(`${lines.join('\n')}\n`), 1, { ...options, idField: 'id', keyLists: 'lists' });
    expect(results.map((r) => ('error' in r ? r.error : 'ok'))).toEqual(['ok', expect.stringMatching(/"near_dup.__proto__" names an object's prototype/), 'ok']);
    const first = JSON.parse((results[0] as { json: string }).json);
    expect(Object.hasOwn(first, '__proto__')).toBe(true);
    const { annotated_at: _t, ...fields } = first.near_dup;
    expect(fields).toEqual(signatureOf(OWN));
  });

  it('the library: annotateDocument refuses such a key under the prefix and signs the own text otherwise', () => {
    const doc = JSON.parse(`{"text":${JSON.stringify(OWN)},"__proto__":{"text":${JSON.stringify(PLANTED)}}}`);
    const annotated = annotateDocument(doc, { fields: ['text'] }) as Record<string, any>;
    const { annotated_at: _t, ...fields } = annotated.near_dup;
    expect(fields).toEqual(signatureOf(OWN));
    expect(() => annotateDocument(JSON.parse(`{"text":"a b","near_dup":{"__proto__":{}}}`), { fields: ['text'] })).toThrow(DocumentTextError);
  });
});

describe('answers holding such keys, through each official client', () => {
  const servers: http.Server[] = [];
  afterAll(async () => {
    for (const server of servers) {
      server.closeAllConnections?.();
      await new Promise((r) => server.close(r));
    }
  });

  /** A stand-in engine that says it is `flavour` `version` and answers any search with a page of odd documents. */
  async function engine(flavour: 'opensearch' | 'elasticsearch', version: string): Promise<string> {
    const page = `{"took":1,"timed_out":false,"hits":{"total":{"value":2,"relation":"eq"},"hits":[
      {"_index":"i","_id":"1","_source":{"text":"one","__proto__":{"text":"planted"}}},
      {"_index":"i","_id":"2","_source":{"text":"two","constructor":{"prototype":{"text":"planted"}}}}]}}`;
    const root = JSON.stringify({
      name: 'n',
      cluster_name: 'c',
      version: { number: version, ...(flavour === 'opensearch' ? { distribution: 'opensearch' } : { build_flavor: 'default' }) },
      tagline: flavour === 'opensearch' ? 'The OpenSearch Project: https://opensearch.org/' : 'You Know, for Search',
    });
    const server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.setHeader('content-type', 'application/json');
        if (flavour === 'elasticsearch') res.setHeader('x-elastic-product', 'Elasticsearch');
        res.end(req.url === '/' ? root : page);
      });
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  it.each([
    ['opensearch', '3.8.0'],
    ['opensearch', '1.3.13'],
    ['elasticsearch', '7.17.29'],
    ['elasticsearch', '8.19.2'],
    ['elasticsearch', '9.5.3'],
  ] as const)('%s %s: the page is read, the keys own, no prototype set', async (flavour, version) => {
    const client = await connect({ url: await engine(flavour, version) });
    try {
      const page = await client.search('i', { query: { match_all: {} } });
      const [one, two] = page.hits.hits.map((h) => h._source as Record<string, unknown>);
      expect(Object.hasOwn(one, '__proto__')).toBe(true);
      expect(Object.getPrototypeOf(one)).toBe(Object.prototype);
      expect(valueAt(one, 'text')).toBe('one');
      expect(valueAt(one, '__proto__.text')).toBe('planted');
      expect(valueAt(two, 'constructor.prototype.text')).toBe('planted');
    } finally {
      await client.close();
    }
  });
});
