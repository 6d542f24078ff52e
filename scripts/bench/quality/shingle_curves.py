"""What a signature could reach on a labelled corpus, measured with exact Jaccard (no MinHash noise).

For each way of making a document's token set (word sets, word k-shingles, k-shingles without the
"template shingles" that occur in more than a share of the documents, a document left with too few falling
back to all of its shingles), and each bar, the documents are cut into clusters as dedup cuts them (groups
of pairs at >= 0.85 first, never split; then each group, longest first, to the nearest canonical that all of
its members are within the bar of), and the clusters are scored against the truth as bench:quality scores
them: pair precision, recall of true pairs with exact J >= 0.7 of word 4-shingles, pairs at J >= 0.9 split.

    python scripts/bench/quality/shingle_curves.py .cache/quality/templated.jsonl.gz   (numpy and scipy)

Needs numpy and scipy (a few GB of memory for 7,000 documents: the Jaccard matrix is dense).
"""
import gzip
import json
import re
import sys

import numpy as np
from scipy import sparse

docs = [json.loads(line) for line in gzip.open(sys.argv[1])]
n = len(docs)
words = [re.sub(r"[^\w\s]", " ", d["text"].lower()).split() for d in docs]


def shingles(w, k):
    return {" ".join(w[i:i + k]) for i in range(max(1, len(w) - k + 1))} if w else set()


def jaccard(sets):
    vocab, rows, cols = {}, [], []
    for i, s in enumerate(sets):
        for x in s:
            rows.append(i)
            cols.append(vocab.setdefault(x, len(vocab)))
    m = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(n, len(vocab)))
    inter = (m @ m.T).toarray()
    size = np.array([len(s) for s in sets], dtype=np.float32)
    union = size[:, None] + size[None, :] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0)


s4 = [shingles(w, 4) for w in words]
j4 = jaccard(s4)
upper = np.triu_indices(n, 1)
j4u = j4[upper]

# Truth: the same family, or nearly identical texts (exact J >= 0.9), united.
parent = list(range(n))


def find(x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


families = {}
for i, d in enumerate(docs):
    families.setdefault(d["family"], []).append(i)
for members in families.values():
    for x in members[1:]:
        parent[find(x)] = find(members[0])
for a, b in zip(*[u[j4u >= 0.9] for u in upper]):
    parent[find(a)] = find(b)
group = np.array([find(i) for i in range(n)])
true = group[upper[0]] == group[upper[1]]
needed = true & (j4u >= 0.7)
order = np.argsort(-np.array([len(w) for w in words]), kind="stable")
position = np.empty(n, int)
position[order] = np.arange(n)


def cut(j, bar, tight=0.85):
    root = list(range(n))

    def top(x):
        while root[x] != x:
            root[x] = root[root[x]]
            x = root[x]
        return x

    for a, b in zip(*np.nonzero(np.triu(j >= max(bar, tight), 1))):
        ra, rb = top(a), top(b)
        if ra != rb:
            root[max(ra, rb, key=lambda r: position[r])] = min(ra, rb, key=lambda r: position[r])
    groups = {}
    for i in order:
        groups.setdefault(top(i), []).append(i)
    owner = -np.ones(n, int)
    canonicals = []
    for members in sorted(groups.values(), key=lambda g: position[g[0]]):
        best = -1
        if canonicals:
            c = np.array(canonicals)
            least = j[np.ix_(members, c)].min(axis=0)
            k = int(np.argmax(least))
            best = c[k] if least[k] >= bar else -1
        if best < 0:
            best = members[0]
            canonicals.append(best)
        owner[members] = best
    return owner


def score(name, owner):
    together = owner[upper[0]] == owner[upper[1]]
    precision = (together & true).sum() / max(1, together.sum())
    recall = (together & needed).sum() / needed.sum()
    split = ((j4u >= 0.9) & ~together).sum()
    print(f"| {name} | {precision:.3f} | {recall:.3f} | {split} | {np.bincount(owner).max()} |", flush=True)


print(f"{n} documents, {true.sum()} true pairs, {needed.sum()} at J >= 0.7\n")
print("| token set, bar | pair precision | recall (J >= 0.7) | pairs at J >= 0.9 split | largest |")
print("|---|---|---|---|---|")
for bar in (0.5, 0.6, 0.7, 0.8):
    score(f"word sets, {bar}", cut(jaccard([set(w) for w in words]), bar))
for k in (4, 5):
    sk = s4 if k == 4 else [shingles(w, k) for w in words]
    for bar in (0.6, 0.7, 0.8):
        score(f"{k}-shingles, {bar}", cut(j4 if k == 4 else jaccard(sk), bar))
    df = {}
    for s in sk:
        for x in s:
            df[x] = df.get(x, 0) + 1
    for share in (0.01, 0.02, 0.05, 0.1):
        cap = max(2, share * n)
        sets = []
        for s in sk:
            kept = {x for x in s if df[x] <= cap}
            sets.append(kept if len(kept) >= max(5, 0.1 * len(s)) else s)
        j = jaccard(sets)
        for bar in (0.6, 0.7, 0.8):
            score(f"{k}-shingles without those in > {share:.0%} of documents, {bar}", cut(j, bar))
