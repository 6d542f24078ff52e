// Hand-made signed documents for the dedup tests: MinHash values chosen by the test (so that which pairs
// verify is known), band keys of the test's choosing, written straight into an index made by near-dup.
import { expect } from 'vitest';
import type { EngineClient } from '../../src/engine/client.js';
import { initIndex } from '../../src/indices/init.js';
import { serializeLeanMinhash } from '../../src/sketch/lean-minhash.js';

/** The params of signatures of 128 values in 26 bands, as the hand-made ones are (every stored signature is checked against its params). */
export const HAND_MADE_PARAMS = 'white-space:norm-html:sha1:128;seed=1;scheme=affine32;b=26;r=4;simhash=w4m8;sample=4';

export interface HandMade {
  id: string;
  values: Uint32Array;
  /** The key of band 0, shared with others; the other bands' keys are the document's own. */
  shared: string;
  /** Every band's key instead. */
  bands?: string[];
}

/** The documents indexed in the order given (annotated a second apart; with `dated`, a `date` field the same). */
export async function indexSignatures(client: EngineClient, index: string, docs: readonly HandMade[], { dated = false }: { dated?: boolean } = {}): Promise<void> {
  await initIndex(client, index, 'near_dup');
  const lines = docs.flatMap(({ id, values, shared, bands }, n) => {
    const at = new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString();
    return [
      { index: { _index: index, _id: id } },
      {
        title: id,
        ...(dated ? { date: at } : {}),
        near_dup: {
          bands: bands ?? [shared, ...Array.from({ length: 25 }, (_, b) => `${b + 1}_${id}`)],
          minhash: Buffer.from(serializeLeanMinhash({ seed: 1, scheme: 'affine32', values })).toString('base64'),
          simhash: '0000000000000000',
          params: HAND_MADE_PARAMS,
          content_hash: id,
          token_count: 100,
          annotated_at: at,
        },
      },
    ];
  });
  for (let i = 0; i < lines.length; i += 400) expect((await client.bulk(lines.slice(i, i + 400), { refresh: 'true' })).errors).toBe(false);
}

/** Documents that all hold one band key (`0_boilerplate`), more than one bucket verifies at once. */
export function largeKeyCorpus() {
  // 60 near-copies of one text (each differs from the original in about 13 of 128 values, from each other
  // in at most 26) and 20 unrelated documents, all holding one key, as boilerplate would give.
  const base = Uint32Array.from({ length: 128 }, (_, p) => 7_000_000 + p);
  const copies = Array.from({ length: 60 }, (_, i) => ({
    id: `copy-${String(i).padStart(2, '0')}`,
    values: base.map((v, p) => ((p * 7 + i) % 10 === 0 ? 8_000_000 + i * 1000 + p : v)),
  }));
  const unrelated = Array.from({ length: 20 }, (_, i) => ({ id: `other-${i}`, values: Uint32Array.from({ length: 128 }, (_, p) => 9_000_000 + i * 1000 + p) }));
  // And a pair of near-duplicates that holds the same key (first and last, so in different chunks) and
  // shares one more key of a later band: there they must be verified, though the large key came first.
  const pairValues = Uint32Array.from({ length: 128 }, (_, p) => 5_000_000 + p);
  const pair = ['pair-a', 'pair-b'].map((id, i) => ({
    id,
    values: pairValues.map((v, p) => (p % 10 === i ? v + 1 : v)),
    bands: ['0_boilerplate', `1_${id}`, `2_${id}`, '3_pair', ...Array.from({ length: 22 }, (_, b) => `${b + 4}_${id}`)],
  }));
  // A second, smaller family early on, so that small chunks carry the two families' representatives and
  // not the first of the pair.
  const family = Array.from({ length: 10 }, (_, i) => ({ id: `family-${i}`, values: base.map((v, p) => (p % 10 === i ? v : v + 100_000 + (p % 10 === (i + 1) % 10 ? i : 0))) }));
  // Interleaved, so the copies are spread over every chunk.
  const ordered = [pair[0], ...family, ...copies.flatMap((c, i) => (i % 3 === 0 && unrelated[i / 3] ? [c, unrelated[i / 3]] : [c])), pair[1]];
  const docs: HandMade[] = ordered.map((d) => ({ ...d, shared: '0_boilerplate' }));
  // The bar it is made for: the family's members are about 0.6 alike, the copies 0.8 or more.
  return { copies, family, docs, bar: 0.5 };
}
