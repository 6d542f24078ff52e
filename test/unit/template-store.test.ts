// Template tokens as they are kept (in near-dup-templates, and in the `_meta` of earlier versions) (src/indices/template-store.ts): read back to the
// same set, small enough for 10,000 hashes, and anything else there taken for damage, never for the set; what
// an index's sets are kept under (its data stream, a rollover alias, its uuid).
import { describe, expect, it } from 'vitest';
import { EngineResponseError } from '../../src/engine/errors.js';
import { UserError } from '../../src/errors.js';
import { hash } from 'node:crypto';
import { findTemplate, loadTemplate, setOwners, storedTemplate, storeTemplate, type TemplateAccess, templateOfStored } from '../../src/indices/template-store.js';
import { DEFAULT_MAX_TRACKED } from '../../src/sketch/token-counts.js';
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

/**
 * The few requests the store makes, answered for one plain index `docs` (uuid U1) from `kept` (near-dup-templates'
 * documents by id): the store's behaviour apart from an engine's (the engines' own is in
 * test/integration/template-store.test.ts).
 */
function storeOf(kept: Map<string, unknown>): TemplateAccess {
  const refused = (status: number, type: string) => new EngineResponseError(status, type, type, 'GET', '/', 'http://127.0.0.1:9200', { error: { type } });
  return {
    async request<T>(method: string, path: string, body?: any): Promise<T> {
      const [at] = path.split('?');
      if (at === '/docs') return { docs: { settings: { index: { uuid: 'U1' } }, aliases: {} } } as T;
      if (at === '/docs/_mapping') return {} as T;
      if (at === '/near-dup-templates/_settings' || (at === '/near-dup-templates' && method === 'PUT')) return {} as T;
      if (at === '/near-dup-templates/_mget') return { docs: body.ids.map((id: string) => (kept.has(id) ? { _id: id, found: true, _source: kept.get(id) } : { _id: id, found: false })) } as T;
      if (at === '/near-dup-templates/_search') return { hits: { hits: [...kept.values()].filter((d: any) => d.digest === body.query.bool.filter[1].term.digest).map((d) => ({ _source: d })) } } as T;
      if (at.startsWith('/near-dup-templates/_create/')) {
        const id = decodeURIComponent(at.slice('/near-dup-templates/_create/'.length));
        if (kept.has(id)) throw refused(409, 'version_conflict_engine_exception');
        kept.set(id, body);
        return {} as T;
      }
      throw new Error(`not asked of the store: ${method} ${path}`);
    },
  };
}

describe('what the store reads', () => {
  const draw = { condenser: 'white-space::xxh3::128', sampleAsked: 10_000, share: 0.05, minCount: 3 };
  const id = `U1.${hash('sha1', JSON.stringify([draw.condenser, draw.share, draw.minCount, draw.sampleAsked])).slice(0, 20)}`;
  const set = templateTokens([1, 2, 3], { share: 0.05, minCount: 3, sample: 100 });
  const kept = (doc: Record<string, unknown>) => new Map<string, unknown>([[id, { ...storedTemplate(set, draw), index: 'docs', uuid: 'U1', digest: set.digest, ...doc }]]);

  it('finds the set kept for the draw', async () => {
    expect((await findTemplate(storeOf(kept({})), 'docs', draw))?.digest).toBe(set.digest);
  });

  it('refuses a set of more hashes than a draw keeps (2^22), in one line naming the index and the fix, before decoding it', async () => {
    const huge = kept({ count: DEFAULT_MAX_TRACKED + 1 });
    const said = /^the template tokens kept in near-dup-templates for "docs" \(document U1\.[0-9a-f]{20}\) hold 4194305 hashes, more than near-dup ever draws \(4194304\): they were not drawn by near-dup; delete that document from near-dup-templates and sign the index again with annotate --force --template-share$/;
    await expect(findTemplate(storeOf(huge), 'docs', draw)).rejects.toThrow(said);
    await expect(loadTemplate(storeOf(huge), 'docs', set.digest)).rejects.toThrow(/hold 4194305 hashes, more than near-dup ever draws/);
    // A hashes text longer than the most a draw keeps, whatever its count says.
    const long = kept({ hashes: 'A'.repeat(4 * Math.ceil((DEFAULT_MAX_TRACKED * 4) / 3) + 4) });
    await expect(findTemplate(storeOf(long), 'docs', draw)).rejects.toThrow(/more than near-dup ever draws/);
    expect(templateOfStored(set.digest, { ...storedTemplate(set), count: DEFAULT_MAX_TRACKED + 1 })).toBeUndefined();
  });

  it('never uses a set at the draw\'s id that was stored for another condenser, share, minimum count, sample or index', async () => {
    for (const other of [{ condenser: 'other' }, { share: 0.99 }, { min_count: 1 }, { sample_asked: 1 }, { uuid: 'U2' }, { condenser: undefined }]) {
      expect(await findTemplate(storeOf(kept(other)), 'docs', draw), JSON.stringify(other)).toBeUndefined();
      // Storing meets it at the id (409): refused with the fix, not signed with.
      await expect(storeTemplate(storeOf(kept(other)), 'docs', set, draw), JSON.stringify(other)).rejects.toThrow(
        /^the document .* of near-dup-templates for "docs" was not stored for this draw \(condenser, share, minimum count, sample\) and index; delete it and run again$/,
      );
    }
  });
});
