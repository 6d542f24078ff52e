// Option checks live in one place, the job: the library and the CLI refuse the same mistakes, the library
// naming the option key and the CLI the flag (cli/option-flags.ts), and the CLI says so before it connects
// to anything.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { checkAnnotateOptions } from '../../src/jobs/annotate.js';
import { checkDedupOptions } from '../../src/jobs/dedup.js';
import { checkIngestOptions } from '../../src/jobs/ingest.js';
import { checkSimilarOptions } from '../../src/jobs/similar.js';

const CLI = path.resolve(__dirname, '../../dist/cli/main.js');
const base = { index: 'docs', fields: ['text'], signer: {}, output: { prefix: 'near_dup' } };

describe('the jobs check their options', () => {
  it.each([
    ['annotate --page-size 0', () => checkAnnotateOptions({ ...base, limits: { pageSize: 0 } }), /^pageSize must be a whole number of at least 1, got 0/],
    ['annotate --bulk-bytes 10', () => checkAnnotateOptions({ ...base, limits: { bulk: { maxBytes: 10 } } }), /^bulk\.maxBytes must be a whole number of at least 1024, got 10/],
    ['annotate --slice 2 of 2', () => checkAnnotateOptions({ ...base, read: { slice: { id: 2, max: 2 } } }), /^slice\.id must be a whole number from 0 to 1 for slice\.max 2/],
    ['annotate with no field', () => checkAnnotateOptions({ ...base, fields: [] }), /with fields$/],
    ['ingest --max-chars 0', () => checkIngestOptions({ ...base, limits: { maxChars: 0 } }), /^maxChars must be/],
    ['dedup --min-similarity 0', () => checkDedupOptions({ index: 'docs', compare: { minSimilarity: 0 } }), /^minSimilarity must be above 0/],
    ['dedup --page-size 1.5', () => checkDedupOptions({ index: 'docs', limits: { pageSize: 1.5 } }), /^pageSize must be a whole number/],
    ['similar --limit 0', () => checkSimilarOptions({ index: 'docs', id: 'a', limit: 0 }), /^limit must be a whole number of at least 1, got 0/],
    ['similar --id and --text', () => checkSimilarOptions({ index: 'docs', id: 'a', text: 'b' }), /exactly one of id or text/],
  ])('%s is a usage error', (_name, check, message) => {
    expect(check).toThrow(UsageError);
    expect(check).toThrow(message);
  });

  it('good options pass', () => {
    expect(() => checkAnnotateOptions({ ...base, read: { slice: { id: 1, max: 2 } }, limits: { pageSize: 10 } })).not.toThrow();
    expect(() => checkDedupOptions({ index: 'docs', compare: { minSimilarity: 1 } })).not.toThrow();
    expect(() => checkSimilarOptions({ index: 'docs', text: 'x', maxDistance: 0 })).not.toThrow();
  });
});

describe('the CLI refuses them before it connects', () => {
  it.each([
    [['annotate', '--index', 'docs', '--field', 'text', '--page-size', '0'], /--page-size/],
    [['dedup', '--index', 'docs', '--min-similarity', '2'], /--min-similarity/],
    [['similar', '--index', 'docs', '--id', 'a', '--limit', '0'], /--limit/],
    [['ingest', '--index', 'docs', '--field', 'text', '--max-chars', '0'], /--max-chars/],
  ])('near-dup %j: exit 2, one line, no connection attempted', (args, message) => {
    // Port 1 refuses connections: had the CLI tried, the message would be about that.
    const result = spawnSync(process.execPath, [CLI, ...args, '--url', 'http://127.0.0.1:1'], { encoding: 'utf8', input: '' });
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toMatch(message);
  });
});
