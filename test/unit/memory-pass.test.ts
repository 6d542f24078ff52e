// The full pass in memory, without an engine: the table of signatures in memory, the runs of equal band keys, and
// the clusters it verifies, against every pair that shares a key compared one by one.
import { describe, expect, it } from 'vitest';
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import { verifyBandOf } from '../../src/jobs/dedup/bands/band-pass.js';
import { bandBuckets } from '../../src/jobs/dedup/bands/band-sort.js';
import { SignatureRecords } from '../../src/jobs/dedup/scan/signature-table.js';
import { PairVerifier } from '../../src/jobs/dedup/verify/pair-verifier.js';
import { decodeSignature, type SignatureFields, signatureFields, type StoredSignature } from '../../src/jobs/dedup/documents/signature-store.js';
import { StoredProblem } from '../../src/stored/read.js';
import { UnionFind } from '../../src/jobs/dedup/verify/union-find.js';
import { serializeLeanMinhash } from '../../src/sketch/lean-minhash.js';
import { minhashJaccard } from '../../src/sketch/minhash.js';

const WIDTH = 64;
const BANDS = 8;
const ROWS = WIDTH / BANDS;

/** Families of near-copies (each copy changes a few values of its family's base) and unrelated documents; band hashes from the values as LSH makes them. */
function corpus(families: number, copies: number, loners: number, seed = 7): Array<{ id: string; signature: StoredSignature }> {
  let state = seed;
  const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const make = (id: string, values: Uint32Array) => {
    const bands = Int32Array.from({ length: BANDS }, (_, b) => values.slice(b * ROWS, (b + 1) * ROWS).reduce((h, v) => Math.imul(h ^ v, 0x01000193), 0x811c9dc5 + b));
    return { id, signature: { values, simhash: '0000000000000000', bands } };
  };
  const docs: Array<{ id: string; signature: StoredSignature }> = [];
  for (let f = 0; f < families; f++) {
    const base = Uint32Array.from({ length: WIDTH }, () => (random() * 2 ** 32) >>> 0);
    for (let c = 0; c < copies; c++) {
      const changed = c < 7 ? 0 : Math.floor(random() * WIDTH * 0.6); // exact copies (keys of 7 and more), then from near-identical to well under the bar
      const values = base.slice();
      for (let k = 0; k < changed; k++) values[Math.floor(random() * WIDTH)] = (random() * 2 ** 32) >>> 0;
      docs.push(make(`f${f}-c${c}`, values));
    }
  }
  for (let l = 0; l < loners; l++) docs.push(make(`loner-${l}`, Uint32Array.from({ length: WIDTH }, () => (random() * 2 ** 32) >>> 0)));
  // Shuffled, so that no order of the input helps.
  for (let i = docs.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [docs[i], docs[j]] = [docs[j], docs[i]];
  }
  return docs;
}

function poolOf(docs: Array<{ id: string; signature: StoredSignature }>): SignatureRecords {
  const pool = new SignatureRecords(undefined, { expected: Math.floor(docs.length / 3) }); // grows past what it expected
  for (const d of docs) pool.addSignature(d.id, d.signature);
  return pool;
}

/** Slot i's signature, copied out of the table. */
async function signatureAt(pool: SignatureRecords, i: number): Promise<StoredSignature> {
  const s = (await pool.load(Uint32Array.of(i)))(i);
  return { values: s.values.slice(), simhash: s.simhash, bands: s.bands.slice() };
}

/** Every slot's hash of its key in `band`. */
function bandHashes(pool: SignatureRecords, band: number): Int32Array {
  const hashes = new Int32Array(pool.size);
  let at = 0;
  pool.readBand(band, (chunk) => {
    hashes.set(new Int32Array(chunk.buffer, chunk.byteOffset, chunk.length), at);
    at += chunk.length;
  });
  return hashes;
}

function components(uf: UnionFind): string[] {
  return uf.groups().map((g) => g.sort().join(',')).sort();
}

describe('the signature table in memory', () => {
  it('holds every signature in its records, and leaves out one of another length', async () => {
    const docs = corpus(3, 5, 10);
    const pool = poolOf(docs);
    pool.addSignature('short', { values: new Uint32Array(3), simhash: '0000000000000000', bands: new Int32Array(BANDS) });
    expect([pool.size, pool.bandCount, pool.leftOut]).toEqual([docs.length, BANDS, 1]);
    pool.addSignature('hashed', { ...docs[0].signature, simhash: 'fedcba9800000001' });
    expect((await signatureAt(pool, pool.size - 1)).simhash).toEqual({ hi: 0xfedcba98, lo: 1 });
    const band3 = bandHashes(pool, 3);
    for (const [i, d] of docs.entries()) {
      expect(pool.idOf(i)).toBe(d.id);
      const signature = await signatureAt(pool, i);
      expect([...signature.values]).toEqual([...d.signature.values]);
      expect([...signature.bands]).toEqual([...d.signature.bands]);
      expect(band3[i]).toBe(d.signature.bands[3]);
    }
  });

  it('an id met twice (an alias over two indices holding one _id) is one document, in the numbering it shares with the verifier', () => {
    const docs = corpus(1, 2, 1);
    const numbers = new DocNumbers();
    const pool = new SignatureRecords(numbers, { expected: 4 });
    const first = pool.addSignature(docs[0].id, docs[0].signature);
    pool.addSignature(docs[1].id, docs[1].signature);
    expect(pool.addSignature(docs[0].id, docs[2].signature)).toBe(first); // (a second number made a pair of the id with itself)
    expect(numbers.size).toBe(2);
  });

  it('takes a document from its stored fields, decoded straight into its record, as from its decoded signature', async () => {
    const params = `white-space:norm-html:sha1:${WIDTH};seed=1;scheme=affine32;b=${BANDS};r=1;simhash=w4m8;sample=4`;
    const stored = (i: number, width = WIDTH) => {
      const values = Uint32Array.from({ length: width }, (_, k) => (k * 2654435761 + i * 40503) >>> 0);
      const bands = Array.from({ length: BANDS }, (_, b) => `${b}:${i % 3}-${values[b]}`);
      const minhash = Buffer.from(serializeLeanMinhash({ seed: 1, scheme: 'affine32', values })).toString('base64');
      return { near_dup: { minhash, bands, params, token_count: 10, simhash: `00000000${(i * 7919).toString(16).padStart(8, '0')}` } };
    };
    const fromFields = new SignatureRecords(undefined, { expected: 2 });
    const fromSignatures = new SignatureRecords(undefined, { expected: 2 });
    for (let i = 0; i < 7; i++) {
      fromFields.addFields(`d${i}`, signatureFields(stored(i), 'near_dup', params) as SignatureFields);
      fromSignatures.addSignature(`d${i}`, decodeSignature(stored(i), 'near_dup', params) as StoredSignature);
    }
    // Not the shape the params say, or no MinHash: not a signature, never read into the pool.
    expect(signatureFields(stored(9, WIDTH / 2), 'near_dup', params)).toBeInstanceOf(StoredProblem);
    expect(signatureFields({ near_dup: { bands: [], params } }, 'near_dup', params)).toBeInstanceOf(StoredProblem);
    const idsOf = (pool: SignatureRecords) => Array.from({ length: pool.size }, (_, i) => pool.idOf(i));
    expect([fromFields.size, fromFields.leftOut, idsOf(fromFields)]).toEqual([7, 0, idsOf(fromSignatures)]);
    for (let i = 0; i < 7; i++) expect(await signatureAt(fromFields, i)).toEqual(await signatureAt(fromSignatures, i));
    expect((await signatureAt(fromFields, 1)).simhash).toEqual({ hi: 0, lo: 7919 });
  });

  it('cuts a band into runs of equal key hashes, in input order within a run, by either sort', () => {
    const pool = poolOf(corpus(20, 12, 100));
    for (let band = 0; band < BANDS; band++) {
      const numeric = bandRuns(pool, band);
      const hashes = bandHashes(pool, band);
      const expected = new Map<number, number[]>();
      for (let i = 0; i < pool.size; i++) expected.set(hashes[i], [...(expected.get(hashes[i]) ?? []), i]);
      const runs = numeric.runs.map(([start, end]) => [...numeric.order.subarray(start, end)]);
      expect(runs.sort((a, b) => a[0] - b[0])).toEqual([...expected.values()].filter((m) => m.length > 1).sort((a, b) => a[0] - b[0]));
    }
  });
});

/** The band's buckets as the pass sorts them. */
function bandRuns(pool: SignatureRecords, band: number): { order: Uint32Array; runs: Array<[number, number]> } {
  const { order, runs } = bandBuckets(bandHashes(pool, band));
  const pairs: Array<[number, number]> = [];
  for (let k = 0; k < runs.length; k += 2) pairs.push([runs[k], runs[k + 1]]);
  return { order, runs: pairs };
}

function verifyBand(pool: SignatureRecords, verifier: PairVerifier, band: number, bucketChunk: number, markOnly = false): Promise<void> {
  return verifyBandOf(pool, verifier, band, { bucketChunk, markOnly });
}

describe('the full pass in memory', () => {
  const docs = corpus(25, 12, 200);
  const bar = 0.5;
  // Every pair that shares a band key, compared: the clusters the pass must find.
  const truth = new UnionFind();
  for (let i = 0; i < docs.length; i++) {
    for (let j = i + 1; j < docs.length; j++) {
      const a = docs[i].signature, b = docs[j].signature;
      if (a.bands.some((h, k) => h === b.bands[k]) && minhashJaccard(a.values, b.values) >= bar) truth.union(docs[i].id, docs[j].id);
    }
  }

  it('finds the clusters of comparing every pair that shares a key, each pair verified once', async () => {
    expect(truth.groups().length).toBeGreaterThan(10);
    const pool = poolOf(docs);
    const pairs: string[] = [];
    const verifier = new PairVerifier(bar, { onRecorded: (p) => pairs.push(`${p.a}|${p.b}`) });
    for (let band = 0; band < pool.bandCount; band++) await verifyBand(pool, verifier, band, 1000);
    expect(components(verifier.clusters)).toEqual(components(truth));
    expect(new Set(pairs).size).toBe(pairs.length);
  });

  it('a pool numbered as the verifier is (members passed by its numbers) verifies exactly what a pool numbered apart does', async () => {
    const run = async (shared: boolean) => {
      const numbers = new DocNumbers();
      const pool = new SignatureRecords(shared ? numbers : new DocNumbers(), { expected: docs.length });
      for (const d of docs) pool.addSignature(d.id, d.signature);
      const pairs: string[] = [];
      const verifier = new PairVerifier(bar, { documents: numbers, collectMatches: true, onRecorded: (p) => pairs.push(`${p.a}|${p.b}|${p.jaccard}|${p.hamming}`) });
      expect(pool.numbering === verifier.clusters.documents).toBe(shared); // whose numbers verifyBand passes
      for (let band = 0; band < pool.bandCount; band++) await verifyBand(pool, verifier, band, 1000);
      const best = docs.map((d) => verifier.bestMatch(d.id));
      return { pairs, best, clusters: components(verifier.clusters), counts: [verifier.buckets, verifier.candidatePairs, verifier.verifiedPairs], matches: [...verifier.matches!].sort() };
    };
    const byNumber = await run(true);
    const byId = await run(false);
    expect(byNumber.pairs.length).toBeGreaterThan(100);
    expect(byNumber).toEqual(byId);
    expect(byNumber.clusters).toEqual(components(truth));
  });

  it('with keys larger than a chunk, verified a chunk at a time: the same clusters', async () => {
    const pool = poolOf(docs);
    const whole = new PairVerifier(bar);
    for (let band = 0; band < pool.bandCount; band++) await verifyBand(pool, whole, band, 1000);
    const chunked = new PairVerifier(bar);
    for (let band = 0; band < pool.bandCount; band++) await verifyBand(pool, chunked, band, 5);
    expect(components(chunked.clusters)).toEqual(components(truth));
    expect(chunked.buckets).toBeGreaterThan(whole.buckets); // the large keys went a chunk at a time
  });

  it('a band marked only (done before a resume) verifies nothing, and its large keys still count', async () => {
    const pool = poolOf(docs);
    const verifier = new PairVerifier(bar);
    await verifyBand(pool, verifier, 0, 5, true);
    expect(verifier.candidatePairs).toBe(0);
    const { order, runs } = bandRuns(pool, 0);
    const large = runs.find(([s, e]) => e - s > 5);
    expect(large).toBeDefined();
    const [x, y] = [pool.idOf(order[large![0]]), pool.idOf(order[large![0] + 1])];
    const signatures = new Map([[x, await signatureAt(pool, order[large![0]])], [y, await signatureAt(pool, order[large![0] + 1])]]);
    expect(verifier.decidedEarlier(x, y, 1, signatures)).not.toBe('yes');
  });
});
