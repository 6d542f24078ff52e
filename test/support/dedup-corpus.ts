// The signatures the dedup stage tests run on, and the pass they are held to: a corpus of families of
// near-copies, boilerplate and unrelated documents (64 values, 8 bands), and the pass in memory as dedup ran
// it before the stages (a comparison sort of each band, every bucket verified in order), whose pairs, counts,
// clusters and best matches the spilled, gathered and threaded ways must give exactly.
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import { LargeKeyJoin } from '../../src/jobs/dedup/verify/large-buckets.js';
import { PairVerifier, type VerifiedPair } from '../../src/jobs/dedup/verify/pair-verifier.js';
import type { StoredSignature } from '../../src/jobs/dedup/documents/signature-store.js';
import type { Hash64 } from '../../src/sketch/simhash.js';

export const WIDTH = 64;
export const BANDS = 8;
const ROWS = WIDTH / BANDS;

export type Doc = { id: string; signature: { values: Uint32Array; bands: Int32Array; simhash: Hash64 } };

/** Families of near-copies, a large family of boilerplate (one key shared by many) and unrelated documents, shuffled. */
export function corpus(families: number, copies: number, loners: number, boilerplate: number, seed = 11): Doc[] {
  let state = seed;
  const random = () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
  const randomValues = () => Uint32Array.from({ length: WIDTH }, () => (random() * 2 ** 32) >>> 0);
  const make = (id: string, values: Uint32Array): Doc => {
    const bands = Int32Array.from({ length: BANDS }, (_, b) => values.slice(b * ROWS, (b + 1) * ROWS).reduce((h, v) => Math.imul(h ^ v, 0x01000193), 0x811c9dc5 + b));
    return { id, signature: { values, bands, simhash: { hi: values[0], lo: values[1] } } };
  };
  const docs: Doc[] = [];
  for (let f = 0; f < families; f++) {
    const base = randomValues();
    for (let c = 0; c < copies; c++) {
      const values = base.slice();
      const changed = c < 3 ? 0 : Math.floor(random() * WIDTH * 0.6);
      for (let k = 0; k < changed; k++) values[Math.floor(random() * WIDTH)] = (random() * 2 ** 32) >>> 0;
      docs.push(make(`f${f}-c${c}`, values));
    }
  }
  // Boilerplate: the first band's rows shared by all, the rest their own or a neighbour's.
  const shared = randomValues();
  for (let i = 0; i < boilerplate; i++) {
    const values = randomValues();
    values.set(shared.subarray(0, ROWS));
    if (i % 3 === 1 && docs.length > 0) values.set(docs[docs.length - 1].signature.values.subarray(ROWS, 4 * ROWS), ROWS);
    docs.push(make(`b${i}`, values));
  }
  for (let l = 0; l < loners; l++) docs.push(make(`loner-${l}`, randomValues()));
  for (let i = docs.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [docs[i], docs[j]] = [docs[j], docs[i]];
  }
  return docs;
}

export interface Outcome {
  pairs: VerifiedPair[];
  counts: number[];
  clusters: string[];
  best: number[];
}

export function outcomeOf(verifier: PairVerifier, pairs: VerifiedPair[], docs: Doc[]): Outcome {
  return {
    pairs,
    counts: [verifier.buckets, verifier.candidatePairs, verifier.verifiedPairs],
    clusters: verifier.clusters.groups().map((g) => g.sort().join(',')).sort(),
    best: docs.map((d) => verifier.bestMatch(d.id)),
  };
}

/** A verifier at 0.5 that keeps the pairs it verifies, named. */
export function newVerifier(numbers: DocNumbers): { verifier: PairVerifier; pairs: VerifiedPair[] } {
  const pairs: VerifiedPair[] = [];
  const verifier: PairVerifier = new PairVerifier(0.5, { documents: numbers, onVerified: (p) => pairs.push(verifier.named(p)) });
  return { verifier, pairs };
}

/** The pass in memory as dedup ran it before the stages (the reference): a comparison sort of the band, then every bucket in order. */
export function bandRuns(hashes: Int32Array): { order: Uint32Array; runs: Array<[number, number]> } {
  const order = Uint32Array.from({ length: hashes.length }, (_, i) => i);
  order.sort((a, b) => (hashes[a] >>> 0) - (hashes[b] >>> 0) || a - b);
  const runs: Array<[number, number]> = [];
  let start = 0;
  for (let k = 1; k <= hashes.length; k++) {
    if (k < hashes.length && hashes[order[k]] === hashes[order[start]]) continue;
    if (k - start >= 2) runs.push([start, k]);
    start = k;
  }
  return { order, runs };
}

/** One band of the reference pass over the documents (numbered as listed): large keys marked, then every bucket in order, a large key a chunk at a time. */
async function verifyBand(docs: Doc[], verifier: PairVerifier, band: number, bucketChunk: number): Promise<void> {
  const hashes = Int32Array.from(docs, (d) => d.signature.bands[band]);
  const { order, runs } = bandRuns(hashes);
  for (const [start, end] of runs) if (end - start > bucketChunk) verifier.markLargeKey(band, hashes[order[start]]);
  for (const [start, end] of runs) {
    if (end - start > bucketChunk) {
      const join = new LargeKeyJoin(verifier, band, bucketChunk);
      for (let k = start; k < end; k++) join.add(order[k], docs[order[k]].signature);
      join.finish();
      continue;
    }
    const slots = [...order.subarray(start, end)];
    const signatures: StoredSignature[] = slots.map((i) => docs[i].signature);
    verifier.verifyMembersOf({ numbers: Int32Array.from(slots), signatures }, band);
  }
}

/** The reference pass over every band: the pairs, counts, clusters and best matches that every other way must give. */
export async function memoryPass(docs: Doc[], bucketChunk: number): Promise<Outcome> {
  const numbers = new DocNumbers();
  for (const d of docs) numbers.numberOf(d.id);
  const { verifier, pairs } = newVerifier(numbers);
  for (let band = 0; band < BANDS; band++) await verifyBand(docs, verifier, band, bucketChunk);
  return outcomeOf(verifier, pairs, docs);
}
