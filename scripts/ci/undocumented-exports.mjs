// The exports of src/ that say nothing of themselves: exported functions, classes, interfaces, types, consts
// and enums of src/**/*.ts with no comment right above them (a `//` line or the end of a `/* */` block on the
// line before), counted per folder. `--list` names each one (path:line kind name); `--check` (npm run lint)
// names them and exits 1 when there is any, and says one line when there is none. Read from the text, line by line (an overload counts once, by its first line).
//
//   node scripts/ci/undocumented-exports.mjs [--list] [--check] [src]
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const src = path.resolve(process.argv.slice(2).find((a) => !a.startsWith('--')) ?? 'src');
const DECLARATION = /^export\s+(?:default\s+)?(?:declare\s+)?(?:async\s+)?(?:abstract\s+)?(function\*?|class|interface|type|const|let|var|enum)\s+([A-Za-z_$][\w$]*)/;
const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
const missing = new Map();
const total = new Map();
const list = [];
for (const rel of files.sort()) {
  const lines = readFileSync(path.join(src, rel), 'utf8').split('\n');
  const folder = path.dirname(rel) === '.' ? '(top)' : path.dirname(rel);
  const seen = new Set();
  lines.forEach((line, i) => {
    const m = DECLARATION.exec(line);
    if (!m || seen.has(m[2])) return; // an overload: the first carries the comment
    seen.add(m[2]);
    total.set(folder, (total.get(folder) ?? 0) + 1);
    const above = (lines[i - 1] ?? '').trim();
    if (above.startsWith('//') || above.endsWith('*/')) return;
    missing.set(folder, (missing.get(folder) ?? 0) + 1);
    list.push(`src/${rel}:${i + 1} ${m[1]} ${m[2]}`);
  });
}
const check = process.argv.includes('--check');
if (process.argv.includes('--list') || (check && list.length > 0)) console.log(list.join('\n'));
let sum = 0;
let all = 0;
const rows = [];
for (const folder of [...total.keys()].sort()) {
  const n = missing.get(folder) ?? 0;
  sum += n;
  all += total.get(folder);
  rows.push(`${folder.padEnd(24)} ${String(n).padStart(4)} of ${total.get(folder)}`);
}
// --check says one line when every export has its comment, and names each that has none otherwise.
if (!check) console.log(rows.join('\n'));
if (!check || sum > 0) console.log(`${'all'.padEnd(24)} ${String(sum).padStart(4)} of ${all}${check ? ': give each a comment saying what it is (a `/** */` line above it)' : ''}`);
else console.log(`every one of the ${all} exports of src/ says what it is`);
if (check && sum > 0) process.exitCode = 1;
