"""Index an NDJSON file of documents ({"id": ..., ...}) with the official Python client's helpers.bulk.

Usage: python_bulk.py opensearch|elasticsearch URL INDEX FILE
Prints one JSON line: {"success": n, "errors": [the items the cluster (or the proxy) refused]}.
"""
import json
import sys

flavour, url, index, path = sys.argv[1:5]
if flavour == "opensearch":
    from opensearchpy import OpenSearch as Client, helpers
else:
    from elasticsearch import Elasticsearch as Client, helpers

client = Client(url, request_timeout=120)


def actions():
    with open(path, encoding="utf-8") as lines:
        for line in lines:
            doc = json.loads(line)
            yield {"_index": index, "_id": doc["id"], "_source": doc}


success, errors = helpers.bulk(client, actions(), raise_on_error=False, chunk_size=50, refresh="wait_for")
print(json.dumps({"success": success, "errors": errors}))
