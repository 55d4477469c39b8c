"""Content-addressed object archive: raw bytes, normalized text, blocks and extraction JSON.

A key is the domain's `archive_key` (the SHA-256 of the uncompressed bytes), so the same
content is stored once and an object is never rewritten; objects are zstd-compressed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import zstandard

from catlas_assets.domain.content_address import archive_key
from resources.storage import Storage

# A zstd (de)compressor object is not thread-safe and puts run in worker threads, so each
# call makes its own (construction costs microseconds). zstd's default level: on the
# benchmark's pages level 6 took 2.7x the CPU (1.2 against 0.44 ms a page, every object a
# first fetch stores) for 2 % fewer bytes.
LEVEL = 3


@dataclass(frozen=True)
class StoredObject:
    key: str
    new_bytes: int  # compressed bytes written now; 0 when the object already existed


class ObjectArchive:
    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def put(self, data: bytes) -> StoredObject:
        return self.put_keyed({archive_key(data): data})[0]

    def put_keyed(self, objects: Mapping[str, bytes]) -> list[StoredObject]:
        """Store objects already named by `archive_key` (the pipeline names them when it
        makes them: not hashed again), made durable together (`write_many_atomic`)."""
        stored, writes = [], []
        for key, data in objects.items():
            if self.storage.exists(key):
                stored.append(StoredObject(key, 0))
                continue
            compressed = zstandard.ZstdCompressor(level=LEVEL).compress(data)
            writes.append((key, compressed))
            stored.append(StoredObject(key, len(compressed)))
        self.storage.write_many_atomic(writes)
        return stored

    def exists(self, key: str) -> bool:
        return self.storage.exists(key)

    def get(self, key: str) -> bytes:
        return zstandard.ZstdDecompressor().decompress(self.storage.read(key))
