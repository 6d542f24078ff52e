// A document whose id holds ESC, BEL, NUL, DEL, a C1 CSI, a newline and a bidi override (issue 37, item 6):
// `similar --format table` and `dedup --format text` (on stdout and to --output) print it escaped, on one
// line, and nothing raw reaches the terminal; `--format json` keeps it exact.
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { annotateIndex } from '../../src/jobs/annotate.js';
import { fixtureSample } from '../support/corpus.js';
import { indexDocuments, runCli } from '../support/documents.js';
import { forEachEngine } from './harness.js';

const HOSTILE_ID = 'evil\x1b[2J\x1b]0;owned\x07\x00\x7f\x9b\n\u202edi';
/** What the terminal-text escaper prints for it (quoted: it held characters to escape). */
const SHOWN = '"evil\\x1b[2J\\x1b]0;owned\\x07\\x00\\x7f\\x9b\\n\\u202edi"';
/** A terminal would act on these rather than show them (the line breaks between lines aside). */
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

const family = fixtureSample(1, { seed: 3 })[0];
const docs = [
  { id: 'original', text: family.text },
  { id: HOSTILE_ID, text: family.text },
];

forEachEngine('terminal output', (ctx) => {
  const index = ctx.index('terminal-output');
  const cwd = mkdtempSync(path.join(os.tmpdir(), 'near-dup-terminal-'));
  const cli = async (...args: string[]) => {
    const result = await runCli([...args, '--url', ctx.engine.url], { cwd }).done;
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).not.toMatch(RAW);
    expect(result.stderr).not.toMatch(RAW);
    return result;
  };

  beforeAll(async () => {
    await indexDocuments(ctx.client, index, docs);
    await annotateIndex(ctx.client, { index, fields: ['text'], signer: {}, state: { checkpointFile: path.join(cwd, 'cp.json') }, output: { prefix: 'near_dup', errorsFile: path.join(cwd, 'e.jsonl') } });
    await ctx.client.refresh(index);
  });

  it('similar --format table prints the id escaped on one line; --format json keeps it exact', async () => {
    const table = await cli('similar', '--index', index, '--id', 'original', '--format', 'table');
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2); // the header and the one hit
    expect(lines[1].startsWith(`${SHOWN}  `)).toBe(true);
    expect(lines[0].indexOf('jaccard') + 'jaccard'.length).toBe(lines[1].indexOf('1.000') + '1.000'.length); // columns line up
    const json = await cli('similar', '--index', index, '--id', 'original');
    expect(JSON.parse(json.stdout).hits.map((h: { id: string }) => h.id)).toEqual([HOSTILE_ID]);
  });

  it('dedup --format text prints each document on one line with the id escaped, to the terminal and to --output', async () => {
    const text = await cli('dedup', '--index', index, '--format', 'text', '--dry-run', '--full');
    // A line for each of the two documents, naming the other.
    expect(text.stdout.trimEnd().split('\n')).toEqual([`${SHOWN}  # max 1.000 matches original`, `original  # max 1.000 matches ${SHOWN}`]);
    await cli('dedup', '--index', index, '--format', 'text', '--dry-run', '--full', '--output', 'dups.txt');
    expect(readFileSync(path.join(cwd, 'dups.txt'), 'utf8')).toBe(text.stdout);
  });
});
