// bench:sign — `near-dup sign --jsonl` against datasketch's MinHash.update_batch and rensa's MinHash, each
// a whole process on one core (pinned with taskset -c 0 where taskset exists), start-up included, best of
// a few rounds run in turn; then near-dup on every core. Two corpora by default, each its own table:
//   news     7,424 news-like articles of ~2 KB, generated with a seed (news-corpus.mjs): short texts, where
//            the fixed costs of a process and of each document weigh most;
//   default  the PEP revisions corpus when it is here (NEAR_DUP_CORPUS, or ../shared/corpora), else the
//            license texts with seeded versions that install with the project (corpus.mjs).
//   npm run bench:sign [-- --corpus news|default|FILE[,...]] [--rounds N] [--baseline DIST]
// --baseline DIST also runs the near-dup rows with another build (the dist/ folder of an older checkout),
// in the same rounds, for a before/after of the same run.
//
// The peers see the same tokens near-dup hashes (near-dup's normalized text, split on white space) and
// read them from a JSON-lines file; their processes too are timed whole (Python start-up, imports,
// reading, tokenizing, hashing). near-dup does more: it reads raw text, normalizes it, and writes
// MinHash, band keys, SimHash, the containment sample and the content hash as JSON lines.
// Peers live in one Python environment, .venv-bench under the checkout (gitignored; NEAR_DUP_BENCH_VENV
// names another): datasketch 2.0.0 is installed there by this script; rensa only runs when it is there,
// and is installed once by hand:
//   python3 -m venv .venv-bench && .venv-bench/bin/pip install rensa==0.5.0
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { normalizer } from '../../dist/text/normalize.js';
import { loadCorpus, mb, shuffled } from './corpus.mjs';
import { newsCorpus } from './news-corpus.mjs';
import { pythonPeer } from './python-peer.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const rounds = Number(arg('--rounds') ?? 3);
const baseline = arg('--baseline');
const corpora = (arg('--corpus') ?? 'news,default').split(',');
if (baseline && !existsSync(path.join(baseline, 'cli', 'main.js'))) throw new Error(`--baseline ${baseline}: no cli/main.js there; give the dist/ folder of a built checkout`);
process.env.NEAR_DUP_BENCH_VENV ??= path.resolve(here, '../../.venv-bench');

const python = pythonPeer();
const hasRensa = spawnSync(python, ['-c', 'import rensa'], { stdio: 'ignore' }).status === 0;
const pinned = spawnSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' }).status === 0;
const gnuTime = existsSync('/usr/bin/time') && spawnSync('/usr/bin/time', ['-f', '%e', 'true'], { stdio: 'ignore' }).status === 0;
console.log(`${os.cpus()[0].model}, ${os.availableParallelism()} cores, Node ${process.version}; load average at the start ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
if (!pinned) console.log('note: no taskset here; the one-core rows run unpinned');
if (!hasRensa) console.log(`note: rensa is not installed in ${process.env.NEAR_DUP_BENCH_VENV}, its rows are left out; to add them: ${python} -m pip install rensa==0.5.0`);

const dir = mkdtempSync(path.join(os.tmpdir(), 'near-dup-bench-'));
try {
  for (const corpus of corpora) await benchCorpus(corpus);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

async function corpusDocs(name) {
  if (name === 'news') return { label: 'news-like articles of ~2 KB, generated (scripts/bench/news-corpus.mjs)', docs: newsCorpus() };
  const docs = shuffled(await loadCorpus(name === 'default' ? undefined : name));
  return { label: name === 'default' ? 'the default corpus (PEP revisions when present, else the license texts)' : name, docs };
}

/** One process, timed whole: wall seconds, CPU seconds and peak RSS (the last two from GNU time, when here). */
function runProcess(command, args, { oneCore = true, stdout } = {}) {
  const timing = path.join(dir, 'time.txt');
  let argv = [command, ...args];
  if (oneCore && pinned) argv = ['taskset', '-c', '0', ...argv];
  if (gnuTime) argv = ['/usr/bin/time', '-f', '%e %U %S %M', '-o', timing, ...argv];
  const out = stdout ? openSync(stdout, 'w') : 'pipe';
  const t0 = performance.now();
  const run = spawnSync(argv[0], argv.slice(1), { stdio: ['ignore', out, 'pipe'], encoding: 'utf8', maxBuffer: 1 << 26 });
  const wall = (performance.now() - t0) / 1000;
  if (stdout) closeSync(out);
  if (run.status !== 0) throw new Error(`${argv.join(' ')} failed (${run.status}): ${run.stderr}`);
  const [, user, sys, rssKb] = gnuTime ? readFileSync(timing, 'utf8').trim().split('\n').pop().split(' ').map(Number) : [];
  return { wall, cpu: gnuTime ? user + sys : undefined, rssMb: gnuTime ? rssKb / 1024 : undefined, stdout: run.stdout };
}

async function benchCorpus(name) {
  const { label, docs } = await corpusDocs(name);
  const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d.text), 0);
  console.log(`\n== corpus: ${label}: ${docs.length} documents, ${mb(bytes).toFixed(1)} MB (${(bytes / docs.length / 1000).toFixed(1)} KB a document)`);

  const inputFile = path.join(dir, 'docs.jsonl');
  writeFileSync(inputFile, docs.map((d) => JSON.stringify({ id: d.id, text: d.text })).join('\n') + '\n');
  const normalize = normalizer('norm-html');
  const tokensFile = path.join(dir, 'normalized.jsonl');
  writeFileSync(tokensFile, docs.map((d) => JSON.stringify({ text: normalize(d.text) })).join('\n') + '\n');
  const outFile = path.join(dir, 'signatures.jsonl');

  const nearDup = (dist, condenser, oneCore = true) => () =>
    runProcess(process.execPath, [path.join(dist, 'cli', 'main.js'), 'sign', '--jsonl', '--file', inputFile, '--condenser', condenser, ...(oneCore ? ['--threads', '1'] : [])], {
      oneCore,
      stdout: outFile,
    });
  const peer = (script, ...args) => () => {
    const result = runProcess(python, [path.join(here, script), tokensFile, ...args]);
    return { ...result, ...JSON.parse(result.stdout) };
  };

  const ours = path.resolve(here, '../../dist');
  const condensers = { sha1: 'white-space:norm-html:sha1:128', mmh3: 'white-space:norm-html:mmh3:128', crc32: 'white-space:norm-html:crc32:128' };
  const rows = [
    { key: 'datasketch', name: 'datasketch MinHash.update_batch', run: peer('datasketch_peer.py', '128') },
    ...(hasRensa
      ? [
          { key: 'cminhash', name: 'rensa CMinHash', run: peer('rensa_peer.py', 'c', '128') },
          { key: 'rminhash', name: 'rensa RMinHash', run: peer('rensa_peer.py', 'r', '128') },
        ]
      : []),
    ...Object.entries(condensers).map(([key, spec]) => ({ key, name: `near-dup sign --jsonl ${spec}`, run: nearDup(ours, spec) })),
    ...(baseline
      ? Object.entries(condensers).map(([key, spec]) => ({ key: `${key}-baseline`, name: `baseline: sign --jsonl ${spec}`, run: nearDup(baseline, spec) }))
      : []),
  ];

  // Rounds in turn, so that a slower spell of a shared machine falls on every row alike; best of each.
  const best = new Map();
  const all = new Map();
  let checked = false;
  for (let round = 0; round < rounds; round++) {
    for (const row of rows) {
      const result = row.run();
      const prev = best.get(row.key);
      if (!prev || result.wall < prev.wall) best.set(row.key, result);
      all.set(row.key, [...(all.get(row.key) ?? []), result.wall]);
      if (row.key === 'sha1' && !checked) {
        checkAgainstDatasketch(best.get('datasketch'), outFile, docs.length);
        checked = true;
      }
    }
  }
  const everyCore = nearDup(ours, condensers.sha1, false)();

  const fmt = (s) => (s === undefined ? '' : s.toFixed(2));
  const line = (rowName, r, walls) =>
    `${rowName.padEnd(62)} ${fmt(r.wall).padStart(7)} s ${fmt(r.cpu).padStart(7)} s ${(docs.length / r.wall).toFixed(0).padStart(7)} ${(mb(bytes) / r.wall).toFixed(1).padStart(6)}` +
    `${r.seconds === undefined ? '' : `   (MinHash alone ${r.seconds.toFixed(2)} s)`}${r.rssMb === undefined ? '' : `   peak ${r.rssMb.toFixed(0)} MB`}` +
    `${walls && walls.length > 1 ? `   runs ${walls.map((w) => w.toFixed(2)).join(' ')}` : ''}`;
  console.log(`\nwhole processes, ${pinned ? 'pinned to core 0 (taskset -c 0)' : 'unpinned'}, best of ${rounds} rounds (load average now ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}):`);
  console.log(`${'what'.padEnd(62)} ${'wall'.padStart(9)} ${'CPU'.padStart(9)} ${'docs/s'.padStart(7)} ${'MB/s'.padStart(6)}`);
  for (const row of rows) console.log(line(row.name, best.get(row.key), all.get(row.key)));
  console.log(line(`near-dup sign --jsonl ${condensers.sha1}, every core (${os.availableParallelism()} threads)`, everyCore));

  // Wall time is what the goals are about; on a shared machine a process also waits for the core, and the
  // CPU time of each (user + system, from GNU time) shows the same comparison without those waits.
  const ratio = (a, b) => best.get(a).wall / best.get(b).wall;
  const cpuRatio = (a, b) => (gnuTime ? ` (CPU ${(best.get(a).cpu / best.get(b).cpu).toFixed(2)})` : '');
  const fastest = Object.keys(condensers).reduce((a, b) => (best.get(b).wall < best.get(a).wall ? b : a));
  console.log('\nratios (wall, whole processes, best of each; CPU time in brackets):');
  console.log(`  datasketch / near-dup sha1: ${ratio('datasketch', 'sha1').toFixed(2)}x faster${cpuRatio('datasketch', 'sha1')} (goal at least 3x, aim 10x)`);
  if (hasRensa) {
    console.log(`  near-dup sha1 / rensa CMinHash: ${ratio('sha1', 'cminhash').toFixed(2)}${cpuRatio('sha1', 'cminhash')} (goal at most 1)`);
    console.log(`  near-dup fastest (${fastest}) / rensa RMinHash: ${ratio(fastest, 'rminhash').toFixed(2)}${cpuRatio(fastest, 'rminhash')} (goal at most 1.5)`);
  }
  if (baseline) {
    console.log(`  baseline / this build: ${Object.keys(condensers).map((key) => `${key} ${ratio(`${key}-baseline`, key).toFixed(2)}x`).join(', ')}`);
  }
  console.log(`MinHash values (sha1) checked against datasketch's over the same tokens: identical; datasketch ${best.get('datasketch').datasketch}${hasRensa ? `, rensa ${best.get('rminhash').rensa}` : ''}`);
}

// The first MinHash value of every signature, XORed, against datasketch's over the same tokens.
function checkAgainstDatasketch(datasketch, outFile, documents) {
  let checksum = 0;
  let signed = 0;
  for (const line of readFileSync(outFile, 'utf8').split('\n')) {
    if (!line) continue;
    const sig = JSON.parse(line);
    if (sig.error) throw new Error(`near-dup failed on a document: ${line}`);
    checksum ^= sig.minhash[0];
    signed++;
  }
  if (signed !== documents) throw new Error(`near-dup signed ${signed} of ${documents} documents`);
  if (checksum >>> 0 !== datasketch.checksum) throw new Error(`MinHash values differ from datasketch's: checksum ${checksum >>> 0} vs ${datasketch.checksum}`);
}
