// bench:quality: how well near-dup's clusters match a labelled truth, beside datatrove, datasketch and
// text-dedup on the same pages, in one run. For each corpus (corpora.mjs) and each tool: pair precision,
// recall of the true pairs with exact J >= 0.7, truth groups with a J >= 0.9 pair split, the largest cluster
// and how many truth groups it mixes, and the time (truth.mjs and metrics.mjs say how each is counted).
// near-dup runs end to end through its command line against a real engine (near-dup.mjs), at its defaults
// and at each --variant; the peers are Python scripts beside this one, run by --python.
//
//   npm run build && node scripts/bench/quality/run.mjs [--corpus templated,licences,news,pep] [--limit N]
//     [--variant 'white-space-5-grams;min-similarity=0.8' ...] [--url http://127.0.0.1:9231]
//     [--python /work/venvs/quality/bin/python] [--text-dedup-python /work/venvs/textdedup/bin/python]
//     [--peers datatrove,datasketch,text-dedup] [--peer-timeout 3600] [--repeat 1] [--cache .cache/quality] [--json out.json] [--keep]
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CORPUS_NAMES, DEFAULT_CORPORA, corpus, limited } from './corpora.mjs';
import { curve, measure } from './metrics.mjs';
import { runNearDup } from './near-dup.mjs';
import { RECALL_FROM, SAME_TEXT, SHINGLE, truthOf } from './truth.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../../..');

const PEERS = {
  datatrove: { script: 'datatrove_minhash.py', modules: ['datatrove', 'spacy', 'xxhash', 'orjson', 'regex', 'tokenizers'], install: "pip install 'datatrove==0.10.1' spacy regex tokenizers orjson 'xxhash<4'" },
  datasketch: { script: 'datasketch_lsh.py', modules: ['datasketch'], install: "pip install 'datasketch==2.0.0'" },
  'text-dedup': { script: 'textdedup_minhash.py', modules: ['text_dedup'], install: "pip install 'text-dedup==0.4.1' (Python >= 3.12)", python: 'textDedupPython' },
};

function options() {
  const { values } = parseArgs({
    options: {
      corpus: { type: 'string', default: DEFAULT_CORPORA.join(',') },
      limit: { type: 'string' },
      variant: { type: 'string', multiple: true, default: [] },
      url: { type: 'string', default: 'http://127.0.0.1:9231' },
      python: { type: 'string', default: process.env.NEAR_DUP_QUALITY_PYTHON ?? 'python3' },
      'text-dedup-python': { type: 'string' },
      peers: { type: 'string', default: Object.keys(PEERS).join(',') },
      cache: { type: 'string', default: path.join(root, '.cache/quality') },
      json: { type: 'string' },
      keep: { type: 'boolean', default: false },
      'peer-timeout': { type: 'string', default: '3600' },
      repeat: { type: 'string', default: '1' },
    },
  });
  const corpora = values.corpus.split(',').filter(Boolean);
  for (const c of corpora) if (!CORPUS_NAMES.includes(c)) fail(`--corpus ${c}: not a corpus; valid: ${CORPUS_NAMES.join(', ')}`);
  const peers = values.peers.split(',').filter(Boolean);
  for (const p of peers) if (!PEERS[p]) fail(`--peers ${p}: not a peer; valid: ${Object.keys(PEERS).join(', ')}`);
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !(Number.isInteger(limit) && limit > 1)) fail(`--limit ${values.limit}: give a whole number of documents above 1, e.g. --limit 1000`);
  const peerTimeout = Number(values['peer-timeout']);
  if (!(peerTimeout > 0)) fail(`--peer-timeout ${values['peer-timeout']}: give the seconds a peer may run, e.g. 3600`);
  const repeat = Number(values.repeat);
  if (!(Number.isInteger(repeat) && repeat >= 1)) fail(`--repeat ${values.repeat}: give how many times to run each near-dup row, e.g. 3`);
  return { ...values, corpora, peers, limit, peerTimeout, repeat, textDedupPython: values['text-dedup-python'] ?? values.python, cache: path.resolve(values.cache) };
}

function fail(message) {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

const say = (line) => process.stderr.write(`${line}\n`);

/** Why a peer cannot run with this Python (a missing interpreter or module), or undefined when it can. */
function peerMissing(python, peer) {
  const flag = peer.python ? '--text-dedup-python' : '--python';
  const check = spawnSync(python, ['-c', `import ${peer.modules.join(', ')}`], { encoding: 'utf8' });
  if (check.error) return `${python} cannot be run (${check.error.code}): give ${flag} the venv's python, where ${peer.install}`;
  if (check.status !== 0) return `${python} cannot import it (${check.stderr.trim().split('\n').pop()}): ${peer.install} in that environment, or give ${flag} another`;
  return undefined;
}

function runPeer(name, python, docsFile, workDir, timeout) {
  const peer = PEERS[name];
  const missing = peerMissing(python, peer);
  if (missing) return { missing };
  const out = path.join(workDir, `${name}.json`);
  const log = path.join(workDir, `${name}.log`);
  const started = performance.now();
  // coreutils timeout ends the peer's whole process group (text-dedup starts worker processes).
  const run = spawnSync('timeout', ['--kill-after=10', String(timeout), python, path.join(here, peer.script), docsFile, out], { encoding: 'utf8', maxBuffer: 1 << 30 });
  writeFileSync(log, `${run.stdout ?? ''}\n${run.stderr ?? ''}`);
  if (run.status === 124 || run.status === 137) return { missing: `did not finish in --peer-timeout ${timeout} s (see ${log})` };
  if (run.status !== 0) return { missing: `failed (exit ${run.status}; see ${log}): ${(run.stderr ?? '').trim().split('\n').pop()}` };
  return { ...JSON.parse(readFileSync(out, 'utf8')), wall: (performance.now() - started) / 1000 };
}

/** Each document's cluster as the first document of it (a partition, whatever the cluster keys are called). */
function partition(keys) {
  const first = new Map();
  return keys.map((k, i) => {
    if (k === undefined || k === null) return i;
    if (!first.has(k)) first.set(k, i);
    return first.get(k);
  });
}

/** What repeated runs of one row gave: each measure's lowest and highest, and how many runs made the first run's clusters. */
function repeats(runs, truth) {
  const measures = runs.map((keys) => measure(keys, truth));
  const span = (f) => [Math.min(...measures.map(f)), Math.max(...measures.map(f))];
  const first = partition(runs[0]);
  const same = runs.filter((keys) => partition(keys).every((c, i) => c === first[i])).length;
  return {
    runs: runs.length,
    sameClusters: same,
    precision: span((m) => m.precision ?? 0),
    recall: span((m) => m.recall ?? 0),
    split: span((m) => m.split),
    largest: span((m) => m.largest.size),
  };
}

const num = (x, digits = 3) => (x === null || x === undefined ? '—' : x.toFixed(digits));

function row(tool, m, time) {
  return `| ${tool} | ${num(m.precision)} | ${num(m.recall)} | ${m.split} of ${m.splitOf} | ${m.largest.size} (${m.largest.groups}) | ${m.clusters} | ${time} |`;
}

async function measureCorpus(name, opts) {
  const all = await corpus(name, opts.cache);
  if (typeof all === 'string') {
    say(`${name}: skipped, ${all}`);
    return { corpus: name, skipped: all };
  }
  const docs = limited(all, opts.limit);
  const workDir = path.join(opts.cache, 'runs', name);
  mkdirSync(workDir, { recursive: true });
  const docsFile = path.join(workDir, 'docs.jsonl');
  writeFileSync(docsFile, `${docs.map((d) => JSON.stringify({ id: d.id, text: d.text })).join('\n')}\n`);
  let started = performance.now();
  const truth = truthOf(docs);
  const indexOf = new Map(docs.map((d, i) => [d.id, i]));
  say(`${name}: ${docs.length} documents, ${truth.families} families, ${truth.groups} truth groups; truth in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const result = {
    corpus: name,
    documents: docs.length,
    families: truth.families,
    truthGroups: truth.groups,
    crossFamilyPairsAtSameText: truth.crossFamily,
    recallPairs: truth.recallPairs.length,
    mustJoinPairs: truth.mustJoin.length,
    groupsWithSameText: truth.groupsWithSameText,
    rows: [],
  };
  const variants = ['', ...opts.variant];
  for (const [k, variant] of variants.entries()) {
    const label = variant ? `near-dup ${variant}` : 'near-dup defaults';
    say(`${name}: ${label} ...`);
    try {
      const runs = [];
      for (let n = 0; n < opts.repeat; n++) {
        const r = await runNearDup({ url: opts.url, index: `quality-${name}-${k}`, docsFile, variant, workDir, keep: opts.keep });
        runs.push({ r, keys: docs.map((d) => r.clusters.get(d.id)) });
      }
      const [{ r, keys }] = runs;
      const m = measure(keys, truth);
      result.rows.push({
        tool: label,
        settings: `${r.params}; dedup --min-similarity ${r.minSimilarity}`,
        ...m,
        seconds: r.seconds.ingest + r.seconds.dedup,
        time: `${num(r.seconds.ingest, 1)} + ${num(r.seconds.dedup, 1)} s`,
        verifiedPairs: r.pairs.length,
        curve: curve(r.pairs, truth, r.minSimilarity, indexOf, docs.length),
        ...(runs.length > 1 && { repeats: repeats(runs.map((x) => x.keys), truth) }),
      });
    } catch (err) {
      say(`${name}: ${label} failed: ${err.message}`);
      result.rows.push({ tool: label, failed: err.message });
    }
  }
  for (const peer of opts.peers) {
    say(`${name}: ${peer} ...`);
    started = performance.now();
    const r = runPeer(peer, PEERS[peer].python ? opts[PEERS[peer].python] : opts.python, docsFile, workDir, opts.peerTimeout);
    if (r.missing) {
      say(`${name}: ${peer} left out: ${r.missing}`);
      result.rows.push({ tool: peer, failed: r.missing });
      continue;
    }
    const m = measure(docs.map((d) => r.clusters[d.id]), truth);
    result.rows.push({ tool: `${r.tool} ${r.version}`, settings: r.settings, ...m, seconds: r.seconds, time: `${num(r.seconds, 1)} s` });
  }
  return result;
}

function markdown(result) {
  const lines = [];
  if (result.skipped) return `### ${result.corpus}\n\nskipped: ${result.skipped}\n`;
  lines.push(`### ${result.corpus}: ${result.documents} documents, ${result.families} families, ${result.truthGroups} truth groups`);
  lines.push('');
  lines.push(`${result.recallPairs} true pairs at exact J >= ${RECALL_FROM}, ${result.mustJoinPairs} at J >= ${SAME_TEXT} (in ${result.groupsWithSameText} groups); ${result.crossFamilyPairsAtSameText} pairs of different families at J >= ${SAME_TEXT} unite them.`);
  lines.push('');
  lines.push(`| tool, setting | pair precision | recall of true pairs with J >= ${RECALL_FROM} | groups with a J >= ${SAME_TEXT} pair split | largest cluster (truth groups in it) | clusters | time |`);
  lines.push('|---|---|---|---|---|---|---|');
  for (const r of result.rows) lines.push(r.failed ? `| ${r.tool} | left out: ${r.failed} | | | | | |` : row(r.tool, r, r.time));
  lines.push('');
  for (const r of result.rows) if (r.settings) lines.push(`- ${r.tool}: ${r.settings}`);
  for (const r of result.rows.filter((x) => x.repeats)) {
    const { runs, sameClusters, precision, recall, split, largest } = r.repeats;
    const span = ([a, b], d = 3) => (a === b ? num(a, d) : `${num(a, d)} to ${num(b, d)}`);
    lines.push(`- ${r.tool}, ${runs} runs on the same documents: ${sameClusters} of ${runs} gave the first run's clusters; pair precision ${span(precision)}, recall ${span(recall)}, groups split ${span(split, 0)}, largest cluster ${span(largest, 0)}`);
  }
  for (const r of result.rows.filter((x) => x.curve)) {
    lines.push('');
    lines.push(`${r.tool}, against the verification threshold (its ${r.verifiedPairs} verified pairs at similarity >= t; components: the connected components of those pairs):`);
    lines.push('');
    lines.push('| t | verified pairs | pair precision | recall (J >= 0.7) | components: pair precision | recall | groups split | largest (groups) |');
    lines.push('|---|---|---|---|---|---|---|---|');
    for (const c of r.curve) {
      const k = c.components;
      lines.push(`| ${c.threshold.toFixed(2)} | ${c.pairs} | ${num(c.pairPrecision)} | ${num(c.pairRecall)} | ${num(k.precision)} | ${num(k.recall)} | ${k.split} of ${k.splitOf} | ${k.largest.size} (${k.largest.groups}) |`);
    }
  }
  return `${lines.join('\n')}\n`;
}

async function engineVersion(url) {
  try {
    const info = await (await fetch(url)).json();
    return `${info.version?.distribution ?? 'elasticsearch'} ${info.version?.number}`;
  } catch (err) {
    return `not reached (${err.message})`;
  }
}

async function main() {
  const opts = options();
  const commit = (() => {
    try {
      return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
    } catch {
      return '?';
    }
  })();
  const machine = {
    cpu: os.cpus()[0]?.model,
    cores: os.cpus().length,
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    nearDupCommit: commit,
    engine: `${await engineVersion(opts.url)} at ${opts.url}`,
    limit: opts.limit ?? null,
    shingles: `word ${SHINGLE}-shingles, lower-cased, white-space words`,
  };
  const results = [];
  console.log(`# bench:quality (near-dup ${commit}, ${machine.engine}; ${machine.cores} cores, ${machine.memoryGb} GB, ${machine.cpu}; Node ${machine.node}${opts.limit ? `; --limit ${opts.limit}` : ''})\n`);
  for (const name of opts.corpora) {
    const result = await measureCorpus(name, opts);
    results.push(result);
    console.log(markdown(result));
  }
  if (opts.json) writeFileSync(opts.json, `${JSON.stringify({ machine, results }, null, 1)}\n`);
}

await main();
