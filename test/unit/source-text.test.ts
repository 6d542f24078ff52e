// The sources near-dup signs are edited as text: only the members it writes change (issue 48).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { prefixKeyPaths, SourceText, sourceWithFields } from '../../src/signing/source-text.js';

const FIELDS = { simhash: '0123456789abcdef', bands: ['0:a', '1:b'] };

describe('source text', () => {
  it('appends the prefix object to a document without one, every byte before it kept', () => {
    const text = '{ "big" : 1234567890123456789,"10":1.0, "2":[1e2] }';
    expect(sourceWithFields(text, JSON.parse(text), 'near_dup', FIELDS)).toBe(`{ "big" : 1234567890123456789,"10":1.0, "2":[1e2],"near_dup":${JSON.stringify(FIELDS)}}`);
    expect(sourceWithFields('{}', {}, 'meta.near_dup', FIELDS)).toBe(`{"meta":{"near_dup":${JSON.stringify(FIELDS)}}}`);
  });

  it('replaces near-dup fields in an object that has them, keeps its other members and drops dotted forgeries', () => {
    const text = '{"n":9007199254740993.0,"near_dup":{"cluster_id":"c1","simhash":"stale"},"near_dup.bands":["0:forged"]}';
    const out = sourceWithFields(text, JSON.parse(text), 'near_dup', FIELDS);
    expect(out.startsWith('{"n":9007199254740993.0,')).toBe(true);
    expect(JSON.parse(out)).toEqual({ n: 9007199254740992, near_dup: { cluster_id: 'c1', ...FIELDS } });
    expect(out).not.toContain('forged');
  });

  it('a nested prefix under a user object keeps that object\'s other bytes; a non-object on the way is replaced', () => {
    const text = '{"meta":{"id":18446744073709551615,"near_dup.simhash":"x"}}';
    const out = sourceWithFields(text, JSON.parse(text), 'meta.near_dup', FIELDS);
    expect(out).toContain('"id":18446744073709551615');
    expect(out).not.toContain('"x"');
    const scalar = '{"meta":5,"k":1.50}';
    expect(JSON.parse(sourceWithFields(scalar, JSON.parse(scalar), 'meta.near_dup', FIELDS))).toEqual({ meta: { near_dup: FIELDS }, k: 1.5 });
    expect(sourceWithFields(scalar, JSON.parse(scalar), 'meta.near_dup', FIELDS)).toContain('"k":1.50');
  });

  it('finds the key paths that reach the prefix, with and without the prefix object itself', () => {
    const doc = { near_dup: {}, 'near_dup.a': 1, meta: { 'near_dup.b': 2 }, other: 3 };
    expect(prefixKeyPaths(doc, ['near_dup'], false)).toEqual([['near_dup.a']]);
    expect(prefixKeyPaths(doc, ['near_dup'], true)).toEqual([['near_dup'], ['near_dup.a']]);
    expect(prefixKeyPaths(doc, ['meta', 'near_dup'], false)).toEqual([['meta', 'near_dup.b']]);
  });

  it('a document with more keys reaching the prefix than near-dup writes is refused, not edited key by key', () => {
    const keys = (count: number) => `{"t":"x",${Array.from({ length: count }, (_, i) => `"near_dup.x${i}":1`).join(',')}}`;
    expect(() => sourceWithFields(keys(64), JSON.parse(keys(64)), 'near_dup', FIELDS)).not.toThrow();
    expect(() => sourceWithFields(keys(65), JSON.parse(keys(65)), 'near_dup', FIELDS)).toThrow(/65 keys reach the near-dup fields \("near_dup"\)/);
  });

  it('setText puts a value in as given', () => {
    const source = new SourceText('{"doc":{"a":1.0}}');
    source.setText(['upsert'], source.valueText(['doc']) as string);
    expect(source.text).toBe('{"doc":{"a":1.0},"upsert": {"a":1.0}}');
  });

  it('any document: the text without the prefix object is the text as given (numbers written as any digits)', () => {
    const member = fc.tuple(fc.string({ maxLength: 6 }).filter((k) => !k.startsWith('near_dup')), fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }));
    fc.assert(
      fc.property(fc.uniqueArray(member, { selector: ([k]) => k, maxLength: 6 }), (members) => {
        const text = `{${members.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
        const out = sourceWithFields(text, JSON.parse(text), 'near_dup', FIELDS);
        const at = out.lastIndexOf(',"near_dup"') >= 0 ? out.lastIndexOf(',"near_dup"') : out.lastIndexOf('"near_dup"');
        expect(`${out.slice(0, at)}}`).toBe(text);
      }),
    );
  });
});
