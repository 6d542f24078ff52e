// Loads the shared PEP revisions corpus (JSON lines, gzip) for benchmarks.
import { createReadStream, existsSync } from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { createGunzip } from 'node:zlib';

const here = path.dirname(fileURLToPath(import.meta.url));
export const DEFAULT_CORPUS = path.resolve(here, '../../../shared/corpora/peps-revisions.jsonl.gz');

export async function loadCorpus(file = process.env.NEAR_DUP_CORPUS ?? DEFAULT_CORPUS) {
  if (!existsSync(file)) {
    throw new Error(`corpus not found at ${file}; set NEAR_DUP_CORPUS to a .jsonl.gz file of {"id", "text"} lines`);
  }
  const docs = [];
  const raw = createReadStream(file);
  const input = file.endsWith('.gz') ? raw.pipe(createGunzip()) : raw;
  for await (const line of readline.createInterface({ input, crlfDelay: Infinity })) {
    if (line.trim()) docs.push(JSON.parse(line));
  }
  return docs;
}

/** A deterministic shuffle (mulberry32), so documents of one PEP are not all adjacent. */
export function shuffled(items, seed = 42) {
  const out = items.slice();
  let s = seed >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

export function mb(bytes) {
  return bytes / 1e6;
}
