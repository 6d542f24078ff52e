// Named presets: a set of signing choices that other tools know by name. A preset gives the condenser
// spec's parts that are not given, and decides how the SimHash is made and written; the MinHash options
// (seed, scheme, bands and rows, containment sample) stay the user's.
//
// simhash-doc: the scheme proposed for documents by the draft "Interoperability of Similarity Hashing
// Schemes" (github.com/bnewbold/lsh-interop): tokens by its rules (text/simhash-doc.ts), a 64-bit SimHash
// of them, written in base32. Its params say `simhash=simhash-doc:mM` where near-dup's own say `simhash=w4mM`.
import { Registry } from './text/registry.js';

/** How a SimHash is made: near-dup's own (word 4-shingles, hex), or the simhash-doc scheme's. */
export type SimhashScheme = 'w4' | 'simhash-doc';
/** near-dup's own SimHash scheme, the one a signer without a preset makes. */
export const OWN_SIMHASH: SimhashScheme = 'w4';

/** One preset. */
export interface Preset {
  /** The name --preset takes. */
  name: string;
  aliases?: readonly string[];
  /** The condenser spec whose parts fill those a user leaves empty. */
  condenser: string;
  /** The SimHash it makes; the params keyword names it (and so the preset). */
  simhash: SimhashScheme;
}

/** The presets, by name. */
export const PRESET_REGISTRY = new Registry<Preset>('presets', [{ name: 'simhash-doc', condenser: 'white-space:simhash-doc-html:sha1:128', simhash: 'simhash-doc' }]);
/** The presets by name, aliases left out. */
export const PRESETS: Readonly<Record<string, Preset>> = Object.fromEntries(PRESET_REGISTRY.entries().map((entry) => [entry.name, entry]));
/** The names `--preset` takes, for help and messages. */
export const PRESET_NAMES: readonly string[] = PRESET_REGISTRY.names;

/** A preset name that is not one, with the names there are. */
export class PresetError extends Error {
  override name = 'PresetError';
}

/** The preset of that name (or alias); a PresetError naming the presets there are when none. */
export function preset(name: string): Preset {
  const found = PRESET_REGISTRY.get(name);
  if (!found) throw new PresetError(`unknown preset "${name}"; ${PRESET_REGISTRY.valid()}`);
  return found;
}

/** The preset that makes a SimHash scheme other than near-dup's own, if there is one. */
export function presetOfSimhash(scheme: string): Preset | undefined {
  return PRESET_REGISTRY.entries().find((entry) => entry.simhash === scheme);
}
/**
 * The condenser spec of a preset with a user's spec over it: each part the user gives wins, each empty or
 * missing part is the preset's ("::mmh3" with simhash-doc: "white-space:simhash-doc-html:mmh3:128").
 */
export function presetCondenser(name: string, condenser = ''): string {
  const base = preset(name).condenser.split(':');
  const given = condenser.trim() === '' ? [] : condenser.split(':');
  if (given.length > base.length) return condenser; // too many parts: the spec's parser says what is wrong
  return base.map((part, i) => (given[i] ?? '').trim() || part).join(':');
}
