// Counts, from vitest's JSON report, the integration tests that passed on each engine, and fails when an
// engine named on the command line ran none or one failed (a run that skipped an engine must not look
// green), or when the engines that run the full suite did not all pass the same number.
//   node scripts/ci/count-engine-tests.mjs RESULTS.json opensearch3:full elasticsearch:full opensearch:smoke ...
// Engine names are scripts/engine's: the flavour for OpenSearch 2 and Elasticsearch 8, the flavour and the
// major otherwise (opensearch1, opensearch3, elasticsearch7, elasticsearch9); `cluster` counts the tests of
// test/integration/cluster.test.ts (a cluster of three nodes).
import { readFileSync } from 'node:fs';

const [file, ...wanted] = process.argv.slice(2);
const report = JSON.parse(readFileSync(file, 'utf8'));
const engines = wanted.map((arg) => {
  const [name, suite = 'full'] = arg.split(':');
  return { name, suite };
});
const counts = Object.fromEntries(engines.map((e) => [e.name, { passed: 0, failed: 0, skipped: 0 }]));
// Titles carry "on <flavour> <version>" (test/integration/harness.ts).
const engineOf = (title) => {
  const match = / on (opensearch|elasticsearch) (\d+)\./.exec(title);
  if (!match) return undefined;
  const plain = match[1] === 'opensearch' ? '2' : '8';
  return match[2] === plain ? match[1] : `${match[1]}${match[2]}`;
};
for (const suite of report.testResults ?? []) {
  if (!suite.name.includes('/test/integration/')) continue;
  for (const test of suite.assertionResults ?? []) {
    const engine = suite.name.endsWith('/cluster.test.ts') ? 'cluster' : engineOf([...(test.ancestorTitles ?? []), test.title].join(' '));
    if (!engine || !counts[engine]) continue;
    const status = test.status === 'passed' ? 'passed' : test.status === 'failed' ? 'failed' : 'skipped';
    counts[engine][status]++;
  }
}
let ok = true;
for (const { name, suite } of engines) {
  const c = counts[name];
  console.log(`${name} (${suite} suite): ${c.passed} integration tests passed, ${c.failed} failed, ${c.skipped} skipped`);
  if (c.passed === 0 || c.failed > 0) ok = false;
}
const full = new Set(engines.filter((e) => e.suite === 'full' && e.name !== 'cluster').map((e) => counts[e.name].passed));
if (full.size > 1) {
  console.error('the engines that run the full suite passed different numbers of tests');
  ok = false;
}
if (!ok) {
  console.error('an engine ran no integration test, or one failed');
  process.exit(1);
}
