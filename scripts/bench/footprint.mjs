// bench:footprint — what a signed document costs the user's index, beside the engine's own `min_hash`
// token filter, in one run.
//   npm run bench:footprint [-- --max-docs 5000 --rounds 2 --attribute --bands-only]
// The same documents go into these indices, with the same settings (1 shard, no replica, refresh off while
// loading): (a) plain text; (b) the text with a `min_hash` sub-field (4-word shingles, 128 buckets, one
// hash per bucket, rotation: the engines' documented set-up for near-duplicates); (c) the text signed by
// near-dup (its default settings, its mapping); (c') the same signed documents under the mapping of indices
// made before the band keys lost their doc values (keyword with doc values: what an older index still costs,
// and what the lean mapping saves, loaded next to (c) in every round, in turns, with the ratio of each round);
// (d) near-dup without the containment sample. Each is bulk-loaded the same way, refreshed, force-merged to
// one segment and flushed; printed: bytes per document each adds to the plain index, and the engine's CPU
// per document while loading (from /proc when the engine runs on this machine, to the clock tick, with and
// without its GC and JIT threads; else node stats, refreshed once a second), with the ratio to the plain
// index; a load during which the engine also indexed or searched for someone else is counted (its CPU is
// not all this load's). The engine runs on its own core (taskset), the loader on the other, as on separate
// machines. The signatures of (c) are computed before the clock starts: this measures the index, not the
// signing.
// Corpora: the licence corpus that installs with the project, and the PEP corpus when it is present.
// With --bands-only, only (a), (c) and (c'): what the band keys' doc values cost, in more rounds for the time.
// With --attribute, where the engine's CPU for a signed document goes: the near-dup index again with a part
// of the near_dup object left out, and with the whole object kept in _source but not indexed.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import PQueue from 'p-queue';
import { nearDupFields } from '../../dist/annotation.js';
import { connect } from '../../dist/engine/client.js';
import { createIndexBody } from '../../dist/indices/mapping.js';
import { createSigner } from '../../dist/signature.js';
import { DEFAULT_CORPUS, licenseCorpus, loadCorpus, mb } from './corpus.mjs';
import { benchUrl, numberArg, pinApart } from './replicated.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const maxDocs = numberArg('max-docs', 100_000);
const rounds = numberArg('rounds', 2);
const client = await connect({ url: benchUrl(execFileSync, path.join(here, '../engine/cli.mjs')) });

const MIN_HASH_ANALYSIS = {
  analysis: {
    filter: {
      nd_shingle: { type: 'shingle', min_shingle_size: 4, max_shingle_size: 4, output_unigrams: false },
      nd_min_hash: { type: 'min_hash', hash_count: 1, bucket_count: 128, hash_set_size: 1, with_rotation: true },
    },
    analyzer: { nd_fingerprint: { type: 'custom', tokenizer: 'standard', filter: ['lowercase', 'nd_shingle', 'nd_min_hash'] } },
  },
};
const VARIANTS = {
  plain: { settings: {}, mappings: { properties: { text: { type: 'text' } } } },
  min_hash: { settings: MIN_HASH_ANALYSIS, mappings: { properties: { text: { type: 'text', fields: { fingerprint: { type: 'text', analyzer: 'nd_fingerprint' } } } } } },
  'near-dup': { settings: {}, mappings: { properties: { text: { type: 'text' }, ...createIndexBody().mappings.properties } } },
};
// The mapping of indices made before the band keys lost their doc values (they were there for dedup's
// partitioned pass, which aggregated on them): the same documents, the band keys as plain keyword.
const BAND_DOC_VALUES = 'near-dup, band keys with doc values';
VARIANTS[BAND_DOC_VALUES] = {
  settings: {},
  mappings: (() => {
    const mappings = structuredClone(VARIANTS['near-dup'].mappings);
    mappings.properties.near_dup.properties.bands = { type: 'keyword' };
    return mappings;
  })(),
};
// What the containment sample costs: near-dup signed with --containment-sample 0 (Jaccard and SimHash only).
VARIANTS['near-dup, no sample'] = VARIANTS['near-dup'];

if (process.argv.includes('--bands-only')) for (const name of ['min_hash', 'near-dup, no sample']) delete VARIANTS[name];

/** The variants in the order of a round: (c) and (c') side by side, in turns, so neither always loads first. */
function roundOrder(round) {
  const names = Object.keys(VARIANTS).filter((name) => name !== BAND_DOC_VALUES);
  const at = names.indexOf('near-dup');
  names.splice(round % 2 === 0 ? at + 1 : at, 0, BAND_DOC_VALUES);
  return names;
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * The engine's CPU ms from /proc (every thread, to the clock tick) when it runs on this machine; node stats
 * refresh the process's CPU only once a second (monitor.process.refresh_interval), which is a large share
 * of a load of a few seconds.
 */
function procCpuMs(pid) {
  try {
    if (!/opensearch|elasticsearch/i.test(readFileSync(`/proc/${pid}/cmdline`, 'utf8'))) return undefined;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS; // utime + stime
  } catch {
    return undefined;
  }
}

/** JVM threads whose work is not indexing as such: garbage collection, JIT compilation, safepoints. */
const JVM_THREADS = /^(GC Thread|G1 |C\d CompilerThre|VM Thread)/;

/** CPU ms of the engine's garbage collection and JIT threads so far (from /proc), or undefined. */
function jvmCpuMs(pid) {
  try {
    let ticks = 0;
    for (const task of readdirSync(`/proc/${pid}/task`)) {
      try {
        if (!JVM_THREADS.test(readFileSync(`/proc/${pid}/task/${task}/comm`, 'utf8'))) continue;
        const stat = readFileSync(`/proc/${pid}/task/${task}/stat`, 'utf8');
        const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ticks += Number(fields[11]) + Number(fields[12]);
      } catch {
        // the thread ended meanwhile
      }
    }
    return (ticks * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}

let enginePid;
/**
 * The engine's CPU ms so far: in all (cpuMs) and, when read from /proc, without its garbage collection and
 * JIT threads (workMs: the indexing itself, refreshes and merges; the JVM's share moves most from run to run).
 */
async function engineProcess() {
  if (enginePid === undefined) {
    const info = await client.request('GET', '/_nodes/_local/process');
    enginePid = Object.values(info.nodes)[0].process.id;
  }
  const fromProc = procCpuMs(enginePid);
  const jvm = fromProc === undefined ? undefined : jvmCpuMs(enginePid);
  if (fromProc !== undefined) return { cpuMs: fromProc, workMs: jvm === undefined ? undefined : fromProc - jvm, pid: enginePid, source: '/proc' };
  const stats = await client.request('GET', '/_nodes/_local/stats/process');
  return { cpuMs: Object.values(stats.nodes)[0].process.cpu.total_in_millis, pid: enginePid, source: 'node stats' };
}

/** Bulk bodies of about 4 MB (the test engines have 512 MB heaps). */
function bulkBodies(index, sources, ids) {
  const bodies = [];
  let lines = [];
  let bytes = 0;
  sources.forEach((source, i) => {
    const line = `${JSON.stringify({ index: { _index: index, _id: ids[i] } })}\n${JSON.stringify(source)}\n`;
    lines.push(line);
    bytes += line.length;
    if (bytes >= 4 * 1024 * 1024 || i === sources.length - 1) {
      bodies.push(lines.join(''));
      lines = [];
      bytes = 0;
    }
  });
  return bodies;
}

/** One bulk request, sent again after a pause when the engine says it is busy (429). */
async function sendBulk(index, body) {
  for (let attempt = 1; ; attempt++) {
    try {
      const r = await client.bulkNdjson(body);
      if (r.errors) throw new Error(`indexing into ${index} failed: ${JSON.stringify(r.items.find((i) => Object.values(i)[0].error)).slice(0, 300)}`);
      return;
    } catch (err) {
      if (err.statusCode !== 429 || attempt === 10) throw err;
      await new Promise((resolve) => setTimeout(resolve, 500 * attempt));
    }
  }
}

/** Loads `sources` (by `ids`) into a fresh index of `variant`; the engine's CPU ms while loading and the index's bytes once merged. */
async function load(name, variant, sources, ids) {
  const index = `near-dup-bench-footprint-${name.replace(/[^a-z-]/g, '')}`;
  await client.deleteIndex(index, { ignoreMissing: true });
  await client.createIndex(index, { settings: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: '-1', ...variant.settings }, mappings: variant.mappings });
  const bodies = bulkBodies(index, sources, ids);
  const opsBefore = await engineOperations();
  const before = await engineProcess();
  const queue = new PQueue({ concurrency: 2 });
  for (const body of bodies) {
    await queue.onSizeLessThan(2);
    queue.add(() => sendBulk(index, body));
  }
  await queue.onIdle();
  await client.refresh(index);
  const after = await engineProcess();
  const cpuMs = after.cpuMs - before.cpuMs;
  const workMs = after.workMs === undefined ? undefined : after.workMs - before.workMs;
  // This load's own: one indexing operation per document, no search.
  const foreign = Math.max(0, (await engineOperations()) - opsBefore - sources.length);
  const beforeMerge = (await engineProcess()).cpuMs;
  await client.request('POST', `/${index}/_forcemerge`, undefined, { max_num_segments: 1, flush: true });
  const mergeCpuMs = (await engineProcess()).cpuMs - beforeMerge;
  const stats = await client.request('GET', `/${index}/_stats/store,docs`);
  const { store, docs: counted } = stats.indices[index].primaries;
  if (counted.count !== sources.length) throw new Error(`${index} holds ${counted.count} documents, not ${sources.length}`);
  const fields = await fieldBytes(index);
  await client.deleteIndex(index);
  return { cpuMs, workMs, mergeCpuMs, bytes: store.size_in_bytes, fields, foreign };
}

/** Documents indexed and searches run on the engine's node so far (all indices, everyone's). */
async function engineOperations() {
  const stats = await client.request('GET', '/_nodes/_local/stats/indices/indexing,search');
  const { indexing, search } = Object.values(stats.nodes)[0].indices;
  return indexing.index_total + indexing.delete_total + search.query_total;
}

/** Bytes per field (inverted index, doc values, points, stored _source) where the engine can tell (_disk_usage, Elasticsearch 7.15+). */
async function fieldBytes(index) {
  try {
    const usage = await client.request('POST', `/${index}/_disk_usage`, undefined, { run_expensive_tasks: true });
    return Object.fromEntries(Object.entries(usage[index].fields).map(([name, f]) => [name, f.total_in_bytes]));
  } catch {
    return undefined;
  }
}

/** Where the bytes a variant adds go, per field, beside the plain index's (bytes per document). */
function printFieldBytes(best, documents) {
  if (!best.plain.fields) return;
  const names = new Set(Object.keys(best['near-dup'].fields ?? {}));
  const rows = [...names]
    .map((name) => ({ field: name, ...Object.fromEntries(Object.entries(best).map(([variant, r]) => [variant, Math.round((r.fields?.[name] ?? 0) / documents)])) }))
    .filter((row) => row['near-dup'] > 0 || row.plain > 0)
    .sort((a, b) => b['near-dup'] - a['near-dup']);
  console.log('bytes per document by field (_disk_usage):');
  console.table(rows);
}

/** The near-dup variant with some stored fields left out, or the object in _source only (enabled: false). */
function attributionVariants() {
  const full = VARIANTS['near-dup'].mappings;
  const without = (names) => (fields) => Object.fromEntries(Object.entries(fields).filter(([name]) => !names.includes(name)));
  return {
    'without the sample': { mappings: full, keep: without(['sample', 'sample_size']) },
    'without band keys': { mappings: full, keep: without(['bands']) },
    'without SimHash and its blocks': { mappings: full, keep: without(['simhash', 'simhash_blocks']) },
    'without counts, date, content hash, params': { mappings: full, keep: without(['token_count', 'distinct_tokens', 'sample_size', 'annotated_at', 'content_hash', 'params']) },
    'near_dup in _source only, not indexed': { mappings: { properties: { text: { type: 'text' }, near_dup: { type: 'object', enabled: false } } }, keep: (fields) => fields },
  };
}

/** Engine CPU per document of each attribution variant, beside plain and near-dup (best of `rounds`). */
async function attribute(label, docs, signed, ids, best) {
  const rows = [];
  for (const [name, variant] of Object.entries(attributionVariants())) {
    const sources = signed.map((d) => ({ text: d.text, near_dup: variant.keep(d.near_dup) }));
    let cpuMs = Number.POSITIVE_INFINITY;
    for (let round = 0; round < rounds; round++) cpuMs = Math.min(cpuMs, (await load('attribution', { settings: {}, mappings: variant.mappings }, sources, ids)).cpuMs);
    rows.push({ variant: name, 'engine CPU ms/doc': (cpuMs / docs.length).toFixed(3), 'CPU vs plain': `${(cpuMs / best.plain.cpuMs).toFixed(2)}x` });
  }
  console.log(`where the engine's CPU for a signed document goes (${label}; near-dup ${(best['near-dup'].cpuMs / best.plain.cpuMs).toFixed(2)}x plain):`);
  console.table(rows);
}

async function measure(label, corpus) {
  const docs = corpus.slice(0, maxDocs).map((d) => ({ id: d.id, text: d.text }));
  const sources = docs.map((d) => ({ text: d.text }));
  const ids = docs.map((d) => d.id);
  const signer = createSigner();
  const now = new Date();
  const signed = docs.map((d) => ({ text: d.text, near_dup: nearDupFields(signer(d.text), signer.settings, now, 'joined') }));
  const withoutSample = createSigner({ containmentSample: 0 });
  const unsampled = VARIANTS['near-dup, no sample'] ? docs.map((d) => ({ text: d.text, near_dup: nearDupFields(withoutSample(d.text), withoutSample.settings, now, 'joined') })) : undefined;
  const inputs = { plain: sources, min_hash: sources, 'near-dup': signed, [BAND_DOC_VALUES]: signed, 'near-dup, no sample': unsampled };
  const bytesIn = docs.reduce((n, d) => n + Buffer.byteLength(d.text), 0);
  console.log(`\n${label}: ${docs.length} documents, ${mb(bytesIn).toFixed(1)} MB of text (${Math.round(bytesIn / docs.length)} B/doc)`);
  const best = {};
  /** Engine CPU ms of each round, by variant. */
  const cpuRuns = {};
  for (let round = 0; round < rounds; round++) {
    for (const name of roundOrder(round)) {
      const variant = VARIANTS[name];
      const run = await load(name, variant, inputs[name], ids).catch((err) => {
        // The Elasticsearch node assembled for tests here lacks the analysis-common module.
        if (name === 'min_hash' && /Unknown filter type \[min_hash\]/.test(err.message)) return undefined;
        throw err;
      });
      if (!run) {
        if (round === 0) console.log('(this engine has no min_hash token filter: the analysis-common module is missing; min_hash left out)');
        continue;
      }
      best[name] = best[name] ? { ...run, cpuMs: Math.min(best[name].cpuMs, run.cpuMs), mergeCpuMs: Math.min(best[name].mergeCpuMs, run.mergeCpuMs) } : run;
      (cpuRuns[name] ??= []).push({ cpuMs: run.cpuMs, workMs: run.workMs, foreign: run.foreign });
    }
  }
  const plain = best.plain;
  const rows = Object.entries(best).map(([name, r]) => ({
    index: name,
    'MB merged': (r.bytes / 1048576).toFixed(2),
    'B/doc added': name === 'plain' ? '-' : Math.round((r.bytes - plain.bytes) / docs.length),
    'engine CPU ms/doc': (r.cpuMs / docs.length).toFixed(3),
    'CPU vs plain': `${(r.cpuMs / plain.cpuMs).toFixed(2)}x`,
    'force merge CPU ms/doc': (r.mergeCpuMs / docs.length).toFixed(3),
    'loads the engine shared': `${cpuRuns[name].filter((run) => run.foreign > 0).length} of ${cpuRuns[name].length}`,
  }));
  console.table(rows);
  printFieldBytes(best, docs.length);
  if (process.argv.includes('--attribute')) await attribute(label, docs, signed, ids, best);
  const added = (name) => (best[name].bytes - plain.bytes) / docs.length;
  const versus = best.min_hash
    ? `, ${(added('near-dup') / added('min_hash')).toFixed(2)}x the min_hash filter's ${Math.round(added('min_hash'))} (without the containment sample ${Math.round(added('near-dup, no sample'))}, ${(added('near-dup, no sample') / added('min_hash')).toFixed(2)}x)`
    : '';
  console.log(`near-dup adds ${Math.round(added('near-dup'))} B/doc${versus}; engine CPU per signed document ${(best['near-dup'].cpuMs / plain.cpuMs).toFixed(2)}x a plain one (best of ${rounds} rounds)`);
  printBandDocValues(best, cpuRuns, docs.length);
}

/** What the band keys' doc values cost: the mapping now against the one of indices made before, round by round. */
function printBandDocValues(best, cpuRuns, documents) {
  const lean = best['near-dup'];
  const before = best[BAND_DOC_VALUES];
  const saved = (before.bytes - lean.bytes) / documents;
  const addedBefore = (before.bytes - best.plain.bytes) / documents;
  console.log(
    `band keys without doc values: ${Math.round(saved)} B/doc less than with them (${((100 * saved) / addedBefore).toFixed(1)}% of the ${Math.round(addedBefore)} B/doc near-dup added with them), ` +
      `merged index ${(lean.bytes / before.bytes).toFixed(3)}x; force merge CPU ${(lean.mergeCpuMs / before.mergeCpuMs).toFixed(3)}x (best of ${cpuRuns['near-dup'].length})`,
  );
  const rounds = cpuRuns['near-dup'].map((r, round) => ({ lean: r, before: cpuRuns[BAND_DOC_VALUES][round] }));
  const clean = rounds.filter((r) => r.lean.foreign + r.before.foreign === 0);
  const line = (what, key) => {
    if (rounds.some((r) => r.lean[key] === undefined)) return;
    const ratios = rounds.map((r) => r.lean[key] / r.before[key]);
    const cleanRatios = clean.map((r) => r.lean[key] / r.before[key]);
    const sum = (list, side) => list.reduce((n, r) => n + r[side][key], 0);
    console.log(
      `  ${what}, without doc values / with them, round by round: ${ratios.map((x, i) => `${x.toFixed(3)}${rounds[i].lean.foreign + rounds[i].before.foreign ? '*' : ''}`).join(', ')}; ` +
        `median ${median(ratios).toFixed(3)}, of all rounds' ${(sum(rounds, 'lean') / sum(rounds, 'before')).toFixed(3)}` +
        (clean.length < rounds.length && clean.length > 0 ? `; rounds the engine had to itself (not *): median ${median(cleanRatios).toFixed(3)} of ${clean.length}` : ''),
    );
  };
  line('engine CPU', 'cpuMs');
  line("engine CPU less the JVM's GC and JIT threads", 'workMs');
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

const engine = await engineProcess();
const cores = os.availableParallelism(); // before pinning: this process then has fewer
// The engine gets its cores back however the run ends, interrupted too: it may serve others (pinApart counts
// the cores before pinning; counted after, this process sees one and the engine stayed pinned).
const pinned = await pinApart(client, execFileSync);
process.once('SIGINT', () => {
  pinned.restore();
  process.exit(130);
});
console.log(
  `engine: ${client.info.flavour} ${client.info.version} at ${client.url}; ${os.cpus()[0].model}, ${cores} cores, Node ${process.version}; ${pinned.description}; engine CPU from ${engine.source}`,
);
try {
  await measure('licence corpus (installs with the project)', licenseCorpus());
  const peps = process.env.NEAR_DUP_CORPUS ?? DEFAULT_CORPUS;
  if (existsSync(peps)) await measure(`PEP corpus (${path.basename(peps)})`, await loadCorpus(peps));
  else console.log(`\n(the PEP corpus is not at ${peps}: only the installed corpus was measured)`);
} finally {
  pinned.restore();
  await client.close();
}
