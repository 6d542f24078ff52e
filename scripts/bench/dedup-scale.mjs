// dedup's find and cluster stages at any size, without an engine: signatures with a realistic structure of
// near-duplicates are generated here (most documents unique; families of 2 to 50 members at Jaccard 0.5 to
// 0.95 to their family's first; a few very large families of boilerplate that share one band's rows) and fed
// to the code dedup runs after its scan: the signatures kept in memory (SignatureRecords in memory, the pass dedup
// ran up to now), spilled to local disk (on disk), or spilled compact (16 bits of each value), each band sorted
// into buckets and verified, the families cut into clusters. Each way runs in a process of its own (peak RSS
// is that process's, up to the end of the cut; with the digest's pass in brackets), one after the other, and the table prints each stage's seconds, peak RSS, the pairs and
// clusters, and whether the ways give the same clusters (a digest of every cluster's canonical, members and
// similarities); where they do not, how many documents' cluster or similarity differ from the first way's.
//
//   npm run build && node scripts/bench/dedup-scale.mjs --docs 1000000 [--ways memory,disk,compact] [--seed 1]
//       [--group-members 100000] [--spill-dir DIR] [--differences]     (a way: memory, disk, compact; disk:0 with no checking
//       threads; disk/0 with each band read where its records lie instead of gathered in ranges of buckets, disk/N in ranges of N;
//       disk/Nx3 or disk/x3 with three bands gathered a pass over the records instead of BANDS_PER_SWEEP)
import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : fallback;
};
const NUM_PERM = 128;
const BUCKET_CHUNK = 1000;
const MIN_SIMILARITY = 0.5;

if (argv.includes('--child')) await child();
else parent();

function parent() {
  const docs = Number(option('docs', 1_000_000));
  const ways = option('ways', 'memory,disk').split(',');
  const results = [];
  for (const way of ways) {
    const out = execFileSync(process.execPath, ['--max-old-space-size=16000', fileURLToPath(import.meta.url), '--child', ...argv, '--way', way], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
      maxBuffer: 64 * 1024 * 1024,
    });
    results.push(JSON.parse(out.trim().split('\n').pop()));
  }
  console.log(`\ndedup stages, ${docs.toLocaleString('en')} signatures (${NUM_PERM} values), ${os.cpus()[0].model}, ${os.cpus().length} cores, Node ${process.version}`);
  console.log('way     generate+scan  bands   cluster   total    peak RSS (digest)  pairs       families (largest)  clusters  duplicates  digest');
  for (const r of results) {
    console.log(
      `${r.way.padEnd(8)}${fmt(r.seconds.scan, 13)}${fmt(r.seconds.bands, 8)}${fmt(r.seconds.cluster, 10)}${fmt(r.seconds.total, 9)}${`${r.peakMb} MB (${r.digestPeakMb})`.padStart(17)}   ${String(r.verifiedPairs).padEnd(12)}${`${r.families} (${r.largestFamily})`.padEnd(20)}${String(r.clusters).padEnd(10)}${String(r.duplicates).padEnd(12)}${r.digest.slice(0, 12)}`,
    );
  }
  if (results.length > 1) {
    const a = results[0];
    const same = results.filter((r) => !r.way.startsWith('compact') || a.way.startsWith('compact')).every((r) => r.digest === a.digest && r.verifiedPairs === a.verifiedPairs);
    console.log(`same clusters, pairs and similarities (compact ways apart): ${same ? 'yes' : 'NO'}`);
    const stages = (r) => r.seconds.bands + r.seconds.cluster;
    for (const r of results.slice(1)) {
      const best = r.bestDigest === a.bestDigest ? 'same best matches' : 'other best matches';
      console.log(`${r.way}/${a.way} time (bands + cluster): ${(stages(r) / stages(a)).toFixed(2)}x; ${r.digest === a.digest ? 'same digest' : 'another digest'}; ${best}`);
      if (r.digest !== a.digest && r.outcomeFile) console.log(differences(a, r));
    }
    if (!same) process.exitCode = 1;
  }
  for (const r of results) if (r.outcomeFile) rmSync(r.outcomeFile, { force: true });
}

/** How the clusters of way `b` differ from those of way `a`, document by document. */
function differences(a, b) {
  const read = (file) => new Map(readFileSync(file, 'utf8').split('\n').filter(Boolean).map((line) => line.split('\t')).map(([m, c, s]) => [m, { c, s }]));
  const [x, y] = [read(a.outcomeFile), read(b.outcomeFile)];
  let cluster = 0, similarity = 0, higher = 0;
  for (const id of new Set([...x.keys(), ...y.keys()])) {
    const [p, q] = [x.get(id), y.get(id)];
    if (p?.c !== q?.c) cluster++;
    else if (p.s !== q.s) {
      similarity++;
      if (Number(q.s) > Number(p.s)) higher++;
    }
  }
  return `${b.way} against ${a.way}: pairs ${b.verifiedPairs - a.verifiedPairs >= 0 ? '+' : ''}${b.verifiedPairs - a.verifiedPairs}; documents in another cluster (or none) ${cluster}; in the same cluster at another similarity ${similarity} (${higher} higher); of ${x.size} documents in clusters`;
}

function fmt(seconds, width) {
  return `${seconds.toFixed(1)} s`.padStart(width);
}

/** RSS, and of it the JavaScript heap in use and the typed arrays' buffers (this thread's). */
function memory() {
  const { rss, heapUsed, arrayBuffers } = process.memoryUsage();
  const mb = (bytes) => Math.round(bytes / 2 ** 20);
  return `RSS ${mb(rss)} MB (heap ${mb(heapUsed)}, buffers ${mb(arrayBuffers)})`;
}

async function child() {
  const { optimalBandsRows } = await import('../../dist/sketch/lsh.js');
  const { DocNumbers } = await import('../../dist/jobs/dedup/documents/doc-numbers.js');
  const { FactsTable } = await import('../../dist/jobs/dedup/documents/facts.js');
  const { PairVerifier } = await import('../../dist/jobs/dedup/verify/pair-verifier.js');
  const { SignatureRecords } = await import('../../dist/jobs/dedup/scan/signature-table.js');
  const { rangesByDefault, verifyBands } = await import('../../dist/jobs/dedup/bands/band-pass.js');
  const { cutFamilies } = await import('../../dist/jobs/dedup/cluster/cluster-cut.js');
  const { DEDUP_DEFAULTS } = await import('../../dist/jobs/dedup.js');

  const docs = Number(option('docs', 1_000_000));
  // A way is memory, disk or compact, with ':N' for N threads checking small buckets (disk, compact; default
  // one a core beyond this one's; ':0' none), and '/N' for bands gathered in ranges of N members ('/0': each
  // band read where its records lie; default: the pass's own).
  // '#N' keeps the sets and best matches of at most N documents in memory (dedup's --max-cached-members),
  // writing them by number to the spill past that (disk, compact; default: dedup's own, 4,000,000).
  const label = option('way');
  const [wayAndRanges, maxMembers] = label.split('#');
  const [wayAndThreads, rangesAndSweep] = wayAndRanges.split('/');
  const [ranges, bandsPerSweep] = (rangesAndSweep ?? '').split('x').map((part) => (part === '' ? undefined : part));
  const [way, threads] = wayAndThreads.split(':');
  const seed = Number(option('seed', 1));
  const groupMembers = Number(option('group-members', 100_000));
  const lsh = optimalBandsRows({ numPerm: NUM_PERM, threshold: MIN_SIMILARITY });
  // The ids: in memory beside the pool, on disk beside the spill (as dedup keeps them).
  const numbers = way === 'memory' ? new DocNumbers() : new DocNumbers(option('spill-dir', os.tmpdir()));
  const seconds = {};
  let began = performance.now();
  const lap = (name) => {
    const now = performance.now();
    seconds[name] = (now - began) / 1000;
    began = now;
    process.stderr.write(`${way}: ${name} ${seconds[name].toFixed(1)} s, ${memory()}\n`);
  };
  const started = began;

  const table = new SignatureRecords(numbers, way === 'memory' ? { expected: docs } : { spillDir: option('spill-dir', os.tmpdir()), valueBits: way === 'compact' ? 16 : 32 });
  // Each document's facts as dedup keeps them (where it lives, the value the canonical rule sorts by):
  // canonical by the oldest, the order of generation (the document's number) standing for the date.
  // (On disk beside the ids when they are spilled, as dedup keeps them.)
  const facts = new FactsTable(numbers, { keepClusterIds: false, keepTokens: false, expected: docs, spill: way === 'memory' ? undefined : numbers.folder });
  const location = { index: 'bench-index' };
  for (const doc of signatures(docs, lsh, seed)) {
    table.addSignature(doc.id, doc.signature);
    const n = numbers.size - 1;
    facts.set(n, { tokens: 100, sortKey: n, location });
  }
  const source = table;
  lap('scan');

  const spill = way === 'memory' ? undefined : { folder: numbers.folder, maxRows: Number(maxMembers ?? DEDUP_DEFAULTS.maxCachedMembers) };
  const verifier = new PairVerifier(MIN_SIMILARITY, { documents: numbers, width: NUM_PERM, spill });
  const checkers = threads === undefined ? undefined : Number(threads);
  const rangeMembers = ranges === undefined ? undefined : Number(ranges);
  if (way !== 'memory') {
    const gb = (bytes) => `${(bytes / 2 ** 30).toFixed(1)} GB`;
    process.stderr.write(`${way}: records ${gb(statSync(table.records().file).size)}, memory available ${gb(os.freemem())}, ranges of ${rangeMembers ?? rangesByDefault(table)} members\n`);
  }
  // Each band's time, and the range files on disk (of its set and of the set gathered ahead, on a table on disk).
  const bandsBegan = performance.now();
  const onBand = (band, times) => {
    const gathered = way === 'memory' ? 0 : readdirSync(table.path).filter((name) => name.includes('-range-')).length;
    const s = (ms) => `${(ms / 1000).toFixed(1)}`;
    const split = `sort ${s(times.sortMs)} + gather ${s(times.gatherMs)} s there, waited ${s(times.waitMs)} + verified ${s(times.verifyMs)} s here`;
    process.stderr.write(`${way}: band ${band + 1} of ${lsh.b} at ${((performance.now() - bandsBegan) / 1000).toFixed(1)} s (${split}), ${memory()}, range files on disk ${gathered}\n`);
  };
  await verifyBands(source, verifier, { bucketChunk: BUCKET_CHUNK, groupMembers, checkers, rangeMembers, onBand, bandsPerSweep: bandsPerSweep && Number(bandsPerSweep) });
  lap('bands');
  const writes = verifier.clusters.written?.writes;
  if (writes) process.stderr.write(`${way}: sets and best matches written ${writes.count} times in the bands, ${(writes.ms / 1000).toFixed(1)} s\n`);

  const find = (ids, numbered) => table.find(ids, numbered);
  // (As dedup does: with the ids on disk, the sets and best matches go there before the cut.)
  verifier.clusters.writeRows();
  const families = verifier.clusters.families();
  // The family members' records gathered in one pass, as dedup's full pass does when its bands were gathered.
  if (way !== 'memory' && (rangeMembers ?? rangesByDefault(table)) > 0) {
    const t = performance.now();
    const gathered = table.gatherMembers(families);
    process.stderr.write(`${way}: family members' records ${gathered ? 'gathered' : 'not gathered (no room)'} in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  }
  const cut = await cutFamilies(families, { method: 'centres', rule: 'oldest', minSimilarity: MIN_SIMILARITY, facts, signatures: find, documents: numbers, spill: way === 'memory' ? undefined : numbers.folder });
  lap('cluster');
  seconds.total = (performance.now() - started) / 1000;
  table.close();

  const digest = createHash('sha256');
  // With --differences, each member's cluster and similarity go to a file, for the parent to compare the ways.
  const outcomeFile = argv.includes('--differences') ? path.join(option('spill-dir', os.tmpdir()), `dedup-scale-${process.pid}-${way}.tsv`) : undefined;
  const outcome = outcomeFile && openSync(outcomeFile, 'w');
  let lines = [];
  const flush = () => {
    writeSync(outcome, lines.join(''));
    lines = [];
  };
  // dedup's own peak: what follows is the benchmark's digest, not a stage of dedup.
  const stagesPeakMb = Math.round(process.resourceUsage().maxRSS / 1024);
  // The clusters in the order every session's digests took them (largest first, then by canonical id; the
  // clusters come in the order cut): each one's size, canonical and place, sorted, then read again by place.
  const handOut = [];
  for (const c of cut.clusters) handOut.push({ size: c.members.length, canonical: c.canonical, place: c.place });
  handOut.sort((a, b) => b.size - a.size || (a.canonical < b.canonical ? -1 : a.canonical > b.canonical ? 1 : 0));
  for (const { place } of handOut) {
    const c = cut.clusters.at(place);
    digest.update(`${c.canonical}|${c.members.join(',')}|${c.members.map((m) => c.similarity.get(m)).join(',')}\n`);
    if (!outcome) continue;
    for (const m of c.members) lines.push(`${m}\t${c.canonical}\t${c.similarity.get(m)}\n`);
    if (lines.length > 100_000) flush();
  }
  if (outcome) {
    flush();
    closeSync(outcome);
  }
  // Every document's best similarity and partner (max_similarity and best_match), by number, after the timed stages.
  const best = createHash('sha256');
  for (const n of verifier.involvedNumbers()) best.update(`${n}:${verifier.bestOf(n)}:${verifier.partnerOf(n)}\n`);
  if (way !== 'memory') numbers.close(); // (the clusters read their ids from it, above)
  console.log(
    JSON.stringify({
      way: label,
      docs,
      seconds,
      peakMb: stagesPeakMb,
      digestPeakMb: Math.round(process.resourceUsage().maxRSS / 1024),
      verifiedPairs: verifier.verifiedPairs,
      candidatePairs: verifier.candidatePairs,
      families: cut.families,
      largestFamily: cut.largestFamily,
      clusters: cut.clusters.length,
      duplicates: cut.clusters.memberCount - cut.clusters.length,
      alone: cut.alone.length,
      digest: digest.digest('hex'),
      bestDigest: best.digest('hex'),
      outcomeFile,
    }),
  );
}

/**
 * The documents, in the order a scan would meet them: each one unique (70%), or the next member of one of
 * the families open at the time (families of 2 to 50, each member at a Jaccard to the first drawn from 0.5
 * to 0.95: each MinHash value equal to the first's with that probability, as MinHash collides), or a page of
 * boilerplate (1%, three templates: the first band's rows shared, the rest its own).
 */
function* signatures(count, { b, r }, seed) {
  const random = randomSource(seed);
  const randomValue = () => (random() * 2 ** 32) >>> 0;
  const open = [];
  const templates = Array.from({ length: 3 }, () => Uint32Array.from({ length: r }, randomValue));
  for (let i = 0; i < count; i++) {
    const values = new Uint32Array(NUM_PERM);
    const draw = random();
    if (draw < 0.01) {
      for (let k = 0; k < NUM_PERM; k++) values[k] = randomValue();
      values.set(templates[Math.floor(random() * templates.length)]);
    } else if (draw < 0.71 || (open.length === 0 && draw < 0.86)) {
      for (let k = 0; k < NUM_PERM; k++) values[k] = randomValue();
    } else if (draw < 0.86 || open.length === 0) {
      for (let k = 0; k < NUM_PERM; k++) values[k] = randomValue();
      const size = 2 + Math.floor(48 * random() ** 3); // mostly small families
      if (open.length < 5000) open.push({ first: values, left: size - 1 });
    } else {
      const at = Math.floor(random() * open.length);
      const family = open[at];
      const jaccard = 0.5 + 0.45 * random();
      for (let k = 0; k < NUM_PERM; k++) values[k] = random() < jaccard ? family.first[k] : randomValue();
      if (--family.left === 0) open.splice(at, 1);
    }
    yield { id: `doc-${i.toString(36)}`, signature: { values, bands: bandHashes(values, b, r), simhash: { hi: values[0], lo: values[1] } } };
  }
}

/**
 * Uniform numbers in [0, 1) from xoshiro128** (period 2^128 - 1), seeded by splitmix32. (A generator of 32
 * bits of state, as xorshift32 was here, repeats after 2^32 draws: about 33 million documents of 128
 * values, past which the documents came round again and nearly every one shared its band keys.)
 */
function randomSource(seed) {
  let a = seed >>> 0;
  const splitmix32 = () => {
    a = (a + 0x9e3779b9) | 0;
    let t = a ^ (a >>> 16);
    t = Math.imul(t, 0x21f0aaad);
    t ^= t >>> 15;
    t = Math.imul(t, 0x735a2d97);
    return (t ^ (t >>> 15)) >>> 0;
  };
  let [s0, s1, s2, s3] = [splitmix32(), splitmix32(), splitmix32(), splitmix32()];
  const rotl = (x, k) => (x << k) | (x >>> (32 - k));
  return () => {
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl(s3, 11);
    return result / 2 ** 32;
  };
}

/** A 32-bit hash of each band's rows (what the hash of a band key stands for). */
function bandHashes(values, b, r) {
  const bands = new Int32Array(b);
  for (let band = 0; band < b; band++) {
    let h = 0x811c9dc5 ^ band;
    for (let k = band * r; k < (band + 1) * r; k++) h = Math.imul(h ^ values[k], 0x01000193);
    bands[band] = h;
  }
  return bands;
}
