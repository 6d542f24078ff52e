// What the command line loads before it answers: `--version` loads no parser and no engine client (it
// loaded every command's modules, 8x the start of a bare node), and signing one text loads neither yargs
// (a plain command line is parsed without it) nor an engine client nor the bulk writer.
// The time itself is measured by the benchmark (BENCHMARKS.md), not here.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const CLI = path.resolve(__dirname, '../../dist/cli/main.js');
const VERSION = (JSON.parse(readFileSync(path.resolve(__dirname, '../../package.json'), 'utf8')) as { version: string }).version;

// A module hook that names every module as it is loaded, on stderr (the hooks run on their own thread).
const HOOK = `export async function load(url, context, next) { process.stderr.write('LOADED ' + url + '\\n'); return next(url, context); }`;
const REGISTER = `import { register } from 'node:module'; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(HOOK)}`)});`;

/** The CLI run with `args` and `input`: its output, and the packages and files it loaded. */
function run(args: string[], input = '') {
  const result = spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(REGISTER)}`, CLI, ...args], { encoding: 'utf8', input, timeout: 30_000 });
  const loaded = result.stderr.split('\n').filter((line) => line.startsWith('LOADED ')).map((line) => line.slice('LOADED '.length));
  const packages = new Set(loaded.map((url) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1]).filter((name) => name !== undefined));
  return { ...result, loaded, packages, stderr: result.stderr.split('\n').filter((line) => line && !line.startsWith('LOADED ')).join('\n') };
}

const ENGINE_CLIENTS = ['@opensearch-project/opensearch', '@elastic/elasticsearch', '@elastic/transport', 'undici'];

describe.skipIf(!existsSync(CLI))('what the command line loads before it answers', () => {
  it('--version: the version, without the parser, a command or an engine client', () => {
    for (const args of [['--version'], ['sign', '--version']]) {
      const result = run(args);
      expect(result.stdout, args.join(' ')).toBe(`${VERSION}\n`);
      expect(result.status).toBe(0);
      expect(result.loaded.length, 'the hook saw the CLI load').toBeGreaterThan(0);
      expect([...result.packages], args.join(' ')).toEqual([]);
      expect(result.loaded.filter((url) => url.includes('/dist/cli/commands/') || url.includes('/dist/jobs/')), args.join(' ')).toEqual([]);
    }
  });

  it('sign of one short text: no parser (a plain command line, quick-parse.ts), no engine client, no bulk writer, no other command', () => {
    const result = run(['sign'], 'hello world\n');
    expect(result.status, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toHaveProperty('minhash');
    expect([...result.packages].filter((name) => ENGINE_CLIENTS.includes(name) || name.startsWith('yargs') || name === 'p-queue' || name.startsWith('vega'))).toEqual([]);
    expect(result.loaded.filter((url) => /\/dist\/(engine\/|jobs\/bulk-writer)/.test(url) || (url.includes('/dist/cli/commands/') && !/\/(index|sign)\.js$/.test(url)))).toEqual([]);
  });

  it('sign of plain text loads neither the HTML parser nor the transliteration tables, which a text with markup and accents still gets', () => {
    const TEXT_PACKAGES = ['htmlparser2', 'entities', 'any-ascii'];
    const plain = run(['sign'], 'hello world\n');
    expect(plain.status, plain.stderr).toBe(0);
    expect([...plain.packages].filter((name) => TEXT_PACKAGES.includes(name))).toEqual([]);
    // Loaded when first needed (require of an ES module, which the hook does not see): the text's content hash
    // is that of its tags removed, its entity decoded and its accent transliterated.
    const rich = run(['sign', '--condenser', 'white-space:norm-html:sha1:128'], '<p>Caf&eacute; cr\u00e8me</p>\n');
    expect(rich.status, rich.stderr).toBe(0);
    expect(JSON.parse(rich.stdout).content_hash).toBe(createHash('sha1').update('cafe creme').digest('hex'));
  });
});
