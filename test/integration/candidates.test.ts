// The two candidate queries near-dup relies on, against real engines, on hand-made documents:
// a `terms` query on LSH band keys, and a `bool`/`should` over SimHash block keys with
// minimum_should_match = m - k, whose candidates, verified by Hamming distance, are exactly the
// fingerprints within k bits.
import { beforeAll, describe, expect, it } from 'vitest';
import { initIndex } from '../../src/indices/init.js';
import { hammingDistance, simhashBlockKeys } from '../../src/sketch/simhash.js';
import { seededRandom } from '../support/seeded-random.js';
import { forEachEngine } from './harness.js';

const toHex = (v: bigint) => v.toString(16).padStart(16, '0');
const flip = (hex: string, bits: number[]) => toHex(bits.reduce((v, bit) => v ^ (1n << BigInt(63 - bit)), BigInt(`0x${hex}`)));

forEachEngine('candidate queries', (ctx) => {
  describe('terms on band keys', () => {
    const index = ctx.index('bands');
    // The band number is part of the key: the same value in another band is another key.
    const docs: Record<string, string[] | undefined> = {
      same: ['0:aaaa', '1:bbbb', '2:cccc'],
      band0: ['0:aaaa', '1:1111', '2:2222'],
      band1: ['0:3333', '1:bbbb', '2:4444'],
      band2: ['0:5555', '1:6666', '2:cccc'],
      swapped: ['0:bbbb', '1:aaaa', '2:dddd'],
      upper: ['0:AAAA', '1:BBBB', '2:CCCC'],
      prefix: ['0:aaa', '1:bbbbb', '2:ccc'],
      none: ['0:9999', '1:8888', '2:7777'],
      unsigned: undefined,
    };

    beforeAll(async () => {
      await initIndex(ctx.client, index, 'near_dup');
      const lines = Object.entries(docs).flatMap(([id, bands]) => [
        { index: { _index: index, _id: id } },
        bands ? { title: `doc ${id}`, near_dup: { bands } } : { title: `doc ${id}` },
      ]);
      expect((await ctx.client.bulk(lines, { refresh: 'true' })).errors).toBe(false);
    });

    async function candidates(bands: string[]): Promise<string[]> {
      const response = await ctx.client.search(index, { size: 100, _source: false, query: { terms: { 'near_dup.bands': bands } } });
      return response.hits.hits.map((h) => h._id).sort();
    }

    it('returns exactly the documents that share a band key', async () => {
      expect(await candidates(['0:aaaa', '1:bbbb', '2:cccc'])).toEqual(['band0', 'band1', 'band2', 'same']);
      expect(await candidates(['1:aaaa'])).toEqual(['swapped']);
      expect(await candidates(['2:dddd', '0:9999'])).toEqual(['none', 'swapped']);
      expect(await candidates(['0:nothing'])).toEqual([]);
    });
  });

  describe('bool/should on SimHash block keys', () => {
    const index = ctx.index('simhash');
    const blocks = 8; // 8 runs of 8 bits
    const random = seededRandom(20240229);
    const randomHex = () => toHex((BigInt(Math.floor(random() * 2 ** 32)) << 32n) | BigInt(Math.floor(random() * 2 ** 32)));
    const base = randomHex();
    const fingerprints: Record<string, string> = {
      identical: base,
      d1: flip(base, [5]),
      d2: flip(base, [3, 40]),
      d3: flip(base, [0, 17, 63]),
      'd3-one-block': flip(base, [8, 9, 10]),
      'd4-spread': flip(base, [1, 12, 30, 50]),
      'd5-spread': flip(base, [2, 14, 22, 33, 60]),
      // Far in bits, but all in one or two blocks: found as candidates, dropped by verification.
      'd6-one-block': flip(base, [16, 17, 18, 19, 20, 21]),
      'd10-two-blocks': flip(base, [24, 25, 26, 27, 28, 56, 57, 58, 59, 60]),
      complement: toHex(~BigInt(`0x${base}`) & 0xffffffffffffffffn),
    };
    for (let i = 0; i < 40; i++) fingerprints[`random-${i}`] = randomHex();

    beforeAll(async () => {
      await initIndex(ctx.client, index, 'near_dup');
      const lines = Object.entries(fingerprints).flatMap(([id, simhash]) => [
        { index: { _index: index, _id: id } },
        { near_dup: { simhash, simhash_blocks: simhashBlockKeys(simhash, blocks) } },
      ]);
      expect((await ctx.client.bulk(lines, { refresh: 'true' })).errors).toBe(false);
    });

    /** The query near-dup sends: any m - k of the query's block keys. */
    async function candidates(simhash: string, k: number): Promise<Map<string, string>> {
      const response = await ctx.client.search<{ near_dup: { simhash: string } }>(index, {
        size: 1000,
        _source: ['near_dup.simhash'],
        query: {
          bool: {
            should: simhashBlockKeys(simhash, blocks).map((key) => ({ term: { 'near_dup.simhash_blocks': key } })),
            minimum_should_match: blocks - k,
          },
        },
      });
      return new Map(response.hits.hits.map((h) => [h._id, h._source!.near_dup.simhash]));
    }

    const sharedBlocks = (a: string, b: string) => {
      const keys = new Set(simhashBlockKeys(a, blocks));
      return simhashBlockKeys(b, blocks).filter((key) => keys.has(key)).length;
    };

    for (const k of [0, 1, 2, 3, 4]) {
      it(`k = ${k}: every fingerprint within ${k} bits is a candidate, and verification keeps exactly those`, async () => {
        const found = await candidates(base, k);
        const within = Object.keys(fingerprints).filter((id) => hammingDistance(base, fingerprints[id]) <= k).sort();
        // Completeness: nothing within k bits is missed.
        for (const id of within) expect(found.has(id), `${id} (${hammingDistance(base, fingerprints[id])} bits) missing`).toBe(true);
        // The engine returns exactly the documents sharing at least m - k blocks.
        const predicted = Object.keys(fingerprints).filter((id) => sharedBlocks(base, fingerprints[id]) >= blocks - k).sort();
        expect([...found.keys()].sort()).toEqual(predicted);
        // Verification on the stored fingerprints leaves exactly the ones within k bits.
        const verified = [...found].filter(([, stored]) => hammingDistance(base, stored) <= k).map(([id]) => id).sort();
        expect(verified).toEqual(within);
      });
    }

    it('verification is needed: bits concentrated in few blocks make far candidates', async () => {
      const found = await candidates(base, 3);
      expect(found.has('d6-one-block')).toBe(true);
      expect(hammingDistance(base, fingerprints['d6-one-block'])).toBe(6);
      expect(found.has('d3-one-block')).toBe(true);
      expect(found.has('d4-spread')).toBe(false);
      expect(found.has('complement')).toBe(false);
    });
  });
});
