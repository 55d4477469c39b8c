"""Content-addressed object archive: raw bytes, normalized text, blocks and extraction JSON.

A key is the domain's `archive_key` (the SHA-256 of the uncompressed bytes), so the same
content is stored once and an object is never rewritten; objects are zstd-compressed.

An object lies in one of two places, and a reader looks in both:
- in a pack: a sensor run's new objects are zstd frames back to back in one file,
  `packs/ab/<id>.pack`, written once and made durable (one flush) before the run's commit
  names them; the commit adds each key's place (`archive_objects`, the state store's
  index: pack, offset, length). A page's first fetch was four files, four flushes and
  four renames (four PUTs on S3): twice the CPU of one pack (`bench/archive_writes.py`).
- as a file of its own under its key: objects stored alone (`put`) and every object of a
  lake written before packs.
A pack holds nothing but frames, each named by its own content: decompressed and hashed,
it gives its key back, so a pack can be checked or indexed again without the state store.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

import zstandard

from catlas_assets.domain.content_address import archive_key
from catlas_assets.domain.pipeline_data import PackedObject
from catlas_assets.errors import StorageError
from resources.storage import Storage

# A zstd (de)compressor object is not thread-safe and puts run in worker threads, so each
# call makes its own (construction costs microseconds). zstd's default level: on the
# benchmark's pages level 6 took 2.7x the CPU (1.2 against 0.44 ms a page, every object a
# first fetch stores) for 2 % fewer bytes.
LEVEL = 3
PACKS = "packs"
# Objects this process packed, remembered until they are surely in the index: a run that
# carries one again (another run's commit may not have happened yet) names its place in its
# own commit instead of packing it twice. A bound on memory, not on correctness: a key
# forgotten too early is looked up in the index, and at worst packed again.
_RECENT_MAX = 20_000


class Locator(Protocol):
    """The state store's index of packed objects (`resources/state/archive_index.py`)."""

    def locate(self, keys: Iterable[str]) -> dict[str, PackedObject]: ...


@dataclass(frozen=True)
class StoredObject:
    key: str
    new_bytes: int  # compressed bytes written now; 0 when the object already existed


@dataclass(frozen=True)
class Packed:
    """What `pack` stored: each object's new bytes, in the order given, and the places the
    run's commit records (`archive_objects`) so that readers find them."""

    stored: list[StoredObject]
    places: tuple[PackedObject, ...]

    @property
    def new_bytes(self) -> int:
        return sum(s.new_bytes for s in self.stored)


def pack_key() -> str:
    token = secrets.token_hex(16)
    return f"{PACKS}/{token[:2]}/{token}.pack"


class ObjectArchive:
    def __init__(self, storage: Storage, index: Locator | None = None) -> None:
        """`index`: where packed objects lie; without one, only files of their own are
        read and `pack` is refused."""
        self.storage = storage
        self.index = index
        # Keys a put of this process is writing now. Concurrent runs can carry the same
        # object (one page under two URLs, pages alike in their text or blocks): the
        # second waits for the first's write instead of writing a second copy beside it
        # (twice the bytes until the rename, enough to fill a nearly full disk).
        self._writing: dict[str, threading.Event] = {}
        self._recent: dict[str, PackedObject] = {}
        self._lock = threading.Lock()

    # -- writing --------------------------------------------------------------------------
    def put(self, data: bytes) -> StoredObject:
        """Store one object as a file of its own (a pack of one is a file and a flush too)."""
        key = archive_key(data)
        mine, theirs = self._claim([key])
        if not mine:  # another put writes it: stored there (0 new bytes here), or it failed
            theirs[key].wait()
            return self.put(data)
        try:
            # Not `exists`: an object only packed lately may lie in a pack whose run never
            # commits its place, and the caller records none.
            if self._stored(key):
                return StoredObject(key, 0)
            compressed = zstandard.ZstdCompressor(level=LEVEL).compress(data)
            self.storage.write_atomic(key, compressed)
            return StoredObject(key, len(compressed))
        finally:
            self._release(mine)

    def pack(self, objects: Mapping[str, bytes]) -> Packed:
        """Store objects already named by `archive_key` (the pipeline names them when it
        makes them: not hashed again): those not yet in the archive go into one new pack,
        made durable before this returns. An object another put is writing is waited for
        and counted there, not here. The caller's commit records `places`."""
        if self.index is None:
            raise StorageError("packing objects needs the state store's index")
        mine, theirs = self._claim(objects)
        new_bytes: dict[str, int] = {}
        places: list[PackedObject] = []
        try:
            absent, known = self._absent(mine)
            places.extend(known)
            if absent:
                written = self._write_pack({key: objects[key] for key in absent})
                places.extend(written)
                new_bytes.update((p.key, p.length) for p in written)
        finally:
            self._release(mine)
        for done in theirs.values():
            done.wait()
        # The other put failed (a full disk, say): this one writes what is still missing.
        missing, known = self._absent(theirs)
        places.extend(known)
        if missing:
            again = self.pack({key: objects[key] for key in missing})
            places.extend(again.places)
            new_bytes.update((s.key, s.new_bytes) for s in again.stored)
        return Packed(
            [StoredObject(key, new_bytes.get(key, 0)) for key in objects],
            tuple(dict.fromkeys(places)),
        )

    def _absent(self, keys: Iterable[str]) -> tuple[list[str], list[PackedObject]]:
        """Of `keys`, those the archive does not hold, and the places of those this process
        packed lately (their runs' commits may not have recorded them yet)."""
        wanted = list(keys)
        if not wanted:
            return [], []
        with self._lock:
            known = [self._recent[k] for k in wanted if k in self._recent]
        unknown = [k for k in wanted if k not in self._recent]
        indexed = self.index.locate(unknown) if self.index is not None and unknown else {}
        absent = [k for k in unknown if k not in indexed and not self.storage.exists(k)]
        return absent, known

    def _write_pack(self, objects: Mapping[str, bytes]) -> list[PackedObject]:
        compressor = zstandard.ZstdCompressor(level=LEVEL)
        key, frames, places, offset = pack_key(), [], [], 0
        for name, data in objects.items():
            frame = compressor.compress(data)
            frames.append(frame)
            places.append(PackedObject(name, key, offset, len(frame)))
            offset += len(frame)
        self.storage.write_atomic(key, b"".join(frames))
        with self._lock:
            if len(self._recent) + len(places) > _RECENT_MAX:
                self._recent.clear()
            self._recent.update((p.key, p) for p in places)
        return places

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

    # -- reading --------------------------------------------------------------------------
    def _place(self, key: str) -> PackedObject | None:
        with self._lock:
            place = self._recent.get(key)
        if place is None and self.index is not None:
            place = self.index.locate([key]).get(key)
        return place

    def exists(self, key: str) -> bool:
        return self._place(key) is not None or self.storage.exists(key)

    def _stored(self, key: str) -> bool:
        """In the index or a file of its own: found by any process from now on."""
        indexed = self.index is not None and key in self.index.locate([key])
        return indexed or self.storage.exists(key)

    def missing(self, keys: Iterable[str]) -> list[str]:
        """Of `keys`, those the archive cannot give back (in their order): in no file of
        their own, and in no pack, or in a pack that is gone or shorter than the index
        says. A sweep's answer (one size a pack), not the hot path's."""
        wanted = list(dict.fromkeys(keys))
        placed = self.index.locate(wanted) if self.index is not None else {}
        ends: dict[str, int] = {}
        for place in placed.values():
            ends[place.pack] = max(ends.get(place.pack, 0), place.offset + place.length)
        whole = {pack for pack, end in ends.items() if self._size(pack) >= end}
        return [
            key
            for key in wanted
            if (key not in placed or placed[key].pack not in whole) and not self.storage.exists(key)
        ]

    def _size(self, key: str) -> int:
        try:
            return self.storage.size(key)
        except FileNotFoundError:
            return -1

    def get(self, key: str) -> bytes:
        place = self._place(key)
        if place is None:
            compressed = self.storage.read(key)
        else:
            compressed = self.storage.read_range(place.pack, place.offset, place.length)
        return zstandard.ZstdDecompressor().decompress(compressed)
