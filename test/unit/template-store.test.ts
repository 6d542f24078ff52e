// Template tokens as they are kept (in near-dup-templates, and in the `_meta` of earlier versions) (src/indices/template-store.ts): read back to the
// same set, small enough for 10,000 hashes, and anything else there taken for damage, never for the set; what
// an index's sets are kept under (its data stream, a rollover alias, its uuid).
import { describe, expect, it } from 'vitest';
import { EngineResponseError } from '../../src/engine/errors.js';
import { UserError } from '../../src/errors.js';
import { findTemplate, setOwners, storedTemplate, templateOfStored } from '../../src/indices/template-store.js';
import { templateTokens } from '../../src/sketch/template-tokens.js';

const drawn = { share: 0.05, minCount: 3, sample: 10_000 };

describe('storedTemplate', () => {
  it('reads back to the same set, and 10,000 hashes take under 60 KB of JSON', () => {
    const hashes = Array.from({ length: 10_000 }, (_, i) => (Math.imul(i + 1, 0x9e3779b1) >>> 0));
    const template = templateTokens(hashes, drawn);
    const stored = storedTemplate(template);
    expect(JSON.stringify(stored).length).toBeLessThan(60_000);
    const back = templateOfStored(template.digest, JSON.parse(JSON.stringify(stored)));
    expect(back).toEqual(template);
  });

  it('takes what is not the set of the digest asked for as damage', () => {
    const template = templateTokens([1, 2, 0xffffffff], drawn);
    const stored = storedTemplate(template);
    expect(templateOfStored(template.digest, stored)?.hashes).toEqual(new Uint32Array([1, 2, 0xffffffff]));
    expect(templateOfStored('000000000000', stored)).toBeUndefined();
    expect(templateOfStored(template.digest, { ...stored, count: 2 })).toBeUndefined();
    for (const count of [2.5, -1, Number.NaN, 1e300]) expect(templateOfStored(template.digest, { ...stored, count })).toBeUndefined();
    expect(templateOfStored(template.digest, { ...stored, hashes: storedTemplate(templateTokens([1, 2, 3], drawn)).hashes })).toBeUndefined();
    expect(templateOfStored(template.digest, { ...stored, share: '0.05' })).toBeUndefined();
    expect(templateOfStored(template.digest, 'x')).toBeUndefined();
    expect(templateOfStored(template.digest, null)).toBeUndefined();
  });
});

describe('setOwners', () => {
  const settings = { index: { uuid: 'u1' } };

  it("keeps a backing index's sets under its data stream, and finds them by its uuid too", () => {
    expect(setOwners('.ds-logs-000002', { settings, aliases: {}, data_stream: 'logs' })).toEqual([
      { name: 'logs', key: 'data-stream:logs' },
      { name: '.ds-logs-000002', key: 'u1' },
    ]);
  });

  it('keeps them under each alias that marks its write index (rolled over from or to), by name; a plain alias is no owner', () => {
    const aliases = { reads: {}, 'b-writes': { is_write_index: false }, 'a-writes': { is_write_index: true } };
    expect(setOwners('logs-000001', { settings, aliases })).toEqual([
      { name: 'a-writes', key: 'alias:a-writes' },
      { name: 'b-writes', key: 'alias:b-writes' },
      { name: 'logs-000001', key: 'u1' },
    ]);
  });

  it('keeps a plain index under its uuid only', () => {
    expect(setOwners('docs', { settings, aliases: { reads: {} } })).toEqual([{ name: 'docs', key: 'u1' }]);
  });
});

describe('refusals of the store', () => {
  it('are one line naming the privilege and where to grant it', async () => {
    const reason = 'no permissions for [indices:admin/get] and User [name=nd_reader, backend_roles=[], requestedTenant=null]';
    const refused = new EngineResponseError(403, 'security_exception', reason, 'GET', '/docs?filter_path=x', 'https://127.0.0.1:9271', { error: { type: 'security_exception', reason }, status: 403 });
    const access = { request: async () => Promise.reject(refused) };
    const draw = { condenser: 'white-space::xxh3::256', sampleAsked: 1000, share: 0.05, minCount: 3 };
    const found = findTemplate(access, 'docs', draw);
    await expect(found).rejects.toThrow(UserError);
    await expect(found).rejects.toThrow(/^https:\/\/127\.0\.0\.1:9271 denied GET \/docs: the user lacks the privilege indices:admin\/get; .*"docs"/);
  });
});
