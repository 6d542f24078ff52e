import { plural } from '../../../plural.js';
import { DEFAULT_TEMPLATE_REQUEST } from '../../../indices/template-store.js';
import { DEFAULT_CONDENSER } from '../../../signature.js';
import { parseParams } from '../../../stored/params.js';
// What a reviewer should be told before reading the clusters: a family that chains a large share of the
// index together (documents that share a template, a licence, a notice section are joined through it by
// word sets, and clusters cut from such a family are mostly different documents), or a large cluster whose
// members are far from their canonical. Each warning names what was seen and the command that raises the bar.

/** A family this large a share of the documents (and at least FAMILY_AT_LEAST of them) is said. */
export const FAMILY_SHARE = 0.05;
const FAMILY_AT_LEAST = 50;
/** A cluster of at least this many members, some below LOOSE_SIMILARITY from the canonical, is said. */
const CLUSTER_AT_LEAST = 20;
const LOOSE_SIMILARITY = 0.8;

/** What the warnings are drawn from: the run's settings and its largest family and cluster. */
export interface GuardFacts {
  index: string;
  documents: number;
  largestFamily: number;
  minSimilarity: number;
  /** The params keyword of the signatures compared: what re-signing could change. */
  params: string;
  /** The largest cluster: its size, canonical and least similarity of a duplicate to it. */
  largest?: { size: number; canonical: string; minCanonicalSimilarity: number | null };
}

/** The warnings for one run's clusters; none when nothing looks chained. */
export function clusterWarnings(facts: GuardFacts): string[] {
  const warnings: string[] = [];
  const higher = Math.min(0.9, Math.round((facts.minSimilarity + 0.2) * 10) / 10);
  const raise = `near-dup dedup --index ${facts.index} --min-similarity ${higher}`;
  if (facts.documents > 0 && facts.largestFamily >= Math.max(FAMILY_AT_LEAST, FAMILY_SHARE * facts.documents)) {
    const share = ((100 * facts.largestFamily) / facts.documents).toFixed(0);
    warnings.push(
      `one family chains ${facts.largestFamily} of the ${plural(facts.documents, 'document')} (${share}%) through pairs at --min-similarity ${facts.minSimilarity}: ` +
        `documents that share a template or boilerplate are joined by it, and its clusters may hold different documents; ` +
        `look at them (near-dup explore --index ${facts.index}), raise the bar (${raise})${resignAdvice(facts)}`,
    );
  }
  const largest = facts.largest;
  if (largest && largest.size >= CLUSTER_AT_LEAST && largest.minCanonicalSimilarity !== null && largest.minCanonicalSimilarity < LOOSE_SIMILARITY) {
    warnings.push(
      `the largest cluster (${largest.canonical}) holds ${plural(largest.size, 'document')}, some only ${largest.minCanonicalSimilarity.toFixed(2)} from its canonical: ` +
        `check it before acting on it (near-dup explore --index ${facts.index}), or raise the bar (${raise})`,
    );
  }
  return warnings;
}

/**
 * What signing again would change, for signatures that compare more than a document's own text: word
 * shingles for word sets, template tokens marked for plain shingles (a share given draws them from an index
 * of any size). Nothing for signatures made so already.
 */
function resignAdvice({ index, params }: GuardFacts): string {
  const parsed = parseParams(params);
  const wordSets = parsed?.condenser.split(':')[0] === 'white-space';
  const core = parsed?.core !== undefined;
  if (core && !wordSets) return '';
  const flags = [wordSets ? `--condenser ${DEFAULT_CONDENSER.split(':')[0]}` : '', core ? '' : `--template-share ${DEFAULT_TEMPLATE_REQUEST.share}`].filter(Boolean).join(' ');
  return `, or compare documents by their own text (near-dup annotate --index ${index} --field <text field> ${flags} --force, then dedup again)`;
}
