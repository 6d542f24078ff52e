// The options that decide how a signature is made, shared by every command that makes or compares one.
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { PRESET_NAMES } from '../presets.js';
import { DEFAULT_CONDENSER, DEFAULT_SCHEME, DEFAULT_SEED, resolveSignerSettings, type SignerOptions } from '../signature.js';
import { DEFAULT_CONTAINMENT_SAMPLE } from '../sketch/containment.js';
import { DEFAULT_FALSE_NEGATIVE_WEIGHT, DEFAULT_KEY_ENCODING, DEFAULT_THRESHOLD } from '../sketch/lsh.js';
import { MINHASH_SCHEMES } from '../sketch/minhash.js';
import { DEFAULT_SIMHASH_BLOCKS } from '../sketch/simhash.js';
import { advanced } from './help.js';

// No yargs defaults here: an option left out stays undefined, so a command can tell the options a user gave
// (similar refuses those that do not match the index) from the defaults, which resolveSignerSettings fills in.

/** The signature options of `sign`, `annotate`, `ingest`, `similar` and the proxy, in one group of the help. */
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

/** The SignerOptions the command line gives, in the order of --help; each one's option is its name in kebab case. */
const SIGNER_KEYS = [
  'preset', 'condenser', 'seed', 'scheme', 'threshold', 'falseNegativeWeight', 'bands', 'rows', 'simhashBlocks', 'containmentSample', 'keyEncoding',
] as const satisfies ReadonlyArray<keyof SignerOptions>;

/** Those options as yargs gives them: the scheme and the key encoding not yet checked. */
export type SignerArgs = Omit<Pick<SignerOptions, (typeof SIGNER_KEYS)[number]>, 'scheme' | 'keyEncoding'> & { scheme?: string; keyEncoding?: number };

/** The signature options given on the command line (as options), none when the defaults are to be used. */
export function givenSignerOptions(argv: SignerArgs): string[] {
  return SIGNER_KEYS.filter((key) => argv[key] !== undefined).map((key) => `--${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`);
}

/** The signer options of the command line, checked: a wrong spec or value is a usage error. */
export function signerOptionsFrom(argv: SignerArgs): SignerOptions {
  // Only the options given: the others are resolveSignerSettings' defaults (or a preset's).
  const options = Object.fromEntries(SIGNER_KEYS.filter((key) => argv[key] !== undefined).map((key) => [key, argv[key]])) as SignerOptions;
  try {
    resolveSignerSettings(options);
  } catch (err) {
    throw err instanceof UsageError ? err : new UsageError((err as Error).message);
  }
  return options;
}
