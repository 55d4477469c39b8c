"""A 64-bit simhash of text, vectorised: near-duplicate pages have a small Hamming distance.

The `simhash` package computes the same kind of fingerprint in a Python loop (~20 ms per
page); hashing all shingles with blake2b and summing bit columns with numpy takes ~2 ms.
Values are stored as signed 64-bit integers (BigInteger, Parquet int64).
"""

from __future__ import annotations

import hashlib
import re

import numpy as np

_WORD = re.compile(r"\w+", re.UNICODE)
SHINGLE = 3


def simhash64(text: str) -> int:
    words = _WORD.findall(text.lower())
    if not words:
        return 0
    if len(words) < SHINGLE:
        shingles = [" ".join(words)]
    else:
        # Runs of SHINGLE words: the shorter tails end the zip on purpose.
        runs = zip(*(words[i:] for i in range(SHINGLE)), strict=False)
        shingles = [" ".join(run) for run in runs]
    blake2b = hashlib.blake2b
    # One C call per shingle (a list, not a generator: this loop is most of the cost); the
    # bit arithmetic below is vectorised.
    digests = b"".join([blake2b(s.encode(), digest_size=8).digest() for s in shingles])
    hashes = np.frombuffer(digests, dtype=">u8")
    bits = np.unpackbits(hashes.view(np.uint8).reshape(-1, 8), axis=1)
    votes = bits.sum(axis=0, dtype=np.int64) * 2 - len(shingles)
    packed = np.packbits((votes > 0).astype(np.uint8))
    unsigned = int.from_bytes(packed.tobytes(), "big")
    return unsigned - (1 << 64) if unsigned >= 1 << 63 else unsigned


def hamming(a: int, b: int) -> int:
    return ((a ^ b) & ((1 << 64) - 1)).bit_count()
