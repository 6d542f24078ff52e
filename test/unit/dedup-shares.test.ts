// The pure parts of a dedup split between processes (dedup --share K/N, --from-shares N), without an
// engine: the shares' key ranges, the share's view of the signature table, the pairs of N shares against
// the pairs of one process, the page and marker documents read back untrusted, the pairs list that keeps
// a pair two shares found once, and the check of a pair against its signatures.
import os from 'node:os';
import path from 'node:path';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { checkDedupOptions, checkShareOptions } from '../../src/jobs/dedup.js';
import { verifyBands } from '../../src/jobs/dedup/bands/band-pass.js';
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import { checkPair, compactJaccard } from '../../src/jobs/dedup/split/pages.js';
import { PairList } from '../../src/jobs/dedup/split/final-pairs.js';
import { type PairPart, PairParts } from '../../src/jobs/dedup/split/final-pairs.js';
import { markerDocument, pageDocument, pagesOf, readMarker, readPage, type ShareProgress, sortedPairs } from '../../src/jobs/dedup/split/pages.js';
import { PairVerifier, type VerifiedPair } from '../../src/jobs/dedup/verify/pair-verifier.js';
import {
  checkPairsIndexName,
  checkShareCount,
  inRange,
  keyRange,
  markerId,
  matchesIndexPattern,
  pageId,
  parseShare,
  runName,
  type ShareRunIdentity,
} from '../../src/jobs/dedup/split/plan.js';
import { LargeKeyCounters, shareTable } from '../../src/jobs/dedup/split/share-pass.js';
import type { StoredSignature } from '../../src/jobs/dedup/documents/signature-store.js';
import { SignatureRecords, type SignatureTable } from '../../src/jobs/dedup/scan/signature-table.js';
import { minhashJaccard } from '../../src/sketch/minhash.js';
import type { Hash64 } from '../../src/sketch/simhash.js';
import { seededRandom } from '../support/corpus.js';
import { spillFolders } from '../support/spill-folders.js';

const WIDTH = 64;
const BANDS = 16;
const ROWS = WIDTH / BANDS;
const scratch = mkdtempSync(path.join(os.tmpdir(), 'nd-shares-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('share plan', () => {
  it('reads K/N and refuses anything else with the value and the form', () => {
    expect(parseShare('2/3')).toEqual({ number: 2, count: 3 });
    expect(parseShare(' 1 / 1 ')).toEqual({ number: 1, count: 1 });
    for (const bad of ['0/3', '4/3', '3', '1/0', 'a/b', '1/5000', '-1/2', '1.5/3']) expect(() => parseShare(bad)).toThrow(new RegExp(`^share must be K/N.*got "${bad.replace(/[./]/g, '\\$&')}"`));
    expect(() => checkShareCount(0)).toThrow(/^fromShares must be .*got 0/);
    expect(() => checkShareCount(2.5)).toThrow(/got 2.5/);
    expect(() => checkPairsIndexName(undefined, 'docs')).toThrow(/need pairsIndex NAME/);
    expect(() => checkPairsIndexName('Pairs*', 'docs')).toThrow(/^pairsIndex must be a plain index name.*"Pairs\*"/);
    expect(() => checkPairsIndexName('docs', 'docs')).toThrow(/an index of its own/);
    expect(() => checkPairsIndexName('docs-pairs', 'docs')).not.toThrow();
    // A pairs index inside the pattern deduplicated would be read by the shares that start after it is made.
    expect(() => checkPairsIndexName('docs-pairs', 'docs*')).toThrow(/^pairsIndex "docs-pairs" is matched by the index deduplicated \("docs\*"\)/);
    expect(() => checkPairsIndexName('docs-pairs', 'logs,docs-*')).toThrow(/is matched by the index deduplicated/);
    expect(() => checkPairsIndexName('docs-pairs', 'docs*,-docs-pairs')).not.toThrow();
    expect(() => checkPairsIndexName('docs-pairs', 'doc.*')).not.toThrow();
    expect(matchesIndexPattern('a.b', 'a.*')).toBe(true);
    expect(matchesIndexPattern('a-b', 'a.*')).toBe(false);
  });

  it('refuses what is not for a share, and a pairs index without a split run, each in one line', () => {
    const base = { index: 'docs', share: '1/2', pairsIndex: 'docs-pairs' };
    expect(() => checkShareOptions(base)).not.toThrow();
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ output: { dryRun: true } }, /^dryRun is not for share: give it to the final step \(fromShares N\)/],
      [{ state: { resume: true } }, /^resume is not for share: a share goes on from its last band written by itself/],
      [{ compare: { containment: 0.8 } }, /^containment is not for share/],
      [{ output: { pairsFile: 'p.jsonl' } }, /^pairsFile is not for share/],
      [{ output: { collectMatches: true } }, /^collectMatches is not for share/],
      [{ share: '3/2' }, /^share must be K\/N/],
      [{ pairsIndex: 'docs' }, /^pairsIndex must name an index of its own/],
      [{ compare: { minSimilarity: 2 } }, /^minSimilarity must be above 0 and at most 1, got 2/],
      [{ fromShares: 2 }, /^share and fromShares go to different runs/],
    ];
    for (const [change, message] of cases) expect(() => checkShareOptions({ ...base, ...change } as never)).toThrow(message);
    expect(() => checkDedupOptions({ index: 'docs', fromShares: 3, pairsIndex: 'p' })).not.toThrow();
    expect(() => checkDedupOptions({ index: 'docs', fromShares: 3 })).toThrow(/need pairsIndex NAME/);
    expect(() => checkDedupOptions({ index: 'docs', fromShares: 3, pairsIndex: 'p', state: { resume: true } })).toThrow(/^resume is not for fromShares/);
    expect(() => checkDedupOptions({ index: 'docs', pairsIndex: 'p' })).toThrow(/^pairsIndex "p" goes with share K\/N .* or fromShares N/);
  });

  it('cuts the 32-bit hash space into N ranges that cover it once, whatever N', () => {
    for (const count of [1, 2, 3, 7, 4096]) {
      const ranges = Array.from({ length: count }, (_, k) => keyRange({ number: k + 1, count }));
      expect(ranges[0].lo).toBe(0);
      expect(ranges[count - 1].hi).toBe(2 ** 32);
      for (let k = 1; k < count; k++) expect(ranges[k].lo).toBe(ranges[k - 1].hi);
      for (const hash of [0, 1, -1, 2 ** 31 - 1, -(2 ** 31), 123456789, -987654321]) {
        expect(ranges.filter((r) => inRange(r, hash))).toHaveLength(1);
      }
    }
  });

  it('names a run by its whole identity, the same in every process', () => {
    const identity: ShareRunIdentity = { index: 'docs', uuids: 'u1', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, bucketChunk: 1000, shares: 3, documents: 10, lastAnnotatedAt: null };
    expect(runName(identity)).toBe(runName({ ...identity }));
    expect(runName(identity)).toMatch(/^[0-9a-f]{16}$/);
    for (const change of [{ minSimilarity: 0.6 }, { shares: 2 }, { documents: 11 }, { uuids: 'u2' }, { lastAnnotatedAt: '2026-01-01T00:00:00.000Z' }]) {
      expect(runName({ ...identity, ...change })).not.toBe(runName(identity));
    }
    expect(pageId('abc', { number: 2, count: 3 }, 4, 0)).toBe(`${markerId('abc', { number: 2, count: 3 })}-band-4-page-0`);
  });
});

type Doc = { id: string; signature: { values: Uint32Array; bands: Int32Array; simhash: Hash64 } };

/** Families of near-copies (some large: over 32 members), boilerplate sharing one key, loners; shuffled. */
function corpus(seed: number, options: { families: number; largeFamilies: number; boilerplate: number; loners: number }): Doc[] {
  const random = seededRandom(seed);
  const randomValues = () => Uint32Array.from({ length: WIDTH }, () => (random() * 2 ** 32) >>> 0);
  const make = (id: string, values: Uint32Array): Doc => {
    const bands = Int32Array.from({ length: BANDS }, (_, b) => values.slice(b * ROWS, (b + 1) * ROWS).reduce((h, v) => Math.imul(h ^ v, 0x01000193), 0x811c9dc5 + b));
    return { id, signature: { values, bands, simhash: { hi: values[0], lo: values[1] } } };
  };
  const docs: Doc[] = [];
  const family = (name: string, size: number) => {
    const base = randomValues();
    for (let c = 0; c < size; c++) {
      const values = base.slice();
      const changed = Math.floor(random() * WIDTH * 0.5);
      for (let k = 0; k < changed; k++) values[Math.floor(random() * WIDTH)] = (random() * 2 ** 32) >>> 0;
      docs.push(make(`${name}-c${c}`, values));
    }
  };
  for (let f = 0; f < options.families; f++) family(`f${f}`, 2 + Math.floor(random() * 8));
  for (let f = 0; f < options.largeFamilies; f++) family(`big${f}`, 40 + Math.floor(random() * 30));
  const shared = randomValues();
  for (let i = 0; i < options.boilerplate; i++) {
    const values = randomValues();
    values.set(shared.subarray(0, ROWS)); // band 0 shared by all of them
    if (i % 4 === 1 && docs.length > 0) values.set(docs[Math.floor(random() * docs.length)].signature.values.subarray(ROWS, 3 * ROWS), ROWS);
    docs.push(make(`boiler-${i}`, values));
  }
  for (let l = 0; l < options.loners; l++) docs.push(make(`loner-${l}`, randomValues()));
  for (let i = docs.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [docs[i], docs[j]] = [docs[j], docs[i]];
  }
  return docs;
}

interface Found {
  pairs: Map<string, VerifiedPair>;
  /** Pairs found more than once (by two shares). */
  again: number;
  families: string[];
  best: Map<string, [number, string | undefined]>;
}

/** One process's find over a table (a share's when `share` is given): its verified pairs. */
async function find(table: (numbers: DocNumbers) => SignatureTable & { close?(): void }, bucketChunk: number, share?: { number: number; count: number }): Promise<VerifiedPair[]> {
  const numbers = new DocNumbers();
  const pairs: VerifiedPair[] = [];
  const verifier: PairVerifier = new PairVerifier(0.5, { documents: numbers, onVerified: (p) => pairs.push(verifier.named(p)) });
  const whole = table(numbers);
  try {
    const view = share ? shareTable(whole, { range: keyRange(share), bucketChunk, onForeignLargeKey: (band, hash) => verifier.markLargeKey(band, hash) }) : whole;
    await verifyBands(view, verifier, { bucketChunk, checkers: 0 });
  } finally {
    whole.close?.();
  }
  return pairs;
}

/** What the final step makes of pairs: each once, families, each document's best similarity and partner. */
function outcome(pairs: VerifiedPair[]): Found {
  const kept = new Map<string, VerifiedPair>();
  let again = 0;
  for (const p of pairs) {
    const key = `${p.a}|${p.b}`;
    if (kept.has(key)) again++;
    else kept.set(key, p);
  }
  const verifier = new PairVerifier(0.5);
  for (const p of kept.values()) verifier.record(p);
  const best = new Map<string, [number, string | undefined]>();
  for (const id of verifier.involved()) best.set(id, [verifier.bestMatch(id), verifier.bestPartner(id)]);
  return { pairs: kept, again, families: verifier.clusters.groups().map((g) => g.sort().join(',')).sort(), best };
}

const inMemory = (docs: Doc[]) => (numbers: DocNumbers) => {
  const pool = new SignatureRecords(numbers, { expected: docs.length });
  for (const d of docs) pool.addSignature(d.id, d.signature);
  return pool;
};

const onDisk = (docs: Doc[]) => (numbers: DocNumbers) => {
  const spill = new SignatureRecords(numbers, { spillDir: scratch });
  for (const d of docs) spill.addSignature(d.id, d.signature);
  return spill;
};

describe('N shares against one process', () => {
  it('finds exactly the pairs of one process, each in one share, when no bucket holds more than 32 documents', async () => {
    const docs = corpus(5, { families: 150, largeFamilies: 0, boilerplate: 0, loners: 300 });
    const one = outcome(await find(inMemory(docs), 1000));
    expect(one.pairs.size).toBeGreaterThan(300);
    for (const count of [2, 3, 5]) {
      const shares = await Promise.all(Array.from({ length: count }, (_, k) => find(inMemory(docs), 1000, { number: k + 1, count })));
      expect(shares.every((pairs) => pairs.length > 0)).toBe(true);
      const split = outcome(shares.flat());
      expect(split.again).toBe(0);
      expect([...split.pairs.keys()].sort()).toEqual([...one.pairs.keys()].sort());
      expect(split.families).toEqual(one.families);
      expect(split.best).toEqual(one.best);
    }
  });

  it('in buckets of more than 32, gives the same families; the pairs there may differ a little', async () => {
    // One process verifies a large bucket only between documents not yet in one cluster, by all it joined
    // before (large-buckets.ts); a share has joined only what its own keys joined, so it may try other pairs.
    const docs = corpus(5, { families: 120, largeFamilies: 3, boilerplate: 0, loners: 300 });
    const one = outcome(await find(inMemory(docs), 1000));
    for (const count of [2, 3]) {
      const split = outcome((await Promise.all(Array.from({ length: count }, (_, k) => find(inMemory(docs), 1000, { number: k + 1, count })))).flat());
      expect(split.families).toEqual(one.families);
      const differ = [...split.pairs.keys()].filter((k) => !one.pairs.has(k)).concat([...one.pairs.keys()].filter((k) => !split.pairs.has(k)));
      expect(differ.every((k) => k.startsWith('big'))).toBe(true); // only inside the families of over 32
      expect(differ.length).toBeLessThan(one.pairs.size / 50);
      for (const [id, best] of one.best) if (!id.startsWith('big')) expect(split.best.get(id)).toEqual(best);
    }
  });

  it('with keys held by more documents than a bucket verifies at once (boilerplate), gives the same families, in memory or on disk', async () => {
    const docs = corpus(9, { families: 60, largeFamilies: 1, boilerplate: 120, loners: 100 });
    for (const table of [inMemory, onDisk]) {
      const one = outcome(await find(table(docs), 16));
      for (const count of [2, 3]) {
        const split = outcome((await Promise.all(Array.from({ length: count }, (_, k) => find(table(docs), 16, { number: k + 1, count })))).flat());
        expect(split.families).toEqual(one.families);
        // Every pair a share reports is a pair that verification passes; the shares may verify a few that one
        // process, which had them joined already, did not need (never fewer families, never other ones).
        for (const [key, pair] of one.pairs) if (!split.pairs.has(key)) expect.fail(`pair ${key} (${pair.jaccard}) found by one process, by no share`);
      }
    }
  });

  it('tells a share the large keys of the other shares, before their band is verified', () => {
    const hashes = [5, 5, 5, 5, 5, 7, 7, 9, 2 ** 31 + 3, 2 ** 31 + 3, 2 ** 31 + 3, 2 ** 31 + 3];
    const table: SignatureTable = {
      size: hashes.length,
      bandCount: 1,
      idOf: (slot) => `d${slot}`,
      numberAt: (slot) => slot,
      readBand: (_band, visit) => visit(Uint32Array.from(hashes.map((h) => h >>> 0))),
      load: async () => () => ({ values: new Uint32Array(0), bands: new Int32Array(0), simhash: '0' }),
    };
    const reported: Array<[number, number]> = [];
    const view = shareTable(table, { range: keyRange({ number: 2, count: 2 }), bucketChunk: 3, onForeignLargeKey: (band, hash) => reported.push([band, hash]) });
    const seen: number[] = [];
    view.readBand(0, (chunk) => seen.push(...chunk));
    expect(reported).toEqual([[0, 5]]); // 5 is held by 5 > 3 documents and is share 1's; 7 and 9 are small
    expect(seen.slice(8)).toEqual(hashes.slice(8).map((h) => h >>> 0)); // share 2's own keys as they are
    const hidden = seen.slice(0, 8);
    expect(new Set(hidden).size).toBe(8); // each hidden key a value of its own: no bucket
    expect(hidden.every((h) => !inRange(keyRange({ number: 2, count: 2 }), h))).toBe(true);
    view.readBand(0, () => undefined);
    expect(reported).toHaveLength(1); // once a band
    expect(view.bandFile).toBeUndefined();
  });

  it('counts large keys exactly, whatever shares a counter', () => {
    const counters = new LargeKeyCounters(1000);
    const hashes = new Uint32Array(5000);
    for (let i = 0; i < hashes.length; i++) hashes[i] = i < 1200 ? 42 : i < 2000 ? 1_000_000 + (i % 300) : (i * 2654435761) >>> 0;
    const all = { lo: 0, hi: 0 }; // an empty range: every key is another share's
    expect(counters.largeKeys((visit) => visit(hashes), all, 1000)).toEqual([42]);
    expect(counters.largeKeys((visit) => visit(hashes), all, 1199)).toEqual([42]);
    expect(counters.largeKeys((visit) => visit(hashes), all, 1200)).toEqual([]);
    expect(counters.largeKeys((visit) => visit(hashes), { lo: 0, hi: 100 }, 10)).toEqual([]); // 42 is the share's own
  });
});

describe('pages and markers read back', () => {
  const share = { number: 2, count: 3 };
  const pairs: VerifiedPair[] = sortedPairs([
    { a: 'x', b: 'y', jaccard: 0.75, hamming: 3 },
    { a: 'a', b: 'b', jaccard: 0.5, hamming: 0 },
    { a: 'a', b: 'c', jaccard: 1, hamming: 64 },
  ]);
  const expected = { run: 'r1', share, band: 4, page: 0, minSimilarity: 0.5 };

  it('reads back what was written, in id order, cut into pages', () => {
    const [columns] = pagesOf(pairs);
    expect(readPage(JSON.parse(JSON.stringify(pageDocument('r1', share, 4, 0, columns))), expected)).toEqual([pairs[0], pairs[1], pairs[2]]);
    expect(pairs.map((p) => p.a + p.b)).toEqual(['ab', 'ac', 'xy']);
    expect(pagesOf(pairs, 2).map((p) => p.a.length)).toEqual([2, 1]);
  });

  it('names what is wrong with a damaged or forged page, never throws', () => {
    const good = pageDocument('r1', share, 4, 0, pagesOf(pairs)[0]) as any;
    const damaged: Array<[string, (doc: any) => void, RegExp]> = [
      ['not an object', (d) => Object.assign(d, { pairs: 'x' }), /holds no pairs/],
      ['of another run', (d) => (d.run = 'r2'), /its run is "r2", not "r1"/],
      ['of another band', (d) => (d.band = 5), /its band is 5, not 4/],
      ['columns cut short', (d) => d.pairs.b.pop(), /columns hold 3, 2, 3 and 3 values/],
      ['a count that lies', (d) => (d.count = 7), /its count 7 is not the 3 pairs/],
      ['a similarity under the bar', (d) => (d.pairs.jaccard[1] = 0.2), /pair 2 has similarity 0.2, not from the bar 0.5 to 1/],
      ['a similarity that is not a number', (d) => (d.pairs.jaccard[0] = '0.9'), /pair 1 has similarity "0.9"/],
      ['a distance past 64', (d) => (d.pairs.hamming[2] = 65), /pair 3 has SimHash distance 65/],
      ['an id that is not a string', (d) => (d.pairs.a[0] = { $gt: '' }), /pair 1 has an id that is not a document id/],
      ['ids out of order', (d) => ([d.pairs.a[2], d.pairs.b[2]] = [d.pairs.b[2], d.pairs.a[2]]), /pair 3 is not in order \("y" then "x"\)/],
      ['an empty page', (d) => Object.assign(d, { count: 0, pairs: { a: [], b: [], jaccard: [], hamming: [] } }), /hold 0, 0, 0 and 0 values/],
    ];
    for (const [what, damage, reason] of damaged) {
      const doc = structuredClone(good);
      damage(doc);
      const read = readPage(doc, expected);
      expect(read, what).toMatch(reason);
    }
    expect(readPage(null, expected)).toBe('it is not a JSON object');
    expect(readPage([1], expected)).toBe('it is not a JSON object');
  });

  const identity: ShareRunIdentity = { index: 'docs', uuids: 'u', params: 'p', prefix: 'near_dup', minSimilarity: 0.5, bucketChunk: 1000, shares: 3, documents: 9, lastAnnotatedAt: null };
  const progress: ShareProgress = { bandCount: 4, bandsDone: 2, pages: [1, 0], pairs: 3, buckets: 5, candidatePairs: 9, verifiedPairs: 3, damaged: 0, complete: false, startedAt: 't0', updatedAt: 't1', host: 'h' };

  it('reads a marker back, and names what is wrong with a damaged or forged one', () => {
    const marker = markerDocument('r1', share, identity, progress) as any;
    expect(readMarker(JSON.parse(JSON.stringify(marker)), { run: 'r1', share, identity })).toEqual(progress);
    const damaged: Array<[(doc: any) => void, RegExp]> = [
      [(d) => (d.identity.minSimilarity = 0.6), /identity differs in minSimilarity/],
      [(d) => (d.share = 3), /names share 3\/3/],
      [(d) => (d.progress.complete = true), /says complete with 2 of 4 bands done/],
      [(d) => (d.progress.pages = [1]), /are not a count for each of its 2 bands done/],
      [(d) => (d.progress.bands_done = 9), /bands done 9 is not a whole number from 0 to 4/],
      [(d) => (d.progress.pairs = 99_999), /its 99999 pairs do not fit its 1 page\b/],
      [(d) => (d.progress.buckets = -1), /its buckets -1 is not a whole number/],
      [(d) => delete d.identity, /identity is missing/],
    ];
    for (const [damage, reason] of damaged) {
      const doc = structuredClone(marker);
      damage(doc);
      expect(readMarker(doc, { run: 'r1', share, identity })).toMatch(reason);
    }
  });
});

describe('the pairs the final step gathers', () => {
  it('keeps a pair once whichever share gives it first, counts the copies, and tells one that disagrees', () => {
    const list = new PairList();
    expect(list.add(3, 1, 0.75, 2, 0)).toBe('added');
    expect(list.add(1, 3, 0.75, 2, 1)).toBe('duplicate');
    expect(list.add(1, 3, 0.8, 2, 2)).toEqual({ disagrees: 0 });
    for (let i = 0; i < 10_000; i++) expect(list.add(i + 10, 2 * i + 11, 0.5, 0, 3)).toBe('added');
    expect(list.add(10 + 9999, 2 * 9999 + 11, 0.5, 0, 4)).toBe('duplicate');
    expect([list.count, list.duplicates, list.na[0], list.nb[0], list.page[0]]).toEqual([10_001, 2, 1, 3, 0]);
  });

  /** Everything the parts hand out: each part's pairs and copies as sorted lines, and the counts. */
  function handedOut(parts: PairParts): { pairs: string[]; copies: string[]; count: number; duplicates: number; parts: number } {
    const pairs: string[] = [];
    const copies: string[] = [];
    let parts_ = 0;
    for (const part of parts.parts() as Generator<PairPart>) {
      parts_++;
      const { pairs: list } = part;
      for (let i = 0; i < list.count; i++) pairs.push([list.na[i], list.nb[i], list.jaccard[i], list.hamming[i], list.page[i]].join(' '));
      for (const c of part.copies) copies.push([c.na, c.nb, c.jaccard, c.hamming, c.page].join(' '));
    }
    return { pairs: pairs.sort(), copies: copies.sort(), count: parts.count, duplicates: parts.duplicates, parts: parts_ };
  }

  const { inFolder } = spillFolders('nd-pair-parts-');

  it('split into parts on the disk, hands out each pair once, the copies that disagree and the counts of the pairs all in memory', async () => {
    const float = seededRandom(11);
    const random = () => Math.floor(float() * 2 ** 31);
    const given: Array<[number, number, number, number, number]> = [];
    for (let i = 0; i < 30_000; i++) {
      const a = random() % 5000, b = random() % 5000;
      if (a === b) continue;
      given.push([a, b, 0.5 + (random() % 50) / 100, random() % 64, i >> 11]);
      // Some pairs again, in the other order, from another page: the same (a duplicate) or another similarity (a copy).
      if (i % 7 === 0) given.push([b, a, given[given.length - 1][2], given[given.length - 1][3], (i >> 11) + 1]);
      if (i % 50 === 0) given.push([b, a, 0.99, 3, (i >> 11) + 2]);
    }
    const fill = (parts: PairParts) => {
      for (const [a, b, j, h, page] of given) parts.add(a, b, j, h, page);
      return parts;
    };
    const inMemory = handedOut(fill(new PairParts(given.length)));
    expect(inMemory.parts).toBe(1);
    expect(inMemory.duplicates).toBeGreaterThan(3000);
    expect(inMemory.copies.length).toBeGreaterThan(300);
    await inFolder((folder) => {
      for (const maxPairs of [1000, 7000, given.length]) {
        const parts = new PairParts(given.length, { folder, maxPairs });
        expect(parts.partCount).toBe(Math.min(256, Math.ceil(given.length / maxPairs)));
        expect(handedOut(fill(parts))).toEqual({ ...inMemory, parts: parts.partCount });
        // Each part's file emptied once read (its room back before the cut).
        const files = readdirSync(folder.path).filter((name) => name.startsWith('pairs-part-'));
        expect(files.length).toBe(parts.partCount > 1 ? parts.partCount : 0);
        expect(files.map((name) => statSync(path.join(folder.path, name)).size)).toEqual(files.map(() => 0));
        for (const file of files) rmSync(path.join(folder.path, file));
      }
    });
  });

  it('refuses, naming the sizes and the way out, pairs whose parts would not fit the disk', async () => {
    await inFolder((folder) => {
      expect(() => new PairParts(1e15, { folder, maxPairs: 4_000_000 })).toThrow(/would spill the 1,000,000,000,000,000 pairs .* give limits\.spillDir on a disk with room, or raise limits\.maxCachedMembers if memory allows \(about 45 bytes a pair\); dedup leaves 1 GB of a spill's disk free$/);
      expect(readdirSync(folder.path).filter((name) => name.startsWith('pairs-part-'))).toEqual([]);
    });
  });

  it('a part changed on the disk after it was written is said, never handed out', async () => {
    await inFolder((folder) => {
      const parts = new PairParts(10_000, { folder, maxPairs: 2500 });
      for (let i = 0; i < 10_000; i++) parts.add(i, i + 1, 0.75, 1, 0);
      const out = parts.parts();
      expect(out.next().done).toBe(false);
      const file = path.join(folder.path, 'pairs-part-1.bin');
      const bytes = readFileSync(file);
      bytes.writeInt32LE(bytes.readInt32LE(24) + 1, 24); // another document in the second pair
      writeFileSync(file, bytes);
      expect(() => out.next()).toThrow(/pairs-part-1.bin are not those written/);
    });
  });

  it('checks a pair against the signatures it names', () => {
    const values = Uint32Array.from({ length: 8 }, (_, i) => i);
    const near = values.map((v, i) => (i < 2 ? v + 100 : v));
    const a: StoredSignature = { values, bands: Int32Array.of(1, 2), simhash: { hi: 0, lo: 0b1011 } };
    const b: StoredSignature = { values: near, bands: Int32Array.of(1, 3), simhash: { hi: 0, lo: 0 } };
    const pair = { a: 'a', b: 'b', jaccard: 0.75, hamming: 3 };
    const problem = (p: VerifiedPair, x?: StoredSignature, y?: StoredSignature, bar = 0.5) => {
      const checked = checkPair(p, x, y, bar);
      return 'problem' in checked ? checked.problem : undefined;
    };
    expect(checkPair(pair, a, b, 0.5)).toEqual({ pair });
    expect(problem({ ...pair, jaccard: 0.875 }, a, b)).toMatch(/says similarity 0.875, their signatures give 0.75/);
    expect(problem({ ...pair, hamming: 1 }, a, b)).toMatch(/says SimHash distance 1, their signatures give 3/);
    expect(problem(pair, a, b, 0.8)).toMatch(/below --min-similarity 0.8/);
    expect(problem(pair, a, undefined)).toMatch(/names "b", which has no signature in scope/);
    expect(problem(pair, a, { ...b, bands: Int32Array.of(5, 6) })).toMatch(/share no band key/);
  });

  it('takes the similarity a compact share gave (low 16 bits equal), keeping the whole values', () => {
    // Two values of these differ only above their low 16 bits: a compact spill counts them equal.
    const values = Uint32Array.from({ length: 8 }, (_, i) => i);
    const near = values.map((v, i) => (i < 2 ? v + 100 : i < 4 ? v + 0x10000 : v));
    const a: StoredSignature = { values, bands: Int32Array.of(1, 2), simhash: { hi: 0, lo: 0 } };
    const b: StoredSignature = { values: near, bands: Int32Array.of(1, 3), simhash: { hi: 0, lo: 0 } };
    expect([minhashJaccard(values, near), compactJaccard(values, near)]).toEqual([0.5, 0.75]);
    const compact = { a: 'a', b: 'b', jaccard: 0.75, hamming: 0 };
    expect(checkPair(compact, a, b, 0.5)).toEqual({ pair: { ...compact, jaccard: 0.5 } });
    expect(checkPair(compact, a, b, 0.6)).toEqual({ belowBar: true });
    // Any other similarity is still a problem.
    expect(checkPair({ ...compact, jaccard: 0.625 }, a, b, 0.5)).toEqual({ problem: 'says similarity 0.625, their signatures give 0.5' });
    expect(checkPair({ ...compact, jaccard: 0.5 }, a, b, 0.6)).toEqual({ problem: 'is below --min-similarity 0.6' });
  });
});
