"""The peer of bench:containment: datasketch's MinHashLSHEnsemble, built in memory over the same signatures.

Reads DIR/values.bin (N x num_perm uint32 MinHash values, as near-dup stores them and datasketch computes
them), DIR/sizes.bin (N uint32 distinct-token counts) and DIR/queries.json (row numbers to look up), builds
one ensemble over every row, queries each query row, and prints one JSON line: build seconds, each query's
latency in ms, its results (row numbers, the query itself left out) and the peak memory.
"""
import json
import resource
import sys
import time

import numpy as np
from datasketch import MinHash, MinHashLSHEnsemble


def main(folder, threshold, num_perm, num_part):
    values = np.fromfile(f"{folder}/values.bin", dtype=np.uint32).reshape(-1, num_perm)
    sizes = np.fromfile(f"{folder}/sizes.bin", dtype=np.uint32)
    with open(f"{folder}/queries.json", encoding="utf-8") as f:
        queries = json.load(f)
    sketches = [MinHash(num_perm=num_perm, seed=1, scheme="affine32", hashvalues=values[i]) for i in range(len(sizes))]
    start = time.perf_counter()
    ensemble = MinHashLSHEnsemble(threshold=threshold, num_perm=num_perm, num_part=num_part)
    ensemble.index((i, sketches[i], max(1, int(sizes[i]))) for i in range(len(sizes)))
    build_seconds = time.perf_counter() - start
    latencies, results = [], []
    for q in queries:
        t = time.perf_counter()
        found = [k for k in ensemble.query(sketches[q], max(1, int(sizes[q]))) if k != q]
        latencies.append((time.perf_counter() - t) * 1000)
        results.append(found)
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"build_seconds": build_seconds, "latencies_ms": latencies, "results": results, "peak_mb": peak_kb / 1024}))


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
