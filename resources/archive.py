"""Content-addressed object archive: raw bytes, normalized text, blocks and extraction JSON.

A key is the domain's `archive_key` (the SHA-256 of the uncompressed bytes), so the same
content is stored once and an object is never rewritten; objects are zstd-compressed.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
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
        # Keys a put of this process is writing now. Concurrent runs can carry the same
        # object (one page under two URLs, pages alike in their text or blocks): the
        # second waits for the first's write instead of writing a second copy beside it
        # (twice the bytes until the rename, enough to fill a nearly full disk).
        self._writing: dict[str, threading.Event] = {}
        self._lock = threading.Lock()

    def put(self, data: bytes) -> StoredObject:
        return self.put_keyed({archive_key(data): data})[0]

    def put_keyed(self, objects: Mapping[str, bytes]) -> list[StoredObject]:
        """Store objects already named by `archive_key` (the pipeline names them when it
        makes them: not hashed again), made durable together (`write_many_atomic`). An
        object another put is writing is waited for and counted there, not here."""
        mine, theirs = self._claim(objects)
        new_bytes: dict[str, int] = {}
        try:
            writes = []
            for key in mine:
                if self.storage.exists(key):
                    new_bytes[key] = 0
                    continue
                compressed = zstandard.ZstdCompressor(level=LEVEL).compress(objects[key])
                writes.append((key, compressed))
                new_bytes[key] = len(compressed)
            self.storage.write_many_atomic(writes)
        finally:
            self._release(mine)
        for done in theirs.values():
            done.wait()
        # The other put failed (a full disk, say): this one writes what is still missing.
        missing = {key: objects[key] for key in theirs if not self.storage.exists(key)}
        if missing:
            new_bytes.update((p.key, p.new_bytes) for p in self.put_keyed(missing))
        return [StoredObject(key, new_bytes.get(key, 0)) for key in objects]

    def _claim(self, keys: Iterable[str]) -> tuple[list[str], dict[str, threading.Event]]:
        mine: list[str] = []
        theirs: dict[str, threading.Event] = {}
        with self._lock:
            for key in keys:
                if key in self._writing:
                    theirs[key] = self._writing[key]
                else:
                    self._writing[key] = threading.Event()
                    mine.append(key)
        return mine, theirs

    def _release(self, keys: list[str]) -> None:
        with self._lock:
            done = [self._writing.pop(key) for key in keys]
        for event in done:
            event.set()

    def exists(self, key: str) -> bool:
        return self.storage.exists(key)

    def get(self, key: str) -> bytes:
        return zstandard.ZstdDecompressor().decompress(self.storage.read(key))
