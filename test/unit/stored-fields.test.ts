// The stored fields are one table (src/stored/layout.ts): the JSON in mappings/ is what it gives, byte for
// byte; the writer fills exactly its signature fields; the reader needs and checks what it says; a
// signature read back from the index and one just made for a lookup are the same value; and fields go
// under a prefix one way, in documents and in mappings alike.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { componentTemplateBody, indexTemplateBody, NEAR_DUP_FIELDS, putMappingBody } from '../../src/indices/mapping.js';
import { createSigner } from '../../src/signature.js';
import { templateTokens } from '../../src/sketch/template-tokens.js';
import { CLUSTER_FIELDS, mergeUnderPrefix, STORED, STORED_FIELDS, StoredLayout, signatureFields, underPrefix } from '../../src/stored/layout.js';
import { readSignature, SIGNATURE_FIELDS, StoredProblem, storedSignatureOf } from '../../src/stored/read.js';
import { nearDupFields } from '../../src/stored/write.js';

const file = (name: string) => readFileSync(new URL(`../../mappings/${name}`, import.meta.url), 'utf8');
/** JSON as the engine gets it, key order included. */
const canonical = (value: unknown) => JSON.stringify(value);
const TEXT = 'the quick brown fox jumps over the lazy dog and runs far away from here, then back again';

describe('the table of stored fields', () => {
  it('gives the JSON in mappings/, key order included', () => {
    expect(canonical(putMappingBody())).toBe(canonical(JSON.parse(file('put-mapping.json'))));
    expect(canonical(componentTemplateBody())).toBe(canonical(JSON.parse(file('component-template.json'))));
    expect(canonical(indexTemplateBody())).toBe(canonical(JSON.parse(file('index-template.json'))));
    expect(Object.keys(NEAR_DUP_FIELDS)).toEqual(STORED_FIELDS);
  });

  it('is what the writer fills: every signature field, in its order, and nothing else', () => {
    const sign = createSigner();
    const written = nearDupFields(sign(TEXT), sign.settings);
    const signature = STORED_FIELDS.filter((name) => !(CLUSTER_FIELDS as readonly string[]).includes(name) && !['contained_in', 'max_containment'].includes(name));
    expect(Object.keys(written)).toEqual(signature.filter((name) => name !== 'core'));
    // The core field with core= params only (a template set), in its place.
    const core = createSigner({ template: templateTokens([1, 2, 3], { share: 0.05, minCount: 3, sample: 100 }) });
    expect(Object.keys(nearDupFields(core(TEXT), core.settings))).toEqual(signature);
    expect(SIGNATURE_FIELDS).toEqual([...signatureFields('needed'), ...signatureFields('when-there')]);
    expect(SIGNATURE_FIELDS).not.toContain('annotated_at');
    expect(CLUSTER_FIELDS).toEqual(['cluster_id', 'duplicate_of', 'is_canonical', 'cluster_size', 'max_similarity', 'canonical_similarity', 'best_match']);
  });

  it('says what reading a signature needs, and reads one without the fields older versions did not write', () => {
    const sign = createSigner();
    const written = nearDupFields(sign(TEXT), sign.settings) as unknown as Record<string, unknown>;
    for (const name of signatureFields('needed')) {
      const { [name]: _left, ...rest } = written;
      expect((readSignature(rest, sign.settings.params) as StoredProblem).reason, name).toBe(`no ${name}`);
    }
    const older = Object.fromEntries(Object.entries(written).filter(([name]) => !signatureFields('when-there').includes(name as never)));
    expect(readSignature(older, sign.settings.params)).toMatchObject({ distinct: 0, sample: [] });
  });

  it('refuses a bad value of every field it checks, naming the field', () => {
    const sign = createSigner({ template: templateTokens([1, 2, 3], { share: 0.05, minCount: 3, sample: 100 }) });
    const written = nearDupFields(sign(TEXT), sign.settings) as unknown as Record<string, unknown>;
    expect(readSignature(written, sign.settings.params)).not.toBeInstanceOf(StoredProblem);
    for (const name of signatureFields('needed').concat(signatureFields('when-there'))) {
      if (STORED[name].check === undefined) continue;
      const read = readSignature({ ...written, [name]: { not: 'a value' } }, sign.settings.params);
      expect((read as StoredProblem).reason, name).toMatch(new RegExp(`^${name} `));
    }
  });

  it('reads a stored signature back as the value a lookup by text compares', () => {
    for (const options of [{}, { preset: 'simhash-doc' }, { keyEncoding: 1 as const }, { containmentSample: 0 }]) {
      const sign = createSigner(options);
      const sig = sign(TEXT);
      for (const keyLists of ['lists', 'joined'] as const) {
        expect(readSignature(nearDupFields(sig, sign.settings, new Date(), keyLists), sign.settings.params)).toEqual(storedSignatureOf(sig, sign.settings.params));
      }
    }
  });
});

describe('putting fields under the prefix', () => {
  it('nests documents and mappings along the same path, plain or dotted', () => {
    for (const prefix of ['near_dup', 'meta.near_dup']) {
      const path = prefix.split('.');
      const at = (value: unknown, keys: string[]) => keys.reduce<unknown>((v, k) => (v as Record<string, unknown>)[k], value);
      expect(at(underPrefix(prefix, { params: 'p' }), path)).toEqual({ params: 'p' });
      const mapping = new StoredLayout(prefix).mappingProperties(['params']);
      expect(at(mapping, path.flatMap((segment, i) => (i === 0 ? [segment] : ['properties', segment])))).toEqual({ type: 'object', properties: { params: { type: 'keyword' } } });
    }
  });

  it('keeps what a document holds beside and under the prefix', () => {
    const doc = { title: 't', meta: { lang: 'en', near_dup: { cluster_id: 'c', params: 'old' } } };
    expect(mergeUnderPrefix(doc, 'meta.near_dup', { params: 'new' })).toEqual({ title: 't', meta: { lang: 'en', near_dup: { cluster_id: 'c', params: 'new' } } });
    expect(doc.meta.near_dup.params).toBe('old');
  });
});
