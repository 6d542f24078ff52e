// What a new user hits first, tried through the CLI against each real engine: each mistake gets one
// clear line and the right exit code, and nothing is created or written by a refused command.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { findSimilar } from '../../src/jobs/similar.js';
import { fixtureSample } from '../support/corpus.js';
import { forEachEngine } from './harness.js';

const CLI = path.resolve(__dirname, '../../dist/cli/main.js');
const docs = fixtureSample(8);

function cli(args: string[]) {
  const result = spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr.trim() };
}

forEachEngine('rough edges', (ctx) => {
  const index = ctx.index('rough');

  beforeAll(async () => {
    const lines = docs.flatMap((d) => [{ index: { _index: index, _id: d.id } }, { title: d.family, body: d.text, date: d.date }]);
    expect((await ctx.client.bulk(lines)).errors).toBe(false);
    await ctx.client.refresh(index);
  });

  it('annotate of an index that does not exist fails with the message similar gives, and creates nothing', async () => {
    const missing = ctx.index('no-such-index');
    const annotate = cli(['annotate', '--url', ctx.engine.url, '--index', missing, '--field', 'body']);
    const similar = cli(['similar', '--url', ctx.engine.url, '--index', missing, '--text', 'some words']);
    expect(annotate.code).toBe(1);
    expect(annotate.stderr.split('\n')).toHaveLength(1);
    expect(annotate.stderr).toBe(similar.stderr);
    expect(annotate.stderr).toMatch(new RegExp(`index "${missing}" does not exist`));
    expect(await ctx.client.indexExists(missing)).toBe(false);
  });

  it('annotate --field that no document can hold is refused before reading, naming the text fields there are', async () => {
    const result = cli(['annotate', '--url', ctx.engine.url, '--index', index, '--field', 'txt']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/no document of ".*" can hold "txt".*its text fields are .*body.*title/);
    expect(await ctx.client.count(index, { exists: { field: 'near_dup.params' } })).toBe(0);
  });

  it('dedup --canonical with a field the mapping does not have is refused (a typo of "longest" is not a field)', async () => {
    await annotateIndex(ctx.client, { index, fields: ['body'], signer: {}, output: { prefix: 'near_dup' } });
    const result = cli(['dedup', '--url', ctx.engine.url, '--index', index, '--canonical', 'longst', '--dry-run']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--canonical "longst" is not a field of .*oldest, newest, longest.*Its fields: .*body/);
    expect(cli(['dedup', '--url', ctx.engine.url, '--index', index, '--canonical=-date', '--dry-run']).code).toBe(0);
  });

  it('similar --id "" is a usage error, not the engine\'s 405', () => {
    const result = cli(['similar', '--url', ctx.engine.url, '--index', index, '--id', '']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--id is empty/);
  });

  it('similar --text signs the text with the parameters the index holds, and says so when it cannot match', async () => {
    const other = ctx.index('rough-none');
    const lines = docs.flatMap((d) => [{ index: { _index: other, _id: d.id } }, { body: d.text }]);
    expect((await ctx.client.bulk(lines)).errors).toBe(false);
    await ctx.client.refresh(other);
    await annotateIndex(ctx.client, { index: other, fields: ['body'], signer: { condenser: 'ws:none:sha1:128' }, output: { prefix: 'near_dup' } });
    // Asked with the default condenser (norm-html), the text is still signed as the index was.
    const found = await findSimilar(ctx.client, { index: other, text: docs[0].text });
    expect(found.query.params).toMatch(/^white-space:none:sha1:128;/);
    expect(found.hits[0]).toMatchObject({ id: docs[0].id, jaccard: 1 });
    const cliHits = JSON.parse(cli(['similar', '--url', ctx.engine.url, '--index', other, '--text', docs[0].text]).stdout);
    expect(cliHits.hits[0].id).toBe(docs[0].id);
    // A second parameter set in the index: a lookup with a third cannot match, and says why.
    await annotateIndex(ctx.client, { index: other, fields: ['body'], signer: { condenser: 'ws:none:mmh3:64' }, read: { query: { ids: { values: [docs[1].id] } } }, output: { prefix: 'near_dup' } });
    const refused = cli(['similar', '--url', ctx.engine.url, '--index', other, '--text', docs[0].text]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/holds signatures made with .*white-space:none:sha1:128.*white-space:none:mmh3:64/);
  });
});
