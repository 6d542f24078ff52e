// The text of a document as its signature saw it: the stored field after the normalizer of the params it
// was signed with (markup removed, lowercased, punctuation dropped, white space collapsed for norm-html),
// made by the signer's own normalize, so a reviewer sees the differences the tool counted and none it
// ignored. A document whose params this version cannot read (or that has none) is shown as stored.
import { UserError } from '../errors.js';
import { createSigner, parseCondenserSpec, signerOptionsFromParams } from '../signature.js';
import { parseParams } from '../stored/params.js';

/** How a document's text is shown: as its signature saw it (normalized), or as stored. */
export type TextView = 'normalized' | 'raw';
/** Every view, in the order the page offers them. */
export const TEXT_VIEWS: readonly TextView[] = ['normalized', 'raw'];

/** A document's text as shown, and the normalizer it went through. */
export interface ComparedText {
  text: string;
  /** The normalizer the text went through; undefined when shown as stored. */
  normalizer?: string;
  /** Why a normalized view could not be given. */
  asStored?: string;
}

/**
 * Normalizers by params: one per kind of signature an index holds (usually one), made on first use. A
 * few are kept: params are read from documents, and each signer holds its own buffers.
 */
const normalizers = new Map<string, ((text: string) => string) | undefined>();
const KEPT_NORMALIZERS = 8;

/** The normalize step of the signer that made signatures of these params; undefined for params it cannot read. */
export function normalizerOf(params: string): ((text: string) => string) | undefined {
  if (!normalizers.has(params)) {
    const options = signerOptionsFromParams(params);
    if (normalizers.size >= KEPT_NORMALIZERS) normalizers.delete(normalizers.keys().next().value as string);
    // The normalizer is the same with or without template tokens (params tpl=): the set is not needed for it.
    normalizers.set(params, options ? createSigner({ ...options, templateDigest: undefined }).normalize : undefined);
  }
  return normalizers.get(params);
}

/** The text as compared (by the stored params) or, in the raw view or without usable params, as stored. */
export function comparedText(raw: string, params: unknown, view: TextView): ComparedText {
  if (view === 'raw') return { text: raw };
  if (typeof params !== 'string' || params === '') return { text: raw, asStored: 'it has no near-dup signature (run near-dup annotate)' };
  const normalize = normalizerOf(params);
  if (!normalize) return { text: raw, asStored: `its signature's params "${params}" are not ones this version of near-dup reads` };
  return { text: normalize(raw), normalizer: parseCondenserSpec(parseParams(params)?.condenser).normalizer };
}

/** The view a request names (`view=normalized|raw`, normalized when absent). */
export function textView(value: string | null): TextView {
  if (value === null || value === '') return 'normalized';
  if ((TEXT_VIEWS as readonly string[]).includes(value)) return value as TextView;
  throw new UserError(`view must be ${TEXT_VIEWS.join(' or ')}, got "${value}"`);
}
