"""bench:quality's text-dedup peer: its MinHash deduplication as its example configuration sets it
(configs/minhash.toml: 240 permutations, threshold 0.7, word 5-grams of its \\W tokens, bands and rows by
datasketch's optimiser, 64-bit xxh3, check_false_positive on: a document is kept in its LSH cluster when one
of its pairs in that cluster reaches exact Jaccard 0.7; seed 42), run offline on a local JSON-lines file
(datasets' json loader, HF_DATASETS_OFFLINE), each document's __CLUSTER__ read from the saved dataset.
text-dedup takes no default for threshold or num_perm: the example's are used. Needs Python >= 3.12.
"""
import os
import shutil
import sys
import tempfile
import time
from importlib.metadata import version

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pathlib import Path  # noqa: E402

from datasets import load_from_disk  # noqa: E402
from text_dedup.config.base import load_config_from_toml  # noqa: E402
from text_dedup.minhash import main as minhash_main  # noqa: E402

from peer_common import report  # noqa: E402

CONFIG = """
[input]
input_type = "local_files"
file_type = "json"

[input.read_arguments]
path = "json"
data_files = "{data}"
split = "train"
cache_dir = "{cache}"

[algorithm]
algorithm_name = "minhash"
text_column = "text"
seed = 42
batch_size = 10000
num_perm = 240
threshold = 0.7
false_positive_weight = 0.5
false_negative_weight = 0.5
hash_bits = 64
ngram_size = 5
check_false_positive = true

[output]
output_dir = "{out}"
clean_cache = false
save_clusters = true
keep_index_column = true
keep_cluster_column = true
skip_filtering = true

[debug]
enable_profiling = false
"""


def main(path):
    work = tempfile.mkdtemp(prefix="quality-text-dedup-")
    try:
        toml = Path(work, "config.toml")
        toml.write_text(CONFIG.format(data=os.path.abspath(path), cache=f"{work}/cache", out=f"{work}/out"))
        config = load_config_from_toml(toml)
        algo = config.algorithm
        started = time.perf_counter()
        minhash_main(config)
        ds = load_from_disk(f"{work}/out")
        index, cluster = algo.internal_index_column, algo.cluster_column
        rows = ds.select_columns(["id", index, cluster]).to_list()
        sizes = {}
        for r in rows:
            sizes[r[cluster]] = sizes.get(r[cluster], 0) + 1
        clusters = {r["id"]: r[cluster] for r in rows if sizes[r[cluster]] > 1}
        report("text-dedup", version("text-dedup"), f"configs/minhash.toml: num_perm {algo.num_perm}, threshold {algo.threshold}, "
               f"b={algo.bands}, r={algo.rows}, word {algo.ngram_size}-grams, check_false_positive {algo.check_false_positive}", started, clusters)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1])
