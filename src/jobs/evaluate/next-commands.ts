// The commands that apply an evaluation's recommendation, cheap one first: dedup's own knob
// (--min-similarity) on the signatures as they are; then, when the recommended bands differ from the
// index's, annotate with the threshold and weight that give them, which signs every document again.
// The re-signing command keeps every other setting of the signatures (condenser, seed, the template tokens'
// draw), so that it changes the bands and nothing else; the dedup command keeps the last run's --canonical,
// --date-field and --clusters (from its state file), so that it moves no canonical. What a command cannot
// keep, because this machine does not know it, the note says.
import { DEFAULT_MAX_CHARS, DEFAULT_PREFIX } from '../../annotation.js';
import { DEFAULT_CONTAINMENT_SAMPLE } from '../../sketch/containment.js';
import { DEFAULT_KEY_ENCODING } from '../../sketch/lsh.js';
import { DEFAULT_SIMHASH_BLOCKS } from '../../sketch/simhash.js';
import { DEFAULT_TEMPLATE_SAMPLE, type KeptDraw } from '../../indices/template-store.js';
import { storedPath } from '../../stored/layout.js';
import { DEFAULT_CONDENSER, DEFAULT_SCHEME, DEFAULT_SEED, signerOptionsFromParams } from '../../signature.js';
import { commandLine, flagWords as flag } from '../command-line.js';
import type { ClusterMethod } from '../dedup/cluster/cluster-cut.js';
import type { Recommendation } from './quality.js';

/** The commands that apply a recommendation, cheap one first, as a user types them. */
export interface NextCommands {
  /** Clusters again at the recommended threshold, from the stored signatures: minutes, nothing signed. */
  dedup: string;
  /** Signs every document again with bands tuned to the threshold; absent when the index has those bands. */
  annotate?: string;
  /** What the commands cannot say themselves (settings this machine does not know), and what to add. */
  note?: string;
}

/** What was evaluated and how its signatures were made, so that the commands change the bands and nothing else. */
export interface EvaluatedIndex {
  index: string;
  fields: string[];
  prefix: string;
  maxChars: number;
  /** The params keyword of the signatures evaluated. */
  params: string;
  /** How the last dedup of the index cut its clusters (its state file's `order` and `clusters`), when this machine has it. */
  lastDedup?: { order?: string; clusters?: ClusterMethod };
  /** How the template tokens the index was signed with were drawn, when the template store says. */
  templateDraw?: KeptDraw;
}

/** The commands that apply a recommendation to the index it was made for (the file header says what they keep). */
export function nextCommands(evaluated: EvaluatedIndex, r: Recommendation): NextCommands {
  const prefix = evaluated.prefix === DEFAULT_PREFIX ? [] : flag('--prefix', evaluated.prefix);
  const cut = cutFlags(evaluated.lastDedup, evaluated.prefix);
  const dedup = commandLine(['near-dup', 'dedup', '--index', evaluated.index, '--min-similarity', String(r.threshold), ...prefix, ...(cut ?? [])]);
  const notes = cut ? [] : ['give dedup the --canonical (and --date-field, --clusters) of the run evaluated: this machine has no state of that run to read them from'];
  const options = signerOptionsFromParams(evaluated.params);
  if (options?.bands === r.bands && options.rows === r.rows) return withNotes({ dedup }, notes);
  const template = templateFlags(options, evaluated.templateDraw, notes);
  const annotate = commandLine([
    'near-dup', 'annotate', '--index', evaluated.index, ...evaluated.fields.flatMap((f) => flag('--field', f)), ...prefix,
    ...(evaluated.maxChars === DEFAULT_MAX_CHARS ? [] : ['--max-chars', String(evaluated.maxChars)]),
    ...keptSignerFlags(evaluated.params), ...template,
    '--threshold', String(r.threshold), '--false-negative-weight', String(r.falseNegativeWeight),
  ]);
  return withNotes({ dedup, annotate }, notes);
}

function withNotes(commands: NextCommands, notes: string[]): NextCommands {
  return notes.length === 0 ? commands : { ...commands, note: notes.join('; ') };
}

/**
 * The flags that cut clusters as the last dedup did, from its state's `order` (`{"canonical", "sortField"}`,
 * as dedup writes it) and `clusters`; undefined when there is no such state or it is not readable (a state
 * file is the user's to edit, so nothing in it is taken on trust).
 */
function cutFlags(last: EvaluatedIndex['lastDedup'], prefix: string): string[] | undefined {
  let order: { canonical?: unknown; sortField?: unknown };
  try {
    order = JSON.parse(last?.order ?? 'null') ?? undefined;
  } catch {
    return undefined;
  }
  const canonical = order?.canonical;
  const byField = typeof canonical === 'object' && canonical !== null ? (canonical as { field?: unknown; order?: unknown }) : undefined;
  const rule =
    canonical === 'oldest' || canonical === 'newest' || canonical === 'longest' ? canonical
    : typeof byField?.field === 'string' && byField.field !== '' && (byField.order === 'asc' || byField.order === 'desc') ? `${byField.order === 'desc' ? '-' : ''}${byField.field}`
    : undefined;
  if (rule === undefined) return undefined;
  const dated = (rule === 'oldest' || rule === 'newest') && typeof order.sortField === 'string' && order.sortField !== storedPath(prefix, 'annotated_at');
  return [...flag('--canonical', rule), ...(dated ? flag('--date-field', order.sortField as string) : []), ...(last?.clusters === 'components' ? ['--clusters', 'components'] : [])];
}

/** The template flags that sign with the index's set again (its draw), or a note of what to give annotate. */
function templateFlags(options: ReturnType<typeof signerOptionsFromParams>, draw: KeptDraw | undefined, notes: string[]): string[] {
  const digest = options?.templateDigest;
  if (!digest) return [];
  const key = options?.templateMode === 'narrow' ? 'tpl' : 'core';
  if (key === 'tpl') notes.push(`the index was signed leaving the template tokens ${digest} out (params tpl=${digest}, an earlier way); annotate signs with them marked (core=), compared by the core rule`);
  if (!draw) {
    notes.push(`the index was signed with the template tokens ${digest} (params ${key}=${digest}), and the template store does not say how they were drawn: give annotate the same --template-share (and --template-sample) again`);
    return [];
  }
  if (draw.sampleAsked === undefined) notes.push(`the template store does not say how many documents the template tokens ${digest} were drawn from: give annotate the --template-sample they were drawn with, if not the default`);
  const sample = draw.sampleAsked !== undefined && draw.sampleAsked !== DEFAULT_TEMPLATE_SAMPLE ? ['--template-sample', String(draw.sampleAsked)] : [];
  return ['--template-share', String(draw.share), ...sample];
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
