// What the simhash-doc preset's SimHash features should be, offline (no engine): each token alone (what
// the draft hashes, and what near-dup chose) or shingles of 2, 3, 4 consecutive tokens. For every pair of
// texts, the exact Jaccard of their simhash-doc token sets against the Hamming distance of their SimHashes:
// the share of pairs within 3 bits (the draft's k) and 7 (the most near-dup's 8 blocks find), by Jaccard.
// Texts: the SPDX license texts that install with the project and, when present, a sixth of the PEP
// revisions corpus (the PEPs whose number is a multiple of 6, every revision).
//
//   node scripts/bench/simhash-doc-features.mjs     (npm run build first)
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { hammingDistance, SimhashAccumulator, unsignedHash } from '../../dist/sketch/simhash.js';
import { stripHtml } from '../../dist/text/html.js';
import { simhashDocTokens } from '../../dist/text/simhash-doc.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const PEPS = process.env.NEAR_DUP_CORPUS ?? path.resolve(here, '../../../shared/corpora/peps-revisions.jsonl.gz');
const WINDOWS = [1, 2, 3, 4];
const BINS = [[0.9, 1.01], [0.8, 0.9], [0.5, 0.8], [0.3, 0.5], [0, 0.3]];

function fingerprint(tokens, window) {
  const acc = new SimhashAccumulator();
  const features = tokens.length < window ? (tokens.length ? [tokens.join(' ')] : []) : tokens.slice(0, tokens.length - window + 1).map((_, i) => tokens.slice(i, i + window).join(' '));
  for (const f of features) {
    const { hi, lo } = unsignedHash(f);
    acc.add(hi, lo);
  }
  return acc.result();
}

function measure(name, texts) {
  const docs = texts.map((t) => simhashDocTokens(stripHtml(t))).filter((t) => t.length > 0);
  const sets = docs.map((t) => new Set(t));
  const prints = WINDOWS.map((w) => docs.map((t) => fingerprint(t, w)));
  const rows = BINS.map(() => ({ pairs: 0, within3: WINDOWS.map(() => 0), within7: WINDOWS.map(() => 0) }));
  for (let i = 0; i < docs.length; i++) {
    for (let j = i + 1; j < docs.length; j++) {
      let shared = 0;
      for (const t of sets[i]) if (sets[j].has(t)) shared++;
      const jaccard = shared / (sets[i].size + sets[j].size - shared);
      const row = rows[BINS.findIndex(([lo, hi]) => jaccard >= lo && jaccard < hi)];
      row.pairs++;
      WINDOWS.forEach((_, k) => {
        const d = hammingDistance(prints[k][i], prints[k][j]);
        if (d <= 3) row.within3[k]++;
        if (d <= 7) row.within7[k]++;
      });
    }
  }
  console.log(`${name}: ${docs.length} texts; share of pairs within 3 bits (within 7), features of 1..4 tokens`);
  rows.forEach((row, b) => {
    const cells = WINDOWS.map((w, k) => `w${w} ${(row.within3[k] / row.pairs).toFixed(4)} (${(row.within7[k] / row.pairs).toFixed(4)})`);
    console.log(`  Jaccard [${BINS[b][0]}, ${Math.min(1, BINS[b][1])}${b === 0 ? ']' : ')'} ${String(row.pairs).padStart(7)} pairs  ${cells.join('  ')}`);
  });
}

const require = createRequire(import.meta.url);
const spdx = require('spdx-license-list/full');
measure('SPDX licences', Object.values(spdx).map((l) => l.licenseText));
if (existsSync(PEPS)) {
  const lines = gunzipSync(readFileSync(PEPS)).toString('utf8').trim().split('\n').map((l) => JSON.parse(l));
  measure('PEP revisions (PEP number a multiple of 6)', lines.filter((d) => Number(d.pep) % 6 === 0).map((d) => d.text));
} else console.log(`PEP revisions: not here (${PEPS}); set NEAR_DUP_CORPUS`);
