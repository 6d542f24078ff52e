// bench:containment — similar --measure containment against datasketch's MinHashLSHEnsemble.
//   npm run bench:containment [-- --docs 200000 --max-chars 2000 --planted 2000 --trials 200]
//  1. The estimate's error by size ratio (no engine): a passage of 300 distinct tokens inside a document
//     1, 3, 10 and 30 times larger, whole or 70% of it, estimated from the containment sample and, for
//     comparison, from MinHash Jaccard and the two sizes, against exact containment.
//  2. On the replicated PEP index of the other benchmarks plus planted partial copies (excerpts of 50% to
//     90% of a document, a quarter of them with OCR-like damage, and documents quoted whole inside a long
//     text): the index size without and with the containment fields; recall and precision of similar
//     --measure containment against exact containment, its latency next to similar --measure jaccard on
//     the same queries; and datasketch's MinHashLSHEnsemble built in memory over the same signatures
//     (build time, query time, recall and precision of what it returns).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createDocumentAnnotator } from '../../dist/annotation.js';
import { connect } from '../../dist/engine/client.js';
import { createIndexBody } from '../../dist/indices/mapping.js';
import { annotateIndex } from '../../dist/jobs/annotate.js';
import { findSimilar } from '../../dist/jobs/similar.js';
import { createSigner } from '../../dist/signature.js';
import { containmentFromJaccard, estimateShare } from '../../dist/sketch/containment.js';
import { minhashJaccard } from '../../dist/sketch/minhash.js';
import { ContainmentTruth } from './containment-truth.mjs';
import { loadCorpus, seededRandom } from './corpus.mjs';
import { pythonPeer } from './python-peer.mjs';
import { benchUrl, loadIndex, numberArg, replicatedDocs } from './replicated.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const target = numberArg('docs', 200_000);
const maxChars = numberArg('max-chars', 2000);
const plantedCount = numberArg('planted', 2000);
const trials = numberArg('trials', 200);
const THRESHOLD = 0.8;
const index = 'near-dup-bench-containment';
const signer = createSigner();
const words = (text) => signer.normalize(text).split(' ').filter(Boolean);
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const random = seededRandom(31);

const corpus = await loadCorpus();
console.log(`${os.cpus()[0].model}, ${os.availableParallelism()} cores, Node ${process.version}`);
errorByRatio();
if (process.argv.includes('--errors-only')) process.exit(0);
await engineBenchmark();

// ---------------------------------------------------------------- 1. error by size ratio

/** A passage of `n` distinct tokens from a random document that has them, as a list of words. */
function passage(n) {
  for (;;) {
    const w = words(corpus[Math.floor(random() * corpus.length)].text);
    if (new Set(w).size < n * 1.5) continue;
    const start = Math.floor(random() * (w.length / 3));
    const seen = new Set();
    let end = start;
    while (end < w.length && seen.size < n) seen.add(w[end++]);
    if (seen.size === n) return w.slice(start, end);
  }
}

/** Words of other documents, not in `avoid`, until `n` new distinct ones. */
function filler(n, avoid) {
  const out = [], seen = new Set();
  while (seen.size < n) {
    for (const w of words(corpus[Math.floor(random() * corpus.length)].text)) {
      if (avoid.has(w) || seen.size >= n) continue;
      seen.add(w);
      out.push(w);
    }
  }
  return out;
}

function errorByRatio() {
  const rows = [];
  for (const ratio of [1, 3, 10, 30]) {
    for (const kept of [1, 0.7]) {
      const errors = { sample: [], minhash: [] };
      for (let t = 0; t < trials; t++) {
        const q = passage(300);
        const qSet = new Set(q);
        const dropped = new Set([...qSet].filter(() => random() >= kept));
        const inside = q.filter((w) => !dropped.has(w));
        const extra = filler(Math.max(0, Math.round(300 * ratio) - (qSet.size - dropped.size)), qSet);
        const at = Math.floor(random() * (extra.length + 1));
        const d = [...extra.slice(0, at), ...inside, ...extra.slice(at)];
        const a = signer(q.join(' ')), b = signer(d.join(' '));
        const exact = (qSet.size - dropped.size) / qSet.size;
        const inB = new Set(b.sample);
        errors.sample.push(Math.abs(estimateShare(a.sample.filter((s) => inB.has(s)).length, a.sample.length).value - exact));
        errors.minhash.push(Math.abs(containmentFromJaccard(minhashJaccard(a.minhash, b.minhash), a.distinct_tokens, b.distinct_tokens) - exact));
      }
      rows.push({ ratio, kept, errors });
    }
  }
  const mean = (xs) => xs.reduce((s, x) => s + x, 0) / xs.length;
  const over = (xs) => xs.filter((x) => x > 0.1).length / xs.length;
  console.log(`\ncontainment estimate against exact, ${trials} pairs per row (query: 300 distinct tokens, about 75 sampled)`);
  console.log('| size ratio | exact containment | sample: mean error | p95 | off by > 0.1 | via MinHash Jaccard: mean error | p95 | off by > 0.1 |');
  console.log('| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const { ratio, kept, errors: e } of rows) {
    const cells = [e.sample, e.minhash].flatMap((xs) => [mean(xs).toFixed(3), pct(xs, 95).toFixed(3), `${(100 * over(xs)).toFixed(0)}%`]);
    console.log(`| 1:${ratio} | ${kept.toFixed(1)} | ${cells.join(' | ')} |`);
  }
}

// ---------------------------------------------------------------- 2. the engine, and the peer

/** Partial copies of `base` documents: excerpts (a quarter damaged) and whole documents inside long texts. */
function plant(base, count) {
  const long = corpus.filter((d) => d.text.length > 8 * maxChars);
  const out = [];
  for (let i = 0; i < count; i++) {
    const source = base[Math.floor(random() * base.length)];
    if (i % 2 === 0) {
      const w = source.text.split(' ');
      const length = Math.max(1, Math.round(w.length * (0.5 + 0.4 * random())));
      const start = Math.floor(random() * (w.length - length + 1));
      let text = w.slice(start, start + length).join(' ');
      if (i % 8 === 0) text = text.replace(/\w+/g, (m) => (random() < 0.05 && m.length > 3 ? `${m.slice(0, 2)} ${m.slice(2)}` : m));
      out.push({ id: `planted-${i}-excerpt-of-${source.id}`, text });
    } else {
      const host = long[Math.floor(random() * long.length)].text.split('\n');
      const at = Math.floor(random() * host.length);
      out.push({ id: `planted-${i}-holds-${source.id}`, text: [...host.slice(0, at), source.text, ...host.slice(at)].join('\n') });
    }
  }
  return out;
}

/**
 * What the containment fields cost: `docs` signed here and loaded into two fresh indices, without and with
 * the sample, merged to one segment each (fresh, so that no deleted versions are kept in either).
 */
async function fieldCost(client, docs) {
  const sizes = [];
  for (const containmentSample of [0, 4]) {
    const name = `${index}-size-${containmentSample}`;
    await client.deleteIndex(name, { ignoreMissing: true });
    await client.createIndex(name, { settings: { number_of_shards: 1, number_of_replicas: 0 }, ...createIndexBody() });
    const annotate = createDocumentAnnotator({ fields: ['text'], containmentSample });
    for (let i = 0; i < docs.length; i += 1000) {
      const body = docs.slice(i, i + 1000).flatMap((d) => [JSON.stringify({ index: { _index: name, _id: d.id } }), JSON.stringify(annotate(d))]).join('\n') + '\n';
      if ((await client.bulkNdjson(body)).errors) throw new Error('indexing failed');
    }
    await client.request('POST', `/${name}/_flush`);
    await client.request('POST', `/${name}/_forcemerge`, undefined, { max_num_segments: 1 });
    await client.refresh(name);
    const stats = await client.request('GET', `/${name}/_stats/store`);
    sizes.push(stats._all.primaries.store.size_in_bytes);
    await client.deleteIndex(name);
  }
  const [without, withSample] = sizes;
  console.log(
    `index size of ${docs.length} documents: ${(without / 1e6).toFixed(1)} MB without the containment fields, ${(withSample / 1e6).toFixed(1)} MB with them: ` +
      `${((withSample - without) / docs.length).toFixed(0)} bytes per document (+${((100 * (withSample - without)) / without).toFixed(1)}%)`,
  );
}

async function engineBenchmark() {
  const client = await connect({ url: benchUrl(execFileSync, path.join(here, '../engine/cli.mjs')) });
  console.log(`\nengine: ${client.info.flavour} ${client.info.version} at ${client.url}`);
  const base = await replicatedDocs(target, maxChars);
  const planted = plant(base, plantedCount);
  const docs = [...base, ...planted];
  await fieldCost(client, docs.slice(0, Math.min(docs.length, 50_000)));
  await loadIndex(client, index, docs);
  const checkpointFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'near-dup-bench-')), 'cp.json');
  const annotated = await annotateIndex(client, { index, fields: ['text'], signer: {}, state: { checkpointFile }, output: { prefix: 'near_dup' } });
  console.log(`${docs.length} documents (${planted.length} planted) annotated in ${annotated.seconds.toFixed(0)} s`);

  const signatures = docs.map((d) => signer(d.text));
  const meanSample = signatures.reduce((n, s) => n + s.sample.length, 0) / docs.length;
  console.log(`sampled tokens per document: ${meanSample.toFixed(1)} on average (distinct tokens ${(signatures.reduce((n, s) => n + s.distinct_tokens, 0) / docs.length).toFixed(0)})`);
  const truth = new ContainmentTruth(docs.map((d) => words(d.text)), THRESHOLD);
  const queries = planted.map((_, i) => base.length + i);
  const row = new Map(docs.map((d, i) => [d.id, i]));

  const ours = await lookups(client, docs, queries, row);
  const peer = ensemble(signatures, queries);
  report(truth, queries, ours, peer);
  if (!process.argv.includes('--keep')) await client.deleteIndex(index, { ignoreMissing: true });
  await client.close();
}

/** Each query by id with --measure containment, then with --measure jaccard: hits (rows) and latencies. */
async function lookups(client, docs, queries, row) {
  const out = { containment: [], inside: [], jaccard: [], hits: [], forward: [], warned: 0 };
  for (const q of queries) {
    let t = performance.now();
    const result = await findSimilar(client, { index, id: docs[q].id, measure: 'containment', direction: 'both', minSimilarity: THRESHOLD, limit: 10_000 });
    out.containment.push(performance.now() - t);
    out.hits.push(result.hits.map((h) => row.get(h.id)));
    out.forward.push(new Set(result.hits.filter((h) => h.containment >= THRESHOLD).map((h) => row.get(h.id))));
    if (result.warnings?.length) out.warned++;
    t = performance.now();
    await findSimilar(client, { index, id: docs[q].id, measure: 'containment', direction: 'inside', minSimilarity: THRESHOLD, limit: 10_000 });
    out.inside.push(performance.now() - t);
    t = performance.now();
    await findSimilar(client, { index, id: docs[q].id, limit: 10_000 });
    out.jaccard.push(performance.now() - t);
  }
  return out;
}

/** datasketch's MinHashLSHEnsemble over the same signatures, in a Python child process. */
function ensemble(signatures, queries) {
  const python = pythonPeer(['datasketch==2.0.0', 'numpy', 'scipy']);
  const folder = mkdtempSync(path.join(os.tmpdir(), 'near-dup-ensemble-'));
  const values = new Uint32Array(signatures.length * 128);
  signatures.forEach((s, i) => {
    values.set(s.minhash, i * 128);
  });
  writeFileSync(path.join(folder, 'values.bin'), values);
  writeFileSync(path.join(folder, 'sizes.bin'), Uint32Array.from(signatures, (s) => s.distinct_tokens));
  writeFileSync(path.join(folder, 'queries.json'), JSON.stringify(queries));
  const out = execFileSync(python, [path.join(here, 'ensemble_peer.py'), folder, String(THRESHOLD), '128', '16'], { encoding: 'utf8', maxBuffer: 1 << 30, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out);
}

function report(truth, queries, ours, peer) {
  const tally = () => ({ found: 0, strong: 0, foundForward: 0, strongForward: 0, reported: 0, correct: 0, near: 0, reportedForward: 0, correctForward: 0 });
  const score = { ours: tally(), peer: tally() };
  queries.forEach((q, k) => {
    const pairs = truth.pairsOf(q);
    for (const [name, rows] of [['ours', ours.hits[k]], ['peer', peer.results[k]]]) {
      const s = score[name], found = new Set(rows);
      for (const [d, [inside, holds]] of pairs) {
        const forward = inside >= THRESHOLD + 0.1;
        if (forward || holds >= THRESHOLD + 0.1) {
          s.strong++;
          if (found.has(d)) s.found++;
        }
        if (forward) {
          s.strongForward++;
          if (found.has(d)) s.foundForward++;
        }
      }
      for (const d of rows) {
        s.reported++;
        // The ensemble answers forward containment only; near-dup either way.
        const exact = name === 'peer' ? truth.containment(q, d) : Math.max(truth.containment(q, d), truth.containment(d, q));
        if (exact >= THRESHOLD) s.correct++;
        if (exact >= THRESHOLD - 0.1) s.near++;
        if (name === 'ours' && ours.forward[k].has(d)) {
          s.reportedForward++;
          if (truth.containment(q, d) >= THRESHOLD) s.correctForward++;
        }
      }
    }
  });
  const r = (a, b) => (b ? (a / b).toFixed(3) : 'n/a');
  console.log(`\n${queries.length} lookups by id of the planted documents, threshold ${THRESHOLD} (ground truth: exact containment either way; recall of pairs at ${THRESHOLD + 0.1} or more)`);
  console.log('| | p50 ms | p99 ms | recall (either way) | recall (query inside hit) | precision | build |');
  console.log('| --- | --- | --- | --- | --- | --- | --- |');
  const o = score.ours, p = score.peer;
  console.log(`| near-dup similar --measure containment --direction both | ${pct(ours.containment, 50).toFixed(1)} | ${pct(ours.containment, 99).toFixed(1)} | ${r(o.found, o.strong)} (${o.found}/${o.strong}) | ${r(o.foundForward, o.strongForward)} | ${r(o.correct, o.reported)} (${o.correct}/${o.reported}) | none (index fields) |`);
  console.log(`| near-dup similar --measure containment --direction inside | ${pct(ours.inside, 50).toFixed(1)} | ${pct(ours.inside, 99).toFixed(1)} | | | | |`);
  console.log(`| near-dup similar --measure jaccard (same queries) | ${pct(ours.jaccard, 50).toFixed(1)} | ${pct(ours.jaccard, 99).toFixed(1)} | | | | |`);
  console.log(
    `| datasketch MinHashLSHEnsemble (in memory, 16 partitions) | ${pct(peer.latencies_ms, 50).toFixed(1)} | ${pct(peer.latencies_ms, 99).toFixed(1)} | ${r(p.found, p.strong)} | ${r(p.foundForward, p.strongForward)} (${p.foundForward}/${p.strongForward}) | ${r(p.correct, p.reported)} (${p.correct}/${p.reported}) | ${peer.build_seconds.toFixed(1)} s, peak ${peer.peak_mb.toFixed(0)} MB |`,
  );
  console.log(`reported pairs at least ${(THRESHOLD - 0.1).toFixed(1)} contained (exact): near-dup ${r(o.near, o.reported)}, the ensemble ${r(p.near, p.reported)}`);
  console.log(`near-dup's hits that hold the query: precision ${r(o.correctForward, o.reportedForward)} (${o.correctForward}/${o.reportedForward}); hits the query holds: ${r(o.correct - o.correctForward, o.reported - o.reportedForward)}`);
  console.log(`containment p50 / jaccard p50: --direction inside (the default) ${(pct(ours.inside, 50) / pct(ours.jaccard, 50)).toFixed(2)}, both ${(pct(ours.containment, 50) / pct(ours.jaccard, 50)).toFixed(2)}; ${ours.warned} of ${queries.length} queries warned (fewer than 32 sampled tokens)`);
}
