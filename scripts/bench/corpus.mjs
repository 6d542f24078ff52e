// The benchmark corpus: the shared PEP revisions corpus (JSON lines, gzip) when it is here
// (NEAR_DUP_CORPUS, or ../shared/corpora beside the checkout); otherwise one that installs with the
// project: the SPDX license texts of spdx-license-list, each with five versions made by seeded edits
// (about as many documents as the PEP corpus). Which one was used is printed on stderr.
import { createReadStream, existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createGunzip } from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));
export const DEFAULT_CORPUS = path.resolve(here, '../../../shared/corpora/peps-revisions.jsonl.gz');

export async function loadCorpus(file = process.env.NEAR_DUP_CORPUS ?? DEFAULT_CORPUS) {
  if (!existsSync(file)) {
    if (process.env.NEAR_DUP_CORPUS || file !== DEFAULT_CORPUS) {
      throw new Error(`corpus not found at ${file}; set NEAR_DUP_CORPUS to a .jsonl.gz file of {"id", "text"} lines`);
    }
    const docs = licenseCorpus();
    process.stderr.write(`corpus: ${docs.length} documents from spdx-license-list (the PEP corpus is not at ${file})\n`);
    return docs;
  }
  process.stderr.write(`corpus: ${file}\n`);
  const docs = [];
  const raw = createReadStream(file);
  const input = file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
  for await (const line of readline.createInterface({ input, crlfDelay: Infinity })) {
    if (line.trim()) docs.push(JSON.parse(line));
  }
  return docs;
}

/** A seeded generator of uniform 32-bit unsigned integers (mulberry32): the same sequence on every machine. */
export function seededUint32(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** Uniform numbers in [0, 1), seeded: the integers of `seededUint32` over 2^32. */
export function seededRandom(seed) {
  const next = seededUint32(seed);
  return () => next() / 4294967296;
}

/** A deterministic shuffle, so documents of one PEP are not all adjacent. */
export function shuffled(items, seed = 42) {
  const out = items.slice();
  const rand = seededRandom(seed);
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

export function mb(bytes) {
  return bytes / 1e6;
}

/** Each SPDX license text and five versions of it, edited at growing rates by a seeded generator. */
export function licenseCorpus(versions = 5) {
  const require = createRequire(import.meta.url);
  const licenses = require('spdx-license-list/spdx-full.json');
  const words = [];
  for (const l of Object.values(licenses)) for (const w of l.licenseText.split(/\s+/)) if (/^[A-Za-z]{3,}$/.test(w) && words.length < 50_000) words.push(w);
  const rand = seededRandom(2026);
  const edit = (text, rate) =>
    text
      .split(' ')
      .flatMap((w) => (rand() >= rate ? [w] : rand() < 0.5 ? [] : [words[Math.floor(rand() * words.length)]]))
      .join(' ');
  const docs = [];
  for (const [id, l] of Object.entries(licenses).sort(([a], [b]) => (a < b ? -1 : 1))) {
    docs.push({ id: `${id}@0`, pep: id, version: 0, text: l.licenseText });
    for (let v = 1; v <= versions; v++) docs.push({ id: `${id}@${v}`, pep: id, version: v, text: edit(l.licenseText, 0.02 * v * v) });
  }
  return docs;
}
