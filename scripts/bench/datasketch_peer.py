"""The peer of bench:sign: datasketch MinHash.update_batch over the same tokens near-dup hashes.

Reads JSON lines {"text": normalized text}, splits with str.split() (near-dup's white-space tokenizer),
and times only the MinHash work: encoding the tokens to UTF-8 and update_batch. Prints one JSON line.
"""
import json
import resource
import sys
import time

import datasketch
from datasketch import MinHash

from peer_corpus import read_tokens


def main(path, num_perm):
    docs = read_tokens(path)
    start = time.perf_counter()
    checksum = 0
    for tokens in docs:
        m = MinHash(num_perm=num_perm)
        m.update_batch([t.encode("utf-8") for t in tokens])
        checksum ^= int(m.hashvalues[0])
    seconds = time.perf_counter() - start
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "peak_mb": peak_kb / 1024, "checksum": checksum,
                      "datasketch": datasketch.__version__ if hasattr(datasketch, "__version__") else "?"}))


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 128)
