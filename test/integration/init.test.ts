// near-dup init against real engines: a new index, an existing index with data, conflicts, templates, and
// the CLI command itself.
import { expect, it, vi } from 'vitest';
import yargs from 'yargs';
import { initCommand } from '../../src/cli/commands/init.js';
import { NEAR_DUP_FIELDS } from '../../src/indices/mapping.js';
import { UsageError, UserError } from '../../src/errors.js';
import { initIndex, initTemplates } from '../../src/indices/init.js';
import { type EngineContext, forEachEngine } from './harness.js';

const FIELD_NAMES = Object.keys(NEAR_DUP_FIELDS).sort();

/** The near-dup fields under `prefix` in an index's mapping, name -> type. */
async function nearDupTypes(ctx: EngineContext, index: string, prefix = 'near_dup'): Promise<Record<string, string>> {
  let node = (await ctx.client.getMapping(index))[index].mappings as any;
  for (const segment of prefix.split('.')) node = node?.properties?.[segment];
  return Object.fromEntries(Object.entries(node?.properties ?? {}).map(([name, m]) => [name, (m as { type: string }).type]));
}

const expectedTypes = Object.fromEntries(Object.entries(NEAR_DUP_FIELDS).map(([name, m]) => [name, m.type]));

/** Runs `near-dup init ...` in-process; resolves to what it printed on stdout. */
async function runInit(ctx: EngineContext, args: string[]): Promise<string> {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  try {
    await yargs(['init', '--url', ctx.engine.url, ...args])
      .command(initCommand as never)
      .strict()
      .fail((msg, err) => {
        throw err ?? new UsageError(msg);
      })
      .parseAsync();
  } finally {
    spy.mockRestore();
  }
  return out.join('');
}

forEachEngine('init', (ctx) => {
  it('creates a missing index with every near-dup field, and a second run changes nothing', async () => {
    const index = ctx.index('new');
    const first = await initIndex(ctx.client, index, 'near_dup');
    expect(first.action).toBe('created');
    expect(first.added.sort()).toEqual(FIELD_NAMES.map((f) => `near_dup.${f}`));
    expect(await nearDupTypes(ctx, index)).toEqual(expectedTypes);

    const second = await initIndex(ctx.client, index, 'near_dup');
    expect(second).toMatchObject({ action: 'unchanged', added: [] });
    expect(await nearDupTypes(ctx, index)).toEqual(expectedTypes);
  });

  it('adds the fields to an existing index with data, leaving its other fields and documents as they were', async () => {
    const index = ctx.index('existing');
    await ctx.client.createIndex(index, {
      settings: { number_of_shards: 2, number_of_replicas: 0 },
      mappings: {
        properties: {
          title: { type: 'text', fields: { raw: { type: 'keyword', ignore_above: 256 } } },
          tags: { type: 'keyword' },
          published: { type: 'date' },
          author: { properties: { name: { type: 'keyword' }, email: { type: 'keyword', index: false } } },
        },
      },
    });
    const docs: Record<string, Record<string, unknown>> = {
      a: { title: 'First post', tags: ['x', 'y'], published: '2024-01-02', author: { name: 'Ann', email: 'ann@example.org' } },
      b: { title: 'Second post', tags: ['y'], published: '2024-02-03', extra: 'dynamically mapped' },
      c: { title: 'Third', tags: [], views: 42 },
    };
    const bulk = await ctx.client.bulk(Object.entries(docs).flatMap(([id, doc]) => [{ index: { _index: index, _id: id } }, doc]), { refresh: 'true' });
    expect(bulk.errors).toBe(false);
    const before = (await ctx.client.getMapping(index))[index].mappings;

    const result = await initIndex(ctx.client, index, 'near_dup');
    expect(result.action).toBe('updated');
    expect(result.added).toEqual(FIELD_NAMES.map((f) => `near_dup.${f}`));

    const after = (await ctx.client.getMapping(index))[index].mappings;
    const { near_dup: added, ...others } = after.properties;
    expect(others).toEqual(before.properties);
    expect(after.dynamic).toEqual(before.dynamic);
    expect(added).toBeDefined();
    expect(await nearDupTypes(ctx, index)).toEqual(expectedTypes);

    expect(await ctx.client.count(index)).toBe(3);
    for (const [id, doc] of Object.entries(docs)) expect((await ctx.client.get(index, id))?._source).toEqual(doc);

    // Writing the fields is a partial update: the rest of the document stays.
    const update = await ctx.client.bulk(
      [{ update: { _index: index, _id: 'a' } }, { doc: { near_dup: { bands: ['0:ab', '1:cd'], simhash: '00ff00ff00ff00ff', token_count: 5 } } }],
      { refresh: 'true' },
    );
    expect(update.errors).toBe(false);
    expect((await ctx.client.get(index, 'a'))?._source).toEqual({
      ...docs.a,
      near_dup: { bands: ['0:ab', '1:cd'], simhash: '00ff00ff00ff00ff', token_count: 5 },
    });

    expect(await runInit(ctx, ['--index', index])).toMatch(/already has the near_dup fields; nothing to change/);
  });

  it('puts the fields under a custom, dotted prefix', async () => {
    const index = ctx.index('prefix');
    await ctx.client.createIndex(index, { mappings: { properties: { meta: { properties: { source: { type: 'keyword' } } } } } });
    const result = await initIndex(ctx.client, index, 'meta.sig');
    expect(result.action).toBe('updated');
    expect(await nearDupTypes(ctx, index, 'meta.sig')).toEqual(expectedTypes);
    const mapping = (await ctx.client.getMapping(index))[index].mappings;
    expect(mapping.properties.meta.properties.source).toEqual({ type: 'keyword' });
    expect(mapping.properties.near_dup).toBeUndefined();
  });

  it('refuses a conflicting mapping, naming the field, both types and the fix, and writes nothing', async () => {
    const index = ctx.index('conflict');
    await ctx.client.createIndex(index, { mappings: { properties: { near_dup: { properties: { bands: { type: 'text' }, simhash: { type: 'keyword' } } } } } });
    const before = (await ctx.client.getMapping(index))[index].mappings;

    const error = await initIndex(ctx.client, index, 'near_dup').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(error).toBeInstanceOf(UserError);
    const message = (error as Error).message;
    expect(message).toContain(index);
    expect(message).toContain('near_dup.bands is mapped as text, near-dup needs keyword');
    expect(message).toMatch(/--prefix/);
    expect(message).toMatch(/reindex/);
    expect(message).not.toContain('\n');
    expect((await ctx.client.getMapping(index))[index].mappings).toEqual(before);

    // The CLI says the same, as a UserError (one line, exit code 1).
    await expect(runInit(ctx, ['--index', index])).rejects.toThrow(UserError);
    // Another prefix is the way out.
    expect(await runInit(ctx, ['--index', index, '--prefix', 'nd2'])).toMatch(new RegExp(`added ${Object.keys(NEAR_DUP_FIELDS).length} nd2 fields`));
  });

  it('refuses a prefix that is not an object', async () => {
    const index = ctx.index('prefix-conflict');
    await ctx.client.createIndex(index, { mappings: { properties: { near_dup: { type: 'keyword' } } } });
    await expect(initIndex(ctx.client, index, 'near_dup')).rejects.toThrow(/near_dup is mapped as keyword, near-dup needs object/);
  });

  it('installs templates so that new indices matching the pattern get the fields', async () => {
    const name = ctx.name('tpl');
    const index = `${name}-2024`;
    ctx.cleanup(async () => {
      await ctx.client.deleteIndex(index);
      await ctx.client.request('DELETE', `/_index_template/${name}`).catch(() => undefined);
      await ctx.client.request('DELETE', `/_component_template/${name}-fields`).catch(() => undefined);
    });
    const result = await initTemplates(ctx.client, { name, prefix: 'near_dup', indexPatterns: [`${name}-*`] });
    expect(result).toEqual({ componentTemplate: `${name}-fields`, indexTemplate: name, indexPatterns: [`${name}-*`], outranked: [] });
    await ctx.client.createIndex(index, { mappings: { properties: { body: { type: 'text' } } } });
    expect(await nearDupTypes(ctx, index)).toEqual(expectedTypes);
    expect((await initIndex(ctx.client, index, 'near_dup')).action).toBe('unchanged');
  });

  it('the init command creates, then reports nothing to change', async () => {
    const index = ctx.index('cli');
    expect(await runInit(ctx, ['--index', index])).toMatch(new RegExp(`^created index "${index}" with the ${Object.keys(NEAR_DUP_FIELDS).length} near_dup fields \\(${ctx.engine.flavour} `));
    expect(await runInit(ctx, ['--index', index])).toMatch(/nothing to change/);
  });
});
