"""The corpus the MinHash peers of bench:sign read, in one place so that every peer sees the same tokens.

Reads JSON lines {"text": normalized text} and splits each with str.split() (near-dup's white-space
tokenizer). Imported by its folder's peers: Python puts a script's own folder first on sys.path.
"""
import json


def read_tokens(path):
    """Each document's tokens, in file order."""
    docs = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            docs.append(json.loads(line)["text"].split())
    return docs
