#!/usr/bin/env node
// The pairs of a split dedup's final step (dedup --from-shares), gathered and handed out as the final step
// does (dist/jobs/dedup/split/final-pairs.js): all in memory, against in parts on local disk, each way in a process
// of its own so that its peak RSS is its own. The pairs are random documents of a numbering, a tenth of them
// given twice (by two shares) and one in a hundred again with another similarity, in pages of 2,000.
//
//   node scripts/bench/pair-parts.mjs [--pairs 30000000] [--max-pairs 4000000] [--spill-dir DIR]
//
// Prints, for each way: the time to add the pairs, the time to hand them out, the pairs and copies handed out
// and the peak RSS; then the ratios. Build first (npm run build).
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const argv = process.argv.slice(2);
const option = (name, fallback) => {
  const at = argv.indexOf(`--${name}`);
  return at >= 0 ? argv[at + 1] : fallback;
};
const pairs = Number(option('pairs', 30_000_000));
const maxPairs = Number(option('max-pairs', 4_000_000));
const spillDir = option('spill-dir', os.tmpdir());

if (argv.includes('--child')) await child(option('way'));
else parent();

function parent() {
  const rows = ['memory', 'parts'].map((way) => {
    const out = execFileSync(process.execPath, ['--max-old-space-size=16000', fileURLToPath(import.meta.url), ...argv, '--child', '--way', way], { encoding: 'utf8', maxBuffer: 1 << 20 });
    return JSON.parse(out.trim().split('\n').pop());
  });
  const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
  console.log(`\nfinal step's pairs, ${pairs.toLocaleString('en')} given, parts of ${maxPairs.toLocaleString('en')}, ${cpu}, ${os.availableParallelism()} cores, Node ${process.version}`);
  console.log('way      parts  add       hand out  pairs        copies   duplicates  peak RSS');
  for (const r of rows) {
    console.log(`${r.way.padEnd(8)} ${String(r.parts).padStart(5)}  ${(r.addMs / 1000).toFixed(1).padStart(6)} s  ${(r.handMs / 1000).toFixed(1).padStart(6)} s  ${String(r.count).padStart(11)}  ${String(r.copies).padStart(7)}  ${String(r.duplicates).padStart(10)}  ${String(r.peakMb).padStart(5)} MB`);
  }
  const [memory, parts] = rows;
  const same = memory.count === parts.count && memory.copies === parts.copies && memory.duplicates === parts.duplicates && memory.digest === parts.digest;
  console.log(`same pairs, copies and counts: ${same ? 'yes' : 'NO'}; parts/memory time ${((parts.addMs + parts.handMs) / (memory.addMs + memory.handMs)).toFixed(2)}x, peak ${(parts.peakMb / memory.peakMb).toFixed(2)}x`);
  if (!same) process.exitCode = 1;
}

async function child(way) {
  const { PairParts } = await import('../../dist/jobs/dedup/split/final-pairs.js');
  const { SpillFolder } = await import('../../dist/jobs/dedup/spill/spill-folder.js');
  const folder = way === 'parts' ? new SpillFolder(spillDir) : undefined;
  try {
    const parts = new PairParts(pairs, folder ? { folder, maxPairs } : undefined);
    let state = 12345;
    const next = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0);
    const documents = Math.max(2, Math.floor(pairs / 4));
    const began = performance.now();
    for (let i = 0; i < pairs; i++) {
      const a = next() % documents;
      const b = (a + 1 + (next() % (documents - 1))) % documents;
      const jaccard = 0.5 + (next() % 500) / 1000;
      const hamming = next() % 64;
      const page = Math.floor(i / 2000);
      parts.add(a, b, jaccard, hamming, page);
      if (i % 10 === 0) parts.add(b, a, jaccard, hamming, page + 1);
      if (i % 100 === 0) parts.add(a, b, 0.999, hamming, page + 2);
    }
    const added = performance.now();
    let copies = 0;
    let digest = 0;
    for (const part of parts.parts()) {
      copies += part.copies.length;
      // Order-free: a sum over the pairs handed out (the parts hand them out in another order than memory).
      for (let i = 0; i < part.pairs.count; i++) digest = (digest + Math.imul(part.pairs.na[i] + 1, 0x9e3779b1) + Math.imul(part.pairs.nb[i] + 7, 0x85ebca6b) + part.pairs.page[i]) >>> 0;
    }
    const handed = performance.now();
    const result = { way, parts: parts.partCount, addMs: added - began, handMs: handed - added, count: parts.count, copies, duplicates: parts.duplicates, digest, peakMb: Math.round(process.resourceUsage().maxRSS / 1024) };
    console.log(JSON.stringify(result));
  } finally {
    folder?.remove();
  }
}
