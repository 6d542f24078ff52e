"""What bench:quality's Python peers share: reading the corpus, writing their clusters, timing.

A peer reads JSON lines {"id", "text"} (argv[1]) and writes one JSON object to argv[2] (its libraries may
print on stdout): {"tool", "version", "settings", "seconds", "clusters": {id: cluster key}} (documents in no
cluster left out).
Imported by its folder's peers: Python puts a script's own folder first on sys.path.
"""
import json
import sys
import time


def read_docs(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def components(n, pairs):
    """Union-find over pairs of row numbers: {row: root} for the rows in a component of two or more."""
    parent = list(range(n))

    def root(i):
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in pairs:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    roots = [root(i) for i in range(n)]
    sizes = {}
    for r in roots:
        sizes[r] = sizes.get(r, 0) + 1
    return {i: r for i, r in enumerate(roots) if sizes[r] > 1}


def report(tool, version, settings, started, clusters):
    seconds = time.perf_counter() - started
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        json.dump({"tool": tool, "version": version, "settings": settings, "seconds": seconds,
                   "clusters": {k: str(v) for k, v in clusters.items()}}, f)
