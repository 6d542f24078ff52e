// The params keyword has one codec (src/stored/params.ts): every parameter set the signer accepts is written
// by it, read back by it to the same parts, to the shape its stored fields must have, and to the signer
// options that write it again. A property test over the options the signer takes (fast-check), and every
// condenser part with the presets and both key encodings one by one.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PRESET_NAMES } from '../../src/presets.js';
import { createSigner, DEFAULT_CONDENSER, resolveSignerSettings, type SignerOptions, type SignerSettings, signerOptionsFromParams } from '../../src/signature.js';
import { formatParams, isParameterSet, type Params, paramsShape, parseParams, sampleEvery } from '../../src/stored/params.js';
import { checkStored, SIGNATURE_FIELDS } from '../../src/stored/read.js';
import { nearDupFields } from '../../src/stored/write.js';
import { MINHASH_SCHEMES } from '../../src/sketch/minhash.js';
import { TOKEN_HASHES } from '../../src/sketch/token-hash.js';
import { NORMALIZERS } from '../../src/text/normalize.js';
import { TOKENIZER_ALIASES, TOKENIZER_NAMES } from '../../src/text/tokenize.js';

/** The parts a parameter set must read back to: what the settings say. */
function partsOf(settings: SignerSettings): Params {
  const { spec, condenser, seed, scheme, lsh, simhash, simhashBlocks, keyEncoding, containmentSample } = settings;
  return { condenser, numPerm: spec.numPerm, seed, scheme, bands: lsh.b, rows: lsh.r, simhash, blocks: simhashBlocks, keys: keyEncoding, sample: containmentSample };
}

/** Every reading of the codec agrees with the settings that wrote the keyword. */
function expectRoundTrip(options: SignerOptions): void {
  const settings = resolveSignerSettings(options);
  const { params } = settings;
  const parts = parseParams(params);
  expect(parts, params).toEqual(partsOf(settings));
  expect(formatParams(parts!)).toBe(params);
  expect(isParameterSet(params)).toBe(true);
  expect(sampleEvery(params)).toBe(settings.containmentSample);
  expect(paramsShape(params)).toEqual({
    numPerm: settings.spec.numPerm,
    bands: settings.lsh.b,
    rows: settings.lsh.r,
    blocks: settings.simhashBlocks,
    sample: settings.containmentSample,
    keys: settings.keyEncoding,
    simhash: settings.simhash === 'simhash-doc' ? 'base32' : 'hex',
    core: false,
  });
  const back = signerOptionsFromParams(params);
  expect(back, params).toBeDefined();
  expect(back!.preset).toBe(settings.simhash === 'w4' ? undefined : settings.preset);
  const again = resolveSignerSettings(back);
  expect(again.params).toBe(params);
  expect({ ...again, preset: undefined }).toEqual({ ...settings, preset: undefined });
}

const condenserPart = (names: readonly string[]) => fc.oneof(fc.constantFrom(...names), fc.constant(''));

/** Permutations the LSH search has known answers for (lsh.ts KNOWN_OPTIMA): a threshold with others takes seconds. */
const SEARCHED = ['', '64', '128', '256'];

/** Signer options as a user or a program gives them: parts left out, aliases, explicit bands or a threshold. */
const signerOptions: fc.Arbitrary<SignerOptions> = fc
  .record(
    {
      preset: fc.constantFrom(...PRESET_NAMES),
      parts: fc.tuple(condenserPart([...TOKENIZER_NAMES, ...Object.keys(TOKENIZER_ALIASES)]), condenserPart(NORMALIZERS), condenserPart(TOKEN_HASHES)),
      numPerm: fc.oneof(fc.constantFrom(...SEARCHED), fc.integer({ min: 2, max: 4096 }).map(String)),
      seed: fc.integer({ min: 0, max: 0xffffffff }),
      scheme: fc.constantFrom(...MINHASH_SCHEMES),
      threshold: fc.constantFrom(0.5, 0.6, 0.7, 0.8, 0.9),
      simhashBlocks: fc.integer({ min: 2, max: 64 }),
      containmentSample: fc.integer({ min: 0, max: 1024 }),
      keyEncoding: fc.constantFrom(1 as const, 2 as const),
      rows: fc.integer({ min: 1, max: 2 }),
    },
    { requiredKeys: ['parts', 'numPerm'] },
  )
  .map(({ parts, numPerm, rows, threshold, ...options }) => {
    const lsh = rows === undefined && SEARCHED.includes(numPerm) ? { threshold } : { bands: 1, rows: rows ?? 1 };
    return { ...options, condenser: [...parts, numPerm].join(':'), ...lsh };
  });

describe('the params keyword', () => {
  it('reads back to the parts, the shape and the signer options of every parameter set the signer accepts', () => {
    fc.assert(
      fc.property(signerOptions, (options) => {
        expectRoundTrip(options);
      }),
      { numRuns: 300 },
    );
  });

  it('does so for every tokenizer, normalizer, hash and preset, with both key encodings', () => {
    for (const preset of [undefined, ...PRESET_NAMES]) {
      for (const tokenizer of [...TOKENIZER_NAMES, ...Object.keys(TOKENIZER_ALIASES)]) {
        for (const normalizer of NORMALIZERS) {
          for (const hash of TOKEN_HASHES) {
            for (const keyEncoding of [1, 2] as const) expectRoundTrip({ preset, condenser: `${tokenizer}:${normalizer}:${hash}:64`, keyEncoding, bands: 16, rows: 4 });
          }
        }
      }
    }
  });

  it('keeps the keywords of the layouts before it: no k at 1, no sample at 0, the simhash-doc scheme with its colon', () => {
    expect(resolveSignerSettings({ keyEncoding: 1, containmentSample: 0 }).params).toBe(`${DEFAULT_CONDENSER};seed=1;scheme=affine32;b=26;r=4;simhash=w4m8`);
    expect(resolveSignerSettings().params).toBe(`${DEFAULT_CONDENSER};seed=1;scheme=affine32;b=26;r=4;simhash=w4m8;k=2;sample=4`);
    expect(resolveSignerSettings({ preset: 'simhash-doc' }).params).toBe('white-space:simhash-doc-html:sha1:128;seed=1;scheme=affine32;b=26;r=4;simhash=simhash-doc:m8;k=2;sample=4');
  });

  it('tells a parameter set it cannot read from damage, and one it can compare from one it can sign with', () => {
    const own = 'white-space:norm:sha1:128;seed=1;scheme=affine32;b=16;r=8;simhash=w4m8;k=2';
    // Another version's: a parameter set, but neither readable nor signable here.
    for (const other of [own.replace('k=2', 'k=9'), own.replace('w4m8', 'other-scheme:m8'), own.replace(';k=2', ';k=2;extra=1')]) {
      expect([isParameterSet(other), paramsShape(other), signerOptionsFromParams(other)]).toEqual([true, undefined, undefined]);
    }
    // Readable (the stored fields can be compared), but not what this version signs with.
    for (const foreign of [own.replace('w4', 'w5'), own.replace('affine32', 'other'), own.replace('seed=1', 'seed=01'), `${own.replace(';k=2', '')};k=1`]) {
      expect(paramsShape(foreign), foreign).toBeDefined();
      expect(signerOptionsFromParams(foreign), foreign).toBeUndefined();
    }
    for (const damage of ['', 'made by hand', 'ws;seed=1;scheme=affine32;b=16;r=8;simhash=w4m8', 'garbage;sample=4']) {
      expect(isParameterSet(damage)).toBe(false);
      expect(parseParams(damage)).toBeUndefined();
      expect(sampleEvery(damage)).toBe(0);
    }
  });

  it('gives the shape a signature of its parameter set is checked against', () => {
    fc.assert(
      fc.property(signerOptions, fc.string({ maxLength: 80 }), (options, text) => {
        const sign = createSigner({ ...options, threshold: undefined, bands: undefined, rows: undefined, condenser: ':::32' });
        const fields = nearDupFields(sign(`${text} some words of text to sign`), sign.settings) as unknown as Record<string, unknown>;
        expect(checkStored(fields, SIGNATURE_FIELDS, sign.settings.params)).toBeUndefined();
      }),
      { numRuns: 40 },
    );
  });
});
