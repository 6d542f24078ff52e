// What a scan costs the engine, by the _source it asks for: reads INDEX as annotate does (1,000 a page, with
// _seq_no), the source filtered to annotate's fields, whole, the text alone and none, ROUNDS times in turn,
// and prints the engine's CPU seconds for each (its node stats).
//   node scripts/bench/scan-cost.mjs INDEX [--rounds 2]     (SEARCH_URL, or the embedded OpenSearch)
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '../../dist/engine/client.js';
import { scanIndex } from '../../dist/engine/scan.js';
import { SIGNATURE_FIELDS } from '../../dist/stored/read.js';
import { benchUrl, numberArg } from './replicated.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const index = process.argv[2];
if (!index || index.startsWith('--')) throw new Error('usage: node scripts/bench/scan-cost.mjs INDEX [--rounds N]');
const client = await connect({ url: benchUrl(execFileSync, path.join(here, '../engine/cli.mjs')) });

async function engineCpuSeconds() {
  const stats = await client.request('GET', '/_nodes/stats/process', undefined, { filter_path: 'nodes.*.process.cpu.total_in_millis' });
  return Object.values(stats.nodes).reduce((sum, node) => sum + node.process.cpu.total_in_millis, 0) / 1000;
}

const annotated = ['text', ...SIGNATURE_FIELDS.map((f) => `near_dup.${f}`)];
const variants = { 'filtered to annotate fields': annotated, whole: undefined, 'text alone': ['text'], none: [] };
for (let round = 0; round < numberArg('rounds', 2); round++) {
  for (const [name, sourceIncludes] of Object.entries(variants)) {
    const cpu0 = await engineCpuSeconds();
    const t0 = performance.now();
    let read = 0;
    for await (const page of scanIndex(client, { index, pageSize: 1000, seqNoPrimaryTerm: true, pointInTime: client.pointInTime, sourceIncludes })) read += page.length;
    console.log(`${name.padEnd(28)} ${read} documents in ${((performance.now() - t0) / 1000).toFixed(1)} s, engine CPU ${((await engineCpuSeconds()) - cpu0).toFixed(1)} s`);
  }
}
await client.close();
