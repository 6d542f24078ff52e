// The band keys are mapped without doc values: near-dup only ever finds documents by them with term and
// terms queries (the inverted index) and reads them back from _source; nothing sorts or aggregates on them
// since dedup buckets the signatures on the client. Indices mapped before, with doc values on them, are taken
// as they are. The fields near-dup does sort, aggregate or read from doc values keep them.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nearDupFieldSpecs, savedObjectsFor } from '../../src/dashboards/saved-objects.js';
import { componentTemplateBody, createIndexBody, NEAR_DUP_FIELDS, planMapping, putMappingBody } from '../../src/indices/mapping.js';

const json = (name: string) => JSON.parse(readFileSync(new URL(`../../mappings/${name}`, import.meta.url), 'utf8'));
const current: Record<string, Record<string, unknown>> = json('put-mapping.json').properties.near_dup.properties;
const allFields = Object.keys(NEAR_DUP_FIELDS);

function mappingWith(fields: Record<string, unknown>, prefix = 'near_dup') {
  return { properties: { title: { type: 'text' }, [prefix]: { properties: fields } } };
}

/** What a field's mapping holds at `prefix` in a body near-dup sends (a dotted prefix is nested objects). */
function fieldIn(properties: Record<string, any>, prefix: string, name: string): unknown {
  let node: any = { properties };
  for (const segment of prefix.split('.')) node = node.properties[segment];
  return node.properties[name];
}

/**
 * Where near-dup needs doc values, and why (the code that reads them). A field listed here must keep them;
 * a field dropped from here may lose them only when nothing sorts, aggregates or reads it from doc values.
 */
const NEEDS_DOC_VALUES: Record<string, string> = {
  params: 'terms aggregation (jobs/params-held.ts); docvalue_fields of lookups on indices whose MinHash has doc values',
  content_hash: 'docvalue_fields (jobs/similar.ts idsByContentHash); sort in the explorer (explore/queries.ts)',
  cluster_id: 'sort in the explorer; terms aggregation of the "largest clusters" visualization; sort of the saved search',
  cluster_size: 'sort in the explorer and the saved search; histogram visualization',
  is_canonical: 'sort in the explorer and the saved search',
  canonical_similarity: 'sort in the explorer and the saved search; histogram visualization',
  max_similarity: 'sort in the explorer',
  max_containment: 'sort of the partial copies saved search; histogram visualization',
  distinct_tokens: 'sort of the containment pass (jobs/dedup/containment-pass.ts)',
  sample_size: 'field_value_factor of the containment lookup; docvalue_fields on older indices',
};

describe('the band keys without doc values', () => {
  it('in the mapping near-dup declares, the JSON in mappings/ and every body it sends, for any prefix', () => {
    expect(NEAR_DUP_FIELDS.bands).toEqual({ type: 'keyword', doc_values: false });
    expect(json('put-mapping.json').properties.near_dup.properties.bands).toEqual({ type: 'keyword', doc_values: false });
    expect(json('component-template.json').template.mappings.properties.near_dup.properties.bands).toEqual({ type: 'keyword', doc_values: false });
    for (const prefix of ['near_dup', 'sig', 'meta.near_dup']) {
      expect(fieldIn(createIndexBody(prefix).mappings.properties, prefix, 'bands'), prefix).toEqual({ type: 'keyword', doc_values: false });
      expect(fieldIn(putMappingBody(prefix, ['bands']).properties, prefix, 'bands'), prefix).toEqual({ type: 'keyword', doc_values: false });
      const template = componentTemplateBody(prefix) as { template: { mappings: { properties: Record<string, unknown> } } };
      expect(fieldIn(template.template.mappings.properties, prefix, 'bands'), prefix).toEqual({ type: 'keyword', doc_values: false });
    }
  });

  it('still indexed: the candidates are found by term queries on them', () => {
    expect(NEAR_DUP_FIELDS.bands.index).not.toBe(false);
  });

  it('keeps doc values on every field near-dup sorts, aggregates or reads from doc values', () => {
    for (const [name, why] of Object.entries(NEEDS_DOC_VALUES)) {
      expect(NEAR_DUP_FIELDS[name], name).toBeDefined();
      expect(NEAR_DUP_FIELDS[name].doc_values, `${name}: ${why}`).not.toBe(false);
      expect(NEAR_DUP_FIELDS[name].type, name).not.toBe('text');
    }
  });
});

describe('an index mapped before, with doc values on the band keys', () => {
  it('is taken as it is: every field present, nothing to add, no conflict', () => {
    for (const bands of [{ type: 'keyword' }, { type: 'keyword', doc_values: true }]) {
      expect(planMapping(mappingWith({ ...current, bands }))).toEqual({ missing: [], present: allFields, conflicts: [], keyLists: 'joined' });
    }
  });

  it('as near-dup mapped indices first (MinHash and SimHash with doc values, key lists as keyword): present, written as lists', () => {
    const first = {
      ...current,
      bands: { type: 'keyword' },
      minhash: { type: 'binary', doc_values: true },
      simhash: { type: 'keyword' },
      simhash_blocks: { type: 'keyword' },
      sample: { type: 'keyword', doc_values: false },
    };
    expect(planMapping(mappingWith(first))).toEqual({ missing: [], present: allFields, conflicts: [], keyLists: 'lists' });
  });

  it('lacking only the fields added since: those are added, and the band keys are not sent again', () => {
    const { contained_in: _c, max_containment: _m, ...older } = current;
    const plan = planMapping(mappingWith({ ...older, bands: { type: 'keyword' } }, 'sig'), 'sig');
    expect(plan.conflicts).toEqual([]);
    expect(plan.missing).toEqual(['contained_in', 'max_containment']);
    expect(plan.present).toContain('bands');
    const body = putMappingBody('sig', plan.missing) as { properties: { sig: { properties: Record<string, unknown> } } };
    expect(Object.keys(body.properties.sig.properties)).toEqual(['contained_in', 'max_containment']);
  });

  it('while a field near-dup needs doc values on is still refused without them', () => {
    for (const name of ['params', 'content_hash', 'cluster_id']) {
      const plan = planMapping(mappingWith({ ...current, [name]: { type: 'keyword', doc_values: false } }));
      expect(plan.conflicts, name).toEqual([{ field: `near_dup.${name}`, existing: 'keyword with doc_values: false', wanted: 'keyword' }]);
    }
  });
});

describe('the Dashboards and Kibana saved objects', () => {
  const objects = savedObjectsFor({ index: 'docs', prefix: 'near_dup', titleField: 'title' });

  /** Every near-dup field a visualization aggregates on or a saved search sorts by. */
  function aggregatedOrSorted(): string[] {
    const fields: string[] = [];
    for (const o of objects) {
      if (typeof o.attributes.visState === 'string') {
        const vis = JSON.parse(o.attributes.visState) as { aggs?: Array<{ params?: { field?: string } }> };
        for (const agg of vis.aggs ?? []) if (agg.params?.field) fields.push(agg.params.field);
      }
      if (Array.isArray(o.attributes.sort)) for (const [field] of o.attributes.sort as Array<[string, string]>) fields.push(field);
    }
    return fields.filter((f) => f.startsWith('near_dup.')).map((f) => f.slice('near_dup.'.length));
  }

  it('aggregate and sort only on fields mapped with doc values', () => {
    const used = aggregatedOrSorted();
    expect(used.length).toBeGreaterThan(4); // the template was read: histograms, terms, sorts
    for (const name of used) {
      expect(NEAR_DUP_FIELDS[name], name).toBeDefined();
      expect(NEAR_DUP_FIELDS[name].doc_values, name).not.toBe(false);
      expect(NEEDS_DOC_VALUES[name], `${name} is aggregated or sorted on: list it in NEEDS_DOC_VALUES`).toBeDefined();
    }
    expect(used).not.toContain('bands');
  });

  it('list the band keys as searchable, not aggregatable, in the index pattern made before the index exists', () => {
    const bands = nearDupFieldSpecs('near_dup').find((f) => f.name === 'near_dup.bands');
    expect(bands).toMatchObject({ type: 'string', searchable: true, aggregatable: false, readFromDocValues: false });
    const params = nearDupFieldSpecs('near_dup').find((f) => f.name === 'near_dup.params');
    expect(params).toMatchObject({ searchable: true, aggregatable: true });
  });
});
