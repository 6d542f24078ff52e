"""A peer of bench:sign: rensa's RMinHash or CMinHash over the same tokens near-dup hashes.

rensa (Rust, on PyPI) is the fastest MinHash that users pick today. It is not datasketch-compatible (its
own token hash and permutations), so it is the anchor for near-dup's fastest condenser, not for sha1.
Not installed by the benchmark: install it once into the benchmark's environment,
    python3 -m venv .venv-bench && .venv-bench/bin/pip install rensa==0.5.0
(the folder under the checkout is gitignored; NEAR_DUP_BENCH_VENV names another one).

Usage: rensa_peer.py TOKENS.jsonl r|c [NUM_PERM]. Reads JSON lines {"text": normalized text}, splits
with str.split() (near-dup's white-space tokenizer) and times only the MinHash work, one sketch per
document with update(tokens), as datasketch_peer.py times update_batch. Prints one JSON line.
"""
import json
import resource
import sys
import time
from importlib.metadata import version

import rensa

from peer_corpus import read_tokens


def main(path, kind, num_perm):
    sketch = {"r": rensa.RMinHash, "c": rensa.CMinHash}[kind]
    docs = read_tokens(path)
    start = time.perf_counter()
    checksum = 0
    for tokens in docs:
        m = sketch(num_perm=num_perm, seed=42)
        m.update(tokens)
        checksum ^= int(m.digest()[0])
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "peak_mb": peak_kb / 1024, "checksum": checksum, "rensa": version("rensa")}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 128)
