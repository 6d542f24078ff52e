// Counts in prose, in the right number: "1 hit from 2 candidates", never "1 hits" (issue 50). Every summary
// and note that prints a count before a noun goes through here.

/** Nouns whose plural is not the singular and an s. */
const IRREGULAR: Record<string, string> = { family: 'families', index: 'indices', copy: 'copies', entry: 'entries', match: 'matches', pass: 'passes' };

/** The word for `n` (a noun, or a verb that agrees with it): `one` for 1, else `many` (by default the irregular plural, or `one` and an s). */
export function forCount(n: number, one: string, many: string = IRREGULAR[one] ?? `${one}s`): string {
  return n === 1 ? one : many;
}

/** `n` and its noun: plural(1, 'hit') is "1 hit", plural(2, 'hit') "2 hits", plural(3, 'family') "3 families". */
export function plural(n: number, one: string, many?: string): string {
  return `${n} ${forCount(n, one, many)}`;
}
