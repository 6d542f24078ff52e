"""Writes test/fixtures/simhash-doc.json: reference vectors of the simhash-doc preset made in Python.

A plain-Python statement of the preset's rules as the README gives them, written from that text, not
from near-dup's code: it shows that a Python pipeline makes the same tokens and the same base32 SimHash.
Only the `regex` module is needed beyond the standard library (for \\p{...} classes):

    python3 -m venv .venv-simhash-doc && .venv-simhash-doc/bin/pip install regex==2024.11.6
    .venv-simhash-doc/bin/python scripts/interop/simhash_doc_vectors.py > test/fixtures/simhash-doc.json

The texts hold no markup: removing it (HTML parsing) is extraction, before the scheme.
"""
import base64
import hashlib
import json
import platform
import struct
import sys
import unicodedata

import regex

# Default-ignorable code points, and the control characters that are not white space to str.isspace().
INVISIBLE = regex.compile(r'[\p{Default_Ignorable_Code_Point}\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f]')
TOKEN = regex.compile(r'[\p{L}\p{M}\p{Nd}]+')
LETTER = regex.compile(r'\p{L}')


def tokens(text):
    folded = INVISIBLE.sub('', unicodedata.normalize('NFKC', text)).lower()
    return [t for t in TOKEN.findall(folded) if len(t) >= 3 and LETTER.search(t)]


def unsigned_hash(data):
    """simhash-py's unsigned_hash: the first 8 bytes of MD5, big-endian."""
    return struct.unpack('>Q', hashlib.md5(data).digest()[:8])[0]


def simhash(hashes):
    """simhash-py's compute: a bit is set when more than half the hashes have it set."""
    counts = [0] * 64
    for h in hashes:
        for bit in range(64):
            counts[bit] += (h >> bit) & 1
    return sum(1 << bit for bit in range(64) if 2 * counts[bit] > len(hashes))


def base32(value):
    return base64.b32encode(struct.pack('>Q', value)).decode('ascii').rstrip('=')


TEXTS = [
    'The quick brown fox jumps over the lazy dog.',
    'In 2017, 3.14 or 1,000,000: 42nd abc123 123abc x86_64 and an ox.',
    'THE QUICK\u200b BROWN FO\u00adX JU\u200dMPS OVER THE LA\ufeffZY DOG',
    'Stra\u00dfe \u039f\u0394\u039f\u03a3 \u0395\u03bb\u03bb\u03ac\u03b4\u03b1 \u041c\u043e\u0441\u043a\u0432\u0430 '
    '\u0915\u093f\u0924\u093e\u092c \u0639\u0631\u0628\u064a \u6771\u4eac\u90fd \ufb01le \uff26\uff55\uff4c\uff4c',
    'Cafe\u0301 caf\u00e9 na\u00efve r\u00e9sum\u00e9 \u00fcber Gr\u00fc\u00dfe',
    'line\nbreaks\tand\u2028separators\u3000stay con\u0007trols go',
    'Permission is hereby granted, free of charge, to any person obtaining a copy of this software and '
    'associated documentation files (the "Software"), to deal in the Software without restriction, '
    'including without limitation the rights to use, copy, modify, merge, publish, distribute, sublicense, '
    'and/or sell copies of the Software.',
    '12 34 an ox',
    '',
]


def main():
    vectors = []
    for text in TEXTS:
        toks = tokens(text)
        value = simhash([unsigned_hash(t.encode('utf-8')) for t in toks])
        vectors.append({'text': text, 'tokens': toks, 'simhash': base32(value), 'hex': '%016x' % value})
    meta = {
        'generator': 'scripts/interop/simhash_doc_vectors.py',
        'python': platform.python_version(),
        'regex': regex.__version__,
        'unicodedata': unicodedata.unidata_version,
    }
    json.dump({'meta': meta, 'vectors': vectors}, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
