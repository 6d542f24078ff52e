// The command line's signature options: which were given, and the SignerOptions they make.
import { describe, expect, it } from 'vitest';
import { givenSignerOptions, type SignerArgs, signerOptionsFrom } from '../../src/cli/signer-options.js';
import { UsageError } from '../../src/errors.js';

const EVERY: Required<SignerArgs> = {
  preset: 'simhash-doc',
  condenser: 'white-space:norm::64',
  seed: 3,
  scheme: 'legacy',
  threshold: 0.6,
  falseNegativeWeight: 0.4,
  bands: 16,
  rows: 4,
  simhashBlocks: 4,
  containmentSample: 2,
  keyEncoding: 1,
};

describe('the signature options of the command line', () => {
  it('names the options given, in the order of --help', () => {
    expect(givenSignerOptions({})).toEqual([]);
    expect(givenSignerOptions({ seed: 0, rows: 4 })).toEqual(['--seed', '--rows']);
    expect(givenSignerOptions(EVERY)).toEqual([
      '--preset', '--condenser', '--seed', '--scheme', '--threshold', '--false-negative-weight', '--bands', '--rows', '--simhash-blocks',
      '--containment-sample', '--key-encoding',
    ]);
  });

  it('makes SignerOptions of the signature options alone (yargs keys and others left out), the ones not given absent', () => {
    const argv = { _: [], $0: 'near-dup', index: 'docs', 'simhash-blocks': 5, condenser: '3-grams:norm::128', seed: 5, simhashBlocks: 5, rows: undefined };
    expect(signerOptionsFrom(argv)).toStrictEqual({ condenser: '3-grams:norm::128', seed: 5, simhashBlocks: 5 });
  });

  it('refuses a wrong value as a usage error', () => {
    expect(() => signerOptionsFrom({ scheme: 'bogus' })).toThrow(UsageError);
    expect(() => signerOptionsFrom({ keyEncoding: 3 })).toThrow(/key/i);
  });
});
