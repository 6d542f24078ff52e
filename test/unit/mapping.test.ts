import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  componentTemplateBody,
  createIndexBody,
  describeConflicts,
  indexTemplateBody,
  NEAR_DUP_FIELDS,
  planMapping,
  prefixPath,
  putMappingBody,
} from '../../src/indices/mapping.js';
import { UsageError } from '../../src/errors.js';

const json = (name: string) => JSON.parse(readFileSync(new URL(`../../mappings/${name}`, import.meta.url), 'utf8'));
const allFields = Object.keys(NEAR_DUP_FIELDS);

/** An index mapping with the near-dup fields as `fields` says, under `prefix`. */
function mappingWith(fields: Record<string, unknown>, prefix = 'near_dup', extra: Record<string, unknown> = {}) {
  return { properties: { title: { type: 'text' }, ...extra, [prefix]: { properties: fields } } };
}

describe('the JSON in mappings/', () => {
  it('declares the fields of DESIGN.md with their types', () => {
    expect(Object.fromEntries(Object.entries(NEAR_DUP_FIELDS).map(([k, v]) => [k, v.type]))).toEqual({
      bands: 'keyword',
      simhash: 'keyword',
      simhash_blocks: 'text',
      minhash: 'binary',
      core: 'binary',
      params: 'keyword',
      content_hash: 'keyword',
      token_count: 'integer',
      distinct_tokens: 'integer',
      sample: 'text',
      sample_size: 'integer',
      annotated_at: 'date',
      cluster_id: 'keyword',
      duplicate_of: 'keyword',
      is_canonical: 'boolean',
      cluster_size: 'integer',
      max_similarity: 'float',
      canonical_similarity: 'float',
      best_match: 'keyword',
      contained_in: 'keyword',
      max_containment: 'float',
    });
  });

  it('is what the builders produce for the default prefix', () => {
    expect(putMappingBody()).toEqual(json('put-mapping.json'));
    expect(componentTemplateBody()).toEqual(json('component-template.json'));
    expect(indexTemplateBody()).toEqual(json('index-template.json'));
    expect(createIndexBody()).toEqual({ mappings: json('put-mapping.json') });
  });
});

describe('building for a prefix', () => {
  it('puts the fields under a plain or dotted prefix', () => {
    expect(Object.keys((putMappingBody('sig').properties.sig as any).properties)).toEqual(allFields);
    const nested = putMappingBody('meta.near_dup').properties as any;
    expect(nested.meta.type).toBe('object');
    expect(nested.meta.properties.near_dup.properties.bands).toEqual({ type: 'keyword', doc_values: false });
  });

  it('can build a subset of the fields', () => {
    expect((putMappingBody('near_dup', ['bands', 'minhash']).properties.near_dup as any).properties).toEqual({
      bands: { type: 'keyword', doc_values: false },
      minhash: { type: 'binary' },
    });
    expect(() => putMappingBody('near_dup', ['nope'])).toThrow(RangeError);
  });

  it('refuses prefixes that are not field names', () => {
    for (const bad of ['', '_near', 'a..b', 'a b', 'a*', '.a']) expect(() => prefixPath(bad)).toThrow(UsageError);
    expect(prefixPath('meta.near-dup_2')).toEqual(['meta', 'near-dup_2']);
  });

  it('names the index pattern and component in the index template', () => {
    expect(indexTemplateBody(['crawl-*', 'web-*'], 'x-fields', 7)).toMatchObject({
      index_patterns: ['crawl-*', 'web-*'],
      composed_of: ['x-fields'],
      priority: 7,
    });
  });
});

describe('planMapping', () => {
  it('finds every field missing in an index without them', () => {
    const none = { missing: allFields, present: [], conflicts: [], keyLists: 'joined' };
    expect(planMapping({ properties: { title: { type: 'text' } } })).toEqual(none);
    expect(planMapping({})).toEqual(none);
    expect(planMapping(undefined)).toEqual(none);
  });

  it('finds nothing to do when every field is there, with extra parameters and other fields around', () => {
    const fields = { ...json('put-mapping.json').properties.near_dup.properties, simhash: { type: 'keyword', ignore_above: 32 }, other: { type: 'text' } };
    expect(planMapping(mappingWith(fields))).toEqual({ missing: [], present: allFields, conflicts: [], keyLists: 'joined' });
  });

  it('takes the older layout (key lists as keyword) as it is, written as lists; refuses them analyzed otherwise', () => {
    const current = json('put-mapping.json').properties.near_dup.properties;
    const older = { ...current, simhash: { type: 'keyword' }, simhash_blocks: { type: 'keyword' }, sample: { type: 'keyword', doc_values: false } };
    expect(planMapping(mappingWith(older))).toEqual({ missing: [], present: allFields, conflicts: [], keyLists: 'lists' });
    // One key list of each kind: lists, which both read.
    expect(planMapping(mappingWith({ ...current, sample: { type: 'keyword' } })).keyLists).toBe('lists');
    const analyzed = planMapping(mappingWith({ ...current, sample: { type: 'text' }, simhash_blocks: { type: 'text', analyzer: 'simple' } }));
    expect(analyzed.conflicts).toEqual([
      { field: 'near_dup.simhash_blocks', existing: 'text with analyzer simple', wanted: 'text with analyzer whitespace (or keyword)' },
      { field: 'near_dup.sample', existing: 'text with analyzer standard', wanted: 'text with analyzer whitespace (or keyword)' },
    ]);
  });

  it('finds the fields a partial mapping lacks', () => {
    const plan = planMapping(mappingWith({ bands: { type: 'keyword' }, minhash: { type: 'binary', doc_values: false } }));
    expect(plan.present).toEqual(['bands', 'minhash']);
    expect(plan.missing).toEqual(allFields.filter((f) => f !== 'bands' && f !== 'minhash'));
    expect(plan.conflicts).toEqual([]);
  });

  it('reports a field of another type, with both types', () => {
    const plan = planMapping(mappingWith({ bands: { type: 'text' }, token_count: { type: 'long' } }));
    expect(plan.conflicts).toEqual([
      { field: 'near_dup.bands', existing: 'text', wanted: 'keyword' },
      { field: 'near_dup.token_count', existing: 'long', wanted: 'integer' },
    ]);
  });

  it('reports keyword fields that cannot be searched or aggregated', () => {
    const plan = planMapping(mappingWith({ bands: { type: 'keyword', index: false }, content_hash: { type: 'keyword', doc_values: false } }));
    expect(plan.conflicts).toEqual([
      { field: 'near_dup.bands', existing: 'keyword with index: false', wanted: 'keyword' },
      { field: 'near_dup.content_hash', existing: 'keyword with doc_values: false', wanted: 'keyword' },
    ]);
  });

  it('reports a prefix that is not an object (or a disabled one)', () => {
    expect(planMapping({ properties: { near_dup: { type: 'keyword' } } }).conflicts).toEqual([
      { field: 'near_dup', existing: 'keyword', wanted: 'object' },
    ]);
    expect(planMapping({ properties: { near_dup: { type: 'nested', properties: {} } } }).conflicts[0].existing).toBe('nested');
    expect(planMapping({ properties: { near_dup: { type: 'object', enabled: false } } }).conflicts).toEqual([
      { field: 'near_dup', existing: 'object with enabled: false', wanted: 'object' },
    ]);
    expect(planMapping({ properties: { meta: { type: 'text' } } }, 'meta.nd').conflicts).toEqual([{ field: 'meta', existing: 'text', wanted: 'object' }]);
  });

  it('looks under the prefix it is given', () => {
    const mapping = mappingWith({ bands: { type: 'text' } }, 'near_dup', { sig: { properties: { bands: { type: 'keyword' } } } });
    expect(planMapping(mapping, 'sig').conflicts).toEqual([]);
    expect(planMapping(mapping, 'sig').present).toEqual(['bands']);
    expect(planMapping(mapping, 'other').missing).toEqual(allFields);
  });
});

describe('describeConflicts', () => {
  it('names the index, each field, both types and the fix, on one line', () => {
    const message = describeConflicts('docs', [
      { field: 'near_dup.bands', existing: 'text', wanted: 'keyword' },
      { field: 'near_dup.simhash', existing: 'long', wanted: 'keyword' },
    ]);
    expect(message).toContain('index "docs"');
    expect(message).toContain('near_dup.bands is mapped as text, near-dup needs keyword');
    expect(message).toContain('near_dup.simhash is mapped as long, near-dup needs keyword');
    expect(message).toContain('--prefix');
    expect(message).toContain('near-dup init --index NEW_INDEX');
    expect(message).not.toContain('\n');
  });
});
