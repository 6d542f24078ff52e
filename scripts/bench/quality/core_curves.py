"""Template-robust similarities against the truth, with exact Jaccard (no MinHash noise): what a signature
that compares a document's own text (its "core": its word 4-shingles without those in more than a share of
the documents) could reach, and at what cost on corpora that are not templated.

    python scripts/bench/quality/core_curves.py CORPUS.jsonl.gz BARS SPEC [SPEC ...]
    e.g. ... templated.jsonl.gz 0.6,0.7,0.8 plain 0.05/0.1/2 0.005/1/0.9

A corpus file holds JSON lines {id, family, text} (bench:quality writes each corpus's to
<cache>/runs/<corpus>/docs.jsonl; gzip it or give it as it is). Each SPEC is one row per bar, cut as dedup cuts
(shingle_curves.py) and scored as bench:quality scores:
  plain                  all word 4-shingles
  SHARE/KEEP/TIGHT       the core: shingles in at most max(3, SHARE x documents) documents; a document whose
                         core is smaller than KEEP (a count when >= 1, else a share of its shingles) is compared
                         whole; a pair whose whole texts are at J >= TIGHT is compared whole (TIGHT 2: never)
  SHARE/KEEP/TIGHT/g     the same, a shingle's documents counted once per group of near-identical texts
                         (J >= TIGHT): copies of one text do not make its shingles template text
  rule/SHARE/TIGHT[/P]   src/sketch/core-similarity.ts's rule, exact (no P) or estimated from P MinHash values
                         of every shingle with one template bit each (seeded affine permutations, as the product
                         estimates it): whole texts at >= TIGHT compared whole; cores of CORE_MIN (20) shingles
                         or more by the share of the shorter core the other holds, at most the whole texts'
                         Jaccard; smaller cores by their Jaccard; no core on either side, whole
Needs numpy and scipy; a few GB of memory for 7,000 documents (dense matrices).
"""
import collections
import gzip
import hashlib
import json
import re
import sys

import numpy as np
from scipy import sparse

path, bars, specs = sys.argv[1], [float(b) for b in sys.argv[2].split(",")], sys.argv[3:]
opener = gzip.open if path.endswith(".gz") else open
docs = [json.loads(line) for line in opener(path, "rt") if line.strip()]
n = len(docs)
words = [re.sub(r"[^\w\s]", " ", d["text"].lower()).split() for d in docs]
shingled = [{" ".join(w[i:i + 4]) for i in range(max(1, len(w) - 3))} if w else set() for w in words]


def inter_union(sets):
    vocab, rows, cols = {}, [], []
    for i, s in enumerate(sets):
        for x in s:
            rows.append(i)
            cols.append(vocab.setdefault(x, len(vocab)))
    m = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)), shape=(n, len(vocab)))
    inter = (m @ m.T).toarray()
    size = np.array([len(s) for s in sets], dtype=np.float32)
    return inter, size[:, None] + size[None, :] - inter


def jaccard(sets):
    inter, union = inter_union(sets)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0).astype(np.float32)


j4 = jaccard(shingled)
upper = np.triu_indices(n, 1)
j4u = j4[upper]


def union_find(pairs):
    parent = list(range(n))

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for a, b in pairs:
        parent[find(a)] = find(b)
    return np.array([find(i) for i in range(n)])


families = collections.defaultdict(list)
for i, d in enumerate(docs):
    families[d["family"]].append(i)
group = union_find([(m[0], x) for m in families.values() for x in m[1:]] + list(zip(*[u[j4u >= 0.9] for u in upper])))
true = group[upper[0]] == group[upper[1]]
needed = true & (j4u >= 0.7)
order = np.argsort(-np.array([len(w) for w in words]), kind="stable")
position = np.empty(n, int)
position[order] = np.arange(n)
source = open(__file__.replace("core_curves.py", "shingle_curves.py")).read()
exec(source[source.index("def cut"):source.index("def score")])  # the same cut as shingle_curves.py


def score(label, owner):
    together = owner[upper[0]] == owner[upper[1]]
    precision = (together & true).sum() / max(1, together.sum())
    recall = (together & needed).sum() / max(1, needed.sum())
    split = ((j4u >= 0.9) & ~together).sum()
    print(f"| {label} | {precision:.3f} | {recall:.3f} | {split} | {np.bincount(owner).max()} |", flush=True)


def document_counts(tight, grouped):
    if not grouped:
        return collections.Counter(x for s in shingled for x in s), n
    near = union_find(zip(*[u[j4u >= tight] for u in upper]))
    members = collections.defaultdict(set)
    for i, g in enumerate(near):
        members[g] |= shingled[i]
    return collections.Counter(x for s in members.values() for x in s), len(members)


def core_similarity(spec):
    parts = spec.split("/")
    share, keep, tight = float(parts[0]), float(parts[1]), float(parts[2])
    df, units = document_counts(tight, parts[-1] == "g")
    cap = max(3, share * units)
    cores = []
    for s in shingled:
        core = {x for x in s if df[x] <= cap}
        enough = len(core) >= keep if keep >= 1 else len(core) >= max(1, keep * len(s))
        cores.append(core if enough else s)
    jc = jaccard(cores)
    return np.where(j4 >= tight, np.maximum(j4, jc), jc)


CORE_MIN = 20


def rule(whole, core, a, b, tight):
    """core-similarity.ts's similarityOf, on arrays of pairs (core < 0: no core token decided a place)."""
    shorter = np.minimum(a, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        held = np.where(shorter > 0, np.minimum(1, core * (a + b) / ((1 + core) * np.maximum(shorter, 1))), 0)
    by_core = np.where(core < 0, 0, np.where(shorter < CORE_MIN, core, np.minimum(whole, held)))
    return np.where(whole >= tight, whole, np.where((a == 0) & (b == 0), whole, by_core))


def minhash_with_bits(template, perms):
    """Each document's MinHash of every shingle, and for each value whether a template shingle gave it."""
    rng = np.random.default_rng(1)
    a = rng.integers(1, 1 << 32, perms, dtype=np.uint64)
    b = rng.integers(0, 1 << 32, perms, dtype=np.uint64)
    values = np.zeros((n, perms), np.uint32)
    bits = np.zeros((n, perms), bool)
    for i, s in enumerate(shingled):
        items = sorted(s)
        h = np.array([int.from_bytes(hashlib.sha1(x.encode()).digest()[:4], "little") for x in items], dtype=np.uint64)
        permuted = ((h[:, None] * a[None, :] + b[None, :]) % np.uint64(4294967311)) & np.uint64(0xFFFFFFFF)
        first = permuted.argmin(0)
        values[i] = permuted[first, np.arange(perms)]
        bits[i] = np.array([x in template for x in items], bool)[first]
    return values, bits


def rule_similarity(spec):
    parts = spec.split("/")
    share, tight = float(parts[1]), float(parts[2])
    df, units = document_counts(tight, False)
    cap = max(3, share * units)
    template = {x for x, c in df.items() if c > cap}
    cores = [s - template for s in shingled]
    size = np.array([len(c) for c in cores], np.float64)
    if len(parts) == 3:
        inter, union = inter_union(cores)
        with np.errstate(divide="ignore", invalid="ignore"):
            core = np.where(union > 0, inter / union, -1)
        return rule(j4, core, size[:, None], size[None, :], tight)
    values, bits = minhash_with_bits(template, int(parts[3]))
    similarity = np.zeros((n, n), np.float32)
    candidates = np.nonzero(j4u >= 0.3)[0]  # the pairs LSH at 0.5 would find, and more
    for start in range(0, len(candidates), 100_000):
        k = candidates[start:start + 100_000]
        x, y = upper[0][k], upper[1][k]
        equal = values[x] == values[y]
        template_min = np.where(values[x] <= values[y], bits[x], bits[y])
        places = (~template_min).sum(1)
        core = np.where(places > 0, (equal & ~template_min).sum(1) / np.maximum(places, 1), -1)
        similarity[x, y] = similarity[y, x] = rule(equal.mean(1), core, size[x], size[y], tight)
    return similarity


print(f"{n} documents, {true.sum()} true pairs, {needed.sum()} at J >= 0.7\n")
print("| similarity, bar | pair precision | recall (J >= 0.7) | J >= 0.9 pairs split | largest |")
print("|---|---|---|---|---|")
for spec in specs:
    similarity = j4 if spec == "plain" else rule_similarity(spec) if spec.startswith("rule/") else core_similarity(spec)
    for bar in bars:
        score(f"{spec}, {bar}", cut(similarity, bar))
