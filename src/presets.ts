// Named presets: a set of signing choices that other tools know by name. A preset gives the condenser
// spec's parts that are not given, and decides how the SimHash is made and written; the MinHash options
// (seed, scheme, bands and rows, containment sample) stay the user's.
//
// simhash-doc: the scheme proposed for documents by the draft "Interoperability of Similarity Hashing
// Schemes" (github.com/bnewbold/lsh-interop): tokens by its rules (text/simhash-doc.ts), a 64-bit SimHash
// of them, written in base32. Its params say `simhash=simhash-doc:mM` where near-dup's own say `simhash=w4mM`.

/** How a SimHash is made: near-dup's own (word 4-shingles, hex), or the simhash-doc scheme's. */
export type SimhashScheme = 'w4' | 'simhash-doc';

export interface Preset {
  /** The condenser spec whose parts fill those a user leaves empty. */
  condenser: string;
  simhash: SimhashScheme;
}

export const PRESETS: Readonly<Record<string, Preset>> = {
  'simhash-doc': { condenser: 'white-space:simhash-doc-html:sha1:128', simhash: 'simhash-doc' },
};
export const PRESET_NAMES: readonly string[] = Object.keys(PRESETS);

/** A preset name that is not one, with the names there are. */
export class PresetError extends Error {
  override name = 'PresetError';
}

export function preset(name: string): Preset {
  const found = Object.hasOwn(PRESETS, name) ? PRESETS[name] : undefined;
  if (!found) throw new PresetError(`unknown preset "${name}"; valid presets: ${PRESET_NAMES.join(', ')}`);
  return found;
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
