// The truth of bench:quality, by one notion of similarity for every tool: the exact Jaccard of the sets of
// word 4-shingles (lower-cased, white-space words; a text of fewer than 4 words is one shingle of all of them).
// Two documents are a true pair when they are in one family (provenance), or when their exact Jaccard is at
// least 0.9 (nearly identical texts of different families, e.g. alias pages): families joined by such a pair
// are united into one truth group, and a true pair is two documents of one group.
//
// The groups, the pairs (found exactly by prefix filtering, shingles ranked rarest first) and the measures
// are near-dup's own (dist/jobs/evaluate/truth-scores.js: `npm run build` first), shared with evaluate.
import { RECALL_FROM, SAME_TEXT, truthOf as truthFromSets } from '../../../dist/jobs/evaluate/truth-scores.js';

export { RECALL_FROM, SAME_TEXT };
export const SHINGLE = 4;

/** Each document's shingles as ascending ranks (rarest first), the ranks shared by the corpus. */
export function shingleSets(docs) {
  const ids = new Map();
  const raw = docs.map((d) => {
    const words = d.text.toLowerCase().split(/\s+/).filter(Boolean);
    const shingles = new Set();
    if (words.length > 0 && words.length < SHINGLE) shingles.add(words.join(' '));
    for (let i = 0; i + SHINGLE <= words.length; i++) shingles.add(words.slice(i, i + SHINGLE).join(' '));
    const out = new Int32Array(shingles.size);
    let k = 0;
    for (const s of shingles) {
      let id = ids.get(s);
      if (id === undefined) ids.set(s, (id = ids.size));
      out[k++] = id;
    }
    return out;
  });
  const df = new Int32Array(ids.size);
  for (const set of raw) for (const id of set) df[id]++;
  const order = Int32Array.from({ length: ids.size }, (_, i) => i).sort((a, b) => df[a] - df[b] || a - b);
  const rank = new Int32Array(ids.size);
  for (const [r, id] of order.entries()) rank[id] = r;
  return raw.map((set) => set.map((id) => rank[id]).sort());
}

/**
 * The truth of a corpus (truth-scores.ts, which evaluate --truth-field shares): each document's truth group
 * (families united by a pair at J >= 0.9), the true pairs with J >= 0.7 (what recall is of), those with
 * J >= 0.9 (what must not be split), and how many groups hold a pair at J >= 0.9.
 */
export function truthOf(docs) {
  const sets = shingleSets(docs);
  const truth = truthFromSets(sets, docs.map((d) => d.family));
  return { ...truth, sets, families: truth.sources, crossFamily: truth.crossSource };
}
