// Counts, from vitest's JSON report, the integration tests that passed on each engine, and fails when an
// engine named on the command line ran none (a run that skipped an engine must not look green).
//   node scripts/ci/count-engine-tests.mjs RESULTS.json opensearch elasticsearch7 elasticsearch
import { readFileSync } from 'node:fs';

const [file, ...engines] = process.argv.slice(2);
const report = JSON.parse(readFileSync(file, 'utf8'));
const counts = Object.fromEntries(engines.map((e) => [e, { passed: 0, failed: 0, skipped: 0 }]));
// Titles carry "on <flavour> <version>" (test/integration/harness.ts); elasticsearch7 is Elasticsearch 7.x,
// opensearch3 is OpenSearch 3.x.
const engineOf = (title) => {
  const match = / on (opensearch|elasticsearch) (\d+)\./.exec(title);
  if (!match) return undefined;
  if (match[1] === 'elasticsearch' && match[2] === '7') return 'elasticsearch7';
  if (match[1] === 'opensearch' && match[2] === '3') return 'opensearch3';
  return match[1];
};
for (const suite of report.testResults ?? []) {
  if (!suite.name.includes('/test/integration/')) continue;
  for (const test of suite.assertionResults ?? []) {
    const engine = engineOf([...(test.ancestorTitles ?? []), test.title].join(' '));
    if (!engine || !counts[engine]) continue;
    const status = test.status === 'passed' ? 'passed' : test.status === 'failed' ? 'failed' : 'skipped';
    counts[engine][status]++;
  }
}
let ok = true;
for (const [engine, c] of Object.entries(counts)) {
  console.log(`${engine}: ${c.passed} integration tests passed, ${c.failed} failed, ${c.skipped} skipped`);
  if (c.passed === 0 || c.failed > 0) ok = false;
}
if (!ok) {
  console.error('an engine ran no integration test, or one failed');
  process.exit(1);
}
