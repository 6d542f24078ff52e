// npm run demo: the whole story on data that installs with the project. Uses SEARCH_URL when set;
// otherwise starts the embedded OpenSearch (scripts/engine, Java 17 + Maven). Indexes the 700-odd SPDX
// license texts that the spdx-license-list package ships (real near-duplicates: BSD variants, GPL
// versions, MIT look-alikes) as an ordinary index, annotates it, clusters it (every duplicate near its
// canonical, beside the whole families single linkage would make), and looks one up.
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import licenses from 'spdx-license-list/full.js';
import { connect } from '../dist/engine/client.js';
import { status } from './engine/engines.mjs';
import { annotateIndex } from '../dist/jobs/annotate.js';
import { DEDUP_DEFAULTS, dedupIndex } from '../dist/jobs/dedup.js';
import { findSimilar } from '../dist/jobs/similar.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const index = process.env.NEAR_DUP_DEMO_INDEX ?? 'near-dup-demo-licenses';

let url = process.env.SEARCH_URL;
if (!url) {
  // Said after a look at the port: a running engine is reused (no word of a download that does not happen).
  const running = (await status('opensearch')).answering;
  console.log(running ? 'No SEARCH_URL: using the embedded OpenSearch, already running' : 'No SEARCH_URL: starting the embedded OpenSearch (the first start downloads it from Maven Central) ...');
  const out = execFileSync(process.execPath, [path.join(here, 'engine/cli.mjs'), 'start', 'opensearch'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
  url = out.trim().split('\n').map((l) => l.split(' ')).find(([flavour]) => flavour === 'opensearch')?.[1];
  if (!url) throw new Error(`the embedded OpenSearch did not start: ${out}`);
}
const client = await connect({ url });
console.log(`1. ${client.info.flavour} ${client.info.version} at ${client.url}`);

// An ordinary index, as a user would have it.
await client.deleteIndex(index, { ignoreMissing: true });
const lines = Object.entries(licenses).flatMap(([id, l]) => [{ index: { _index: index, _id: id } }, { id, name: l.name, osi_approved: l.osiApproved, text: l.licenseText }]);
for (let i = 0; i < lines.length; i += 400) {
  const result = await client.bulk(lines.slice(i, i + 400));
  if (result.errors) throw new Error('indexing the license texts failed');
}
await client.refresh(index);
console.log(`2. indexed ${lines.length / 2} SPDX license texts into "${index}"`);

const annotated = await annotateIndex(client, { index, fields: ['text'], signer: {}, state: { checkpointFile: path.join(here, '../.near-dup/demo-annotate.json') }, output: { prefix: 'near_dup' } });
console.log(`3. annotated ${annotated.annotated} documents in ${annotated.seconds.toFixed(1)} s (params ${annotated.params})`);

// Pairs at dedup's default --min-similarity or more are near-duplicates.
const BAR = DEDUP_DEFAULTS.minSimilarity;
const dedup = await dedupIndex(client, { index, compare: { canonical: 'longest', minSimilarity: BAR }, state: { full: true, stateFile: path.join(here, '../.near-dup/demo-dedup.json') } });
const fixed = (x) => (x === null ? '-' : x.toFixed(3));
console.log(
  `4. ${dedup.families} families of near-duplicates (verified pairs of Jaccard ${BAR} or more, joined; the largest ${dedup.largestFamily} licences), cut into ` +
    `${dedup.clusters} clusters holding ${dedup.duplicates} duplicates: each within ${BAR} of the canonical its duplicate_of names ` +
    `(least ${fixed(dedup.canonicalSimilarity.min)}, median ${fixed(dedup.canonicalSimilarity.median)}). The largest, each duplicate with its canonical_similarity:`,
);
for (const c of dedup.top.slice(0, 4)) {
  const members = await client.search(index, {
    size: 6,
    query: { bool: { filter: [{ term: { 'near_dup.cluster_id': c.cluster_id } }, { term: { 'near_dup.is_canonical': false } }] } },
    sort: [{ 'near_dup.canonical_similarity': 'desc' }, { 'near_dup.content_hash': 'asc' }],
    _source: ['near_dup.canonical_similarity'],
  });
  const listed = members.hits.hits.map((h) => `${h._id} ${h._source.near_dup.canonical_similarity.toFixed(3)}`).join(', ');
  console.log(`   ${String(c.size).padStart(3)} documents, canonical ${c.canonical} (family ${c.family}): ${listed}${c.size > 7 ? ', ...' : ''}`);
}
// The same families as single linkage makes them (--clusters components), for comparison; nothing written.
const whole = await dedupIndex(client, { index, compare: { canonical: 'longest', minSimilarity: BAR, clusters: 'components' }, state: { full: true }, output: { dryRun: true } });
const largest = whole.top[0];
console.log(
  `   With --clusters components each family is one cluster: the largest holds ${largest.size} licences with canonical ${largest.canonical}, ` +
    `some only ${fixed(largest.minCanonicalSimilarity)} from it; ${whole.canonicalSimilarity.belowMinSimilarity} of all ${whole.duplicates} duplicates are below ${BAR} from their canonical.`,
);

const similar = await findSimilar(client, { index, id: 'MIT', limit: 5 });
console.log(`5. more like MIT (${similar.candidates} candidates from the engine, verified here):`);
for (const hit of similar.hits) console.log(`   ${hit.id.padEnd(36)} jaccard ${hit.jaccard.toFixed(3)}  simhash distance ${hit.hamming}`);

console.log(`
Next:
  npx near-dup similar --url ${client.url} --index ${index} --id BSD-3-Clause --format table
  npx near-dup dedup --url ${client.url} --index ${index} --canonical longest --full --dry-run --format text | head
      (each document with its near-duplicates; --dry-run: the clusters above stay as they are)
  npx near-dup dedup --url ${client.url} --index ${index} --canonical longest --full --dry-run --clusters components
      (whole families, as step 4 compared; writes nothing)
  With Docker: docker compose up -d, then npx near-dup dashboards --url http://localhost:5601 --index ${index} --title-field name --dedup-state .near-dup/demo-dedup.json
  and open the printed link (OpenSearch Dashboards) to explore the clusters.`);
await client.close();
