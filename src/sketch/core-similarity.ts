// The similarity of two documents' own text, from the MinHash of all their tokens (docs/finding.md,
// "Quality on labelled corpora"). With a template set (template-tokens.ts), each of a signature's values
// comes with one bit: whether the token that gave that minimum is a template token. For a pair, the token
// of the union's minimum in place i is the one of the smaller value, and it is uniform over the union; given
// that it is not a template token, it is uniform over the union of the two cores (the tokens that are not
// template), and the values are equal exactly when it is in both. So, over the places whose union minimum is
// not template, the share of equal values estimates the Jaccard of the cores, as the whole share estimates
// the Jaccard of the whole texts: one datasketch MinHash, 16 bytes of bits and the core's size give both.
//
// The rule that turns them into one similarity, measured on labelled corpora (scripts/bench/quality/
// core_curves.py; the exact figures are in docs/finding.md):
//   - texts nearly identical as a whole (Jaccard >= WHOLE_TEXT_BAR) are compared whole, whatever their
//     template: a page and its alias, two exception classes whose pages differ by a name;
//   - two documents with cores of CORE_MIN_TOKENS or more are as similar as the shorter core is held by the
//     other, and never more than their whole texts: an edited copy keeps its original's core (its edits add
//     core tokens of its own, which Jaccard would count against it), while two pages of one template each
//     have a core of their own (their names, their own flags) that the other does not hold;
//   - documents with a smaller core are compared by the Jaccard of the cores, and two documents with no
//     core at all (all template) whole.
//
// Pure functions over the values as a signature pool holds them: the numPerm MinHash values, then
// CORE_WORDS words of 16 bits (so that a compact spill, which keeps 16 bits a value, keeps them whole): the
// bits, 16 to a word, then the core's size (clamped to 0xffff).
import { emptyMinhash, equalValues, MAX_HASH, minhashJaccard, type Permutations, updateMinhash } from './minhash.js';

/** Texts at this whole-text Jaccard or above are compared whole... */
export const WHOLE_TEXT_BAR = 0.9;

/**
 * ...as `numPerm` values estimate it: the bar plus half a standard deviation of the estimate there. Sibling
 * pages at 0.85-0.9 must seldom be taken for nearly identical, and pages at 0.92-0.95 (exception classes
 * that differ by a name) must seldom fall below it; measured on the labelled corpora with dedup's cut
 * (docs/finding.md, "Quality on labelled corpora"), half a deviation (0.913 for 128 values) kept the
 * precision of a whole one (0.927) on the templated and licence corpora and 3.5 more points of recall.
 */
export function wholeTextBar(numPerm: number): number {
  return WHOLE_TEXT_BAR + 0.5 * Math.sqrt((WHOLE_TEXT_BAR * (1 - WHOLE_TEXT_BAR)) / numPerm);
}
/** Cores of this many distinct tokens or more are compared by containment (the shorter in the longer). */
export const CORE_MIN_TOKENS = 20;
/** The largest core size the extension holds (a larger core is this large for the rule, which only compares it to CORE_MIN_TOKENS and to the other's). */
export const CORE_SIZE_CAP = 0xffff;

/** How many 16-bit words follow the values of a signature of `numPerm` values: the bits, then the core's size. */
export function coreWords(numPerm: number): number {
  return Math.ceil(numPerm / 16) + 1;
}

/**
 * The words that follow a signature's values: bit i set when value i came from a template token, then
 * the number of distinct tokens that are not template (clamped to CORE_SIZE_CAP).
 */
export function coreExtension(templateBits: ArrayLike<boolean | number>, coreSize: number): Uint32Array {
  const words = new Uint32Array(coreWords(templateBits.length));
  for (let i = 0; i < templateBits.length; i++) if (templateBits[i]) words[i >>> 4] |= 1 << (i & 15);
  words[words.length - 1] = Math.min(CORE_SIZE_CAP, Math.max(0, Math.floor(coreSize)));
  return words;
}

/** The estimates a pair's similarity is made of. */
export interface CoreEstimate {
  /** The Jaccard of the whole texts (the share of equal values). */
  whole: number;
  /** The Jaccard of the cores; undefined when no place's union minimum is a core token. */
  core: number | undefined;
  /** The sizes of the two cores. */
  sizes: [number, number];
}

/** The whole and core estimates of two extended signatures of `numPerm` values each. */
export function coreEstimate(x: ArrayLike<number>, y: ArrayLike<number>, numPerm: number): CoreEstimate {
  const width = numPerm + coreWords(numPerm);
  if (x.length !== width || y.length !== width) throw new RangeError(`cannot compare signatures of ${x.length} and ${y.length} words as ${numPerm} values with their template bits (${width} words)`);
  let equal = 0;
  let coreSlots = 0;
  let coreEqual = 0;
  for (let i = 0; i < numPerm; i++) {
    const same = x[i] === y[i];
    if (same) equal++;
    // The union's minimum is the smaller value; equal values are one token, whose bit both carry.
    if (isTemplatePlace(x[i] <= y[i] ? x : y, numPerm, i)) continue;
    coreSlots++;
    if (same) coreEqual++;
  }
  return {
    whole: numPerm === 0 ? 0 : equal / numPerm,
    core: coreSlots === 0 ? undefined : coreEqual / coreSlots,
    sizes: [x[width - 1], y[width - 1]],
  };
}

/** Whether an extended signature's value in place i came from a template token (its bit). */
export function isTemplatePlace(values: ArrayLike<number>, numPerm: number, i: number): boolean {
  return ((values[numPerm + (i >>> 4)] >>> (i & 15)) & 1) === 1;
}

/** The similarity the rule above gives two extended signatures. */
export function coreSimilarity(x: ArrayLike<number>, y: ArrayLike<number>, numPerm: number): number {
  return similarityOf(coreEstimate(x, y, numPerm), wholeTextBar(numPerm));
}

/** The rule, on the estimates (`bar`: where whole texts are compared whole). */
export function similarityOf({ whole, core, sizes: [a, b] }: CoreEstimate, bar = WHOLE_TEXT_BAR): number {
  if (whole >= bar) return whole;
  if (a === 0 && b === 0) return whole;
  if (core === undefined) return 0;
  if (Math.min(a, b) < CORE_MIN_TOKENS) return core;
  return Math.min(whole, shorterHeld(core, a, b));
}

/** How much of the shorter of two sets of sizes a and b the other holds, from their Jaccard J: J (a + b) / ((1 + J) min(a, b)), at most 1. */
export function shorterHeld(jaccard: number, a: number, b: number): number {
  const shorter = Math.min(a, b);
  if (shorter === 0) return 0;
  return Math.min(1, (jaccard * (a + b)) / ((1 + jaccard) * shorter));
}

/**
 * A MinHash of every token with its template bits: `hashes` holds a document's distinct token hashes, the
 * `kept` first of them not template (TemplateFilter.partition's order). The values are those of a MinHash
 * of all `count` (datasketch's, unchanged); the extension says which came from a template token.
 */
export function signWithCore(perms: Permutations, hashes: Uint32Array, kept: number, count: number): { values: Uint32Array; extension: Uint32Array } {
  const values = emptyMinhash(perms.numPerm);
  updateMinhash(values, perms, hashes, kept);
  const marks = new CoreMarks(perms.numPerm);
  updateMinhash(marks.fresh(), perms, hashes.subarray(kept, count));
  marks.merge(values, kept);
  return { values, extension: marks.extension() };
}

/** The `core` field: the extension's words as 16-bit little-endian numbers, base64. */
export function encodeCore(extension: ArrayLike<number>): string {
  const bytes = Buffer.alloc(extension.length * 2);
  for (let i = 0; i < extension.length; i++) bytes.writeUInt16LE(extension[i] & 0xffff, i * 2);
  return bytes.toString('base64');
}

/** The extension a `core` field holds for signatures of `numPerm` values; undefined when it is not one (damaged). */
export function decodeCore(base64: string, numPerm: number): Uint32Array | undefined {
  const bytes = Buffer.from(base64, 'base64');
  const words = coreWords(numPerm);
  if (bytes.length !== words * 2 || bytes.toString('base64') !== base64) return undefined;
  const out = new Uint32Array(words);
  for (let i = 0; i < words; i++) out[i] = bytes.readUInt16LE(i * 2);
  return out;
}

/** A signature's values followed by its extension: what the comparers take. */
export function withCore(values: Uint32Array, extension: Uint32Array): Uint32Array {
  const out = new Uint32Array(values.length + extension.length);
  out.set(values);
  out.set(extension, values.length);
  return out;
}

/** The share of equal values among the first `numPerm` (the whole texts' Jaccard, whatever follows them). */
export function wholeSimilarity(x: ArrayLike<number>, y: ArrayLike<number>, numPerm: number): number {
  return numPerm === 0 ? 0 : equalValues(x, y, numPerm) / numPerm;
}

/**
 * How two signatures of one params are compared: the share of equal values (datasketch's estimate), or,
 * for `;core=` params, the rule above over the values and their extension.
 */
export function signatureComparer(numPerm: number, core: boolean): (x: Uint32Array, y: Uint32Array) => number {
  if (!core) return minhashJaccard;
  return (x, y) => coreSimilarity(x, y, numPerm);
}

/**
 * The marks of the document being signed, kept by the signing kernels in `;core=` mode: they fold the core's
 * hashes into the MinHash, the template's into `template` (reset per document), and `merge` makes the MinHash
 * of every token and its bits. `signWithCore` is the same in one call.
 */
export class CoreMarks {
  readonly bits: Uint8Array;
  readonly template: Uint32Array;
  size = 0;

  constructor(numPerm: number) {
    this.bits = new Uint8Array(numPerm);
    this.template = emptyMinhash(numPerm);
  }

  /** The template MinHash, emptied for the next document. */
  fresh(): Uint32Array {
    return this.template.fill(MAX_HASH);
  }

  /** `values` (the core's MinHash) becomes the MinHash of every token; `kept`: the core's size. */
  merge(values: Uint32Array, kept: number): void {
    const { template, bits } = this;
    for (let i = 0; i < values.length; i++) {
      bits[i] = template[i] < values[i] ? 1 : 0;
      if (bits[i]) values[i] = template[i];
    }
    this.size = kept;
  }

  /** The words of the `core` field for the last document merged. */
  extension(): Uint32Array {
    return coreExtension(this.bits, this.size);
  }
}
