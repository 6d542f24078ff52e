// The library's surface as a TypeScript user meets it: every function and class src/index.ts exports says
// what it does where it is declared, every error a caller may meet is exported and is an Error, and a
// mistake in an option is named by its key in the library and by its flag on the command line.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as api from '../../src/index.js';
import { checkDedupOptions, checkShareOptions } from '../../src/jobs/dedup.js';
import { flagOf } from '../../src/cli/option-flags.js';

const ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(ROOT, 'dist/cli/main.js');


/** Errors thrown and caught inside the proxy's and explore's servers: they never reach a library caller. */
const SERVER_ONLY = new Set(['UpstreamError', 'ClientGoneError', 'BodyTooLargeError', 'ProxyRefusal', 'ParamError', 'LostPage', 'Failure', 'WholeRefusal']);

/** The source of a module named by an import path ('./jobs/dedup.js' from src/index.ts). */
function moduleSource(from: string, specifier: string): { file: string; text: string } {
  const file = path.resolve(path.dirname(from), specifier.replace(/\.js$/, '.ts'));
  return { file, text: readFileSync(file, 'utf8') };
}

/** The names a module re-exports from another (`export { a, type B, c as d } from './x.js'`), with where from. */
function reExports(text: string): Array<{ name: string; local: string; from: string }> {
  return [...text.matchAll(/export\s*\{([^}]*)\}\s*from\s*'([^']+)'/g)].flatMap((m) =>
    m[1]
      .split(',')
      .map((part) => part.trim())
      .filter((part) => part !== '' && !part.startsWith('type '))
      .map((part) => {
        const [local, name = local] = part.split(/\s+as\s+/);
        return { name, local, from: m[2] };
      }),
  );
}

/**
 * Where a value export is declared, following re-exports: its kind (function, class, or const) and the doc
 * comment just above it (empty when there is none). (TypeScript 7 has no compiler API in JavaScript, so the
 * source is read: the project's declarations are one per line, `export function NAME`.)
 */
function declaration(file: string, text: string, name: string): { kind: string; doc: string } | undefined {
  const found = new RegExp(`^export (?:declare )?(?:async )?(function\\*?|class|const|let) ${name}\\b`, 'm').exec(text);
  if (found) {
    const before = text.slice(0, found.index).trimEnd();
    const doc = before.endsWith('*/') ? before.slice(before.lastIndexOf('/**')) : '';
    return { kind: found[1].replace('*', ''), doc };
  }
  const again = reExports(text).find((e) => e.name === name);
  if (!again) return undefined;
  const next = moduleSource(file, again.from);
  return declaration(next.file, next.text, again.local);
}

/** Each value that src/index.ts exports, with its declaration. */
function exportedValues(): Array<{ name: string; kind: string; doc: string }> {
  const index = path.join(ROOT, 'src/index.ts');
  const text = readFileSync(index, 'utf8');
  const own = [...text.matchAll(/^export (?:async )?(?:function|class|const) (\w+)/gm)].map((m) => ({ name: m[1], ...declaration(index, text, m[1])! }));
  return [...own, ...reExports(text).map((e) => ({ name: e.name, ...(declaration(index, `export { ${e.local} } from '${e.from}';`, e.local) ?? { kind: 'missing', doc: '' }) }))];
}

/** Each export that is a function or a class (a const that is a function counts: createSigner). */
function documentedExports(): Array<{ name: string; doc: string }> {
  return exportedValues()
    .filter((e) => e.kind === 'function' || e.kind === 'class' || e.kind === 'missing' || (e.kind === 'const' && /^[a-z]/.test(e.name)))
    .filter((e) => e.kind !== 'const' || typeof (api as Record<string, unknown>)[e.name] === 'function');
}

/** The names of the error classes declared under src/ (`export class X extends ...Error`). */
function errorClassesDeclared(dir = path.join(ROOT, 'src')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return errorClassesDeclared(file);
    if (!entry.name.endsWith('.ts')) return [];
    return [...readFileSync(file, 'utf8').matchAll(/^export class (\w+) extends \w*Error\b/gm)].map((m) => m[1]);
  });
}

describe('the public API', () => {
  it('documents every function and class it exports where it is declared', () => {
    const exported = documentedExports();
    expect(exported.map((e) => e.name)).toEqual(expect.arrayContaining(['createSigner', 'annotateIndex', 'ingestStream', 'findSimilar', 'dedupIndex', 'initIndex', 'connect']));
    const undocumented = exported.filter((e) => !/^\/\*\*[\s\S]*\w[\s\S]*\*\/$/.test(e.doc)).map((e) => e.name);
    expect(undocumented.sort()).toEqual([]);
  });

  it('exports every error class a caller may meet, each an Error', () => {
    const declared = errorClassesDeclared().filter((name) => !SERVER_ONLY.has(name));
    expect(declared.length).toBeGreaterThan(5);
    for (const name of declared) {
      const exported = (api as Record<string, unknown>)[name];
      expect(exported, `${name} is not exported from src/index.ts`).toBeTypeOf('function');
      expect((exported as { prototype: unknown }).prototype, name).toBeInstanceOf(Error);
    }
    expect(new api.UsageError('x')).toBeInstanceOf(api.NearDupError);
    expect(new api.UserError('x')).toBeInstanceOf(Error);
  });
});

describe('an option named by its key in the library, by its flag on the command line', () => {
  it('the library names option keys, never flags', async () => {
    const refusal = (() => {
      try {
        checkDedupOptions({ index: 'docs', compare: { minSimilarity: 2 } });
      } catch (err) {
        return err;
      }
    })();
    expect(refusal).toBeInstanceOf(api.UsageError);
    expect((refusal as Error).message).toBe('minSimilarity must be above 0 and at most 1, got 2');
    expect((refusal as api.UsageError).options).toEqual(['minSimilarity']);
    expect(() => checkDedupOptions({ index: 'docs', limits: { bulk: { maxBytes: 10 } } })).toThrow(/^bulk\.maxBytes must be a whole number of at least 1024, got 10$/);
    await expect(api.findSimilar(undefined as never, { index: 'docs', id: 'a', text: 'b' })).rejects.toThrow(/^give exactly one of id or text/);
  });

  it('a dedup option out of its group (the flat names of 0.x) is refused, naming where it goes', () => {
    const refused = (options: object, share = false) => {
      const check = () => (share ? checkShareOptions({ share: '1/2', pairsIndex: 'p', ...options } as never) : api.resolveDedupOptions({ index: 'docs', ...options } as never));
      try {
        check();
      } catch (err) {
        expect(err).toBeInstanceOf(api.UsageError);
        return (err as Error).message;
      }
      throw new Error(`${JSON.stringify(options)} was taken`);
    };
    expect(refused({ minSimilarity: 0.7 })).toBe('minSimilarity: give it as compare.minSimilarity (dedup takes its options in groups: compare, limits, state, output)');
    expect(refused({ dryRun: true }, true)).toBe('dryRun: give it as output.dryRun (dedup takes its options in groups: compare, limits, state, output)');
    expect(refused({ compare: { pageSize: 10 } })).toBe('compare.pageSize: give it as limits.pageSize (dedup takes its options in groups: compare, limits, state, output)');
    expect(refused({ minSimilarty: 0.7 })).toMatch(/^minSimilarty is not an option of dedup; it takes index, compare, limits, state, output, /);
    expect(refused({ state: { fulll: true } })).toBe('state.fulll is not an option of dedup; state takes stateFile, resume, full');
    // A member left undefined is no setting lost (a caller spreads what it has).
    expect(api.resolveDedupOptions({ index: 'docs', minSimilarity: undefined, compare: { minSimilarity: 0.8, prefix: undefined } } as never).compare).toMatchObject({ minSimilarity: 0.8, prefix: 'near_dup' });
  });

  it('the CLI maps keys to the flags a user types', () => {
    expect(flagOf('minSimilarity')).toBe('--min-similarity');
    expect(flagOf('bulk.maxBytes')).toBe('--bulk-bytes');
    expect(flagOf('fields')).toBe('--field');
    expect(flagOf('signer.simhashBlocks')).toBe('--simhash-blocks');
  });

  it.each([
    [['dedup', '--index', 'docs', '--min-similarity', '2'], 'near-dup: --min-similarity must be a number above 0 and at most 1, got 2'],
    [['annotate', '--index', 'docs', '--field', 'text', '--bulk-bytes', '10'], 'near-dup: --bulk-bytes must be a whole number from 1024 to 524288000 (a request body is one string), got 10'],
    [['dedup', '--index', 'docs', '--share', '1/2', '--pairs-index', 'p', '--dry-run'], 'near-dup: --dry-run is not for --share: give it to the final step (--from-shares N), which clusters and writes back; a share writes only its pairs to --pairs-index'],
  ])('near-dup %j says the flag', (args, line) => {
    // Port 1 refuses connections: the mistake is said before any is tried.
    const result = spawnSync(process.execPath, [CLI, ...args, '--url', 'http://127.0.0.1:1'], { encoding: 'utf8', input: '' });
    expect(result.status).toBe(2);
    expect(result.stderr).toBe(`${line}\n`);
  });
});
