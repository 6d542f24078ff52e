// The text of the dashboard's "how to read" panel: the threshold the clusters were cut at and the
// parameters of the signatures, as the last dedup run of the index recorded them (its state file), so a
// reviewer sees what the similarities mean where the numbers are.
import type { DedupState } from '../../jobs/dedup/state/state-file.js';
import { resolveSignerSettings, signerOptionsFromParams } from '../../signature.js';

const SIMILARITY = '**Similarity to canonical** (histogram, clusters table): the Jaccard similarity of the word sets of a duplicate and of the canonical its *duplicate of* names, estimated from their stored MinHash signatures; 0 to 1.';
const PARTIAL = '**Partial copies** (`dedup --containment`): the estimated share of a document\'s distinct words found inside a larger document.';

function signatureLine(params: string): string {
  const options = signerOptionsFromParams(params);
  if (!options) return `**Signature parameters**: \`${params}\``;
  const s = resolveSignerSettings(options);
  return `**Signature parameters**: tokens \`${s.spec.tokenizer}\`, normalizer \`${s.spec.normalizer}\`, hash \`${s.spec.hash}\`, ${s.spec.numPerm} permutations, LSH ${s.lsh.b} bands of ${s.lsh.r} rows (\`${params}\`)`;
}

/** The --canonical rule a state records (JSON of the rule and the field it sorts by), as a reader says it. */
function canonicalRule(order: string): string {
  try {
    const { canonical, sortField } = JSON.parse(order) as { canonical?: unknown; sortField?: string };
    if (typeof canonical === 'string') return `the ${canonical} document of each cluster (by \`${sortField}\`)`;
    if (canonical && typeof canonical === 'object') {
      const rule = canonical as { field?: string; order?: string };
      return `by \`${rule.field}\` ${rule.order === 'desc' ? 'highest' : 'lowest'} first`;
    }
  } catch {
    // an order of another form is shown as it is
  }
  return `\`${order}\``;
}

/** The markdown of the panel, from the dedup state of the index (or saying where it was looked for). */
export function aboutText(index: string, state: DedupState | undefined, statePath: string, note?: string): string {
  if (!state) {
    return [
      `**${index}**: near-dup dashboards found no record of a dedup run at \`${statePath}\`${note ? ` (${note})` : ''}, so the threshold and parameters are not shown here: run \`near-dup dashboards\` in the folder where \`near-dup dedup\` ran, or give \`--dedup-state\`.`,
      '',
      `- ${SIMILARITY}`,
      `- ${PARTIAL}`,
    ].join('\n');
  }
  const clusters = state.clusters === 'components' ? 'connected components (whole families: a duplicate may be far from its canonical)' : 'each duplicate verified near its canonical';
  return [
    `**${index}**, clustered by \`near-dup dedup\` (last complete run ${state.lastRunAt.replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}).`,
    '',
    `- **Threshold**: pairs at or above **${state.minSimilarity}** estimated Jaccard (\`--min-similarity\`); clusters: ${clusters}${state.order ? `; canonical: ${canonicalRule(state.order)}` : ''}.`,
    `- ${SIMILARITY}`,
    `- ${signatureLine(state.params)}.`,
    `- ${PARTIAL}`,
  ].join('\n');
}
