// The options that decide how a signature is made, shared by every command that makes or compares one.
import type { Argv } from 'yargs';
import { UsageError } from '../errors.js';
import { PRESET_NAMES } from '../presets.js';
import { DEFAULT_CONDENSER, DEFAULT_SCHEME, DEFAULT_SEED, resolveSignerSettings, type SignerOptions } from '../signature.js';
import { DEFAULT_CONTAINMENT_SAMPLE } from '../sketch/containment.js';
import { DEFAULT_FALSE_NEGATIVE_WEIGHT, DEFAULT_KEY_ENCODING, DEFAULT_THRESHOLD, type KeyEncoding } from '../sketch/lsh.js';
import { MINHASH_SCHEMES, type MinhashScheme } from '../sketch/minhash.js';
import { DEFAULT_SIMHASH_BLOCKS } from '../sketch/simhash.js';

export function withSignerOptions<T>(yargs: Argv<T>) {
  return yargs
    .option('preset', {
      type: 'string',
      choices: PRESET_NAMES as string[],
      describe: 'a named signing scheme: simhash-doc (the interoperability draft\'s: its tokens, a SimHash of them in base32); gives the condenser parts not given',
      group: 'Signature:',
    })
    .option('condenser', {
      type: 'string',
      // No default here: with --preset, the parts not given are the preset's.
      describe: `tokenizer:normalizer:hash:permutations; an empty part takes the default (e.g. "3-grams:norm::256") [default: "${DEFAULT_CONDENSER}", or the preset's]`,
      group: 'Signature:',
    })
    .option('seed', { type: 'number', default: DEFAULT_SEED, describe: 'MinHash seed (as datasketch)', group: 'Signature:' })
    .option('scheme', {
      type: 'string',
      choices: MINHASH_SCHEMES as string[],
      default: DEFAULT_SCHEME,
      describe: 'MinHash permutation scheme: affine32 (datasketch >= 2.0) or legacy (datasketch < 2.0)',
      group: 'Signature:',
    })
    .option('threshold', {
      type: 'number',
      default: DEFAULT_THRESHOLD,
      describe: 'Jaccard threshold the LSH bands are tuned for',
      group: 'Signature:',
    })
    .option('false-negative-weight', {
      type: 'number',
      default: DEFAULT_FALSE_NEGATIVE_WEIGHT,
      describe: 'weight of missed pairs against false candidates when choosing bands and rows',
      group: 'Signature:',
    })
    .option('bands', { type: 'number', describe: 'explicit number of LSH bands (with --rows)', group: 'Signature:' })
    .option('rows', { type: 'number', describe: 'explicit rows per band (with --bands)', group: 'Signature:' })
    .option('simhash-blocks', {
      type: 'number',
      default: DEFAULT_SIMHASH_BLOCKS,
      describe: 'SimHash blocks m: finds fingerprints up to m - 1 bits apart',
      group: 'Signature:',
    })
    .option('containment-sample', {
      type: 'number',
      default: DEFAULT_CONTAINMENT_SAMPLE,
      describe: 'keep 1 distinct token in N for containment lookups (similar --measure containment); 1 keeps all (exact), 0 none',
      group: 'Signature:',
    })
    .option('key-encoding', {
      type: 'number',
      default: DEFAULT_KEY_ENCODING,
      choices: [1, 2],
      describe: 'band keys and sample terms: 2 compact (base64url), 1 as near-dup wrote them before 2026-11-25 (hex), to match an index of that layout',
      group: 'Signature:',
    });
}

export interface SignerArgs {
  preset?: string;
  condenser?: string;
  seed: number;
  scheme: string;
  threshold: number;
  falseNegativeWeight: number;
  bands?: number;
  rows?: number;
  simhashBlocks: number;
  containmentSample: number;
  keyEncoding: number;
}

/** The signer options of the command line, checked: a wrong spec or value is a usage error. */
export function signerOptionsFrom(argv: SignerArgs): SignerOptions {
  const options: SignerOptions = {
    ...(argv.preset === undefined ? {} : { preset: argv.preset }),
    condenser: argv.condenser,
    seed: argv.seed,
    scheme: argv.scheme as MinhashScheme,
    threshold: argv.threshold,
    falseNegativeWeight: argv.falseNegativeWeight,
    bands: argv.bands,
    rows: argv.rows,
    simhashBlocks: argv.simhashBlocks,
    containmentSample: argv.containmentSample,
    keyEncoding: argv.keyEncoding as KeyEncoding,
  };
  try {
    resolveSignerSettings(options);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return options;
}

/** Bulk writing options shared by the commands that write (annotate, ingest). */
export function withBulkOptions<T>(yargs: Argv<T>) {
  return yargs
    .option('bulk-size', { type: 'number', default: 1000, describe: 'operations per bulk request', group: 'Writing:' })
    .option('bulk-bytes', { type: 'number', default: 5 * 1024 * 1024, describe: 'bytes per bulk request', group: 'Writing:' })
    .option('concurrency', {
      type: 'number',
      describe: 'bulk requests in flight, fixed (default: chosen from the data nodes, their write threads and the index\'s primary shards, lowered when the engine answers 429 or slows down)',
      group: 'Writing:',
    });
}

export interface BulkArgs {
  bulkSize: number;
  bulkBytes: number;
  concurrency?: number;
}

/** The bulk options as the jobs take them (the jobs check them). */
export function bulkOptionsFrom(argv: BulkArgs): { maxOperations: number; maxBytes: number; concurrency?: number } {
  return { maxOperations: argv.bulkSize, maxBytes: argv.bulkBytes, concurrency: argv.concurrency };
}
