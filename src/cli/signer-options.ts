// The options that decide how a signature is made, shared by every command that makes or compares one.
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { PRESET_NAMES } from '../presets.js';
import { DEFAULT_CONDENSER, DEFAULT_SCHEME, DEFAULT_SEED, resolveSignerSettings, type SignerOptions } from '../signature.js';
import { DEFAULT_CONTAINMENT_SAMPLE } from '../sketch/containment.js';
import { DEFAULT_FALSE_NEGATIVE_WEIGHT, DEFAULT_KEY_ENCODING, DEFAULT_THRESHOLD, type KeyEncoding } from '../sketch/lsh.js';
import { MINHASH_SCHEMES, type MinhashScheme } from '../sketch/minhash.js';
import { DEFAULT_SIMHASH_BLOCKS } from '../sketch/simhash.js';
import { advanced } from './help.js';

// No yargs defaults here: an option left out stays undefined, so a command can tell the options a user gave
// (similar refuses those that do not match the index) from the defaults, which resolveSignerSettings fills in.

export function withSignerOptions<T>(yargs: Argv<T>) {
  const group = 'Signature:';
  return yargs
    .option('preset', {
      type: 'string',
      choices: PRESET_NAMES as string[],
      describe: 'a named signing scheme (simhash-doc: the interoperability draft\'s tokens and base32 SimHash)',
      group,
    })
    .option('condenser', {
      type: 'string',
      describe: `tokenizer:normalizer:hash:permutations, e.g. "3-grams:norm::256" [default: "${DEFAULT_CONDENSER}"]`,
      group,
    })
    .option('threshold', { type: 'number', describe: `Jaccard threshold the LSH bands are tuned for [default: ${DEFAULT_THRESHOLD}]`, group })
    .option('seed', advanced({ type: 'number', describe: `MinHash seed, as datasketch's [default: ${DEFAULT_SEED}]`, group }))
    .option(
      'scheme',
      advanced({
        type: 'string',
        choices: MINHASH_SCHEMES as string[],
        describe: `MinHash permutations: affine32 (datasketch >= 2.0) or legacy (< 2.0) [default: ${DEFAULT_SCHEME}]`,
        group,
      }),
    )
    .option(
      'false-negative-weight',
      advanced({ type: 'number', describe: `weight of missed pairs against false candidates, for bands and rows [default: ${DEFAULT_FALSE_NEGATIVE_WEIGHT}]`, group }),
    )
    .option('bands', advanced({ type: 'number', describe: 'explicit number of LSH bands (with --rows)', group }))
    .option('rows', advanced({ type: 'number', describe: 'explicit rows per band (with --bands)', group }))
    .option('simhash-blocks', advanced({ type: 'number', describe: `SimHash blocks m: finds fingerprints up to m - 1 bits apart [default: ${DEFAULT_SIMHASH_BLOCKS}]`, group }))
    .option(
      'containment-sample',
      advanced({ type: 'number', describe: `keep 1 distinct token in N for containment lookups; 1 all, 0 none [default: ${DEFAULT_CONTAINMENT_SAMPLE}]`, group }),
    )
    .option(
      'key-encoding',
      advanced({
        type: 'number',
        choices: [1, 2],
        describe: `band keys and sample terms: 2 compact (base64url), 1 hex as before 2026-11-25 [default: ${DEFAULT_KEY_ENCODING}]`,
        group,
      }),
    );
}

export interface SignerArgs {
  preset?: string;
  condenser?: string;
  seed?: number;
  scheme?: string;
  threshold?: number;
  falseNegativeWeight?: number;
  bands?: number;
  rows?: number;
  simhashBlocks?: number;
  containmentSample?: number;
  keyEncoding?: number;
}

/** The signature options given on the command line (as options), none when the defaults are to be used. */
export function givenSignerOptions(argv: SignerArgs): string[] {
  const names: Array<[keyof SignerArgs, string]> = [
    ['preset', '--preset'], ['condenser', '--condenser'], ['seed', '--seed'], ['scheme', '--scheme'], ['threshold', '--threshold'],
    ['falseNegativeWeight', '--false-negative-weight'], ['bands', '--bands'], ['rows', '--rows'], ['simhashBlocks', '--simhash-blocks'],
    ['containmentSample', '--containment-sample'], ['keyEncoding', '--key-encoding'],
  ];
  return names.filter(([key]) => argv[key] !== undefined).map(([, option]) => option);
}

/** The signer options of the command line, checked: a wrong spec or value is a usage error. */
export function signerOptionsFrom(argv: SignerArgs): SignerOptions {
  const given: SignerOptions = {
    preset: argv.preset,
    condenser: argv.condenser,
    seed: argv.seed,
    scheme: argv.scheme as MinhashScheme | undefined,
    threshold: argv.threshold,
    falseNegativeWeight: argv.falseNegativeWeight,
    bands: argv.bands,
    rows: argv.rows,
    simhashBlocks: argv.simhashBlocks,
    containmentSample: argv.containmentSample,
    keyEncoding: argv.keyEncoding as KeyEncoding | undefined,
  };
  // Only the options given: the others are resolveSignerSettings' defaults (or a preset's).
  const options = Object.fromEntries(Object.entries(given).filter(([, value]) => value !== undefined)) as SignerOptions;
  try {
    resolveSignerSettings(options);
  } catch (err) {
    throw err instanceof UsageError ? err : new UsageError((err as Error).message);
  }
  return options;
}
