// Which indices the proxy signs for: a comma-separated list of names and `*` patterns, read left to right
// as the engines read multi-target expressions (a `-` pattern takes away what the ones before it matched).
// As in the engines, a pattern starting with `*` does not match hidden or system indices (names starting
// with "."): those are matched only by a pattern that itself starts with ".".
//
// A write lands in one concrete index; the list covers it (see targets.ts) as the engines expand a
// multi-target expression: a wildcard reaches the index by its own name or by one of its aliases or its data
// stream (a hidden index only by a dotted wildcard, if it is dotted); an exact name that is an alias or a
// data stream of the index covers it through that name. An exclusion takes away what it matches: a
// wildcard, the indices it reaches; an exact name, that name only (`*,-archive` leaves out the index named
// archive, not the indices an alias archive points to; tested on both engines).
//
// A name with date math (<news-{now/d}>) given to the matcher is matched by the name it resolves to now;
// one the proxy cannot resolve is taken as matching (the proxy itself resolves the names of writes
// before it asks: targets.ts).
import { UsageError } from '../errors.js';
import { isDateMathName, resolveDateMath } from './date-math.js';

/** What a write lands in: the index, whether it is hidden, and the aliases and data stream it is reached through. */
export interface CoveredIndex {
  index: string;
  hidden: boolean;
  through: readonly string[];
}

/** `--index` as a test: whether a name matches, and whether an index is covered by it. */
export interface IndexMatcher {
  /** The list matches a name (a dotted name only by a dotted pattern). */
  (index: string): boolean;
  /** The list covers a concrete index. */
  covers(index: CoveredIndex): boolean;
  /** The list leaves something out (`-pattern`): a name matching it is not yet an index it covers. */
  readonly excludes: boolean;
}

interface Term {
  exclude: boolean;
  name: string;
  regex: RegExp;
  dotted: boolean;
  wildcard: boolean;
}

/**
 * `--index` (names and patterns separated by commas, `-pattern` to leave out) read into a matcher; an empty name is
 * refused with an example.
 */
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
    return { exclude, name, regex, dotted: name.startsWith('.'), wildcard: name.includes('*') };
  });
  if (terms[0].exclude) throw new UsageError(`--index "${pattern}" starts with an exclusion; name what to include first, e.g. *,-${parts[0].slice(1)}`);
  /** A wildcard reaches a name: a hidden one only when both are dotted. */
  const reaches = (term: Term, name: string, hidden: boolean) => term.regex.test(name) && (!hidden || (term.dotted && name.startsWith('.')));
  const matcher = (target: string) => {
    const index = isDateMathName(target) ? resolveDateMath(target, new Date()) : target;
    if (index === undefined) return true;
    // Known by its name alone: a dotted one is taken as hidden (system and hidden indices are dotted).
    return matcher.covers({ index, hidden: index.startsWith('.'), through: [] });
  };
  matcher.covers = ({ index, hidden, through }: CoveredIndex) => {
    let direct = false;
    const named = new Set<string>();
    for (const term of terms) {
      if (!term.wildcard) {
        if (term.name === index) direct = !term.exclude;
        else if (through.includes(term.name)) term.exclude ? named.delete(term.name) : named.add(term.name);
      } else if (reaches(term, index, hidden) || through.some((name) => reaches(term, name, name.startsWith('.')))) {
        direct = !term.exclude;
      }
    }
    return direct || named.size > 0;
  };
  matcher.excludes = terms.some((t) => t.exclude);
  return matcher;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
