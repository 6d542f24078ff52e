// The truth of bench:quality, by one notion of similarity for every tool: the exact Jaccard of the sets of
// word 4-shingles (lower-cased, white-space words; a text of fewer than 4 words is one shingle of all of them).
// Two documents are a true pair when they are in one family (provenance), or when their exact Jaccard is at
// least 0.9 (nearly identical texts of different families, e.g. alias pages): families joined by such a pair
// are united into one truth group, and a true pair is two documents of one group.
//
// Every pair at J >= 0.9 is found exactly, without comparing all pairs, by prefix filtering (Chaudhuri et
// al. 2006; Bayardo et al., "Scaling up all pairs similarity search", WWW 2007): shingles ranked rarest
// first, two sets with J >= t share a shingle within the first |x| - ceil(t |x|) + 1 of each.
export const SHINGLE = 4;
export const SAME_TEXT = 0.9;
export const RECALL_FROM = 0.7;

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

/** Exact Jaccard of two ascending sets. */
export function jaccard(a, b) {
  if (a.length === 0 || b.length === 0) return 0;
  let i = 0, j = 0, shared = 0;
  while (i < a.length && j < b.length) {
    if (a[i] === b[j]) {
      shared++;
      i++;
      j++;
    } else if (a[i] < b[j]) i++;
    else j++;
  }
  return shared / (a.length + b.length - shared);
}

/** Every pair [i, j, J] with exact J >= t (i < j), by prefix filtering. */
export function pairsAtLeast(sets, t) {
  const bySize = sets.map((_, i) => i).filter((i) => sets[i].length > 0).sort((a, b) => sets[a].length - sets[b].length || a - b);
  const index = new Map();
  const out = [];
  for (const x of bySize) {
    const set = sets[x];
    const prefix = set.length - Math.ceil(t * set.length) + 1;
    const seen = new Set();
    for (let p = 0; p < prefix; p++) {
      for (const y of index.get(set[p]) ?? []) {
        if (seen.has(y) || sets[y].length < t * set.length) continue;
        seen.add(y);
        const j = jaccard(set, sets[y]);
        if (j >= t) out.push(x < y ? [x, y, j] : [y, x, j]);
      }
    }
    for (let p = 0; p < prefix; p++) {
      if (!index.has(set[p])) index.set(set[p], []);
      index.get(set[p]).push(x);
    }
  }
  return out;
}

/**
 * The truth of a corpus: each document's truth group (families united by a pair at J >= 0.9), the true
 * pairs with J >= 0.7 (what recall is of), those with J >= 0.9 (what must not be split), and how many
 * groups hold a pair at J >= 0.9.
 */
export function truthOf(docs) {
  const sets = shingleSets(docs);
  const familyOf = new Map();
  const parent = docs.map((d, i) => {
    if (!familyOf.has(d.family)) familyOf.set(d.family, i);
    return familyOf.get(d.family);
  });
  const root = (i) => (parent[i] === i ? i : (parent[i] = root(parent[i])));
  const sameText = pairsAtLeast(sets, SAME_TEXT);
  let crossFamily = 0;
  for (const [i, j] of sameText) {
    if (docs[i].family !== docs[j].family) crossFamily++;
    const [a, b] = [root(i), root(j)];
    if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
  }
  const group = docs.map((_, i) => root(i));
  const members = new Map();
  for (const [i, g] of group.entries()) {
    if (!members.has(g)) members.set(g, []);
    members.get(g).push(i);
  }
  const recallPairs = [];
  for (const list of members.values()) {
    for (let a = 0; a < list.length; a++) {
      for (let b = a + 1; b < list.length; b++) {
        const j = jaccard(sets[list[a]], sets[list[b]]);
        if (j >= RECALL_FROM) recallPairs.push([list[a], list[b], j]);
      }
    }
  }
  const mustJoin = recallPairs.filter(([, , j]) => j >= SAME_TEXT);
  const groupsWithSameText = new Set(mustJoin.map(([i]) => group[i])).size;
  return { sets, group, groups: members.size, families: familyOf.size, crossFamily, recallPairs, mustJoin, groupsWithSameText };
}
