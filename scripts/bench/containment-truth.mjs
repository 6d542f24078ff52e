// Exact containment for bench:containment: every document's distinct tokens as integer ids ordered rarest
// first, and the pairs at or above a containment τ found without comparing everything (prefix filtering):
//  - C(q, d) >= τ: d holds at least ceil(τ|q|) of q's tokens, so it holds one of q's |q| - ceil(τ|q|) + 1
//    rarest ones: only the documents of those tokens' postings are compared;
//  - C(d, q) >= τ: likewise one of d's own rarest tokens is in q: each document is listed under its prefix
//    tokens only, and q looks up all of its tokens there.

export class ContainmentTruth {
  /** @param {string[][]} tokenLists each document's tokens (repeats allowed) */
  constructor(tokenLists, tau) {
    this.tau = tau;
    const dictionary = new Map();
    const raw = tokenLists.map((tokens) => {
      const ids = new Set();
      for (const token of tokens) {
        let id = dictionary.get(token);
        if (id === undefined) dictionary.set(token, (id = dictionary.size));
        ids.add(id);
      }
      return Int32Array.from(ids);
    });
    const frequency = new Int32Array(dictionary.size);
    for (const set of raw) for (const t of set) frequency[t]++;
    // One global order: rarest first, then by id; a token's rank in it replaces the token.
    const order = Int32Array.from(frequency.keys()).sort((a, b) => frequency[a] - frequency[b] || a - b);
    const rank = new Int32Array(dictionary.size);
    order.forEach((token, r) => {
      rank[token] = r;
    });
    this.sets = raw.map((set) => set.map((t) => rank[t]).sort());
    this.all = postingLists(this.sets, dictionary.size, (set) => set.length);
    this.prefixes = postingLists(this.sets, dictionary.size, (set) => this.prefixLength(set.length));
  }

  prefixLength(n) {
    return Math.min(n, n - Math.ceil(this.tau * n) + 1);
  }

  /** |A ∩ B| of two sorted rank arrays. */
  shared(a, b) {
    let i = 0, j = 0, n = 0;
    while (i < a.length && j < b.length) {
      if (a[i] === b[j]) { n++; i++; j++; } else if (a[i] < b[j]) i++; else j++;
    }
    return n;
  }

  /** Exact containment of document a in document b. */
  containment(a, b) {
    const x = this.sets[a];
    return x.length === 0 ? 0 : this.shared(x, this.sets[b]) / x.length;
  }

  /** Every document d != q with C(q, d) >= τ or C(d, q) >= τ: Map d -> [C(q, d), C(d, q)]. */
  pairsOf(q) {
    const x = this.sets[q];
    this.marks ??= new Uint8Array(this.all.tokens);
    for (const t of x) this.marks[t] = 1;
    const out = new Map();
    const seen = new Set([q]);
    const consider = (d) => {
      if (seen.has(d)) return;
      seen.add(d);
      const y = this.sets[d];
      let n = 0;
      for (let i = 0; i < y.length; i++) n += this.marks[y[i]];
      const inside = x.length ? n / x.length : 0, holds = y.length ? n / y.length : 0;
      if (inside >= this.tau || holds >= this.tau) out.set(d, [inside, holds]);
    };
    for (let i = 0; i < this.prefixLength(x.length); i++) this.all.each(x[i], consider);
    for (const t of x) this.prefixes.each(t, consider);
    for (const t of x) this.marks[t] = 0;
    return out;
  }
}

/** Postings in one flat array (CSR): for each token rank, the documents that list it among their first `take(set)` ranks. */
function postingLists(sets, tokens, take) {
  const counts = new Int32Array(tokens + 1);
  for (const set of sets) for (let i = 0; i < take(set); i++) counts[set[i] + 1]++;
  for (let t = 0; t < tokens; t++) counts[t + 1] += counts[t];
  const docs = new Int32Array(counts[tokens]);
  const fill = counts.slice();
  sets.forEach((set, d) => {
    for (let i = 0; i < take(set); i++) docs[fill[set[i]]++] = d;
  });
  return {
    tokens,
    each(token, visit) {
      for (let k = counts[token]; k < counts[token + 1]; k++) visit(docs[k]);
    },
  };
}
