// A sample of the shared PEP revisions corpus (../shared/corpora beside the checkout) for integration tests.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';

export interface PepDoc {
  id: string;
  pep: number;
  version: number;
  commit: string;
  date: string;
  text: string;
}

const here = path.dirname(fileURLToPath(import.meta.url));
export const CORPUS = process.env.NEAR_DUP_CORPUS ?? path.resolve(here, '../../../shared/corpora/peps-revisions.jsonl.gz');

let cache: PepDoc[] | undefined;

export function loadPeps(): PepDoc[] {
  if (!cache) {
    if (!existsSync(CORPUS)) throw new Error(`the test corpus is missing at ${CORPUS}; set NEAR_DUP_CORPUS`);
    cache = gunzipSync(readFileSync(CORPUS)).toString('utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as PepDoc);
  }
  return cache;
}

/** Every revision of `peps` PEPs taken evenly across the corpus: near-duplicates, distant revisions and strangers. */
export function pepSample(peps: number, maxChars = 60_000): PepDoc[] {
  const all = loadPeps().filter((d) => d.text.length <= maxChars);
  const numbers = [...new Set(all.map((d) => d.pep))].sort((a, b) => a - b);
  const step = Math.max(1, Math.floor(numbers.length / peps));
  const chosen = new Set(numbers.filter((_, i) => i % step === 0).slice(0, peps));
  return all.filter((d) => chosen.has(d.pep));
}
