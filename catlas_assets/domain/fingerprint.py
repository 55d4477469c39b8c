"""A 64-bit simhash of text, vectorised: near-duplicate pages have a small Hamming distance.

The fingerprint (version `FINGERPRINT_VERSION`), for the lower-cased `\\w+` words of a text:

- each word `w` hashes to `mix64(poly(w) + len(w))`, where `poly(w)` is the polynomial
  `sum(w[k] * P ** (len(w) - 1 - k))` of its UTF-8 bytes modulo 2**64;
- each run of three words `a b c` is a shingle `mix64(a * K1 + b * K2 + c)` (a text of one
  or two words is one shingle, a missing word counting 0);
- bit i of the fingerprint (most significant first) is set when more shingles have it set
  than not; stored as a signed 64-bit integer (BigInteger, Parquet int64).

`mix64` is SplitMix64's finaliser. Every step is whole-array arithmetic (numpy, wrapping
modulo 2**64): the word hashes come from one prefix sum over the text's bytes, so no Python
or C call is made per word or per shingle (~0.3 ms for a 40 KB page, where hashing each
shingle with blake2b, the first version, took ~1.8 ms).
"""

from __future__ import annotations

import re
import threading

import numpy as np

FINGERPRINT_VERSION = 2

_WORD = re.compile(r"\w+", re.UNICODE)
SHINGLE = 3

# ASCII bytes to lower-case word characters (`\w` on ASCII is [A-Za-z0-9_]), the rest to
# spaces: the same words as `_WORD` on the lower-cased text, in one C pass, already bytes.
_TO_WORDS = (
    bytes(c if chr(c).isalnum() or c == 95 else 32 for c in bytes(range(128)).lower()) + b" " * 128
)
_SPACE = 32

_U = np.uint64
P = 0x100000001B3  # the polynomial's base (odd: it has an inverse modulo 2**64)
K1 = 0x9E3779B97F4A7C15
K2 = 0xC2B2AE3D27D4EB4F
_MASK = (1 << 64) - 1

# Positions are counted within segments of at most this many bytes (cut between words), so
# the power tables stay small: 2 x 2 MiB, built once per process.
_SEGMENT = 1 << 18
with np.errstate(over="ignore"):
    _POW = np.concatenate(([_U(1)], np.cumprod(np.full(_SEGMENT, P, _U))))
    _INV = np.concatenate(([_U(1)], np.cumprod(np.full(_SEGMENT, pow(P, -1, 1 << 64), _U))))
# The bits of each byte value, most significant first: vote counts from byte histograms.
_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1).astype(np.int64)


def simhash64(text: str) -> int:
    hashes = word_hashes(text)
    if not len(hashes):
        return 0
    with np.errstate(over="ignore"):
        if len(hashes) >= SHINGLE:
            shingles = _mix(hashes[:-2] * _U(K1) + hashes[1:-1] * _U(K2) + hashes[2:])
        else:
            second = hashes[1] if len(hashes) > 1 else _U(0)
            shingles = _mix(np.array([hashes[0] * _U(K1) + second * _U(K2)], dtype=_U))
    columns = shingles.astype(">u8").view(np.uint8).reshape(-1, 8)
    histograms = np.stack([np.bincount(columns[:, c], minlength=256) for c in range(8)])
    ones = (histograms @ _BITS).reshape(64)
    packed = np.packbits(ones * 2 > len(shingles))
    unsigned = int.from_bytes(packed.tobytes(), "big")
    return unsigned - (1 << 64) if unsigned >= 1 << 63 else unsigned


class _LastText(threading.local):
    text: str | None = None
    hashes: np.ndarray | None = None


_last = _LastText()


def word_hashes(text: str) -> np.ndarray:
    """The hash of each of the text's lower-cased words, in order (`mix64(poly(w) +
    len(w))`, unsigned). A page's text is asked twice, by the mask's cue test in
    `normalize` and by its fingerprint: the last text's hashes are kept (per thread)."""
    last = _last
    if last.hashes is None or last.text != text:
        hashes = _word_hashes(_word_bytes(text))
        hashes.flags.writeable = False  # shared by its callers: none may change it
        last.hashes, last.text = hashes, text
    return last.hashes


def _word_bytes(text: str) -> np.ndarray:
    """The text's lower-cased words as UTF-8 bytes, separated by spaces (0x20 never occurs
    inside a UTF-8 encoded word character)."""
    if text.isascii():
        data = text.encode("ascii").translate(_TO_WORDS)
    else:
        data = " ".join(_WORD.findall(text.lower())).encode()
    return np.frombuffer(data, dtype=np.uint8)


def _word_hashes(data: np.ndarray) -> np.ndarray:
    """`mix64(poly(w) + len(w))` of every word, in order."""
    parts = []
    start = 0
    while start < len(data):
        end = min(len(data), start + _SEGMENT)
        if end < len(data):
            # Cut after the last separator, so that no word spans two segments (a word
            # longer than a segment is cut: a fingerprint, not an index).
            cut = np.flatnonzero(data[start:end] == _SPACE)
            end = start + int(cut[-1]) + 1 if len(cut) else end
        parts.append(_segment_hashes(data[start:end]))
        start = end
    return np.concatenate(parts) if parts else np.empty(0, dtype=_U)


def _segment_hashes(segment: np.ndarray) -> np.ndarray:
    word = segment != _SPACE
    edges = np.flatnonzero(word[1:] != word[:-1]) + 1
    bounds = np.concatenate(
        ([0] if len(word) and word[0] else [], edges, [len(word)] if len(word) and word[-1] else [])
    ).astype(np.int64)
    starts, ends = bounds[0::2], bounds[1::2]
    if not len(starts):
        return np.empty(0, dtype=_U)
    n = len(segment)
    with np.errstate(over="ignore"):
        # sum(w[j] * P**-j) over each word (separators weigh 0), times P**(end - 1): the
        # polynomial of the word alone, whatever its position.
        weighted = (segment * word).astype(_U) * _INV[:n]
        sums = np.add.reduceat(weighted, starts)
        poly = sums * _POW[ends - 1]
        return _mix(poly + (ends - starts).astype(_U))


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser, element-wise."""
    with np.errstate(over="ignore"):
        x = x ^ (x >> _U(30))
        x = x * _U(0xBF58476D1CE4E5B9)
        x = x ^ (x >> _U(27))
        x = x * _U(0x94D049BB133111EB)
        return x ^ (x >> _U(31))


def hamming(a: int, b: int) -> int:
    return ((a ^ b) & _MASK).bit_count()
