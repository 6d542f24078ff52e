// Every runtime dependency is used by the product: an unused one is weight and attack surface for
// every user (hash-wasm was listed for months after nothing imported it).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const root = path.resolve(__dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    return statSync(file).isDirectory() ? sourceFiles(file) : /\.(ts|mjs|js)$/.test(name) ? [file] : [];
  });
}

it('every dependency in package.json is imported by src/', () => {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8'));
  const code = sourceFiles(path.join(root, 'src')).map((f) => readFileSync(f, 'utf8')).join('\n');
  const unused = Object.keys(pkg.dependencies).filter((dep) => !code.includes(`'${dep}'`) && !code.includes(`'${dep}/`));
  expect(unused).toEqual([]);
});
