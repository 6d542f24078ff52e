"""A plain-Python statement of what simhash-py 0.4.0 computes.

Written from a reading of simhash-py 0.4.0 (simhash/__init__.py, simhash/simhash.pyx) and the
simhash-cpp sources it bundles (src/simhash.cpp, src/permutation.cpp). It is a specification
aid, not a port: generate.py checks every vector it produces against it when the real
simhash-py extension is available, and uses it only as a fallback when the extension cannot be
built (the fixture's meta.simhash.implementation says which was used).

Kept compatible with Python 3.6 so that simhash_vectors.py can import it under the interpreter
that builds simhash-py.
"""
import hashlib
import struct

MASK64 = (1 << 64) - 1


def unsigned_hash(data):
    """The first 8 bytes of MD5(data), read as a big-endian unsigned 64-bit integer."""
    if not isinstance(data, bytes):
        raise TypeError('unsigned_hash takes bytes')
    return struct.unpack('>Q', hashlib.md5(data).digest()[:8])[0]


def num_differing_bits(a, b):
    """Hamming distance between two unsigned 64-bit integers."""
    return bin((a ^ b) & MASK64).count('1')


def compute(hashes):
    """Bit i of the result is 1 iff strictly more of the hashes have bit i set than clear.

    Every list element counts (repeats count again); a tie, including the empty list, gives 0.
    """
    result = 0
    total = len(hashes)
    for i in range(64):
        ones = 0
        for h in hashes:
            if (h >> i) & 1:
                ones += 1
        if ones - (total - ones) > 0:
            result |= 1 << i
    return result


def shingle(tokens, window=4):
    """What simhash-py's shingle generator yields on Python <= 3.6: each run of `window`
    consecutive tokens, as a list; nothing at all when there are fewer than `window` tokens.

    (On Python >= 3.7 the original generator raises RuntimeError when it is exhausted, whatever
    the input, because it lets StopIteration escape; see PEP 479.)
    """
    if window <= 0:
        raise ValueError('Window size must be positive')
    tokens = list(tokens)
    for start in range(0, len(tokens) - window + 1):
        yield tokens[start:start + window]


def find_all(hashes, number_of_blocks, different_bits):
    """Every unordered pair (a, b), a < b, of DISTINCT values among `hashes` that differ in at
    most `different_bits` bits.

    simhash-cpp reaches this set with its block-permutation tables (the 64 bits are cut into
    `number_of_blocks` contiguous blocks; pairs within k bits agree on at least m - k blocks, so
    one of the C(m, m - k) tables puts them in the same prefix run); the result is exactly the
    brute-force set. Input values are deduplicated first (the C++ side takes an unordered_set).
    It requires number_of_blocks <= 64 and number_of_blocks > different_bits.
    """
    if number_of_blocks > 64:
        raise ValueError('Number of blocks must not exceed 64')
    if number_of_blocks <= different_bits:
        raise ValueError('Number of blocks must be greater than different_bits')
    values = sorted(set(hashes))
    out = []
    for i, a in enumerate(values):
        for b in values[i + 1:]:
            if num_differing_bits(a, b) <= different_bits:
                out.append((a, b))
    return out
