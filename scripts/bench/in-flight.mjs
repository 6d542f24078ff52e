// bench:in-flight — annotate with a fixed number of bulk requests in flight against the number it chooses
// from the cluster (src/engine/in-flight.ts), on the same index, in one run.
//   OPENSEARCH_CLUSTER_URL=... node scripts/bench/in-flight.mjs [--docs 40000 --shards 3 --fixed 1,2]
// (or SEARCH_URL for one node). The index: the licence corpus that installs with the project, its versions
// copied with new ids up to --docs documents, texts cut at 2,000 characters, --shards primaries, no replica,
// loaded afresh and force-merged before each run. Each run is `near-dup annotate` as a user runs it (a child
// process); printed: docs/s, the ratio to the first fixed setting, and what the automatic run chose.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '../../dist/engine/client.js';
import { initIndex } from '../../dist/indices/init.js';
import { licenseCorpus } from './corpus.mjs';
import { loadIndex, numberArg } from './replicated.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const urls = (process.env.OPENSEARCH_CLUSTER_URL ?? process.env.SEARCH_URL ?? '').split(',').filter(Boolean);
if (urls.length === 0) throw new Error('set OPENSEARCH_CLUSTER_URL (node scripts/engine/cli.mjs start opensearch-cluster) or SEARCH_URL');
const target = numberArg('docs', 40_000);
const shards = numberArg('shards', 3);
const fixedArg = process.argv.includes('--fixed') ? process.argv[process.argv.indexOf('--fixed') + 1] : '1,2';
const settings = [...fixedArg.split(',').map(Number), undefined];
const index = 'near-dup-bench-in-flight';
const client = await connect({ url: urls[0] });

const nodes = await client.request('GET', '/_cat/nodes', undefined, { format: 'json', h: 'name,node.role,cpu' });
console.log(`${client.info.flavour} ${client.info.version} at ${urls.join(', ')}: ${nodes.length} nodes; ${os.cpus()[0].model}, ${os.availableParallelism()} cores, Node ${process.version}`);

const corpus = licenseCorpus();
const docs = Array.from({ length: target }, (_, i) => {
  const d = corpus[i % corpus.length];
  return { id: `${d.id}-${Math.floor(i / corpus.length)}`, text: d.text.slice(0, 2000) };
});

/** The index afresh: --shards primaries, no replica, the near-dup fields mapped, the documents loaded and merged. */
const load = () => loadIndex(client, index, docs, { shards, prepare: () => initIndex(client, index, 'near_dup') });

/** `near-dup annotate` as a child process; its summary and the seconds it took. */
function annotate(concurrency) {
  const checkpoint = path.join(os.tmpdir(), `near-dup-bench-in-flight-${process.pid}.json`);
  rmSync(checkpoint, { force: true });
  const args = [path.join(here, '../../dist/cli/main.js'), 'annotate', '--url', urls.join(','), '--index', index, '--field', 'text', '--checkpoint', checkpoint];
  if (concurrency !== undefined) args.push('--concurrency', String(concurrency));
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (b) => (out += b));
    child.on('close', (code) => {
      rmSync(checkpoint, { force: true });
      if (code !== 0) return reject(new Error(`annotate exited with ${code}`));
      resolve({ summary: JSON.parse(out.trim().split('\n').pop()), seconds: (performance.now() - t0) / 1000 });
    });
  });
}

const rows = [];
for (const concurrency of settings) {
  await load();
  const { summary, seconds } = await annotate(concurrency);
  if (!summary.complete || summary.annotated !== docs.length) throw new Error(`annotate did not sign every document: ${JSON.stringify(summary).slice(0, 300)}`);
  rows.push({ 'in flight': summary.inFlight, seconds: seconds.toFixed(1), 'docs/s': Math.round(docs.length / seconds) });
}
const base = Number(rows[0]['docs/s']);
for (const row of rows) row['vs first'] = `${(row['docs/s'] / base).toFixed(2)}x`;
console.log(`annotate of ${docs.length} documents, index of ${shards} primary shards, no replica:`);
console.table(rows);
await client.deleteIndex(index, { ignoreMissing: true });
await client.close();
