// Dependencies point one way (DESIGN.md): cli -> (jobs, proxy, explore) -> (engine, stored, signing,
// signature) -> sketch -> text. jobs, the proxy and the CLI sit side by side on the same lower layers: the
// signing threads (signing/), the stored signature (stored/) and the cluster (engine/). A module that
// imports against the flow is a layer leaking into another; this test names it.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const src = path.resolve(__dirname, '../../src');

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? files(file) : name.endsWith('.ts') ? [file] : [];
  });
}

/** For each layer, the layers it must not import from. */
const FORBIDDEN: Record<string, string[]> = {
  text: ['sketch', 'engine', 'jobs', 'cli', 'signature.ts', 'annotation.ts'],
  sketch: ['engine', 'jobs', 'cli', 'signature.ts', 'annotation.ts'],
  engine: ['jobs', 'cli', 'sketch', 'text', 'signing', 'proxy', 'explore'],
  stored: ['engine', 'jobs', 'cli', 'signing', 'proxy', 'explore'],
  signing: ['engine', 'jobs', 'cli', 'proxy', 'explore'],
  jobs: ['cli', 'proxy', 'explore'],
  proxy: ['cli', 'explore', 'jobs'],
  explore: ['cli', 'proxy'],
};

it('no module imports against the flow of the layers', () => {
  const wrong: string[] = [];
  for (const [layer, forbidden] of Object.entries(FORBIDDEN)) {
    for (const file of files(path.join(src, layer))) {
      for (const [, target] of readFileSync(file, 'utf8').matchAll(/from '(\.[^']+)'/g)) {
        const resolved = path.relative(src, path.resolve(path.dirname(file), target)).replace(/\.js$/, '.ts');
        const top = resolved.split(path.sep)[0];
        if (forbidden.includes(top)) wrong.push(`${path.relative(src, file)} imports ${resolved}`);
      }
    }
  }
  expect(wrong).toEqual([]);
});
