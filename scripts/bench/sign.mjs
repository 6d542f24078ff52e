// bench:sign — `near-dup sign --jsonl` against datasketch's MinHash.update_batch and rensa's MinHash, each
// a whole process on one core (pinned with taskset -c 0 where taskset exists), start-up included, best of
// a few rounds run in turn; then near-dup on every core.
//   npm run bench:sign [-- --corpus FILE] [--rounds N] [--baseline DIST]
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
import { pythonPeer } from './python-peer.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name) => {
  const at = process.argv.indexOf(name);
  return at > 0 ? process.argv[at + 1] : undefined;
};
const rounds = Number(arg('--rounds') ?? 3);
const baseline = arg('--baseline');
if (baseline && !existsSync(path.join(baseline, 'cli', 'main.js'))) throw new Error(`--baseline ${baseline}: no cli/main.js there; give the dist/ folder of a built checkout`);
process.env.NEAR_DUP_BENCH_VENV ??= path.resolve(here, '../../.venv-bench');

const docs = shuffled(await loadCorpus(arg('--corpus')));
const bytes = docs.reduce((n, d) => n + Buffer.byteLength(d.text), 0);
console.log(`corpus: ${docs.length} documents, ${mb(bytes).toFixed(1)} MB; ${os.cpus()[0].model}, ${os.availableParallelism()} cores, Node ${process.version}`);

const dir = mkdtempSync(path.join(os.tmpdir(), 'near-dup-bench-'));
const inputFile = path.join(dir, 'docs.jsonl');
writeFileSync(inputFile, docs.map((d) => JSON.stringify({ id: d.id, text: d.text })).join('\n') + '\n');
const normalize = normalizer('norm-html');
const tokensFile = path.join(dir, 'normalized.jsonl');
writeFileSync(tokensFile, docs.map((d) => JSON.stringify({ text: normalize(d.text) })).join('\n') + '\n');
const outFile = path.join(dir, 'signatures.jsonl');

const python = pythonPeer();
const hasRensa = spawnSync(python, ['-c', 'import rensa'], { stdio: 'ignore' }).status === 0;
const pinned = spawnSync('taskset', ['-c', '0', 'true'], { stdio: 'ignore' }).status === 0;
const gnuTime = existsSync('/usr/bin/time') && spawnSync('/usr/bin/time', ['-f', '%e', 'true'], { stdio: 'ignore' }).status === 0;
if (!pinned) console.log('note: no taskset here; the one-core rows run unpinned');
if (!hasRensa) console.log(`note: rensa is not installed in ${process.env.NEAR_DUP_BENCH_VENV}, its rows are left out; to add them: ${python} -m pip install rensa==0.5.0`);

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
const SHA1 = 'white-space:norm-html:sha1:128';
const MMH3 = 'white-space:norm-html:mmh3:128';
const rows = [
  { key: 'datasketch', name: 'datasketch MinHash.update_batch', run: peer('datasketch_peer.py', '128') },
  ...(hasRensa
    ? [
        { key: 'cminhash', name: 'rensa CMinHash', run: peer('rensa_peer.py', 'c', '128') },
        { key: 'rminhash', name: 'rensa RMinHash', run: peer('rensa_peer.py', 'r', '128') },
      ]
    : []),
  { key: 'sha1', name: `near-dup sign --jsonl ${SHA1}`, run: nearDup(ours, SHA1) },
  { key: 'mmh3', name: `near-dup sign --jsonl ${MMH3}`, run: nearDup(ours, MMH3) },
  ...(baseline
    ? [
        { key: 'sha1-baseline', name: `baseline: sign --jsonl ${SHA1}`, run: nearDup(baseline, SHA1) },
        { key: 'mmh3-baseline', name: `baseline: sign --jsonl ${MMH3}`, run: nearDup(baseline, MMH3) },
      ]
    : []),
];

// Rounds in turn, so that a slower spell of a shared machine falls on every row alike; best of each.
const best = new Map();
let checked = false;
for (let round = 0; round < rounds; round++) {
  for (const row of rows) {
    const result = row.run();
    const prev = best.get(row.key);
    if (!prev || result.wall < prev.wall) best.set(row.key, result);
    if (row.key === 'sha1' && !checked) {
      checkAgainstDatasketch();
      checked = true;
    }
  }
}
const everyCore = nearDup(ours, SHA1, false)();

// The first MinHash value of every signature, XORed, against datasketch's over the same tokens.
function checkAgainstDatasketch() {
  const datasketch = best.get('datasketch');
  let checksum = 0;
  let signed = 0;
  for (const line of readFileSync(outFile, 'utf8').split('\n')) {
    if (!line) continue;
    const sig = JSON.parse(line);
    if (sig.error) throw new Error(`near-dup failed on a document: ${line}`);
    checksum ^= sig.minhash[0];
    signed++;
  }
  if (signed !== docs.length) throw new Error(`near-dup signed ${signed} of ${docs.length} documents`);
  if (checksum >>> 0 !== datasketch.checksum) throw new Error(`MinHash values differ from datasketch's: checksum ${checksum >>> 0} vs ${datasketch.checksum}`);
}
rmSync(dir, { recursive: true, force: true });

const fmt = (s) => (s === undefined ? '' : s.toFixed(2));
const line = (name, r) =>
  `${name.padEnd(62)} ${fmt(r.wall).padStart(7)} s ${fmt(r.cpu).padStart(7)} s ${(docs.length / r.wall).toFixed(0).padStart(7)} ${(mb(bytes) / r.wall).toFixed(1).padStart(6)}` +
  `${r.seconds === undefined ? '' : `   (MinHash alone ${r.seconds.toFixed(2)} s)`}${r.rssMb === undefined ? '' : `   peak ${r.rssMb.toFixed(0)} MB`}`;
console.log(`\nwhole processes, ${pinned ? 'pinned to core 0 (taskset -c 0)' : 'unpinned'}, best of ${rounds} rounds:`);
console.log(`${'what'.padEnd(62)} ${'wall'.padStart(9)} ${'CPU'.padStart(9)} ${'docs/s'.padStart(7)} ${'MB/s'.padStart(6)}`);
for (const row of rows) console.log(line(row.name, best.get(row.key)));
console.log(line(`near-dup sign --jsonl ${SHA1}, every core (${os.availableParallelism()} threads)`, everyCore));

const ratio = (a, b) => best.get(a).wall / best.get(b).wall;
console.log('\nratios (wall, whole processes):');
console.log(`  datasketch / near-dup sha1: ${ratio('datasketch', 'sha1').toFixed(2)}x faster (goal at least 3x, aim 10x)`);
if (hasRensa) {
  console.log(`  near-dup sha1 / rensa CMinHash: ${ratio('sha1', 'cminhash').toFixed(2)} (goal at most 1)`);
  console.log(`  near-dup mmh3 / rensa RMinHash: ${ratio('mmh3', 'rminhash').toFixed(2)} (goal at most 2)`);
}
if (baseline) {
  console.log(`  baseline / this build, sha1: ${ratio('sha1-baseline', 'sha1').toFixed(2)}x; mmh3: ${ratio('mmh3-baseline', 'mmh3').toFixed(2)}x`);
}
console.log(`MinHash values (sha1) checked against datasketch's over the same tokens: identical; datasketch ${best.get('datasketch').datasketch}${hasRensa ? `, rensa ${best.get('rminhash').rensa}` : ''}`);
