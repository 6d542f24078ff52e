"""bench:quality's datasketch peer: MinHashLSH at threshold 0.8 on word 5-gram shingles (lower-cased,
white-space words), 128 permutations, every candidate pair verified by its MinHash estimate >= 0.8, the
verified pairs joined by union-find. datasketch has no clustering of its own: this is how its users build one.
"""
import sys
import time

import datasketch
from datasketch import MinHash, MinHashLSH

from peer_common import components, read_docs, report

THRESHOLD, NGRAM, NUM_PERM = 0.8, 5, 128


def shingles(text):
    words = text.lower().split()
    if len(words) < NGRAM:
        return {" ".join(words).encode("utf-8")} if words else set()
    return {" ".join(words[i:i + NGRAM]).encode("utf-8") for i in range(len(words) - NGRAM + 1)}


def main(path):
    docs = read_docs(path)
    started = time.perf_counter()
    sketches = []
    for d in docs:
        m = MinHash(num_perm=NUM_PERM)
        m.update_batch(list(shingles(d["text"])))
        sketches.append(m)
    lsh = MinHashLSH(threshold=THRESHOLD, num_perm=NUM_PERM)
    signed = [i for i, d in enumerate(docs) if d["text"].split()]  # an empty text has no MinHash to compare
    for i in signed:
        lsh.insert(i, sketches[i])
    pairs = []
    for i in signed:
        m = sketches[i]
        for j in lsh.query(m):
            if j > i and m.jaccard(sketches[j]) >= THRESHOLD:
                pairs.append((i, j))
    roots = components(len(docs), pairs)
    report("datasketch", datasketch.__version__, f"MinHashLSH threshold {THRESHOLD} (b={lsh.b}, r={lsh.r}), word {NGRAM}-grams, "
           f"{NUM_PERM} permutations, pairs verified at estimate >= {THRESHOLD}, union-find", started,
           {docs[i]["id"]: docs[r]["id"] for i, r in roots.items()})


if __name__ == "__main__":
    main(sys.argv[1])
