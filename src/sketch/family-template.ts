// A family's own template: the text that many members of one family of near-duplicates hold (docs/finding.md,
// "A family's own template"). The index's template set (template-tokens.ts) holds the tokens of more than
// a share of the whole index: global options, notices, headings. Text shared by a few dozen pages of one
// service (the output structure that `get-deployment` and `create-deployment` both document) is below any
// share of the index and above what one document's versions share; two such siblings are as alike as two
// versions of one page by their whole texts and by their cores. What tells them apart is who else holds the
// tokens they share: a command's name is on its own versions only, the structure on every sibling's page.
//
// From the signatures alone: in place i, equal values are one token (as the MinHash estimate takes them),
// so the number of a family's members whose value in place i equals a member's is how many of them hold
// that token as their minimum there. For a pair, place i's union minimum (the smaller value) is counted
// when it is held by at least one and fewer than FAMILY_TEMPLATE_HOLDERS of the family's other members and
// is not an index template token: the share of equal values over those places estimates the Jaccard of
// what the pair shares with a few others (versions, copies), the family's template left out. A token of
// one side alone (an edit's own words) is left out too: it says nothing of the pair, as noise. A pair with
// fewer than FAMILY_CORE_MIN_PLACES such places has no family comparison (a family too small for a
// template, or members that are all template).
//
// Measured with dedup's cut on the five labelled corpora (scripts/bench/quality/offline.mjs, pair precision
// / recall; the cut leaves pairs within TIGHT_SIMILARITY as a whole to the verifier): CLI pages 0.747 / 0.937
// -> 0.797 / 0.938, templated pages 0.953 / 0.863 -> 0.970 / 0.861, licences, news and PEP revisions
// unchanged; signed without an index template (--template-share 0, and every index under 2,000 documents),
// CLI pages 0.186 / 0.896 -> 0.551 / 0.875, templated 0.524 / 0.771 -> 0.645 / 0.731, licences 0.667 / 0.967
// -> 0.706 / 0.944. Holders from 4 to 10 and places from 4 to 16 were tried (docs/finding.md).

import { coreWords, isTemplatePlace } from './core-similarity.js';

/** A token held by this many of a family's other members, beside the two compared, is the family's template. */
export const FAMILY_TEMPLATE_HOLDERS = 6;
/** Places a family comparison needs to say anything (its estimate's deviation at 0.7 is then 0.11). */
export const FAMILY_CORE_MIN_PLACES = 16;
/**
 * Families of more members are cut without their template. The cut compares each group of a family with the
 * canonicals that share a band key with it, so a family that its template splits into many groups costs
 * about groups x members comparisons (a family of 20,000 boilerplate pages in groups of three: 4 minutes
 * against 43 s as one cluster); 5,000 bounds that at about 15 s.
 */
export const FAMILY_TEMPLATE_MAX_MEMBERS = 5_000;

/** Room for a member's number beside its value in one float (above FAMILY_TEMPLATE_MAX_MEMBERS). */
const MEMBER_SLOTS = 8192;

/** The holders of each member's value in each place, for a family's signatures of `numPerm` values each. */
export class FamilyTemplate {
  /** Member m's place i: how many members (m among them) have its value there, at most 255; counted at the first comparison. */
  private counts: Uint8Array | undefined;

  private constructor(
    private readonly values: readonly ArrayLike<number>[],
    private readonly numPerm: number,
    private readonly core: boolean,
  ) {}

  /**
   * The family's template, or undefined when no token can be its template (fewer members than the holders it
   * takes and the pair) or the family is too large to count. `core`: the values carry the index template's
   * bits after the first `numPerm` (sketch/core-similarity.ts).
   */
  static of(values: readonly ArrayLike<number>[], numPerm: number, core: boolean): FamilyTemplate | undefined {
    const n = values.length;
    if (n < FAMILY_TEMPLATE_HOLDERS + 2 || n > FAMILY_TEMPLATE_MAX_MEMBERS || numPerm === 0) return undefined;
    const width = numPerm + (core ? coreWords(numPerm) : 0);
    if (values.some((v) => v.length !== width)) return undefined;
    return new FamilyTemplate(values, numPerm, core);
  }

  /**
   * The counts, place by place: each member's value and number in one float (value x MEMBER_SLOTS + number,
   * exact below 2^53), sorted, so that a run of one value is its holders.
   */
  private holders(): Uint8Array {
    if (this.counts) return this.counts;
    const { values, numPerm } = this;
    const n = values.length;
    const counts = new Uint8Array(n * numPerm);
    const column = new Float64Array(n);
    for (let i = 0; i < numPerm; i++) {
      for (let m = 0; m < n; m++) column[m] = values[m][i] * MEMBER_SLOTS + m;
      column.sort();
      for (let start = 0; start < n; ) {
        const value = Math.floor(column[start] / MEMBER_SLOTS);
        let end = start + 1;
        while (end < n && Math.floor(column[end] / MEMBER_SLOTS) === value) end++;
        for (let k = start; k < end; k++) counts[(column[k] % MEMBER_SLOTS) * numPerm + i] = Math.min(255, end - start);
        start = end;
      }
    }
    this.counts = counts;
    return counts;
  }

  /** The estimated Jaccard of what members a and b share with a few others (see the head of this file), or undefined. */
  similarity(a: number, b: number): number | undefined {
    const { numPerm } = this;
    const holders = this.holders();
    const x = this.values[a], y = this.values[b];
    let places = 0;
    let equal = 0;
    for (let i = 0; i < numPerm; i++) {
      const same = x[i] === y[i];
      const owner = x[i] <= y[i] ? a : b;
      if (this.core && isTemplatePlace(this.values[owner], numPerm, i)) continue;
      const others = holders[owner * numPerm + i] - (same ? 2 : 1);
      if (others >= FAMILY_TEMPLATE_HOLDERS || (others === 0 && !same)) continue;
      places++;
      if (same) equal++;
    }
    return places < FAMILY_CORE_MIN_PLACES ? undefined : equal / places;
  }
}
