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


# ASCII bytes to lower-case word characters (`\w` on ASCII is [A-Za-z0-9_]), the rest to
# spaces: the same words as `_WORD` on the lower-cased text, in one C pass, already bytes.
_TO_WORDS = (
    bytes(c if chr(c).isalnum() or c == 95 else 32 for c in bytes(range(128)).lower()) + b" " * 128
)


def simhash64(text: str) -> int:
    shingles = _shingles(text)
    if not shingles:
        return 0
    blake2b = hashlib.blake2b
    # One C call per shingle (a list, not a generator: this loop is most of the cost); the
    # bit arithmetic below is vectorised.
    digests = b"".join([blake2b(s, digest_size=8).digest() for s in shingles])
    hashes = np.frombuffer(digests, dtype=">u8")
    bits = np.unpackbits(hashes.view(np.uint8).reshape(-1, 8), axis=1)
    votes = bits.sum(axis=0, dtype=np.int64) * 2 - len(shingles)
    packed = np.packbits((votes > 0).astype(np.uint8))
    unsigned = int.from_bytes(packed.tobytes(), "big")
    return unsigned - (1 << 64) if unsigned >= 1 << 63 else unsigned


def _shingles(text: str) -> list[bytes]:
    """Runs of SHINGLE lower-case words joined by a space, UTF-8 (one run if fewer words)."""
    if text.isascii():
        words = text.encode("ascii").translate(_TO_WORDS).split()
    else:
        words = [word.encode() for word in _WORD.findall(text.lower())]
    if not words:
        return []
    if len(words) < SHINGLE:
        return [b" ".join(words)]
    # The shorter tails end the zip on purpose.
    return list(map(b" ".join, zip(*(words[i:] for i in range(SHINGLE)), strict=False)))


def hamming(a: int, b: int) -> int:
    return ((a ^ b) & ((1 << 64) - 1)).bit_count()
