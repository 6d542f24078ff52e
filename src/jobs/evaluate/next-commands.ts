// The commands that apply an evaluation's recommendation, cheap one first: dedup's own knob
// (--min-similarity) on the signatures as they are; then, when the recommended bands differ from the
// index's, annotate with the threshold and weight that give them, which signs every document again.
// The re-signing command keeps every other setting of the signatures (condenser, seed, ...), so that it
// changes the bands and nothing else.
import { DEFAULT_MAX_CHARS, DEFAULT_PREFIX } from '../../annotation.js';
import { DEFAULT_CONTAINMENT_SAMPLE } from '../../sketch/containment.js';
import { DEFAULT_KEY_ENCODING } from '../../sketch/lsh.js';
import { DEFAULT_SIMHASH_BLOCKS } from '../../sketch/simhash.js';
import { DEFAULT_CONDENSER, DEFAULT_SCHEME, DEFAULT_SEED, signerOptionsFromParams } from '../../signature.js';
import { commandLine } from '../command-line.js';
import type { Recommendation } from './quality.js';

export interface NextCommands {
  /** Clusters again at the recommended threshold, from the stored signatures: minutes, nothing signed. */
  dedup: string;
  /** Signs every document again with bands tuned to the threshold; absent when the index has those bands. */
  annotate?: string;
  /** What the annotate command cannot say itself (the template tokens the index was signed without). */
  note?: string;
}

export interface EvaluatedIndex {
  index: string;
  fields: string[];
  prefix: string;
  maxChars: number;
  /** The params keyword of the signatures evaluated. */
  params: string;
}

export function nextCommands(evaluated: EvaluatedIndex, r: Recommendation): NextCommands {
  const prefix = evaluated.prefix === DEFAULT_PREFIX ? [] : ['--prefix', evaluated.prefix];
  const dedup = commandLine(['near-dup', 'dedup', '--index', evaluated.index, '--min-similarity', String(r.threshold), ...prefix]);
  const options = signerOptionsFromParams(evaluated.params);
  if (options?.bands === r.bands && options.rows === r.rows) return { dedup };
  const annotate = commandLine([
    'near-dup', 'annotate', '--index', evaluated.index, ...evaluated.fields.flatMap((f) => ['--field', f]), ...prefix,
    ...(evaluated.maxChars === DEFAULT_MAX_CHARS ? [] : ['--max-chars', String(evaluated.maxChars)]),
    ...keptSignerFlags(evaluated.params),
    '--threshold', String(r.threshold), '--false-negative-weight', String(r.falseNegativeWeight),
  ]);
  // A set of template tokens is drawn by annotate --template-share: the command must be given it again.
  const key = options?.templateMode === 'narrow' ? 'tpl' : 'core';
  const note = options?.templateDigest ? `the index was signed with the template tokens ${options.templateDigest} (params ${key}=${options.templateDigest}): give annotate the same --template-share (and --template-sample) again` : undefined;
  return { dedup, annotate, ...(note ? { note } : {}) };
}

/** The signing flags that give the index's settings other than its bands (those that differ from the defaults). */
export function keptSignerFlags(params: string): string[] {
  const o = signerOptionsFromParams(params);
  if (!o) return [];
  const flag = (name: string, value: unknown, byDefault: unknown) => (value === undefined || value === byDefault ? [] : [name, String(value)]);
  return [
    ...flag('--preset', o.preset, undefined),
    ...flag('--condenser', o.condenser, o.preset === undefined ? DEFAULT_CONDENSER : undefined),
    ...flag('--seed', o.seed, DEFAULT_SEED),
    ...flag('--scheme', o.scheme, DEFAULT_SCHEME),
    ...flag('--simhash-blocks', o.simhashBlocks, DEFAULT_SIMHASH_BLOCKS),
    ...flag('--containment-sample', o.containmentSample, DEFAULT_CONTAINMENT_SAMPLE),
    ...flag('--key-encoding', o.keyEncoding, DEFAULT_KEY_ENCODING),
  ];
}
