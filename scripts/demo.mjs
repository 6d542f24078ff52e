// npm run demo: the whole story on data that installs with the project. Uses SEARCH_URL when set;
// otherwise starts the embedded OpenSearch (scripts/engine, Java 17 + Maven). Indexes the 700-odd SPDX
// license texts that the spdx-license-list package ships (real near-duplicates: BSD variants, GPL
// versions, MIT look-alikes), annotated on the way in, and prints a few "more like this" lookups.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import licenses from 'spdx-license-list/full.js';
import { connect } from '../dist/engine/client.js';
import { ingestStream } from '../dist/jobs/ingest.js';
import { findSimilar } from '../dist/jobs/similar.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const index = process.env.NEAR_DUP_DEMO_INDEX ?? 'near-dup-demo-licenses';

let url = process.env.SEARCH_URL;
if (!url) {
  process.stderr.write('no SEARCH_URL: starting the embedded OpenSearch (the first start downloads it from Maven Central)\n');
  const out = execFileSync(process.execPath, [path.join(here, 'engine/cli.mjs'), 'start', 'opensearch'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  url = out.trim().split('\n').map((l) => l.split(' ')).find(([flavour]) => flavour === 'opensearch')?.[1];
  if (!url) throw new Error(`the embedded OpenSearch did not start: ${out}`);
}
const client = await connect({ url });
console.log(`${client.info.flavour} ${client.info.version} at ${client.url}`);
await client.deleteIndex(index, { ignoreMissing: true });

const docs = Object.entries(licenses).map(([id, l]) => JSON.stringify({ id, name: l.name, osi_approved: l.osiApproved, text: l.licenseText }));
const summary = await ingestStream(client, Readable.from([docs.join('\n') + '\n']), { index, fields: ['text'], prefix: 'near_dup', signer: {}, idField: 'id' });
console.log(`indexed ${summary.indexed} license texts into "${index}" with near-dup fields in ${summary.seconds.toFixed(1)} s (${summary.failed} failed)`);

for (const id of ['MIT', 'BSD-3-Clause', 'Apache-2.0', 'GPL-2.0-only']) {
  const result = await findSimilar(client, { index, id, signer: {}, limit: 5 });
  console.log(`\nmore like ${id} (${result.candidates} candidates from the engine):`);
  for (const hit of result.hits) console.log(`  ${hit.id.padEnd(28)} jaccard ${hit.jaccard.toFixed(3)}  simhash distance ${hit.hamming}`);
}
console.log(`\nTry: near-dup similar --url ${client.url} --index ${index} --id MIT --format table`);
await client.close();
