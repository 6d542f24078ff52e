// The pure parts of handling the indices users have: what `_source` filtering keeps, and text paths that
// go through arrays of objects.
import { describe, expect, it } from 'vitest';
import { extractText, valueAt } from '../../src/annotation.js';
import { keptInSource, partialSources, requireWholeSource, wildcardMatch } from '../../src/indices/source-filter.js';

describe('_source filtering', () => {
  it('matches the engines: * is any run of characters, and a pattern naming an object covers its fields', () => {
    expect([wildcardMatch('raw', 'raw'), wildcardMatch('raw', 'raw2'), wildcardMatch('r*w', 'r.a.w'), wildcardMatch('*.secret', 'a.b.secret'), wildcardMatch('a*b*c', 'abc')]).toEqual([
      true,
      false,
      true,
      true,
      true,
    ]);
    expect(keptInSource('meta.raw', [], ['meta'])).toBe(false);
    expect(keptInSource('metadata', [], ['meta'])).toBe(true);
    expect(keptInSource('text', ['title'], [])).toBe(false);
    expect(keptInSource('meta.title', ['meta'], ['meta.raw'])).toBe(true);
    expect(keptInSource('meta.raw', ['meta'], ['meta.raw'])).toBe(false);
  });

  it('names the mapped fields each filtered index drops, and passes indices that keep everything', () => {
    const mappings = {
      whole: { mappings: { properties: { text: { type: 'text' } } } },
      synthetic: { mappings: { _source: { mode: 'synthetic' }, properties: { text: { type: 'text' } } } },
      filtered: { mappings: { _source: { excludes: ['raw', 'meta.*'] }, properties: { text: { type: 'text' }, raw: { type: 'keyword' }, meta: { properties: { a: { type: 'keyword' }, b: { type: 'long' } } } } } },
    };
    expect(partialSources(mappings)).toEqual([{ index: 'filtered', disabled: false, includes: [], excludes: ['raw', 'meta.*'], dropped: ['raw', 'meta.a', 'meta.b'] }]);
    expect(() => requireWholeSource('logs', mappings, ['text'])).toThrow(/"filtered" \(behind "logs"\) keeps only part .*the fields "raw", "meta.a", "meta.b" would lose/);
    expect(() => requireWholeSource('whole', { whole: mappings.whole, synthetic: mappings.synthetic }, ['text'])).not.toThrow();
    expect(() => requireWholeSource('x', { x: { mappings: { _source: { enabled: false } } } }, ['text'])).toThrow(/keeps no _source/);
    expect(() => requireWholeSource('x', { x: { mappings: { _source: { excludes: ['te*'] }, properties: { text: { type: 'text' } } } } }, ['text'])).toThrow(/the text field "text" of "x" is not kept/);
  });
});

describe('text paths through arrays', () => {
  const doc = { comments: [{ text: 'first', by: 'a' }, { by: 'b' }, { text: ['second', 'third'] }, { text: null }], post: { parts: [[{ body: 'x' }], { body: 'y' }] } };

  it('reads a field of a list of objects as the list of its values, flattened, as the engines read field paths', () => {
    expect(valueAt(doc, 'comments.text')).toEqual(['first', 'second', 'third', null]);
    expect(valueAt(doc, 'post.parts.body')).toEqual(['x', 'y']);
    expect(valueAt(doc, 'comments.missing')).toBeUndefined();
    expect(extractText(doc, ['comments.text']).text).toBe('first\nsecond\nthird');
    expect(() => extractText({ comments: [{ text: 1 }] }, ['comments.text'])).toThrow(/field "comments.text" holds an array with items that are not strings/);
  });
});
