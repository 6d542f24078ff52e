// Which indices the proxy signs for: a comma-separated list of names and `*` patterns, read left to right
// as the engines read multi-target expressions (a `-` pattern takes away what the ones before it matched).
// As in the engines, a pattern starting with `*` does not match hidden or system indices (names starting
// with "."): those are matched only by a pattern that itself starts with ".". A target with date math
// (<news-{now/d}>) is matched by the name it resolves to now; one whose date math cannot be read is taken
// as matching (signed rather than let through unsigned).
import { UsageError } from '../errors.js';
import { isDateMathName, resolveDateMath } from './date-math.js';

export type IndexMatcher = (index: string) => boolean;

interface Term {
  exclude: boolean;
  regex: RegExp;
  dotted: boolean;
}

export function indexMatcher(pattern: string): IndexMatcher {
  const parts = pattern.split(',').map((p) => p.trim());
  if (parts.some((p) => p === '' || p === '-')) {
    throw new UsageError(`--index "${pattern}" has an empty name; give names or patterns separated by commas, e.g. logs-*,news`);
  }
  const terms: Term[] = parts.map((part) => {
    const exclude = part.startsWith('-');
    const body = exclude ? part.slice(1) : part;
    const name = body === '_all' ? '*' : body;
    // `s`: a name may hold line breaks (the engines take them), and * matches them too.
    const regex = new RegExp(`^${name.split('*').map(escapeRegex).join('.*')}$`, 's');
    return { exclude, regex, dotted: name.startsWith('.') };
  });
  if (terms[0].exclude) throw new UsageError(`--index "${pattern}" starts with an exclusion; name what to include first, e.g. *,-${parts[0].slice(1)}`);
  return (target) => {
    const index = isDateMathName(target) ? resolveDateMath(target, new Date()) : target;
    if (index === undefined) return true;
    let matched = false;
    for (const term of terms) {
      if (index.startsWith('.') && !term.dotted) continue;
      if (term.regex.test(index)) matched = !term.exclude;
    }
    return matched;
  };
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
