"""bench:quality's datatrove peer: its MinHash deduplication at the defaults (MinhashConfig(): word 5-grams
by its English word tokenizer on its normalized text, 14 buckets of 8 hashes, 64-bit xxhash, no verification),
stages 1-3 run as datatrove's example runs them (LocalPipelineExecutor; stage 3 with save_cluster_id), the
cluster of each document read from stage 3's .clusters file (document number, cluster id).
"""
import os
import shutil
import struct
import sys
import tempfile
import time
from importlib.metadata import version

from datatrove.executor.local import LocalPipelineExecutor
from datatrove.pipeline.dedup.minhash import MinhashConfig, MinhashDedupBuckets, MinhashDedupCluster, MinhashDedupSignature
from datatrove.pipeline.readers import JsonlReader

from peer_common import read_docs, report


def main(path):
    docs = read_docs(path)
    work = tempfile.mkdtemp(prefix="quality-datatrove-")
    try:
        data = os.path.join(work, "data")
        os.makedirs(data)
        shutil.copy(path, os.path.join(data, "docs.jsonl"))
        config = MinhashConfig()
        workers = os.cpu_count() or 1
        started = time.perf_counter()
        common = dict(skip_completed=False)
        LocalPipelineExecutor(pipeline=[JsonlReader(data, text_key="text", id_key="id"),
                                        MinhashDedupSignature(output_folder=f"{work}/sigs", config=config)],
                              tasks=1, workers=1, logging_dir=f"{work}/logs/1", **common).run()
        LocalPipelineExecutor(pipeline=[MinhashDedupBuckets(input_folder=f"{work}/sigs", output_folder=f"{work}/buckets", config=config)],
                              tasks=config.num_buckets, workers=workers, logging_dir=f"{work}/logs/2", **common).run()
        LocalPipelineExecutor(pipeline=[MinhashDedupCluster(input_folder=f"{work}/buckets", output_folder=f"{work}/remove",
                                                            config=config, save_cluster_id=True)],
                              tasks=1, workers=1, logging_dir=f"{work}/logs/3", **common).run()
        clusters = {}
        cluster_file = f"{work}/remove/000000.clusters"
        if os.path.exists(cluster_file):
            with open(cluster_file, "rb") as f:
                raw = f.read()
            for doc, cluster in struct.iter_unpack("<II", raw):
                clusters[docs[doc]["id"]] = cluster
        report("datatrove", version("datatrove"), f"MinhashConfig() defaults: {config}, no verification", started, clusters)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1])
