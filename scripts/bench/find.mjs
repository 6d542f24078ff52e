// bench:find — `similar` against the engine's own more_like_this, and `dedup` on the whole index.
//   npm run bench:find [-- --docs 200000 --max-chars 2000 --queries 1000]
// On the replicated PEP index of bench:annotate (built and annotated here):
//  - 1,000 lookups by id with near-dup similar (at most 1,000 candidates) and with more_like_this on the
//    text field (top 1,000), the same queries:
//    latency p50/p99, and recall against exact Jaccard ground truth (every pair at or above the threshold,
//    found by brute force with prefix filtering over the same tokens);
//  - near-dup dedup over the whole index (a child process, as a user runs it): wall time, peak memory.
import { execFileSync, spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from '../../dist/engine/client.js';
import { annotateIndex } from '../../dist/jobs/annotate.js';
import { findSimilar } from '../../dist/jobs/similar.js';
import { createSigner } from '../../dist/signature.js';
import { benchUrl, loadIndex, numberArg, replicatedDocs } from './replicated.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const target = numberArg('docs', 200_000);
const maxChars = numberArg('max-chars', 2000);
const queries = numberArg('queries', 1000);
const candidateLimit = numberArg('candidates', 1000);
const flag = (name) => process.argv.includes(`--${name}`);
const THRESHOLD = 0.5;
const index = 'near-dup-bench-find';

const client = await connect({ url: benchUrl(execFileSync, path.join(here, '../engine/cli.mjs')) });
console.log(`engine: ${client.info.flavour} ${client.info.version} at ${client.url}; ${os.cpus()[0].model}, ${os.availableParallelism()} cores, Node ${process.version}`);
const docs = await replicatedDocs(target, maxChars);
// --reuse: an index left by an earlier run with --keep (same --docs and --max-chars) is used as it is.
if (flag('reuse') && (await client.indexExists(index)) && (await client.count(index, { exists: { field: 'near_dup.params' } })) === docs.length) {
  console.log(`reusing the annotated index "${index}" (${docs.length} documents)`);
} else {
  const indexSeconds = await loadIndex(client, index, docs);
  const annotated = await annotateIndex(client, { index, fields: ['text'], signer: {}, state: { checkpointFile: path.join(os.tmpdir(), 'near-dup-bench-find-cp.json') }, output: { prefix: 'near_dup' } });
  console.log(`indexed ${docs.length} documents in ${indexSeconds.toFixed(1)} s, annotated in ${annotated.seconds.toFixed(1)} s`);
}

// Exact ground truth: token ids ordered rarest first; a pair at or above t shares a token within both
// prefixes of length |x| - ceil(t |x|) + 1 (prefix filtering), so only those candidates are compared.
const signer = createSigner();
const dictionary = new Map();
const raw = docs.map((d) => {
  const ids = new Set();
  for (const token of signer.normalize(d.text).split(' ')) {
    if (!token) continue;
    let id = dictionary.get(token);
    if (id === undefined) dictionary.set(token, (id = dictionary.size));
    ids.add(id);
  }
  return [...ids];
});
const frequency = new Int32Array(dictionary.size);
for (const set of raw) for (const t of set) frequency[t]++;
const sets = raw.map((set) => Int32Array.from(set).sort((a, b) => frequency[a] - frequency[b] || a - b));
const rank = (set) => set; // already in global order
const prefixLength = (n) => n - Math.ceil(THRESHOLD * n) + 1;
const postings = new Map();
sets.forEach((set, doc) => {
  for (let i = 0; i < Math.min(prefixLength(set.length), set.length); i++) {
    let list = postings.get(set[i]);
    if (!list) postings.set(set[i], (list = []));
    list.push(doc);
  }
});
const order = (a, b) => frequency[a] - frequency[b] || a - b;
function jaccard(x, y) {
  let i = 0, j = 0, shared = 0;
  while (i < x.length && j < y.length) {
    const c = order(x[i], y[j]);
    if (c === 0) { shared++; i++; j++; } else if (c < 0) i++; else j++;
  }
  return shared / (x.length + y.length - shared);
}
function truth(q) {
  const x = rank(sets[q]);
  const seen = new Set([q]);
  const out = new Map();
  for (let i = 0; i < Math.min(prefixLength(x.length), x.length); i++) {
    for (const d of postings.get(x[i]) ?? []) {
      if (seen.has(d)) continue;
      seen.add(d);
      const y = sets[d];
      if (y.length < THRESHOLD * x.length || y.length * THRESHOLD > x.length) continue;
      const j = jaccard(x, y);
      if (j >= THRESHOLD) out.set(docs[d].id, j);
    }
  }
  return out;
}

let seed = 99;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296);
const picks = Array.from({ length: queries }, () => Math.floor(rand() * docs.length));
const stats = { similar: [], mlt: [] };
const recall = { similar: [0, 0, 0, 0], mlt: [0, 0, 0, 0] }; // [found >= t, total >= t, found >= t+0.1, total >= t+0.1]
const t0 = performance.now();
for (const q of picks) {
  const expected = truth(q);
  let t = performance.now();
  const result = await findSimilar(client, { index, id: docs[q].id, minSimilarity: THRESHOLD, limit: 10_000, candidateLimit });
  stats.similar.push(performance.now() - t);
  t = performance.now();
  const mlt = await client.search(index, {
    size: candidateLimit,
    _source: false,
    query: { more_like_this: { fields: ['text'], like: [{ _index: index, _id: docs[q].id }], min_term_freq: 1, min_doc_freq: 1 } },
  });
  stats.mlt.push(performance.now() - t);
  for (const [name, ids] of [['similar', new Set(result.hits.map((h) => h.id))], ['mlt', new Set(mlt.hits.hits.map((h) => h._id))]]) {
    for (const [id, j] of expected) {
      recall[name][1]++;
      if (ids.has(id)) recall[name][0]++;
      if (j >= THRESHOLD + 0.1) {
        recall[name][3]++;
        if (ids.has(id)) recall[name][2]++;
      }
    }
  }
}
const lookupSeconds = (performance.now() - t0) / 1000;
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const share = ([f, n, f2, n2]) => `recall ${(f / n).toFixed(3)} at >= ${THRESHOLD} (${f}/${n}), ${(f2 / n2).toFixed(3)} at >= ${THRESHOLD + 0.1} (${f2}/${n2})`;
console.log(`${queries} lookups by id (ground truth: exact Jaccard >= ${THRESHOLD}; ${lookupSeconds.toFixed(0)} s in all)`);
console.log(`  near-dup similar (${candidateLimit} candidates) p50 ${pct(stats.similar, 50).toFixed(1).padStart(6)} ms  p99 ${pct(stats.similar, 99).toFixed(1).padStart(6)} ms  ${share(recall.similar)}`);
console.log(`  more_like_this (top ${candidateLimit})    p50 ${pct(stats.mlt, 50).toFixed(1).padStart(6)} ms  p99 ${pct(stats.mlt, 99).toFixed(1).padStart(6)} ms  ${share(recall.mlt)}`);

if (flag('skip-dedup')) {
  if (!flag('keep')) await client.deleteIndex(index, { ignoreMissing: true });
  await client.close();
  process.exit(0);
}
const cli = path.join(here, '../../dist/cli/main.js');
const dedupStarted = performance.now();
const dedup = await new Promise((resolve, reject) => {
  const child = spawn(process.execPath, [cli, 'dedup', '--url', client.url, '--index', index, '--full', '--dry-run'], { stdio: ['ignore', 'pipe', 'ignore'] });
  let out = '';
  child.stdout.on('data', (b) => (out += b));
  child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop())) : reject(new Error(`dedup exited with ${code}`))));
});
const dedupSeconds = (performance.now() - dedupStarted) / 1000;
console.log(`near-dup dedup (whole index, dry run): ${dedupSeconds.toFixed(1)} s wall, peak memory ${dedup.peakMemoryMb} MB; ${dedup.clusters} clusters, ${dedup.duplicates} duplicates, ${dedup.verifiedPairs} of ${dedup.candidatePairs} candidate pairs verified`);
if (!flag('keep')) await client.deleteIndex(index, { ignoreMissing: true });
await client.close();
