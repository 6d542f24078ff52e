// bench:scale — annotate and dedup as the index grows: 100,000, 300,000 and 1,000,000 documents.
//   npm run bench:scale [-- --docs 1000000 --sizes 100000,300000,1000000 --max-chars 2000 --dedup-timeout SECONDS --rounds N --no-dedup --spilled --no-engine-alone]
// The index is the replicated corpus of the other benchmarks (replicated.mjs): at each size, its first N
// documents, loaded afresh (near-dup fields mapped, no signatures) and force-merged before each of
//   (b) the engine alone: the bulk partial updates annotate sends (same fields, bulk size, 2 in flight),
//       with the signatures computed beforehand (kept in a file, so that a million fit);
//   (a) `near-dup annotate` (a child process, as a user runs it), over the same documents;
// and then, on the index (a) annotated, force-merged,
//   (c) `near-dup dedup --full` (a child process, writing its clusters back);
// each with wall time, documents per second, the child's peak RSS and CPU, the engine's CPU (its node
// stats) and peak heap (polled), and the index size before and after the near-dup fields. One table at the
// end, for BENCHMARKS.md. The engine runs on a core of its own and near-dup on the others (taskset), as on
// separate machines; `--no-dedup` stops after (a); `--rounds N` measures (b) and (a) N times in turn;
// `--no-engine-alone` leaves (b) out (and the signing of its updates), for the end to end at millions.
import { execFileSync, spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import PQueue from 'p-queue';
import { nearDupFields } from '../../dist/annotation.js';
import { planInFlight } from '../../dist/engine/in-flight-plan.js';
import { connect } from '../../dist/engine/client.js';
import { createSigner } from '../../dist/signature.js';
import { benchUrl, loadIndex, numberArg, pinApart, replicatedDocs } from './replicated.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(here, '../../dist/cli/main.js');
const maxDocs = numberArg('docs', 1_000_000);
const maxChars = numberArg('max-chars', 2000);
const sizesArg = process.argv.includes('--sizes') ? process.argv[process.argv.indexOf('--sizes') + 1] : '100000,300000,1000000';
const sizes = sizesArg.split(',').map(Number).filter((n) => n <= maxDocs);
if (!sizes.includes(maxDocs)) sizes.push(maxDocs);
/** A dedup still running after this many seconds is stopped, and the table says how far it got. */
const dedupTimeoutS = numberArg('dedup-timeout', Number.POSITIVE_INFINITY);
const index = 'near-dup-bench-scale';
const work = mkdtempSync(path.join(os.tmpdir(), 'near-dup-bench-scale-'));

const withDedup = !process.argv.includes('--no-dedup');
// --spilled: after (c), (d) dedup --full --dry-run with every signature in memory and with room for a sixth
// of them (the rest spilled to local disk), and whether they agree.
const withSpilled = process.argv.includes('--spilled');
/** (b) and (a) are measured this many times in turn at each size. */
const rounds = numberArg('rounds', 1);
const withEngineAlone = !process.argv.includes('--no-engine-alone');
/** (b) when it is left out: every figure of it n/a. */
const NOT_RUN = { seconds: Number.NaN, engineCpu: Number.NaN, engineHeapMb: 0 };

const client = await connect({ url: benchUrl(execFileSync, path.join(here, '../engine/cli.mjs')) });
const cores = os.availableParallelism();
// Pinned before any child starts: the children (near-dup's jobs) inherit this process's cores.
const pinned = await pinApart(client, execFileSync);
console.log(`engine: ${client.info.flavour} ${client.info.version} at ${client.url}; ${os.cpus()[0].model}, ${cores} cores, Node ${process.version}; ${pinned.description}`);

// ---------------------------------------------------------------- the engine's cost

/** CPU seconds the engine's nodes have used so far (their node stats: any engine, started here or not). */
async function engineCpuSeconds() {
  const stats = await client.request('GET', '/_nodes/stats/process', undefined, { filter_path: 'nodes.*.process.cpu.total_in_millis' });
  return Object.values(stats.nodes).reduce((sum, node) => sum + node.process.cpu.total_in_millis, 0) / 1000;
}

/** Runs `step` while polling the engine's heap; its result with wall seconds, engine CPU and peak heap. */
async function measured(step) {
  let peakHeap = 0;
  let polling = true;
  const poll = (async () => {
    while (polling) {
      const stats = await client.request('GET', '/_nodes/stats/jvm', undefined, { filter_path: 'nodes.*.jvm.mem.heap_used_in_bytes' }).catch(() => undefined);
      for (const node of Object.values(stats?.nodes ?? {})) peakHeap = Math.max(peakHeap, node.jvm.mem.heap_used_in_bytes);
      await new Promise((r) => setTimeout(r, 1000));
    }
  })();
  const cpu0 = await engineCpuSeconds();
  const t0 = performance.now();
  const result = await step();
  const seconds = (performance.now() - t0) / 1000;
  const engineCpu = (await engineCpuSeconds()) - cpu0;
  polling = false;
  await poll;
  return { ...result, seconds, engineCpu, engineHeapMb: peakHeap / 1e6 };
}

async function indexBytes() {
  await client.refresh(index);
  const stats = await client.request('GET', `/${index}/_stats/store`);
  return stats._all.primaries.store.size_in_bytes;
}

async function forceMerge() {
  await client.refresh(index);
  await client.request('POST', `/${index}/_forcemerge`, undefined, { max_num_segments: 1 });
}

// ---------------------------------------------------------------- the index and the updates

/**
 * A fresh index of the first `count` documents of the replicated corpus, the near-dup fields mapped first
 * (as annotate would, before (b) writes them), force-merged: every measured run starts from the same state.
 */
const load = (docs, count) => loadIndex(client, index, docs.slice(0, count), { prepare: () => nearDupOutput(['init', '--index', index]) });

/** The partial updates of documents [from, to), one line pair per document, appended to the updates file. */
async function writeUpdates(docs, from, to, file) {
  const signer = createSigner();
  const out = createWriteStream(file, { flags: 'a' });
  const now = new Date();
  for (let i = from; i < to; i++) {
    const line = `${JSON.stringify({ update: { _index: index, _id: docs[i].id } })}\n${JSON.stringify({ doc: { near_dup: nearDupFields(signer(docs[i].text), signer.settings, now, 'joined') } })}\n`;
    if (!out.write(line)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((resolve, reject) => out.end((err) => (err ? reject(err) : resolve())));
}

/** (b) Sends the first `count` updates of the file as annotate would: 1,000 a request, as many in flight as annotate chooses. */
async function engineAlone(file, count) {
  const { limit } = await planInFlight(client, index);
  const queue = new PQueue({ concurrency: limit });
  let batch = [];
  let sent = 0;
  const flush = async () => {
    const body = batch.join('\n') + '\n';
    batch = [];
    await queue.onSizeLessThan(limit);
    queue.add(async () => {
      const r = await client.bulkNdjson(body);
      if (r.errors) throw new Error('update failed');
    });
  };
  for await (const line of readline.createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (sent >= count * 2) break;
    batch.push(line);
    sent++;
    if (batch.length >= 2000) await flush();
  }
  if (batch.length) await flush();
  await queue.onIdle();
  await client.refresh(index);
  return { docs: count };
}

/**
 * near-dup as a child process: { out: its standard output, stopped }. With `timeoutS`, a run still going
 * then is stopped (SIGTERM), with `stopped: true`.
 */
function nearDupOutput(args, timeoutS = Number.POSITIVE_INFINITY) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cli, ...args, '--url', client.url], { cwd: work, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let stopped = false;
    child.stdout.on('data', (b) => (out += b));
    child.stderr.on('data', (b) => process.stderr.write(b));
    const stop = () => {
      stopped = true;
      child.kill('SIGTERM');
    };
    const timer = Number.isFinite(timeoutS) ? setTimeout(stop, timeoutS * 1000) : undefined;
    child.on('close', (code) => {
      clearTimeout(timer);
      if (stopped || code === 0) resolve({ out, stopped });
      else reject(new Error(`near-dup ${args[0]} exited with ${code}`));
    });
  });
}

/** A near-dup job as a child process; its JSON summary (the last line of its output). */
const nearDup = async (args) => JSON.parse((await nearDupOutput(args)).out.trim().split('\n').pop());

// ---------------------------------------------------------------- the run

const docs = await replicatedDocs(maxDocs, maxChars);
const updates = path.join(work, 'updates.ndjson');
const rows = [];
let signed = 0;

// A just-started engine is slower until its JIT has compiled the update and scan paths: without a warm-up
// the first measured run, (b), pays for it and the ratio flatters annotate. Both paths, once, unmeasured.
{
  const warmUp = Math.min(50_000, sizes[0]);
  if (withEngineAlone) {
    await writeUpdates(docs, 0, warmUp, updates);
    signed = warmUp;
    await load(docs, warmUp);
    await engineAlone(updates, warmUp);
  }
  await load(docs, warmUp);
  await nearDup(['annotate', '--index', index, '--field', 'text', '--checkpoint', path.join(work, 'cp-warm-up.json')]);
  console.log(`warm-up: ${warmUp} documents through (b) and (a), not measured`);
}
for (const size of sizes) {
  const t0 = performance.now();
  if (withEngineAlone) await writeUpdates(docs, signed, size, updates);
  signed = size;
  const signSeconds = (performance.now() - t0) / 1000;
  const loadSeconds = await load(docs, size);
  const plainBytes = await indexBytes();
  console.log(`${size} documents: loaded in ${loadSeconds.toFixed(1)} s, their updates signed beforehand in ${signSeconds.toFixed(1)} s, index ${(plainBytes / 1e6).toFixed(0)} MB`);

  // (b) and (a) in turn, --rounds times (the engine's own rate moves between runs): each round's ratio, and
  // the row of the round with the median ratio.
  const measuredRounds = [];
  for (let round = 1; round <= rounds; round++) {
    if (round > 1 && withEngineAlone) await load(docs, size);
    const engine = withEngineAlone ? await measured(() => engineAlone(updates, size)) : NOT_RUN;
    if (withEngineAlone) console.log(`  (b) engine alone: ${engine.seconds.toFixed(1)} s, ${(size / engine.seconds).toFixed(0)} docs/s, engine CPU ${engine.engineCpu.toFixed(0)} s, heap peak ${engine.engineHeapMb.toFixed(0)} MB`);
    if (withEngineAlone || round > 1) await load(docs, size);
    const annotate = await measured(async () => ({ summary: await nearDup(['annotate', '--index', index, '--field', 'text', '--checkpoint', path.join(work, `cp-${size}-${round}.json`)]) }));
    if (!annotate.summary.complete || annotate.summary.annotated !== size) throw new Error(`annotate did not annotate every document: ${JSON.stringify(annotate.summary)}`);
    console.log(`  (a) annotate:     ${annotate.seconds.toFixed(1)} s, ${(size / annotate.seconds).toFixed(0)} docs/s, ratio ${withEngineAlone ? (engine.seconds / annotate.seconds).toFixed(2) : 'n/a'}, RSS ${annotate.summary.peakMemoryMb} MB, client CPU ${annotate.summary.timing.cpuSeconds.toFixed(0)} s, engine CPU ${annotate.engineCpu.toFixed(0)} s, heap peak ${annotate.engineHeapMb.toFixed(0)} MB${rounds > 1 ? ` (round ${round} of ${rounds})` : ''}`);
    measuredRounds.push({ engine, annotate });
  }
  measuredRounds.sort((x, y) => x.engine.seconds / x.annotate.seconds - y.engine.seconds / y.annotate.seconds);
  const { engine, annotate } = measuredRounds[Math.floor((measuredRounds.length - 1) / 2)];
  await forceMerge();
  const annotatedBytes = await indexBytes();
  if (!withDedup) {
    rows.push({ size, engine, annotate, plainBytes, annotatedBytes });
    continue;
  }

  const dedupOut = await measured(() => nearDupOutput(['dedup', '--index', index, '--full'], dedupTimeoutS));
  if (dedupOut.stopped) {
    // Stopped at --dedup-timeout: how far it got, from its last progress line (stderr).
    console.log(`  (c) dedup:        stopped after ${dedupOut.seconds.toFixed(0)} s (--dedup-timeout), engine CPU ${dedupOut.engineCpu.toFixed(0)} s, heap peak ${dedupOut.engineHeapMb.toFixed(0)} MB; progress above`);
    rows.push({ size, engine, annotate, plainBytes, annotatedBytes, dedupStopped: dedupOut.seconds });
    continue;
  }
  const dedup = { ...dedupOut, summary: JSON.parse(dedupOut.out.trim().split('\n').pop()) };
  const d = dedup.summary;
  if (!d.complete) throw new Error(`dedup did not complete: ${JSON.stringify(d)}`);
  const t = d.timing;
  console.log(
    `  (c) dedup:        ${dedup.seconds.toFixed(1)} s (find ${t.findSeconds.toFixed(0)}, cluster ${t.clusterSeconds.toFixed(0)}, write ${t.writeSeconds.toFixed(0)}), RSS ${d.peakMemoryMb} MB, client CPU ${t.cpuSeconds.toFixed(0)} s, engine wait ${t.engineWaitSeconds.toFixed(0)} s, engine CPU ${dedup.engineCpu.toFixed(0)} s, heap peak ${dedup.engineHeapMb.toFixed(0)} MB; ${d.clusters} clusters, ${d.duplicates} duplicates, ${d.verifiedPairs} of ${d.candidatePairs} pairs passed`,
  );
  if (withSpilled) await spilledDedup(size);
  rows.push({ size, engine, annotate, dedup, plainBytes, annotatedBytes });
}

/**
 * (d): dedup --full --dry-run twice on the index (c) left, with every signature held in memory and with room
 * for a sixth of them (the rest spilled to local disk), and whether they agree. (Both after (c): its write-back
 * moved documents within the index, and the order a scan meets them decides which pairs of a large bucket
 * are tried, though not the clusters.)
 */
async function spilledDedup(size) {
  const cache = Math.max(1, Math.floor(size / 6));
  // Merged first, so that background merges after (c)'s write-back do not reorder the documents between the two runs.
  await forceMerge();
  const run = async (extra) => {
    const out = await measured(() => nearDupOutput(['dedup', '--index', index, '--full', '--dry-run', ...extra], dedupTimeoutS));
    return { seconds: out.seconds, summary: JSON.parse(out.out.trim().split('\n').pop()) };
  };
  const held = await run([]);
  const spilled = await run(['--max-cached-signatures', String(cache)]);
  const [h, d] = [held.summary, spilled.summary];
  const same = ['clusters', 'duplicates', 'verifiedPairs', 'candidatePairs', 'families'].every((k) => d[k] === h[k]) && JSON.stringify(d.top) === JSON.stringify(h.top) && JSON.stringify(d.canonicalSimilarity) === JSON.stringify(h.canonicalSimilarity);
  for (const [label, r] of [['held', held], [`spilled (--max-cached-signatures ${cache})`, spilled]]) {
    const t = r.summary.timing;
    console.log(`  (d) dedup --dry-run, ${label}: ${r.seconds.toFixed(1)} s (find ${t.findSeconds.toFixed(0)}, cluster ${t.clusterSeconds.toFixed(0)}), RSS ${r.summary.peakMemoryMb} MB; ${r.summary.clusters} clusters, ${r.summary.duplicates} duplicates, ${r.summary.verifiedPairs} of ${r.summary.candidatePairs} pairs`);
  }
  console.log(`  (d) spilled and held: ${same ? 'the same clusters, pairs and similarities' : 'NOT the same'}`);
  if (!same) process.exitCode = 1;
}

const f0 = (n) => (Number.isNaN(n) ? 'n/a' : n.toFixed(0));
/** (a) against (b), n/a when (b) was left out. */
const ratioOf = (engine, annotate) => (Number.isNaN(engine.seconds) ? 'n/a' : (engine.seconds / annotate.seconds).toFixed(2));
console.log(`\n| documents | (b) engine alone docs/s | (a) annotate docs/s | ratio (a)/(b) | annotate RSS | annotate client CPU / engine CPU | dedup wall (find + cluster + write) | dedup RSS | dedup client CPU / engine wait / engine CPU | engine heap peak | index without / with near-dup fields | near-dup bytes per doc |`);
console.log('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |');
for (const { size, engine, annotate, dedup, plainBytes, annotatedBytes, dedupStopped } of rows) {
  if (!dedup) {
    const what = dedupStopped ? `stopped after ${f0(dedupStopped)} s` : 'not run';
    console.log(`| ${size.toLocaleString('en')} | ${f0(size / engine.seconds)} | ${f0(size / annotate.seconds)} | **${ratioOf(engine, annotate)}** | ${annotate.summary.peakMemoryMb} MB | ${f0(annotate.summary.timing.cpuSeconds)} s / ${f0(annotate.engineCpu)} s (b: ${f0(engine.engineCpu)} s) | ${what} | | | | ${f0(plainBytes / 1e6)} / ${f0(annotatedBytes / 1e6)} MB | ${f0((annotatedBytes - plainBytes) / size)} |`);
    continue;
  }
  const t = dedup.summary.timing;
  console.log(
    `| ${size.toLocaleString('en')} | ${f0(size / engine.seconds)} | ${f0(size / annotate.seconds)} | **${ratioOf(engine, annotate)}** | ${annotate.summary.peakMemoryMb} MB | ${f0(annotate.summary.timing.cpuSeconds)} s / ${f0(annotate.engineCpu)} s | **${dedup.seconds.toFixed(0)} s** (${f0(t.findSeconds)} + ${f0(t.clusterSeconds)} + ${f0(t.writeSeconds)}) | ${dedup.summary.peakMemoryMb} MB | ${f0(t.cpuSeconds)} s / ${f0(t.engineWaitSeconds)} s / ${f0(dedup.engineCpu)} s | ${f0(Math.max(engine.engineHeapMb, annotate.engineHeapMb, dedup.engineHeapMb))} MB | ${f0(plainBytes / 1e6)} / ${f0(annotatedBytes / 1e6)} MB | ${f0((annotatedBytes - plainBytes) / size)} |`,
  );
}
await client.deleteIndex(index, { ignoreMissing: true });
pinned.restore();
await client.close();
rmSync(work, { recursive: true, force: true });
