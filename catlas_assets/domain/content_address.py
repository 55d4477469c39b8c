"""The object archive's content address, pure: the one place a key is made from bytes.

An object (raw bytes, normalized text, blocks JSON, a full extraction) is stored under the
SHA-256 of its uncompressed bytes, so the same content is stored once and never rewritten.
The pipeline names its objects with this key before it archives them, and the archive
(resources/archive.py) stores each object under the same function's answer.
"""

from __future__ import annotations

import hashlib


def archive_key(data: bytes) -> str:
    return key_for_digest(hashlib.sha256(data).hexdigest())


def key_for_digest(digest: str) -> str:
    """`archive_key` of bytes whose SHA-256 (hex) is already known: hashed once, used twice."""
    return f"objects/{digest[:2]}/{digest[2:4]}/{digest}.zst"
