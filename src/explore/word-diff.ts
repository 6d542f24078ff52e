// Two texts side by side, by words (white space kept as it is, so each side reads exactly as its text): what both have (long runs of it marked as shared passages), what only
// the first has, what only the second has. jsdiff's word diff (Myers' algorithm) does the comparing.
import { diffWordsWithSpace } from 'diff';

export type SegmentKind = 'same' | 'removed' | 'added';

export interface Segment {
  kind: SegmentKind;
  text: string;
  /** A run of at least SHARED_WORDS words that both texts have: a passage one took from the other. */
  shared: boolean;
}

export const SHARED_WORDS = 8;
/** Longer texts are compared on their first this many characters (said in the answer): the diff is quadratic at worst. */
export const MAX_DIFF_CHARS = 60_000;

export interface WordDiff {
  segments: Segment[];
  /** Characters left out of the comparison, per side. */
  cut: [number, number];
  sharedWords: number;
}

export function wordDiff(a: string, b: string): WordDiff {
  const left = a.slice(0, MAX_DIFF_CHARS);
  const right = b.slice(0, MAX_DIFF_CHARS);
  let sharedWords = 0;
  const segments = diffWordsWithSpace(left, right).map((part): Segment => {
    const kind: SegmentKind = part.added ? 'added' : part.removed ? 'removed' : 'same';
    const words = part.value.split(/\s+/).filter(Boolean).length;
    const shared = kind === 'same' && words >= SHARED_WORDS;
    if (shared) sharedWords += words;
    return { kind, text: part.value, shared };
  });
  return { segments, cut: [a.length - left.length, b.length - right.length], sharedWords };
}
