// annotate's and ingest's options as a library caller gives them: grouped (read, limits, state, output), a
// member out of its group (the flat names of 0.x) refused, resolved once with every default from
// ANNOTATE_DEFAULTS and INGEST_DEFAULTS; a mistake named by its option key in the library and by its flag on
// the command line, in the same words as before;
// and the bulk defaults (BULK_DEFAULTS, in the bulk writer) the same for the jobs, the writer and the command
// line's bulk flags.
import { spawnSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import yargs from 'yargs';
import * as api from '../../src/index.js';
import { cliMessage, flagOf } from '../../src/cli/option-flags.js';
import { withBulkOptions } from '../../src/cli/bulk-options.js';
import { annotateIdentity, checkAnnotateOptions } from '../../src/jobs/annotate.js';
import { BULK_DEFAULTS, BulkWriter } from '../../src/jobs/bulk-writer.js';
import { checkIngestOptions } from '../../src/jobs/ingest.js';
import { DEFAULT_TEMPLATE_REQUEST } from '../../src/indices/template-store.js';

const CLI = path.resolve(__dirname, '../../dist/cli/main.js');
const base = { index: 'docs', fields: ['text'] };

/** The error a call throws (undefined when it throws none). */
function thrown(call: () => unknown): unknown {
  try {
    call();
  } catch (err) {
    return err;
  }
  return undefined;
}

/** The message of the UsageError a call throws. */
function thrownMessage(call: () => unknown): string {
  const err = thrown(call);
  expect(err).toBeInstanceOf(api.UsageError);
  return (err as Error).message;
}

describe('resolveAnnotateOptions', () => {
  it('fills every default in, from ANNOTATE_DEFAULTS and the machine', () => {
    const settings = api.resolveAnnotateOptions(base);
    expect(settings).toEqual({
      index: 'docs',
      fields: ['text'],
      signer: {},
      template: DEFAULT_TEMPLATE_REQUEST,
      read: {},
      limits: { pageSize: 1000, maxChars: 10_000_000, threads: os.availableParallelism(), bulk: { maxBytes: 5 * 1024 * 1024, maxOperations: 1000 } },
      state: { resume: false, checkpointFile: path.join('.near-dup', 'annotate-docs.json') },
      output: { prefix: 'near_dup', dryRun: false, force: false, keepVersion: false, errorsFile: 'near-dup-errors-docs.jsonl' },
      onProgress: undefined,
      signal: undefined,
    });
    expect(settings.limits).toMatchObject({ pageSize: api.ANNOTATE_DEFAULTS.pageSize, maxChars: api.ANNOTATE_DEFAULTS.maxChars, bulk: api.ANNOTATE_DEFAULTS.bulk });
    expect(settings.output.prefix).toBe(api.ANNOTATE_DEFAULTS.prefix);
  });

  it('takes each group, and a slice names its own checkpoint', () => {
    const query = { term: { lang: 'en' } };
    const settings = api.resolveAnnotateOptions({
      ...base,
      signer: { preset: 'simhash-doc' },
      read: { query, slice: { id: 1, max: 4 } },
      limits: { pageSize: 50, threads: 2, maxChars: 100, bulk: { maxOperations: 10, concurrency: 3 } },
      state: { resume: true },
      output: { prefix: 'nd', dryRun: true, force: true, keepVersion: true, errorsFile: 'e.jsonl' },
    });
    expect(settings.read).toEqual({ query, slice: { id: 1, max: 4 } });
    expect(settings.limits).toEqual({ pageSize: 50, threads: 2, maxChars: 100, bulk: { maxBytes: 5 * 1024 * 1024, maxOperations: 10, concurrency: 3 } });
    expect(settings.state).toEqual({ resume: true, checkpointFile: path.join('.near-dup', 'annotate-docs-slice1of4.json') });
    expect(settings.output).toEqual({ prefix: 'nd', dryRun: true, force: true, keepVersion: true, errorsFile: 'e.jsonl' });
    expect(settings.signer).toEqual({ preset: 'simhash-doc' });
  });

  it('refuses an option out of its group (the flat names of 0.x), naming where it goes, and a key it does not read', () => {
    const refused = (options: object) => thrownMessage(() => api.resolveAnnotateOptions({ ...base, ...options } as never));
    const groups = '(annotate takes its options in groups: read, limits, state, output)';
    expect(refused({ pageSize: 7 })).toBe(`pageSize: give it as limits.pageSize ${groups}`);
    expect(refused({ query: { match_all: {} } })).toBe(`query: give it as read.query ${groups}`);
    expect(refused({ resume: true })).toBe(`resume: give it as state.resume ${groups}`);
    expect(refused({ prefix: 'old' })).toBe(`prefix: give it as output.prefix ${groups}`);
    expect(refused({ output: { pageSize: 8 } })).toBe(`output.pageSize: give it as limits.pageSize ${groups}`);
    expect(refused({ pageSzie: 7 })).toBe('pageSzie is not an option of annotate; it takes index, fields, signer, template, read, limits, state, output, onProgress, signal');
    expect(refused({ state: { checkpoint: 'cp.json' } })).toBe('state.checkpoint is not an option of annotate; state takes resume, checkpointFile');
    // A member left undefined is no setting lost (a caller spreads what it has); checkAnnotateOptions refuses the same.
    expect(api.resolveAnnotateOptions({ ...base, pageSize: undefined, limits: { pageSize: 8, bulk: undefined } } as never).limits.pageSize).toBe(8);
    expect(thrownMessage(() => checkAnnotateOptions({ ...base, dryRun: true } as never))).toBe(`dryRun: give it as output.dryRun ${groups}`);
  });

  it('keeps a checkpoint of 0.x usable: the job identity is the same, defaults given or left out', () => {
    const given = { ...base, signer: {}, read: { query: { match_all: {} }, slice: { id: 0, max: 2 } }, output: { prefix: 'near_dup' } };
    const grouped = { ...base, read: { query: { match_all: {} }, slice: { id: 0, max: 2 } } };
    expect(annotateIdentity(grouped)).toEqual(annotateIdentity(given));
    expect(Object.keys(annotateIdentity(grouped))).toEqual(['index', 'fields', 'prefix', 'params', 'query', 'slice', 'template']);
    expect(annotateIdentity({ ...base, template: false })).not.toHaveProperty('template');
    expect(annotateIdentity(base)).toMatchObject({ prefix: 'near_dup', query: null, slice: null });
  });
});

describe('resolveIngestOptions', () => {
  it('fills every default in, from INGEST_DEFAULTS and the machine', () => {
    expect(api.resolveIngestOptions(base)).toEqual({
      index: 'docs',
      fields: ['text'],
      signer: {},
      template: DEFAULT_TEMPLATE_REQUEST,
      output: { prefix: 'near_dup', idField: undefined, errorsFile: 'near-dup-errors-docs.jsonl' },
      limits: { maxChars: 10_000_000, threads: os.availableParallelism(), maxLineBytes: 100 * 1024 * 1024, bulk: { maxBytes: 5 * 1024 * 1024, maxOperations: 1000 } },
      onProgress: undefined,
    });
    expect(api.INGEST_DEFAULTS).toMatchObject({ prefix: api.ANNOTATE_DEFAULTS.prefix, maxChars: api.ANNOTATE_DEFAULTS.maxChars, bulk: api.ANNOTATE_DEFAULTS.bulk });
  });

  it('takes each group', () => {
    const grouped = api.resolveIngestOptions({ ...base, output: { prefix: 'nd', idField: 'id', errorsFile: 'e.jsonl' }, limits: { maxChars: 10, threads: 1, maxLineBytes: 4096, bulk: { maxBytes: 2048 } } });
    expect(grouped.output).toEqual({ prefix: 'nd', idField: 'id', errorsFile: 'e.jsonl' });
    expect(grouped.limits).toEqual({ maxChars: 10, threads: 1, maxLineBytes: 4096, bulk: { maxBytes: 2048, maxOperations: 1000 } });
  });

  it('refuses an option out of its group (the flat names of 0.x), naming where it goes, and a key it does not read', () => {
    const refused = (options: object) => thrownMessage(() => api.resolveIngestOptions({ ...base, ...options } as never));
    const groups = '(ingest takes its options in groups: output, limits)';
    expect(refused({ idField: 'key' })).toBe(`idField: give it as output.idField ${groups}`);
    expect(refused({ maxChars: 5 })).toBe(`maxChars: give it as limits.maxChars ${groups}`);
    expect(refused({ limits: { prefix: 'nd' } })).toBe(`limits.prefix: give it as output.prefix ${groups}`);
    expect(refused({ idfield: 'key' })).toBe('idfield is not an option of ingest; it takes index, fields, signer, output, limits, template, reread, onWarning, onProgress');
    expect(refused({ output: { pageSize: 10 } })).toBe('output.pageSize is not an option of ingest; output takes prefix, idField, errorsFile');
    expect(api.resolveIngestOptions({ ...base, maxChars: undefined, output: { prefix: 'nd', idField: undefined } } as never).output.prefix).toBe('nd');
    expect(thrownMessage(() => checkIngestOptions({ ...base, threads: 1 } as never))).toBe(`threads: give it as limits.threads ${groups}`);
  });
});

describe('a mistake in a grouped option', () => {
  it.each([
    ['limits.pageSize', () => checkAnnotateOptions({ ...base, limits: { pageSize: 0 } }), 'pageSize must be a whole number of at least 1, got 0', '--page-size must be a whole number of at least 1, got 0'],
    ['limits.threads', () => checkAnnotateOptions({ ...base, limits: { threads: 1.5 } }), 'threads must be a whole number of at least 1, got 1.5', '--threads must be a whole number of at least 1, got 1.5'],
    ['limits.bulk', () => checkAnnotateOptions({ ...base, limits: { bulk: { maxOperations: 0 } } }), 'bulk.maxOperations must be a whole number of at least 1, got 0', '--bulk-size must be a whole number of at least 1, got 0'],
    ['read.slice', () => checkAnnotateOptions({ ...base, read: { slice: { id: 2, max: 2 } } }), 'slice.id must be a whole number from 0 to 1 for slice.max 2, got 2', '--slice must be a whole number from 0 to 1 for --slices 2, got 2'],
    ['fields', () => checkAnnotateOptions({ index: 'docs', fields: [] }), 'name at least one text field with fields', 'name at least one text field with --field'],
    ['ingest limits.maxChars', () => checkIngestOptions({ ...base, limits: { maxChars: 0 } }), 'maxChars must be a whole number of at least 1, got 0', '--max-chars must be a whole number of at least 1, got 0'],
    ['ingest limits.bulk', () => checkIngestOptions({ ...base, limits: { bulk: { maxBytes: 10 } } }), 'bulk.maxBytes must be a whole number of at least 1024, got 10', '--bulk-bytes must be a whole number of at least 1024, got 10'],
    ['ingest limits.maxLineBytes', () => checkIngestOptions({ ...base, limits: { maxLineBytes: 2 ** 30 } }), `maxLineBytes must be a whole number from 1 to ${500 * 1024 * 1024} (a line is read as one string), got ${2 ** 30}`, `--max-line-bytes must be a whole number from 1 to ${500 * 1024 * 1024} (a line is read as one string), got ${2 ** 30}`],
  ])('%s: the key in the library, the flag on the command line', (_name, check, library, command) => {
    const err = thrown(check);
    expect(err).toBeInstanceOf(api.UsageError);
    expect((err as Error).message).toBe(library);
    expect(cliMessage(err)).toBe(command);
  });

  it('good grouped options pass', () => {
    expect(() => checkAnnotateOptions({ ...base, read: { slice: { id: 1, max: 2 } }, limits: { pageSize: 10, threads: 1 }, output: { dryRun: true } })).not.toThrow();
    expect(() => checkIngestOptions({ ...base, output: { idField: 'id' }, limits: { threads: 1 } })).not.toThrow();
  });
});

describe('the defaults kept in more than one place agree', () => {
  it('the bulk flags of the command line and the bulk writer default to ANNOTATE_DEFAULTS.bulk', async () => {
    const argv = (await withBulkOptions(yargs([])).parse()) as unknown as { bulkSize: number; bulkBytes: number };
    expect({ maxOperations: argv.bulkSize, maxBytes: argv.bulkBytes }).toEqual(api.ANNOTATE_DEFAULTS.bulk);
    const writer = new BulkWriter({ send: async () => ({ errors: false, items: [] }) as never }) as unknown as { maxBytes: number; maxOperations: number };
    expect({ maxOperations: writer.maxOperations, maxBytes: writer.maxBytes }).toEqual(api.ANNOTATE_DEFAULTS.bulk);
    expect(api.ANNOTATE_DEFAULTS.bulk).toBe(BULK_DEFAULTS);
  });

  it('option keys of annotate and ingest map to the flags their commands take', () => {
    const keys = ['fields', 'pageSize', 'threads', 'maxChars', 'resume', 'checkpointFile', 'prefix', 'dryRun', 'force', 'keepVersion', 'errorsFile', 'idField', 'slice.id', 'slice.max'];
    expect(keys.map(flagOf)).toEqual(['--field', '--page-size', '--threads', '--max-chars', '--resume', '--checkpoint', '--prefix', '--dry-run', '--force', '--keep-version', '--errors-file', '--id-field', '--slice', '--slices']);
  });
});

describe('the CLI says the flags, and connects to nothing', () => {
  it.each([
    [['annotate', '--index', 'docs', '--field', 'text', '--slices', '2', '--slice', '2'], 'near-dup: --slice must be a whole number from 0 to 1 for --slices 2, got 2'],
    [['annotate', '--index', 'docs', '--field', 'text', '--threads', '0'], `near-dup: --threads must be a whole number from 1 to ${4 * os.availableParallelism()} (4 for each of the ${os.availableParallelism()} cores), got 0`],
    [['annotate', '--index', 'docs', '--field', 'text', '--bulk-size', '0'], 'near-dup: --bulk-size must be a whole number from 1 to 100000, got 0'],
    [['ingest', '--index', 'docs', '--field', 'text', '--bulk-bytes', '10'], 'near-dup: --bulk-bytes must be a whole number from 1024 to 524288000 (a request body is one string), got 10'],
    [['ingest', '--index', 'docs', '--field', 'text', '--threads', '0'], `near-dup: --threads must be a whole number from 1 to ${4 * os.availableParallelism()} (4 for each of the ${os.availableParallelism()} cores), got 0`],
  ])('near-dup %j', (args, line) => {
    // Port 1 refuses connections: the mistake is said before any is tried.
    const result = spawnSync(process.execPath, [CLI, ...args, '--url', 'http://127.0.0.1:1'], { encoding: 'utf8', input: '' });
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(`${line}\n`);
  });
});
