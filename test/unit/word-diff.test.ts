// The explorer's side-by-side comparison: each side reads exactly as its text, long common runs are marked
// as shared passages, and what differs is on its own side.
import { expect, it } from 'vitest';
import { MAX_DIFF_CHARS, SHARED_WORDS, wordDiff } from '../../src/explore/word-diff.js';

it('each side is its own text; shared passages are the long common runs', () => {
  const a = 'The licensor grants you a worldwide, royalty-free, non-exclusive license to use,\n  copy and modify the work.\tOld clause.';
  const b = 'The licensor grants you a worldwide, royalty-free, non-exclusive license to use,\ncopy and modify the work. New clause here.';
  const { segments, sharedWords, cut } = wordDiff(a, b);
  expect(segments.filter((s) => s.kind !== 'added').map((s) => s.text).join('')).toBe(a);
  expect(segments.filter((s) => s.kind !== 'removed').map((s) => s.text).join('')).toBe(b);
  expect(segments.some((s) => s.shared)).toBe(true);
  expect(segments.filter((s) => s.shared).every((s) => s.kind === 'same' && s.text.split(/\s+/).filter(Boolean).length >= SHARED_WORDS)).toBe(true);
  expect(sharedWords).toBeGreaterThanOrEqual(SHARED_WORDS);
  expect(segments.filter((s) => s.kind === 'removed').map((s) => s.text).join('')).toContain('Old');
  expect(segments.filter((s) => s.kind === 'added').map((s) => s.text).join('')).toContain('New');
  expect(cut).toEqual([0, 0]);
  expect(wordDiff('x '.repeat(MAX_DIFF_CHARS), 'x').cut).toEqual([MAX_DIFF_CHARS, 0]);
});
