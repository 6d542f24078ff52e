// Dedup compares `;core=` signatures by the rule of sketch/core-similarity.ts wherever two are compared: the
// verifier (small buckets, large ones), the buckets checked on other threads, the cut, and the pairs of a
// share checked again (with the values as a compact spill holds them too). Signatures made by signWithCore:
// pages of one template whose whole texts are above the bar but whose own words differ, and an edited copy.
import os from 'node:os';
import { describe, expect, it } from 'vitest';
import { checkBuckets } from '../../src/jobs/dedup/verify/bucket-check.js';
import { cutFamily } from '../../src/jobs/dedup/cluster/cluster-cut.js';
import { compactComparerOf, comparerOf } from '../../src/jobs/dedup/verify/comparing.js';
import { checkPair } from '../../src/jobs/dedup/split/pages.js';
import { PAIRWISE_BUCKET, PairVerifier, type VerifiedPair } from '../../src/jobs/dedup/verify/pair-verifier.js';
import { DocNumbers } from '../../src/jobs/dedup/documents/doc-numbers.js';
import { SignatureRecords } from '../../src/jobs/dedup/scan/signature-table.js';
import { decodeSignature, type SignatureFields, type StoredSignature, signatureFields, storedFields } from '../../src/jobs/dedup/documents/signature-store.js';
import type { StoredProblem } from '../../src/stored/read.js';
import { createSigner } from '../../src/signature.js';
import { coreFields, coreSignature, templateOf } from '../support/core-signatures.js';
import { coreSimilarity, coreWords, signWithCore, withCore } from '../../src/sketch/core-similarity.js';
import { minhashJaccard, minhashPermutations } from '../../src/sketch/minhash.js';

const NUM_PERM = 128;
const perms = minhashPermutations(NUM_PERM, 1, 'affine32');
const BAR = 0.7;
const CORE = { numPerm: NUM_PERM, core: true };

/** Token hashes named apart (FNV-1a of `prefix:i`). */
function tokens(prefix: string, n: number, from = 0): number[] {
  return Array.from({ length: n }, (_, i) => {
    let h = 2166136261;
    for (const c of `${prefix}:${from + i}`) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
    return h;
  });
}

/** The values and core words of a document of these own and template tokens. */
function signed(own: number[], template: number[]): Uint32Array {
  const hashes = Uint32Array.from([...own, ...template]);
  const { values, extension } = signWithCore(perms, hashes, own.length, hashes.length);
  return withCore(values, extension);
}

const signature = (values: Uint32Array, band: number): StoredSignature => ({ values, bands: Int32Array.of(band), simhash: { hi: 0, lo: 0 } });

// Whole texts at J = 200/250 = 0.8 (above the bar), own words all different; the copy has 2 of 25 changed.
const template = tokens('template', 200);
const page = (n: number) => tokens(`page${n}`, 25);
const pages = [signed(page(0), template), signed(page(1), template), signed([...page(0).slice(0, 23), ...tokens('edit', 2)], template)];
/** A numbering of documents named by their numbers, '0', '1', ... */
function numbered(n: number): { documents: DocNumbers; numbers: number[] } {
  const documents = new DocNumbers();
  return { documents, numbers: Array.from({ length: n }, (_, i) => documents.numberOf(String(i))) };
}

const whole = (x: Uint32Array, y: Uint32Array) => minhashJaccard(x.subarray(0, NUM_PERM), y.subarray(0, NUM_PERM));

describe('dedup reading core signatures', () => {
  const signer = createSigner();
  const text = 'words every page of the template has and then the few words of this page alone';
  const template = templateOf(signer, 'words every page of the template has and then');
  const near_dup = coreFields(signer, text, template);
  const params = near_dup.params as string;
  const { values, extension } = coreSignature(signer, text, template);

  it('reads the core field with the signature, its words after the values; without it the document is damaged', () => {
    expect(storedFields('near_dup', 'date')).toContain('near_dup.core');
    const read = decodeSignature({ near_dup }, 'near_dup', params) as StoredSignature;
    expect(read.values).toEqual(withCore(values, extension));
    const { core: _, ...without } = near_dup;
    expect((decodeSignature({ near_dup: without }, 'near_dup', params) as StoredProblem).reason).toBe('no core');
    expect((signatureFields({ near_dup: { ...near_dup, core: 'AAAA' } }, 'near_dup', params) as StoredProblem).reason).toMatch(/^core is "AAAA", not the 18 bytes/);
  });

  it('the pool and the spills (whole and compact) hold the values and the core words whole', async () => {
    const fields = signatureFields({ near_dup }, 'near_dup', params) as SignatureFields;
    const pool = new SignatureRecords(undefined, { expected: 1 });
    pool.addFields('a', fields);
    expect((await pool.load(Uint32Array.of(0)))(0).values).toEqual(withCore(values, extension));
    for (const valueBits of [32, 16] as const) {
      const spill = new SignatureRecords(undefined, { spillDir: os.tmpdir(), valueBits });
      try {
        spill.addFields('a', fields);
        const read = (await spill.load(Uint32Array.of(0)))(0).values;
        expect(read).toHaveLength(NUM_PERM + coreWords(NUM_PERM));
        expect(read.subarray(NUM_PERM)).toEqual(extension);
        expect(read.subarray(0, NUM_PERM)).toEqual(valueBits === 32 ? values : values.map((v) => v & 0xffff));
      } finally {
        spill.close();
      }
    }
  });
});

describe('dedup under the core rule', () => {
  it('the pages are a pair by their whole values, not by the rule; the copy is one by both', () => {
    expect(whole(pages[0], pages[1])).toBeGreaterThanOrEqual(BAR);
    expect(coreSimilarity(pages[0], pages[1], NUM_PERM)).toBeLessThan(BAR);
    expect(coreSimilarity(pages[0], pages[2], NUM_PERM)).toBeGreaterThanOrEqual(BAR);
  });

  it('the verifier verifies by the rule (the plain one by the share of equal values), the best similarities kept as the rule gives them', () => {
    const { documents, numbers } = numbered(3);
    const found = (verifier: PairVerifier, pairs: VerifiedPair[]) => {
      verifier.verifyMembersOf({ numbers, signatures: pages.map((v, i) => signature(v, i)) });
      return pairs.map((p) => [p.a, p.b, p.jaccard]);
    };
    const plain: VerifiedPair[] = [];
    expect(found(new PairVerifier(BAR, { documents, width: NUM_PERM, onRecorded: (p) => plain.push(p) }), plain).map((p) => p.slice(0, 2))).toContainEqual(['0', '1']);
    const core: VerifiedPair[] = [];
    const verifier = new PairVerifier(BAR, { documents, width: NUM_PERM, core: true, onRecorded: (p) => core.push(p) });
    expect(found(verifier, core)).toEqual([['0', '2', coreSimilarity(pages[0], pages[2], NUM_PERM)]]);
    expect(verifier.comparing).toEqual(CORE);
    expect(verifier.bestMatch('2')).toBe(coreSimilarity(pages[0], pages[2], NUM_PERM));
    expect(() => new PairVerifier(BAR, { core: true })).toThrow(/number of values/);
  });

  it('a large bucket tries a pair whose values differ in most places when the rule may pass it (small cores alike)', () => {
    // Ten own tokens in common, templates apart: whole J about 0.02, the rule gives the cores' Jaccard, 1.
    const own = tokens('shared', 10);
    const a = signed(own, tokens('left', 200)), b = signed(own, tokens('right', 200));
    expect([whole(a, b) < 0.1, coreSimilarity(a, b, NUM_PERM)]).toEqual([true, 1]);
    const others = Array.from({ length: PAIRWISE_BUCKET }, (_, i) => signed(tokens(`other${i}`, 30), tokens(`tpl${i}`, 30)));
    const members = [a, b, ...others];
    const pairs: VerifiedPair[] = [];
    const { documents, numbers } = numbered(members.length);
    const verifier = new PairVerifier(BAR, { documents, width: NUM_PERM, core: true, onRecorded: (p) => pairs.push(p) });
    verifier.verifyMembersOf({ numbers, signatures: members.map((v) => signature(v, 7)) });
    expect(pairs.map((p) => [p.a, p.b, p.jaccard])).toEqual([['0', '1', 1]]);
  });

  it('buckets checked on another thread keep the rule\'s similarities, and the replay verifies as the verifier does', () => {
    const members = pages.map((v, i) => signature(v, i));
    const task = { band: 0, minSimilarity: BAR, order: Uint32Array.of(0, 1, 2), bounds: Uint32Array.of(0, 3), comparing: CORE };
    const checked = checkBuckets(task, (slot) => members[slot], () => undefined);
    expect([...checked.similarities]).toEqual([coreSimilarity(pages[0], pages[2], NUM_PERM)]);
    expect(checked.rejected).toBe(2);
    const plain = checkBuckets({ ...task, comparing: undefined }, (slot) => members[slot], () => undefined);
    expect(plain.similarities).toContain(minhashJaccard(pages[0], pages[1]));
    const pairs: VerifiedPair[] = [];
    const { documents, numbers } = numbered(3);
    new PairVerifier(BAR, { documents, width: NUM_PERM, core: true, onRecorded: (p) => pairs.push(p) }).applyChecked(numbers, checked, 0, checked.pairs.length);
    expect(pairs.map((p) => [p.a, p.b, p.jaccard])).toEqual([['0', '2', coreSimilarity(pages[0], pages[2], NUM_PERM)]]);
  });

  it('the cut puts the pages of one template apart and the copy with its original, at the rule\'s similarity', () => {
    // One family (as verified pairs of plain values would make it): all three share a band key.
    const signatures = new Map(pages.map((v, i) => [`p${i}`, signature(v, 1)]));
    const facts = new Map([...signatures.keys()].map((id) => [id, { tokens: 100, sortKey: id }]));
    const cut = (comparing?: typeof CORE) => cutFamily([...signatures.keys()], signatures, { method: 'centres', rule: 'oldest', minSimilarity: BAR, facts, comparing });
    expect(cut().map((c) => c.members)).toEqual([['p0', 'p1', 'p2']]);
    const clusters = cut(CORE);
    expect(clusters.map((c) => c.members)).toEqual([['p0', 'p2']]);
    expect(clusters[0].similarity.get('p2')).toBe(coreSimilarity(pages[0], pages[2], NUM_PERM));
  });

  it('a share\'s pair is checked by the rule, of the whole values or of the values a compact spill keeps', () => {
    const [a, b] = [signature(pages[0], 1), signature(pages[2], 1)];
    const similarity = coreSimilarity(pages[0], pages[2], NUM_PERM);
    const pair = { a: 'a', b: 'b', jaccard: similarity, hamming: 0 };
    expect(checkPair(pair, a, b, BAR, CORE)).toEqual({ pair });
    // The pages of one template: their whole values' similarity is not the rule's.
    const sibling = signature(pages[1], 1);
    const [byValues, byRule] = [whole(pages[0], pages[1]), coreSimilarity(pages[0], pages[1], NUM_PERM)];
    expect(checkPair({ ...pair, jaccard: byValues }, a, sibling, BAR, CORE)).toEqual({ problem: `says similarity ${byValues}, their signatures give ${byRule}` });
    // A value that differs only above its low 16 bits: equal to a compact spill.
    const near = pages[2].slice();
    const i = near.findIndex((v, k) => k < NUM_PERM && v !== pages[0][k]);
    near[i] = (pages[0][i] & 0xffff) | ((pages[0][i] + 0x10000) & 0xffff0000);
    const compact = compactComparerOf(CORE)(pages[0], near);
    expect(compact).not.toBe(comparerOf(CORE)(pages[0], near));
    expect(checkPair({ ...pair, jaccard: compact }, a, signature(near, 1), BAR, CORE)).toEqual({ pair: { ...pair, jaccard: comparerOf(CORE)(pages[0], near) } });
  });
});
