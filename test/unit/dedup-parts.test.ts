// The parts of dedup, each on its own and without an engine: the pair verifier,
// the signature store, the canonical rule, the run journal and the state between runs.
import { appendFileSync, copyFileSync, mkdtempSync, readFileSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { serializeLeanMinhash } from '../../src/sketch/lean-minhash.js';
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import { FactsTable } from '../../src/jobs/dedup/documents/facts.js';
import { StoredProblem } from '../../src/stored/read.js';
import { DedupJournal } from '../../src/jobs/dedup/state/journal.js';
import { cliMessage } from '../../src/cli/option-flags.js';
import { UnionFind } from '../../src/jobs/dedup/verify/union-find.js';
import { type NumberedPair, PAIRWISE_BUCKET, PairVerifier, type VerifiedPair } from '../../src/jobs/dedup/verify/pair-verifier.js';
import { decodeSignature, keyHash, SignatureStore, type StoredSignature } from '../../src/jobs/dedup/documents/signature-store.js';
import { continues, readDedupState, writeDedupState } from '../../src/jobs/dedup/state/state-file.js';
import { cutFamily, pickCanonical } from '../../src/jobs/dedup/cluster/cluster-cut.js';

const tmp = mkdtempSync(path.join(os.tmpdir(), 'near-dup-dedup-parts-'));

/** A signature whose values agree with `base` in the first `shared` of 100 places. */
function signature(shared: number, seed: number, bands: string[] = []): StoredSignature {
  return {
    values: Uint32Array.from({ length: 100 }, (_, i) => (i < shared ? i : 1_000_000 * seed + i)),
    simhash: '0000000000000000',
    bands: Int32Array.from(bands, keyHash),
  };
}

describe('PairVerifier', () => {
  it('joins a pair at or above the bar, reports it once with its estimate, and leaves a pair below it apart', () => {
    const recorded: VerifiedPair[] = [];
    const verifier = new PairVerifier(0.5, { onRecorded: (p) => recorded.push(p) });
    const signatures = new Map([['a', signature(100, 0)], ['b', signature(60, 1)], ['c', signature(40, 2)]]);
    expect(verifier.verify('b', 'a', signatures)).toBe(true);
    expect(verifier.verify('a', 'c', signatures)).toBe(false);
    expect(recorded).toEqual([{ a: 'a', b: 'b', jaccard: 0.6, hamming: 0 }]);
    expect(verifier.clusters.find('a')).toBe(verifier.clusters.find('b'));
    expect(verifier.clusters.find('c')).not.toBe(verifier.clusters.find('a'));
    expect([verifier.candidatePairs, verifier.verifiedPairs, verifier.bestMatch('b')]).toEqual([2, 1, 0.6]);
  });

  it('does not try again a pair an earlier band already tried, unless that band was a large key', () => {
    const signatures = new Map([['x', signature(100, 0, ['0:k', '1:m'])], ['y', signature(100, 0, ['0:k', '1:m'])]]);
    const verifier = new PairVerifier(0.5);
    expect(verifier.decidedEarlier('x', 'y', 1, signatures)).toBe('yes');
    verifier.verifyBucket(['x', 'y'], signatures, { band: 1 });
    expect(verifier.candidatePairs).toBe(0);
    verifier.markLargeKey(0, keyHash('0:k'));
    expect(verifier.decidedEarlier('x', 'y', 1, signatures)).toBe('large');
    verifier.verifyBucket(['x', 'y'], signatures, { band: 1 });
    expect(verifier.verifiedPairs).toBe(1);
  });

  it('joins a large bucket of near-copies with about n comparisons, not n² / 2', () => {
    const n = PAIRWISE_BUCKET * 4;
    const ids = Array.from({ length: n }, (_, i) => `d${i}`);
    const signatures = new Map(ids.map((id, i) => [id, signature(90 + (i % 10), i)]));
    const verifier = new PairVerifier(0.5);
    verifier.verifyBucket(ids, signatures);
    expect(verifier.clusters.sizeOf('d0')).toBe(n);
    expect(verifier.candidatePairs).toBeLessThan(n * 2);
  });

  it('with an anchor, tries only the pairs that include it', () => {
    const signatures = new Map([['new', signature(100, 0)], ['p', signature(100, 0)], ['q', signature(100, 0)]]);
    const verifier = new PairVerifier(0.5);
    verifier.verifyBucket(['new', 'p', 'q'], signatures, { anchor: 'new' });
    expect(verifier.candidatePairs).toBe(2);
  });
});

describe('SignatureStore', () => {
  const params = 'white-space:norm-html:sha1:4;seed=1;scheme=affine32;b=1;r=4;simhash=w4m8;sample=4';
  const stored = (id: string, tokens: number) => ({
    id,
    location: { index: tokens % 2 ? 'odd' : 'even', ...(tokens === 3 ? { routing: 'r3' } : {}) },
    source: {
      near_dup: {
        minhash: Buffer.from(serializeLeanMinhash({ seed: 1, scheme: 'affine32', values: Uint32Array.of(1, 2, 3, tokens) })).toString('base64'),
        simhash: 'ffffffffffffffff',
        token_count: tokens,
        bands: ['0:aa'],
        cluster_id: 'c1',
        params,
      },
      date: `2020-01-0${tokens}`,
    },
  });

  it('reads what the cache lacks, a request per thousand ids, and keeps the facts of every document met', async () => {
    const reads: string[][] = [];
    const reader = async (ids: string[]) => {
      reads.push(ids);
      return ids.map((id, i) => stored(id, i + 1));
    };
    const store = new SignatureStore(reader, 'near_dup', 'date', params, Number.POSITIVE_INFINITY);
    const first = await store.load(['a', 'b']);
    expect(first.get('b')!.values).toEqual(Uint32Array.of(1, 2, 3, 2));
    await store.load(['a', 'b', 'c']);
    expect(reads).toEqual([['a', 'b'], ['c']]);
    expect(store.facts.get('a')).toEqual({ tokens: 1, sortKey: Date.parse('2020-01-01'), clusterId: 'c1', location: { index: 'odd' } });
  });

  it('reads the facts of documents met only through replayed pairs, without caching their signatures', async () => {
    const reads: string[][] = [];
    const reader = async (ids: string[]) => {
      reads.push(ids);
      return ids.map((id) => stored(id, 3));
    };
    const store = new SignatureStore(reader, 'near_dup', 'date', params, Number.POSITIVE_INFINITY);
    await store.load(['a']);
    await store.loadFacts(['a', 'x', 'y']);
    expect(reads).toEqual([['a'], ['x', 'y']]);
    expect(store.facts.get('y')).toEqual({ tokens: 3, sortKey: Date.parse('2020-01-03'), clusterId: 'c1', location: { index: 'odd', routing: 'r3' } });
    await store.load(['x']);
    expect(reads).toEqual([['a'], ['x', 'y'], ['x']]); // not in the cache
  });

  it('checks every document against the params compared: a damaged or differently shaped one is left out and named, the others go on', async () => {
    const damage: Array<[string, (nd: Record<string, unknown>) => void, RegExp]> = [
      ['hand-simhash', (nd) => (nd.simhash = 'written by hand'), /simhash is "written by hand", not 16 hexadecimal digits/],
      ['simhash-list', (nd) => (nd.simhash = ['ffffffffffffffff']), /simhash is a list/],
      ['three-bands', (nd) => (nd.bands = ['0:aa', '1:bb', '2:cc']), /bands holds 3 band keys, its params say 1/],
      ['short-minhash', (nd) => (nd.minhash = Buffer.from(serializeLeanMinhash({ seed: 1, scheme: 'affine32', values: Uint32Array.of(1, 2) })).toString('base64')), /minhash holds 2 values, its params say 4/],
      ['not-base64', (nd) => (nd.minhash = '%%%'), /minhash is "%%%", not base64/],
      ['bands-numbers', (nd) => (nd.bands = [7]), /bands is a list .* not a list of strings/],
      ['negative-tokens', (nd) => (nd.token_count = -3), /token_count is number -3/],
      ['other-params', (nd) => (nd.params = params.replace('b=1', 'b=2')), /signed with other params/],
    ];
    const documents = [stored('good', 4), stored('also-good', 4)];
    for (const [id, change] of damage) {
      const doc = stored(id, 4);
      change(doc.source.near_dup as Record<string, unknown>);
      documents.push(doc);
    }
    documents.push({ ...stored('array-object', 4), source: { near_dup: [stored('x', 4).source.near_dup] } as never });
    const store = new SignatureStore(async (ids) => documents.filter((d) => ids.includes(d.id)), 'near_dup', 'date', params, Number.POSITIVE_INFINITY);
    const found = await store.load(documents.map((d) => d.id));
    expect([...found.keys()].sort()).toEqual(['also-good', 'good']);
    for (const [id, , reason] of damage) expect(store.damaged.get(id), id).toMatch(reason);
    expect(store.damaged.get('array-object')).toMatch(/near_dup is a list/);
    expect(store.damagedCount).toBe(damage.length + 1);
    const pairs: VerifiedPair[] = [];
    new PairVerifier(0.5, { onRecorded: (p) => pairs.push(p) }).verifyBucket(['good', 'also-good'], found);
    expect(pairs).toEqual([{ a: 'also-good', b: 'good', jaccard: 1, hamming: 0 }]);
    expect(decodeSignature(documents[2].source, 'near_dup', params)).toBeInstanceOf(StoredProblem);
  });

  it('with a small capacity, reads again what it forgot', async () => {
    let reads = 0;
    const reader = async (ids: string[]) => {
      reads += ids.length;
      return ids.map((id) => stored(id, 1));
    };
    const store = new SignatureStore(reader, 'near_dup', 'date', params, 2);
    for (const id of ['a', 'b', 'c', 'd', 'a']) await store.load([id]);
    expect(reads).toBe(5);
  });
});

describe('facts and clusters by document number', () => {
  it('keeps a date as its milliseconds, a number as it is, another value as it is, a missing one as missing', () => {
    const numbers = new DocNumbers();
    const facts = new FactsTable(numbers, { keepClusterIds: false });
    facts.set('d', { tokens: 4, sortKey: '2021-05-01T00:00:00Z', clusterId: 'old' });
    facts.set('n', { tokens: 0, sortKey: 42 });
    facts.set('k', { tokens: 7, sortKey: 'zebra' });
    facts.set('m', { tokens: 9, sortKey: null });
    expect(['d', 'n', 'k', 'm', 'never'].map((id) => facts.get(id))).toEqual([
      { tokens: 4, sortKey: Date.parse('2021-05-01T00:00:00Z') }, // no earlier cluster kept: not asked to
      { tokens: 0, sortKey: 42 },
      { tokens: 7, sortKey: 'zebra' },
      { tokens: 9, sortKey: undefined },
      undefined,
    ]);
    expect([facts.has('n'), facts.has('never'), numbers.find('never')]).toEqual([true, false, undefined]);
    facts.set('k', { tokens: 8, sortKey: '2020-01-01' }); // read again: the newer facts replace the older
    expect(facts.get('k')).toEqual({ tokens: 8, sortKey: Date.parse('2020-01-01') });
  });

  it('keeps where each document lives: its index (interned) and its routing, only for those that have one', () => {
    const facts = new FactsTable(new DocNumbers());
    for (let i = 0; i < 3000; i++) facts.set(`d${i}`, { tokens: 1, sortKey: i, location: { index: `logs-${i % 3}`, ...(i % 1000 === 7 ? { routing: `r${i}` } : {}) } });
    expect(facts.get('d7')?.location).toEqual({ index: 'logs-1', routing: 'r7' });
    expect(facts.get('d2999')?.location).toEqual({ index: 'logs-2' });
    facts.set('d7', { tokens: 1, sortKey: 7, location: { index: 'logs-9' } }); // read again elsewhere: the routing goes too
    expect(facts.get('d7')?.location).toEqual({ index: 'logs-9' });
    facts.set('bare', { tokens: 1, sortKey: 0 });
    expect(facts.get('bare')?.location).toBeUndefined();
  });

  it('one numbering for the store and the clusters; sets grow past their first size and say who is joined', () => {
    const numbers = new DocNumbers();
    const facts = new FactsTable(numbers);
    const uf = new UnionFind(numbers);
    const n = 5000;
    for (let i = 0; i < n; i++) facts.set(`d${i}`, { tokens: i, sortKey: i, clusterId: i % 2 ? 'c' : undefined });
    for (let i = 1; i < n; i += 2) uf.union(`d${i}`, `d${i - 1}`);
    uf.union('d1', 'd4999');
    expect(numbers.size).toBe(n);
    expect([uf.sizeOf('d0'), uf.sizeOf('d4998'), uf.joined('d2'), uf.joined('never'), numbers.find('never')]).toEqual([4, 4, true, false, undefined]);
    expect(uf.groups().length).toBe(n / 2 - 1);
    expect(facts.get('d4999')).toEqual({ tokens: 4999, sortKey: 4999, clusterId: 'c' });
  });
});

describe('canonical rule', () => {
  const facts = new Map([
    ['a', { tokens: 10, sortKey: '2021-05-01T00:00:00Z' }],
    ['b', { tokens: 30, sortKey: '2020-01-01T00:00:00Z' }],
    ['c', { tokens: 30, sortKey: undefined }],
  ]);
  it('oldest, newest, longest and a field in either order; missing values last, ties to the smallest id', () => {
    expect(pickCanonical(['a', 'b', 'c'], facts, 'oldest')).toBe('b');
    expect(pickCanonical(['a', 'b', 'c'], facts, 'newest')).toBe('a');
    expect(pickCanonical(['a', 'b', 'c'], facts, 'longest')).toBe('b');
    expect(pickCanonical(['a', 'c'], facts, { field: 'date', order: 'desc' })).toBe('a');
    // A member without a date is never the newest (it was, before: the order was simply reversed).
    expect(pickCanonical(['c', 'a'], facts, 'newest')).toBe('a');
  });
  it('families are the connected components; in components mode each is one cluster, its canonical by the rule', () => {
    const verifier = new PairVerifier(0.5);
    verifier.record({ a: 'a', b: 'b', jaccard: 0.9, hamming: 1 });
    verifier.record({ a: 'b', b: 'c', jaccard: 0.7, hamming: 3 });
    verifier.record({ a: 'x', b: 'y', jaccard: 0.6, hamming: 5 });
    const signatures = new Map(['a', 'b', 'c', 'x', 'y'].map((id, i) => [id, signature(80, i + 1)]));
    const clusters = verifier.clusters.groups().flatMap((family) => cutFamily(family, signatures, { method: 'components', rule: 'longest', minSimilarity: 0.5, facts }));
    expect(clusters.map((c) => [c.canonical, c.members.sort()])).toEqual([['b', ['a', 'b', 'c']], ['x', ['x', 'y']]]);
    expect(clusters[0].similarity.get('a')).toBe(0.8);
    expect(['a', 'b', 'c', 'x', 'q'].map((id) => verifier.bestMatch(id))).toEqual([0.9, 0.9, 0.7, 0.6, 0]);
    expect([...verifier.involved()].sort()).toEqual(['a', 'b', 'c', 'x', 'y']);
  });
});

/** A pair by the numbers of its ids (numbered now if new). */
function numberedPair(documents: DocNumbers, { a, b, jaccard, hamming }: VerifiedPair): NumberedPair {
  return { na: documents.numberOf(a), nb: documents.numberOf(b), jaccard, hamming };
}

describe('best matches kept as counts of equal values when the width is known', () => {
  it('gives back the very similarities recorded, and the partner of each; a similarity not over the width keeps numbers', () => {
    const pair = (a: string, b: string, jaccard: number) => ({ a, b, jaccard, hamming: 0 });
    const counted = new PairVerifier(0.5, { width: 100 });
    const plain = new PairVerifier(0.5);
    for (const verifier of [counted, plain]) {
      verifier.record(pair('a', 'b', 0.67));
      verifier.record(pair('b', 'c', 0.93));
      verifier.record(pair('a', 'c', 67 / 100)); // a tie: a keeps b, the smaller id
    }
    for (const id of ['a', 'b', 'c', 'none']) {
      expect([counted.bestMatch(id), counted.bestPartner(id)]).toEqual([plain.bestMatch(id), plain.bestPartner(id)]);
    }
    expect([counted.bestMatch('b'), counted.bestPartner('b'), counted.bestPartner('a')]).toEqual([0.93, 'c', 'b']);
    // A tie goes to the smaller id whatever order the pairs come in (a cluster's shards meet them in another).
    const reversed = new PairVerifier(0.5, { width: 100 });
    for (const [x, y, j] of [['a', 'c', 0.67], ['b', 'c', 0.93], ['a', 'b', 0.67]] as const) reversed.record(pair(x, y, j));
    expect(['a', 'b', 'c'].map((id) => reversed.bestPartner(id))).toEqual(['b', 'c', 'b']);
    counted.record(pair('d', 'e', 1 / 3)); // not k/100
    expect([counted.bestMatch('d'), counted.bestMatch('b'), counted.bestMatch('a')]).toEqual([1 / 3, 0.93, 0.67]);
  });
});

describe('run journal (dedup --resume)', () => {
  const identity = { index: 'i', uuids: 'u1', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, bucketChunk: 1000, pass: 'bands' as const };

  it('gives back the pairs of finished partitions, drops a tail written after the last checkpoint, and refuses other options', async () => {
    const file = path.join(tmp, 'run.json');
    const documents = new DocNumbers();
    const journal = (await DedupJournal.start(file, { ...identity, partitions: 7 })).namesBy(documents);
    journal.add(numberedPair(documents, { a: 'b', b: 'a', jaccard: 0.9, hamming: 2 }));
    await journal.checkpoint(3, { buckets: 5, candidatePairs: 9, verifiedPairs: 1 });
    appendFileSync(`${file}.pairs.jsonl`, '{"a":"c","b":"d","jac'); // a write cut short by a kill
    const resumed = await DedupJournal.resume(file, identity);
    expect(resumed.pairs).toEqual([{ a: 'a', b: 'b', jaccard: 0.9, hamming: 2 }]);
    expect([resumed.partitions, resumed.journal.partitionsDone, resumed.journal.counters.candidatePairs]).toEqual([7, 3, 9]);
    await expect(DedupJournal.resume(file, { ...identity, minSimilarity: 0.8 })).rejects.toThrow(/minSimilarity differ/);
    // A journal of the partitioned pass this version no longer has (its partitions were not bands).
    await expect(DedupJournal.resume(file, { ...identity, pass: 'partitions' } as never)).rejects.toThrow(/pass differ/);
    await expect(DedupJournal.resume(file, { ...identity, uuids: 'another' })).rejects.toThrow(/is for another index \(or one deleted and made again\)/);
    await resumed.journal.finish();
    await expect(DedupJournal.resume(file, identity)).rejects.toThrow(/no interrupted dedup run/);
  });

  it('refuses a pairs file cut short, edited or foreign, and a damaged checkpoint, in one line each, before anything is replayed', async () => {
    const made = async (name: string) => {
      const file = path.join(tmp, `${name}.json`);
      const documents = new DocNumbers();
      const journal = (await DedupJournal.start(file, { ...identity, partitions: 4 })).namesBy(documents);
      for (let i = 0; i < 50; i++) journal.add(numberedPair(documents, { a: `a${i}`, b: `b${i}`, jaccard: 0.8, hamming: 3 }));
      await journal.checkpoint(2, { buckets: 5, candidatePairs: 60, verifiedPairs: 50 });
      return file;
    };
    const cut = await made('cut');
    truncateSync(`${cut}.pairs.jsonl`, 100);
    await expect(DedupJournal.resume(cut, identity)).rejects.toThrow(/cannot be resumed: .*holds 100 bytes, its checkpoint says \d+ were written \(cut short\); run dedup without --resume/);
    const edited = await made('edited');
    const text = readFileSync(`${edited}.pairs.jsonl`, 'utf8');
    writeFileSync(`${edited}.pairs.jsonl`, text.replace('"a7"', '"zz"'));
    await expect(DedupJournal.resume(edited, identity)).rejects.toThrow(/does not match the checksum its checkpoint recorded/);
    const foreign = await made('foreign');
    copyFileSync(`${edited}.pairs.jsonl`, `${foreign}.pairs.jsonl`);
    await expect(DedupJournal.resume(foreign, identity)).rejects.toThrow(/does not match the checksum/);
    const garbled = await made('garbled');
    writeFileSync(garbled, '{"job": "dedup-run", "index": "i", "identity"');
    // (The library names the option key, the command line its flag.)
    const refusal = await DedupJournal.resume(garbled, identity).catch((err: unknown) => err);
    expect((refusal as Error).message).toMatch(/checkpoint .* is not valid JSON .*without resume/);
    expect(cliMessage(refusal)).toMatch(/checkpoint .* is not valid JSON .*without --resume/);
    const negative = await made('negative');
    writeFileSync(negative, JSON.stringify({ ...JSON.parse(readFileSync(negative, 'utf8')), counts: { pairsBytes: -5 } }));
    await expect(DedupJournal.resume(negative, identity)).rejects.toThrow(/checkpoint .* is damaged \(its counts are not whole numbers\)/);
  });
});

describe('run journal, many pairs between checkpoints', () => {
  it('writes them out as they come (memory stays small) and still drops, on resume, those after the last checkpoint', async () => {
    const identity = { index: 'i', uuids: 'u1', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, bucketChunk: 1000, pass: 'bands' as const };
    const file = path.join(tmp, 'run-many.json');
    const documents = new DocNumbers();
    const journal = (await DedupJournal.start(file, { ...identity, partitions: 26 })).namesBy(documents);
    const pair = (i: number) => ({ a: `document-${i}`, b: `document-${i + 1}`, jaccard: 0.75, hamming: 4 });
    journal.add(numberedPair(documents, pair(0)));
    await journal.checkpoint(1, { buckets: 1, candidatePairs: 1, verifiedPairs: 1 });
    for (let i = 1; i <= 100_000; i++) journal.add(numberedPair(documents, pair(i))); // about 7 MB of lines, no checkpoint
    expect(statSync(`${file}.pairs.jsonl`).size).toBeGreaterThan(4 * 1024 * 1024);
    const resumed = await DedupJournal.resume(file, identity);
    expect(resumed.pairs).toEqual([pair(0)]);
    expect(resumed.journal.partitionsDone).toBe(1);
    await resumed.journal.finish();
  });
});

describe('dedup state', () => {
  it('is read back, also from the format of earlier versions, and allows an incremental run only for the same settings', async () => {
    const file = path.join(tmp, 'state.json');
    const state = { version: 1 as const, index: 'i', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, lastRunAt: '2026-01-01T00:00:00.000Z' };
    await writeDedupState(file, state);
    expect(await readDedupState(file)).toEqual({ state });
    const old = path.join(tmp, 'old.json');
    writeFileSync(old, JSON.stringify({ job: 'dedup', identity: { index: 'i', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, lastRunAt: state.lastRunAt } }));
    expect(await readDedupState(old)).toEqual({ state });
    // A state that cannot be trusted makes a full run, and says why.
    const ahead = path.join(tmp, 'ahead.json');
    await writeDedupState(ahead, { ...state, lastRunAt: '2999-01-01T00:00:00.000Z' });
    expect(await readDedupState(ahead)).toEqual({ note: expect.stringMatching(/is in the future; trusting it would skip/) });
    for (const text of ['{"version": 1, "index": "i", "par', '[]', JSON.stringify({ ...state, lastRunAt: 'yesterday' }), JSON.stringify({ ...state, minSimilarity: '0.5' })]) {
      writeFileSync(ahead, text);
      expect(await readDedupState(ahead), text).toEqual({ note: expect.stringMatching(/is not readable \(damaged, or edited\); this run is a full one/) });
    }
    // A state without a cluster method is an earlier version's, whose clusters were whole families.
    expect(continues(state, { index: 'i', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, clusters: 'components' })).toBe(true);
    expect(continues(state, { index: 'i', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, clusters: 'centres' })).toBe(false);
    const now = { ...state, clusters: 'centres' as const, order: '{"canonical":"oldest"}' };
    expect(continues(now, { index: 'i', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, clusters: 'centres', order: '{"canonical":"oldest"}' })).toBe(true);
    expect(continues(now, { index: 'i', params: 'p', prefix: 'near_dup', minSimilarity: 0.6, clusters: 'centres', order: '{"canonical":"oldest"}' })).toBe(false);
    expect(continues(now, { index: 'i', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, clusters: 'components', order: '{"canonical":"oldest"}' })).toBe(false);
    expect(continues(now, { index: 'i', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, clusters: 'centres', order: '{"canonical":"longest"}' })).toBe(false);
    expect(JSON.parse(readFileSync(file, 'utf8')).version).toBe(1);
  });
});
