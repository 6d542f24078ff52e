// The README's commands work as written after its install step: `near-dup` is not on the PATH after
// `npm install` in a clone, so every example runs it through npx.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const readme = readFileSync(path.resolve(__dirname, '../../README.md'), 'utf8');

it('every console example runs near-dup as `npx near-dup`', () => {
  const commands = readme.split('\n').filter((line) => /^\$ /.test(line));
  expect(commands.length).toBeGreaterThan(10);
  const bare = commands.filter((line) => /(^\$ |\| |&& )near-dup\b/.test(line));
  expect(bare).toEqual([]);
});

it('the install section says how to get near-dup on the PATH, with lines that work from a clone (scripts/ci/install-check.sh runs them)', () => {
  expect(readme).toMatch(/npm pack/);
  expect(readme).toMatch(/npm install -g \.\/near-dup-[\d.]+\.tgz/);
  expect(readme).toMatch(/npm install -g \./);
  // No package is published: the README may name `npm install -g near-dup` only to say it does not work.
  for (const m of readme.matchAll(/npm install -g near-dup\b[^.]*/g)) expect(m[0]).toMatch(/does not work/);
});
