"""Writes test/fixtures/interop.json: reference vectors from Python datasketch and simhash-py.

Run through generate.sh, which makes the venvs. Directly:

    python generate.py --out test/fixtures/interop.json \
        [--simhash-python /path/to/py3.6-venv/bin/python | --simhash-reference]

The output depends only on the pinned package versions: there is no clock, no hash
randomization and no global random state in it (inputs come from a fixed SplitMix64 stream).
Integers that may exceed 2^53 are written as decimal strings.
"""
import argparse
import base64
import importlib.metadata
import json
import os
import platform
import subprocess
import sys
import zlib

import mmh3
import numpy as np
import datasketch
from datasketch import LeanMinHash, MinHash, MinHashLSH
from datasketch import lsh as ds_lsh
from datasketch.hashfunc import sha1_hash32

HERE = os.path.dirname(os.path.abspath(__file__))
MASK64 = (1 << 64) - 1
SCHEMES = ('affine32', 'legacy')  # datasketch 2.0.0's default first


class SplitMix64:
    """A tiny fixed PRNG so inputs never depend on Python's `random` or numpy's global state."""

    def __init__(self, seed):
        self.state = seed & MASK64

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & MASK64
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return z ^ (z >> 31)

    def below(self, n):
        return self.next() % n  # bias is irrelevant here

    def choice(self, seq):
        return seq[self.below(len(seq))]


# ---------------------------------------------------------------------------------------------
# Hash functions, exactly as handed to datasketch.

def mmh3_hash32(data):
    return mmh3.hash(data, 0, signed=False)


def crc32_hash32(data):
    return zlib.crc32(data) & 0xFFFFFFFF


HASHFUNCS = {'sha1': sha1_hash32, 'mmh3': mmh3_hash32, 'crc32': crc32_hash32}


def minhash_values(tokens, num_perm=128, seed=1, hash_name='sha1', scheme=None):
    m = MinHash(num_perm=num_perm, seed=seed, hashfunc=HASHFUNCS[hash_name], scheme=scheme)
    m.update_batch([t.encode('utf8') for t in tokens])
    return m, [int(v) for v in m.hashvalues]


def dec(values):
    return [str(int(v)) for v in values]


# ---------------------------------------------------------------------------------------------
# a. permutations

def gen_permutations():
    cases = []
    for scheme in SCHEMES:
        for seed in (1, 0, 42, 7, 4294967295):
            cases.append((scheme, seed, 16))
        cases.append((scheme, 1, 256))
    out = []
    for scheme, seed, num_perm in cases:
        a, b = MinHash(num_perm=num_perm, seed=seed, scheme=scheme).permutations
        out.append({'scheme': scheme, 'seed': seed, 'num_perm': num_perm, 'a': dec(a), 'b': dec(b)})
    return out


# ---------------------------------------------------------------------------------------------
# b. token_hashes

def token_hash_inputs():
    tokens = [
        '', ' ', 'a', 'ab', 'abc', 'abcd', 'hello', 'hello world', 'The quick brown fox',
        'Hello', 'HELLO', '0', '12345', '\x00', '\t\n', 'a\x00b',
        'café', 'cafe\u0301', 'naïve', 'Ærøskøbing', 'Straße', 'Ελληνικά', 'русский',
        '東京', '日本語のテキスト', '한국어', '中文分词测试',
        '😀', '👨\u200d👩\u200d👧', '🇫🇷', '❤️', 'near-dup 🎉 test',
        '\u007f', '\u0080', '\u07ff', '\u0800', '\uffff', '\U00010000', '\U0010ffff', '\u00a0', '\u3000',
    ]
    # every tail length of mmh3's 4-byte blocks, and of SHA-1's 64-byte blocks around the padding edge
    tokens += ['x' * n for n in range(5, 18)]
    tokens += ['y' * n for n in (55, 56, 63, 64, 65)]
    tokens += ['long ' * 200, 'é' * 1000, '東' * 700, '😀' * 300, 'The quick brown fox jumps over the lazy dog. ' * 100]
    seen, unique = set(), []
    for t in tokens:
        if t not in seen:
            seen.add(t)
            unique.append(t)
    return unique


def gen_token_hashes():
    out = []
    for t in token_hash_inputs():
        b = t.encode('utf8')
        out.append({
            'token': t,
            'utf8_length': len(b),
            'sha1_hash32': sha1_hash32(b),
            'mmh3_32': mmh3_hash32(b),
            'crc32': crc32_hash32(b),
        })
    return out


# ---------------------------------------------------------------------------------------------
# c. minhash

def random_token(rng):
    pieces = ['a', 'e', 'i', 'o', 'u', 'n', 's', 't', 'r', 'k', 'é', 'ü', 'ß', 'ø', '東', '京', '語',
              '한', '😀', '🎉', 'x', 'y', 'z', '-', "'", '1', '7']
    return ''.join(rng.choice(pieces) for _ in range(1 + rng.below(10)))


def token_sets():
    rng = SplitMix64(20240601)
    vocab100 = [random_token(rng) for _ in range(70)]
    vocab1000 = [random_token(rng) for _ in range(600)]
    return {
        1: ['hello'],
        5: ['a', 'é', 'a', '東京', ''],  # a duplicate and the empty token
        100: [rng.choice(vocab100) for _ in range(100)],
        1000: [rng.choice(vocab1000) for _ in range(1000)],
    }


def gen_minhash():
    sets = token_sets()
    sizes = (1, 5, 100, 1000)
    out = []
    for scheme in SCHEMES:
        for hash_name in ('sha1', 'mmh3', 'crc32'):
            for i, num_perm in enumerate((16, 64, 128, 256)):
                for j, seed in enumerate((1, 0, 42)):
                    tokens = sets[sizes[(i + j) % 4]]
                    _, hv = minhash_values(tokens, num_perm, seed, hash_name, scheme)
                    out.append({'scheme': scheme, 'hash': hash_name, 'num_perm': num_perm, 'seed': seed,
                                'tokens': tokens, 'hashvalues': hv})
        for num_perm, seed in ((128, 1), (16, 42)):
            _, hv = minhash_values([], num_perm, seed, 'sha1', scheme)
            assert hv == [4294967295] * num_perm
            out.append({'scheme': scheme, 'hash': 'sha1', 'num_perm': num_perm, 'seed': seed,
                        'tokens': [], 'hashvalues': hv})
    # default scheme check: MinHash() with no scheme is affine32 in datasketch 2.0.0
    assert MinHash(num_perm=16).scheme == 'affine32'
    return out


# ---------------------------------------------------------------------------------------------
# d. tokenizers (no normalization)

TOKENIZER_TEXTS = [
    'The quick brown fox jumps over the lazy dog',
    'Line one\n\tindented line two\r\nline three  with  double spaces\n\n',
    'price:\u00a0100\u00a0EUR\u3000東京\u3000タワー',
    'I \u2764\ufe0f near-dup \U0001f468\u200d\U0001f469\u200d\U0001f467 \U0001f1eb\U0001f1f7 ok \U0001f600\U0001f600',
    'Cafe\u0301 na\u0308ive re\u0301sume\u0301 \u2014 café naïve',
    '東京都は日本の首都です。',
    '  padded   text  ',
    # str.isspace() separators JS's \s lacks (\x1c-\x1f, \x85) and \s-only ones Python keeps (\u200b is
    # in neither; \ufeff and \u180e are not Python white space)
    'a\x1cb\x1dc\x1ed\x1ff\x85g\u200bh\ufeffi\u2028j\u2029k\u202fl\u205fm\u180en\u1680o\x0bp\x0cq',
    'hello',
    'hello world',
    'a b c',
    'x',
    '\U0001f600!',
    'é',
    '',
    ' \t\n\u00a0\u3000 ',
]


def tok_ws(text):
    return text.split()


def tok_ws_ngrams(text, n):
    words = text.split()
    if not words:
        return []
    if len(words) < n:
        return [' '.join(words)]
    return [' '.join(words[i:i + n]) for i in range(len(words) - n + 1)]


def tok_ngrams(text, n):
    if not text:
        return []
    if len(text) < n:
        return [text]
    return [text[i:i + n] for i in range(len(text) - n + 1)]


def tokenizers():
    tks = [('ws', tok_ws)]
    tks += [('white-space-%d-grams' % n, (lambda t, n=n: tok_ws_ngrams(t, n))) for n in range(2, 7)]
    tks += [('%d-grams' % n, (lambda t, n=n: tok_ngrams(t, n))) for n in range(1, 7)]
    return tks


def gen_tokenizers():
    out = []
    for text in TOKENIZER_TEXTS:
        for name, fn in tokenizers():
            tokens = fn(text)
            _, hv = minhash_values(tokens, 128, 1, 'sha1', None)
            _, hv_legacy = minhash_values(tokens, 128, 1, 'sha1', 'legacy')
            out.append({'tokenizer': name, 'text': text, 'tokens': tokens,
                        'minhash_sha1_128': hv, 'minhash_sha1_128_legacy': hv_legacy})
    return out


def gen_whitespace_chars():
    return [cp for cp in range(0x110000) if chr(cp).isspace()]


# ---------------------------------------------------------------------------------------------
# e. lsh_params

LSH_THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9, 0.95)
LSH_NUM_PERMS = (16, 32, 64, 128, 256)
LSH_WEIGHTS = ((0.5, 0.5), (0.25, 0.75), (0.75, 0.25), (0.1, 0.9))


def gen_lsh_params():
    out = []
    for num_perm in LSH_NUM_PERMS:
        grid = [(b, r) for b in range(1, num_perm + 1) for r in range(1, int(num_perm / b) + 1)]
        for threshold in LSH_THRESHOLDS:
            probs = {(b, r): (ds_lsh._false_positive_probability(threshold, b, r),
                              ds_lsh._false_negative_probability(threshold, b, r)) for b, r in grid}
            for fpw, fnw in LSH_WEIGHTS:
                b, r = ds_lsh._optimal_param(threshold, num_perm, fpw, fnw)
                # the same grid search, to report how close the runner-up came
                errors = sorted(((probs[g][0] * fpw + probs[g][1] * fnw), i, g) for i, g in enumerate(grid))
                best_err, _, best = errors[0]
                if best != (b, r):
                    raise SystemExit('grid search disagrees with _optimal_param at %r' % ((threshold, num_perm, fpw, fnw),))
                second_err, _, second = errors[1]
                fp, fn = probs[(b, r)]
                out.append({
                    'threshold': threshold, 'num_perm': num_perm, 'weights': [fpw, fnw],
                    'b': b, 'r': r,
                    'false_positive': fp, 'false_negative': fn, 'error': best_err,
                    'runner_up': {'b': second[0], 'r': second[1], 'error': second_err},
                })
    # the class itself agrees with the function
    lsh = MinHashLSH(threshold=0.8, num_perm=128, weights=(0.25, 0.75))
    case = next(c for c in out if c['threshold'] == 0.8 and c['num_perm'] == 128 and c['weights'] == [0.25, 0.75])
    assert (lsh.b, lsh.r) == (case['b'], case['r'])
    return out


# ---------------------------------------------------------------------------------------------
# f. lean_minhash

LEAN_BYTEORDERS = ('@', '=', '<', '>', '!')


def gen_lean_minhash():
    tokens = ['lean', 'minhash', 'serialization', 'vector', 'é', '東京', '😀']
    out = []
    for scheme in SCHEMES:
        for num_perm, seed in ((16, 1), (128, 5), (16, 5)):
            m, hv = minhash_values(tokens, num_perm, seed, 'sha1', scheme)
            lean = LeanMinHash(m)
            serialized = {}
            for order in LEAN_BYTEORDERS:
                if order == '@':
                    buf = bytearray(lean.bytesize())
                    lean.serialize(buf)  # the default byte order
                else:
                    buf = bytearray(lean.bytesize(order))
                    lean.serialize(buf, byteorder=order)
                back = LeanMinHash.deserialize(bytes(buf), byteorder=order)
                assert back.seed == seed and back.scheme == scheme and [int(v) for v in back.hashvalues] == hv
                serialized[order] = {'bytesize': len(buf), 'base64': base64.b64encode(bytes(buf)).decode('ascii')}
            out.append({'scheme': scheme, 'num_perm': num_perm, 'seed': seed, 'tokens': tokens,
                        'hashvalues': hv, 'serialized': serialized})
    return out


# ---------------------------------------------------------------------------------------------
# g. simhash

def simhash_request():
    rng = SplitMix64(0x5140_5140)
    r64 = rng.next

    compute = [
        [],
        [r64()],
        [MASK64],
        [r64(), r64()],
    ]
    x = r64()
    compute.append([x, x ^ MASK64])  # every bit tied -> 0
    compute.append([r64() for _ in range(3)])
    compute.append([r64() for _ in range(3)])
    y = r64()
    compute.append([y, y, r64()])  # a repeat counts twice
    compute.append([r64() for _ in range(10)])
    compute.append([r64() for _ in range(10)])
    half = [r64() for _ in range(5)]
    compute.append(half + [h ^ MASK64 for h in half])  # 10 values, all bits tied
    part = [r64() for _ in range(5)]
    compute.append(part + [h ^ 0xFFFFFFFF00000000 for h in part])  # ties in the high half only
    compute.append([r64() for _ in range(100)])
    compute.append([r64() for _ in range(100)])
    half = [r64() for _ in range(50)]
    compute.append(half + [h ^ 0x5555555555555555 for h in half])  # ties on alternate bits
    z = r64()
    compute.append([z] * 3)
    compute.append([z] * 10)
    compute.append([r64()] * 100)
    compute.append([0, MASK64])
    compute.append([1 << 63, 1 << 63, 0, 1])
    assert len(compute) == 20

    texts = ['', 'a', 'abc', 'hello world', 'The quick brown fox jumps over the lazy dog',
             'café', 'cafe\u0301', '東京都は日本の首都です。', '😀 emoji 🎉', 'w0 w1 w2 w3',
             'near duplicate detection with simhash', '\u00a0', 'tab\tseparated\tvalues',
             'x' * 1000, 'Lorem ipsum dolor sit amet, consectetur adipiscing elit. ' * 20]
    unsigned_hash = [t.encode('utf8').hex() for t in texts]

    shingle = [{'words': ['w%d' % i for i in range(n)], 'window': w} for n in range(0, 7) for w in range(1, 5)]

    pairs = [(0, 0), (0, MASK64), (0xDEADBEEF, 0xDEADBEAD), (1 << 63, 0), (MASK64, MASK64 ^ 1)]
    while len(pairs) < 10:
        a = r64()
        pairs.append((a, a ^ (1 << rng.below(64)) ^ (1 << rng.below(64))) if len(pairs) % 2 else (a, r64()))

    feature_texts = [
        'The quick brown fox jumps over the lazy dog',
        'The quick brown fox jumped over the lazy dog',
        'near-duplicate detection as a native capability of the index',
        'Line one\n\tindented line two\r\nline three',
        'price:\u00a0100\u00a0EUR\u3000東京\u3000タワー and more words here',
        'one two three four',
        'one two three',
        'one two',
        'one',
        '',
        'café naïve résumé 東京 😀 emoji words in a row',
    ]
    features = [t.split() for t in feature_texts]

    # ~200 fingerprints with planted near-duplicates
    hashes = [r64() for _ in range(100)]
    for _ in range(40):
        base = r64()
        hashes.append(base)
        for _ in range(1 + rng.below(2)):
            flips = rng.below(5)  # 0..4 bits; 0 plants an exact duplicate value
            v = base
            positions = set()
            while len(positions) < flips:
                positions.add(rng.below(64))
            for p in positions:
                v ^= 1 << p
            hashes.append(v)
    while len(hashes) < 200:
        hashes.append(r64())
    for i in range(len(hashes) - 1, 0, -1):  # Fisher-Yates with the fixed stream
        j = rng.below(i + 1)
        hashes[i], hashes[j] = hashes[j], hashes[i]

    return {
        'compute': [[str(h) for h in hs] for hs in compute],
        'unsigned_hash': unsigned_hash,
        'shingle': shingle,
        'num_differing_bits': [[str(a), str(b)] for a, b in pairs],
        'features': features,
        'find_all': {'hashes': [str(h) for h in hashes], 'params': [[6, 3], [8, 3], [5, 2]]},
    }, texts, feature_texts


def run_simhash(python, impl, request):
    proc = subprocess.run([python, os.path.join(HERE, 'simhash_vectors.py'), '--impl', impl],
                          input=json.dumps(request).encode('utf-8'), stdout=subprocess.PIPE, check=True)
    return json.loads(proc.stdout.decode('ascii'))


def gen_simhash(simhash_python):
    request, texts, feature_texts = simhash_request()
    reference = run_simhash(sys.executable, 'reference', request)
    if simhash_python:
        answer = run_simhash(simhash_python, 'simhash-py', request)
        for key in ('compute', 'unsigned_hash', 'shingle', 'num_differing_bits', 'features', 'find_all'):
            if key == 'shingle':
                a = [(c['shingles'], c['error']) for c in answer[key]]
                b = [(c['shingles'], c['error']) for c in reference[key]]
            else:
                a, b = answer[key], reference[key]
            if a != b:
                raise SystemExit('simhash_ref.py disagrees with simhash-py on %r' % key)
    else:
        answer = reference

    out = {}
    out['compute'] = [{'hashes': hs, 'result': res} for hs, res in zip(request['compute'], answer['compute'])]
    out['unsigned_hash'] = [{'text': t, 'utf8_hex': h, 'result': res}
                            for t, h, res in zip(texts, request['unsigned_hash'], answer['unsigned_hash'])]
    out['shingle'] = []
    for case, res in zip(request['shingle'], answer['shingle']):
        entry = {'words': case['words'], 'window': case['window'], 'shingles': res['shingles']}
        if res['error']:
            entry['error'] = res['error']
        out['shingle'].append(entry)
    out['num_differing_bits'] = [{'a': a, 'b': b, 'result': res}
                                 for (a, b), res in zip(request['num_differing_bits'], answer['num_differing_bits'])]
    out['default_features'] = []
    for text, words, res in zip(feature_texts, request['features'], answer['features']):
        alt = res['whole_list_if_short']
        out['default_features'].append({
            'text': text, 'words': words,
            'shingles': res['shingles'], 'hashes': res['hashes'],
            'fingerprint': '%016x' % int(res['fingerprint']),
            'whole_list_if_short': {'shingles': alt['shingles'], 'hashes': alt['hashes'],
                                    'fingerprint': '%016x' % int(alt['fingerprint'])},
        })
    out['find_all'] = {
        'hashes': request['find_all']['hashes'],
        'cases': [{'number_of_blocks': blocks, 'different_bits': k, 'pairs': pairs}
                  for (blocks, k), pairs in zip(request['find_all']['params'], answer['find_all'])],
    }
    return out, answer['meta']


# ---------------------------------------------------------------------------------------------

def version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def build(simhash_python):
    simhash, simhash_meta = gen_simhash(simhash_python)
    if simhash_meta['implementation'] == 'simhash-py':
        impl_note = ('simhash-py %s (its C++ extension, built from the PyPI sdist) on %s %s; every vector '
                     'was also checked against scripts/interop/simhash_ref.py'
                     % (simhash_meta['simhash_py_version'], simhash_meta['python_implementation'],
                        simhash_meta['python']))
    else:
        impl_note = ('scripts/interop/simhash_ref.py (a plain-Python reference written from the simhash-py 0.4.0 '
                     'and simhash-cpp sources), because simhash-py could not be run')
    meta = {
        'generator': 'scripts/interop/generate.py',
        'python': platform.python_version(),
        'packages': {
            'datasketch': version('datasketch'),
            'numpy': version('numpy'),
            'scipy': version('scipy'),
            'mmh3': version('mmh3'),
            'simhash-py': simhash_meta['simhash_py_version'],
        },
        'simhash': {
            'implementation': simhash_meta['implementation'],
            'python': simhash_meta['python'],
            'note': impl_note,
        },
        'notes': [
            'Integers that can exceed 2^53 (permutation coefficients, 64-bit simhash values) are decimal strings; '
            '32-bit values are JSON numbers.',
            'datasketch 2.0.0 defaults to scheme "affine32" (fmix32 pre-mix, a*h+b mod 2^32, a odd, uint32 values). '
            'Each minhash/permutation/lean_minhash case names its scheme; "legacy" is the pre-2.0 scheme '
            '(((a*h+b) mod 2^64, as numpy uint64 wraps) mod (2^61-1)) & 0xffffffff, whose a in [1, 2^61-1) and '
            'b in [0, 2^61-1) are drawn as interleaved (a, b) scalar randint calls; affine32 draws all a (as '
            'randint(0, 2^31, n, uint32)*2+1) and then all b (randint(0, 2^32, n, uint32)).',
            'tokenizers.minhash_sha1_128 is datasketch MinHash(num_perm=128, seed=1) with its default scheme '
            '(affine32) and default hash (sha1_hash32); minhash_sha1_128_legacy the same with scheme="legacy".',
            'Token hashes and MinHash inputs are the UTF-8 bytes of each token. mmh3 = mmh3.hash(b, 0, signed=False); '
            'crc32 = zlib.crc32(b).',
            'lsh_params: b, r from datasketch.lsh._optimal_param(threshold, num_perm, fp_weight, fn_weight), a grid '
            'search over b in 1..num_perm, r in 1..floor(num_perm/b), keeping the first strict minimum of '
            'fp*fp_weight + fn*fn_weight; fp and fn are scipy.integrate.quad integrals of 1-(1-s^r)^b over '
            '[0, threshold] and of (1-s^r)^b over [threshold, 1]. runner_up is the second-best grid point, to show '
            'how fragile each choice is to floating-point differences.',
            'simhash.shingle: simhash-py 0.4.0 shingle() yields every run of `window` consecutive words and NOTHING '
            'when there are fewer than `window` words (recorded on CPython 3.6; on CPython >= 3.7 the same generator '
            'raises RuntimeError at exhaustion for any input, PEP 479).',
            'simhash.default_features: words = text.split(), shingles of 4 words joined by one space, UTF-8, '
            'unsigned_hash (first 8 bytes of MD5, big-endian), compute. `fingerprint` follows simhash-py exactly '
            '(fewer than 4 words -> no features -> 0); `whole_list_if_short` is the alternative rule where 1..3 '
            'words form one shingle.',
            'simhash.compute: bit i is set iff strictly more inputs have it set than clear; ties give 0; repeated '
            'inputs count each time.',
            'simhash.find_all: input values are deduplicated (the C++ side takes an unordered_set), so an exact '
            'duplicate never pairs with itself; the result is every pair of distinct values within different_bits '
            'bits, as [smaller, larger], sorted numerically.',
        ],
    }
    return {
        'meta': meta,
        'permutations': gen_permutations(),
        'token_hashes': gen_token_hashes(),
        'minhash': gen_minhash(),
        'tokenizers': gen_tokenizers(),
        'python_whitespace': gen_whitespace_chars(),
        'lsh_params': gen_lsh_params(),
        'lean_minhash': gen_lean_minhash(),
        'simhash': simhash,
    }


def dump(obj):
    """Compact JSON with one list element per line at the second level, for readable diffs."""
    def line(v):
        return json.dumps(v, ensure_ascii=False, separators=(',', ':'))
    parts = []
    for key, value in obj.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            body = ',\n'.join('  ' + line(v) for v in value)
            parts.append('%s:[\n%s\n]' % (line(key), body))
        elif isinstance(value, dict) and key != 'meta':
            inner = []
            for k, v in value.items():
                if isinstance(v, list) and v and isinstance(v[0], dict):
                    inner.append(' %s:[\n%s\n ]' % (line(k), ',\n'.join('  ' + line(x) for x in v)))
                else:
                    inner.append(' %s:%s' % (line(k), line(v)))
            parts.append('%s:{\n%s\n}' % (line(key), ',\n'.join(inner)))
        elif key == 'meta':
            parts.append('%s:%s' % (line(key), json.dumps(value, ensure_ascii=False, indent=1)))
        else:
            parts.append('%s:%s' % (line(key), line(value)))
    return '{\n' + ',\n'.join(parts) + '\n}\n'


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True)
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument('--simhash-python', help='a Python that can import simhash (simhash-py 0.4.0)')
    group.add_argument('--simhash-reference', action='store_true',
                       help='use simhash_ref.py instead of simhash-py (recorded in meta.simhash)')
    args = ap.parse_args()
    data = build(None if args.simhash_reference else args.simhash_python)
    text = dump(data)
    assert json.loads(text) == data
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, 'w', encoding='utf-8', newline='\n') as f:
        f.write(text)
    print('wrote %s (%d bytes)' % (args.out, len(text.encode('utf-8'))))


if __name__ == '__main__':
    main()
