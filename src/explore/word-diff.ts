// Two texts side by side, by words (white space kept as it is, so each side reads exactly as its text): what both have (long runs of it marked as shared passages), what only
// the first has, what only the second has. jsdiff's word diff (Myers' algorithm) does the comparing.
import { diffWordsWithSpace } from 'diff';

/** Whether a run of words is in both texts, only the first, or only the second. */
export type SegmentKind = 'same' | 'removed' | 'added';

/** A run of words of one kind, as the page marks it. */
export interface Segment {
  kind: SegmentKind;
  text: string;
  /** A run of at least SHARED_WORDS words that both texts have: a passage one took from the other. */
  shared: boolean;
}

/** The fewest words in a row both texts share that the page marks as a passage taken from the other. */
export const SHARED_WORDS = 8;
/** Longer texts are compared on their first this many characters (said in the answer): the diff is quadratic at worst. */
export const MAX_DIFF_CHARS = 60_000;

/** A comparison taking longer than this gives up (two long texts with little in common): one blocks the explorer while it runs. */
export const DIFF_TIMEOUT_MS = 2_000;

/** Two texts compared word by word, or given up on when too different. */
export interface WordDiff {
  segments: Segment[];
  /** The texts were too different to compare word by word in time: each is shown whole, as removed and added. */
  gaveUp?: boolean;
  /** Characters left out of the comparison, per side. */
  cut: [number, number];
  sharedWords: number;
}

/** The words that two texts share, remove and add, in order, for the page's side-by-side view. */
export function wordDiff(a: string, b: string): WordDiff {
  const left = a.slice(0, MAX_DIFF_CHARS);
  const right = b.slice(0, MAX_DIFF_CHARS);
  let sharedWords = 0;
  const parts = diffWordsWithSpace(left, right, { timeout: DIFF_TIMEOUT_MS });
  if (parts === undefined) {
    const whole: Segment[] = [{ kind: 'removed', text: left, shared: false }, { kind: 'added', text: right, shared: false }];
    return { segments: whole, cut: [a.length - left.length, b.length - right.length], sharedWords: 0, gaveUp: true };
  }
  const segments = parts.map((part): Segment => {
    const kind: SegmentKind = part.added ? 'added' : part.removed ? 'removed' : 'same';
    const words = part.value.split(/\s+/).filter(Boolean).length;
    const shared = kind === 'same' && words >= SHARED_WORDS;
    if (shared) sharedWords += words;
    return { kind, text: part.value, shared };
  });
  return { segments, cut: [a.length - left.length, b.length - right.length], sharedWords };
}
