"""The object archive on a local folder, and Storage's refusals of unusable lake paths."""

from __future__ import annotations

import errno
import hashlib
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import zstandard

from catlas_assets.domain.content_address import archive_key
from catlas_assets.errors import StorageError
from resources.archive import ObjectArchive, Packed
from resources.state.archive_index import ArchiveIndex, record
from resources.storage import Storage

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
PAGE = ("<html><body>" + "<p>Staff Robotics Engineer, Berlin</p>" * 200 + "</body></html>").encode()


def objects_on_disk(root: Path) -> list[Path]:
    return sorted(p for p in (root / "objects").rglob("*") if p.is_file())


def test_the_key_is_the_sha256_of_the_uncompressed_bytes(local_archive: ObjectArchive) -> None:
    digest = hashlib.sha256(PAGE).hexdigest()
    stored = local_archive.put(PAGE)
    assert stored.key == f"objects/{digest[:2]}/{digest[2:4]}/{digest}.zst"
    assert archive_key(PAGE) == stored.key


def test_objects_are_zstd_compressed_on_disk(local_archive: ObjectArchive, lake_root: Path) -> None:
    stored = local_archive.put(PAGE)
    on_disk = (lake_root / stored.key).read_bytes()
    assert on_disk.startswith(ZSTD_MAGIC)
    assert zstandard.ZstdDecompressor().decompress(on_disk) == PAGE
    assert stored.new_bytes == len(on_disk)
    assert len(on_disk) < len(PAGE) // 10  # a repetitive page really is compressed


def test_the_same_bytes_are_stored_once_and_never_rewritten(
    local_archive: ObjectArchive, lake_root: Path
) -> None:
    first = local_archive.put(PAGE)
    path = lake_root / first.key
    before = path.stat()

    second = local_archive.put(bytes(PAGE))  # equal content, different object

    assert second.key == first.key
    assert first.new_bytes > 0
    assert second.new_bytes == 0
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns, after.st_size) == (
        before.st_ino,
        before.st_mtime_ns,
        before.st_size,
    )
    assert objects_on_disk(lake_root) == [path]


@pytest.mark.parametrize(
    "data",
    [b"", b"\x00\xff" * 1000, "Zürich — 東京".encode(), os.urandom(70_000)],
    ids=["empty", "binary", "unicode", "random"],
)
def test_round_trip(local_archive: ObjectArchive, data: bytes) -> None:
    stored = local_archive.put(data)
    assert local_archive.get(stored.key) == data


def test_different_bytes_get_different_objects(
    local_archive: ObjectArchive, lake_root: Path
) -> None:
    a = local_archive.put(b"version 1")
    b = local_archive.put(b"version 2")
    assert a.key != b.key
    assert a.new_bytes > 0 and b.new_bytes > 0
    assert len(objects_on_disk(lake_root)) == 2
    assert local_archive.get(a.key) == b"version 1"
    assert local_archive.get(b.key) == b"version 2"


# -- unusable lake paths ---------------------------------------------------------------------


def test_a_lake_under_a_regular_file_is_refused_naming_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("I am a file")
    lake_url = str(blocker / "lake")
    with pytest.raises(StorageError) as caught:
        Storage(lake_url).check_writable()
    assert lake_url in str(caught.value)
    assert "cannot write to the lake" in str(caught.value)
    assert blocker.read_text() == "I am a file"


def test_a_lake_that_is_itself_a_regular_file_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "lake"
    blocker.write_bytes(b"")
    with pytest.raises(StorageError, match=str(blocker)):
        Storage(str(blocker)).check_writable()


def test_a_writable_lake_passes_the_check_and_keeps_no_probe(tmp_path: Path) -> None:
    root = tmp_path / "fresh" / "lake"
    storage = Storage(f"file://{root}")
    storage.check_writable()
    assert root.is_dir()
    assert [p for p in root.rglob("*") if p.is_file()] == []
    assert storage.glob("_probe/*") == []


@pytest.mark.parametrize("url", ["gs://bucket/lake", "http://example.com/lake", "azure://x"])
def test_an_unsupported_lake_url_is_refused(url: str) -> None:
    with pytest.raises(StorageError, match="only a local folder or s3://"):
        Storage(url)


def test_storage_operations_on_a_local_folder(local_storage: Storage, lake_root: Path) -> None:
    local_storage.write_atomic("x/y/one.txt", b"1")
    local_storage.write_atomic("x/y/two.txt", b"22")
    assert local_storage.exists("x/y/one.txt")
    assert not local_storage.exists("x/y/three.txt")
    assert local_storage.read("x/y/two.txt") == b"22"
    assert local_storage.size("x/y/two.txt") == 2
    assert local_storage.glob("x/*/*.txt") == ["x/y/one.txt", "x/y/two.txt"]
    assert local_storage.uri("x/y/one.txt") == f"{lake_root.resolve()}/x/y/one.txt"
    local_storage.delete(["x/y/one.txt", "x/y/missing.txt"])  # a missing key is no error
    assert local_storage.glob("x/*/*.txt") == ["x/y/two.txt"]


def packs_on_disk(root: Path) -> list[Path]:
    return sorted(p for p in (root / "packs").rglob("*") if p.is_file())


def _recorded(index: ArchiveIndex, packed: Packed) -> None:
    """What a run's commit does with the places of what it packed."""
    with index.store.transaction(write_lock=True) as conn:
        record(conn, packed.places)


def test_a_runs_new_objects_go_into_one_pack_and_are_read_back_through_the_index(
    local_storage: Storage, archive_index: ArchiveIndex, lake_root: Path
) -> None:
    archive = ObjectArchive(local_storage, archive_index)
    datas = [PAGE, b"normalized text", b'[{"kind": "p"}]', PAGE + b"<!-- v2 -->"]
    existing = archive.put(datas[1])  # an object of its own, as lakes before packs hold

    packed = archive.pack({archive_key(d): d for d in datas})

    assert [s.key for s in packed.stored] == [archive_key(d) for d in datas]
    assert packed.stored[1].new_bytes == 0 and existing.new_bytes > 0  # found, not rewritten
    assert all(s.new_bytes > 0 for s in (packed.stored[0], packed.stored[2], packed.stored[3]))
    [pack] = packs_on_disk(lake_root)
    assert pack.stat().st_size == packed.new_bytes
    assert {p.key for p in packed.places} == {archive_key(d) for d in (datas[0], *datas[2:])}
    assert objects_on_disk(lake_root) == [lake_root / existing.key]
    assert not [p for p in lake_root.rglob("*.tmp")]
    # Each frame decompresses to its object, whose hash is its key: a pack names its own.
    with zstandard.ZstdDecompressor().stream_reader(
        pack.read_bytes(), read_across_frames=True
    ) as r:
        assert r.read() == datas[0] + datas[2] + datas[3]

    # Before the commit, this process finds them; another only once they are recorded.
    assert [archive.get(s.key) for s in packed.stored] == datas
    elsewhere = ObjectArchive(Storage(str(lake_root)), archive_index)
    assert elsewhere.missing(archive_key(d) for d in datas) == [archive_key(datas[0])] + [
        archive_key(d) for d in datas[2:]
    ]
    _recorded(archive_index, packed)
    assert elsewhere.missing(archive_key(d) for d in datas) == []
    assert [elsewhere.get(s.key) for s in packed.stored] == datas
    assert elsewhere.exists(packed.stored[0].key) and not elsewhere.exists(archive_key(b"no"))

    # Packed again (an unchanged page's objects): nothing new, no new pack.
    again = ObjectArchive(Storage(str(lake_root)), archive_index).pack(
        {archive_key(d): d for d in datas}
    )
    assert again.new_bytes == 0 and again.places == ()
    assert len(packs_on_disk(lake_root)) == 1


def test_an_archive_without_an_index_refuses_to_pack(local_storage: Storage) -> None:
    with pytest.raises(StorageError, match="index"):
        ObjectArchive(local_storage).pack({archive_key(PAGE): PAGE})


def test_a_pack_shorter_than_its_index_says_is_an_error_not_a_short_object(
    local_archive: ObjectArchive, archive_index: ArchiveIndex, lake_root: Path
) -> None:
    packed = local_archive.pack({archive_key(PAGE): PAGE})
    _recorded(archive_index, packed)
    [pack] = packs_on_disk(lake_root)
    pack.write_bytes(pack.read_bytes()[:10])

    with pytest.raises(StorageError, match="expected"):
        ObjectArchive(Storage(str(lake_root)), archive_index).get(archive_key(PAGE))


class _HeldStorage(Storage):
    """A real local folder that records, for each write, whether it holds `frame` (the
    shared object, compressed), and holds such a write until `writes` writes have begun:
    every pack has then claimed what it writes (a pack writes what it claimed, so one that
    found the shared object claimed by another has written its own objects). With
    `fail_first`, the first write of `frame` then fails as a full disk would."""

    def __init__(self, root: Path, frame: bytes, writes: int, *, fail_first: bool = False) -> None:
        super().__init__(str(root))
        self.frame, self.fail_first = frame, fail_first
        self.writes: list[bool] = []
        self.began = threading.Condition()
        self._expected = writes

    def write_many_atomic(self, items: Sequence[tuple[str, bytes]]) -> None:
        holds = any(self.frame in data for _, data in items)
        with self.began:
            self.writes.append(holds)
            self.began.notify_all()
            first = holds and self.writes.count(True) == 1
            if holds:
                self.began.wait_for(lambda: len(self.writes) >= self._expected, timeout=10)
        if first and self.fail_first:
            raise OSError(errno.ENOSPC, "No space left on device")
        super().write_many_atomic(items)


SHARED = b'{"items": []}'
SHARED_FRAME = zstandard.ZstdCompressor(level=3).compress(SHARED)


def test_concurrent_packs_of_one_object_write_it_once_and_count_its_bytes_once(
    lake_root: Path, archive_index: ArchiveIndex
) -> None:
    storage = _HeldStorage(lake_root, SHARED_FRAME, writes=4)
    archive = ObjectArchive(storage, archive_index)
    pages = [PAGE + str(i).encode() for i in range(4)]

    with ThreadPoolExecutor(4) as pool:
        packs = list(pool.map(lambda page: archive.pack(dict(_keyed(page, SHARED))), pages))

    assert storage.writes.count(True) == 1
    assert sum(p.stored[1].new_bytes for p in packs) == len(SHARED_FRAME)
    assert all(p.stored[0].new_bytes > 0 for p in packs)  # each run's own page is its own
    # Every run names the shared object's place: whichever commits first records it.
    assert all(archive_key(SHARED) in {place.key for place in p.places} for p in packs)
    assert len(packs_on_disk(lake_root)) == 4
    assert not [p for p in lake_root.rglob("*.tmp")]
    _recorded(archive_index, packs[3])
    elsewhere = ObjectArchive(Storage(str(lake_root)), archive_index)
    assert elsewhere.get(archive_key(SHARED)) == SHARED


def test_a_pack_waiting_for_another_that_fails_writes_the_object_itself(
    lake_root: Path, archive_index: ArchiveIndex
) -> None:
    storage = _HeldStorage(lake_root, SHARED_FRAME, writes=2, fail_first=True)
    archive = ObjectArchive(storage, archive_index)

    with ThreadPoolExecutor(2) as pool:
        failing = pool.submit(archive.pack, dict(_keyed(PAGE, SHARED)))
        with storage.began:  # the first pack holds the shared key before the second starts
            storage.began.wait_for(lambda: storage.writes, timeout=10)
        waiting = pool.submit(archive.pack, dict(_keyed(PAGE + b"2", SHARED)))
        with pytest.raises(OSError):
            failing.result()
        packed = waiting.result()

    assert packed.stored[1].new_bytes > 0 and archive.get(archive_key(SHARED)) == SHARED
    assert storage.writes == [True, False, True]  # failed; the waiter's own page; then it
    assert len(packs_on_disk(lake_root)) == 2
    assert not [p for p in lake_root.rglob("*.tmp")]


def _keyed(*datas: bytes) -> list[tuple[str, bytes]]:
    return [(archive_key(d), d) for d in datas]


def test_a_batch_that_fails_makes_none_of_its_objects_visible(
    local_storage: Storage, lake_root: Path
) -> None:
    lake_root.mkdir(parents=True, exist_ok=True)
    (lake_root / "blocked").write_bytes(b"a file where a folder should be")

    with pytest.raises(OSError):
        local_storage.write_many_atomic([("a/one", b"1"), ("blocked/two", b"2")])

    assert not (lake_root / "a" / "one").exists()
    assert not [p for p in lake_root.rglob("*.tmp")]


def test_a_staged_file_becomes_its_key_only_when_written(
    local_storage: Storage, lake_root: Path
) -> None:
    with local_storage.staged_file("big/one.parquet") as path:
        assert path.endswith(".tmp") and "/.writes/" in path  # beside the lake: one rename
        Path(path).write_bytes(b"written by another writer")
        assert not local_storage.exists("big/one.parquet")
    assert local_storage.read("big/one.parquet") == b"written by another writer"
    assert not [p for p in lake_root.rglob("*.tmp")]


def test_a_staged_file_whose_writer_fails_leaves_nothing(
    local_storage: Storage, lake_root: Path
) -> None:
    with (
        pytest.raises(RuntimeError, match="writer failed"),
        local_storage.staged_file("big/two.parquet") as path,
    ):
        Path(path).write_bytes(b"half")
        raise RuntimeError("writer failed")
    assert not local_storage.exists("big/two.parquet")
    assert not [p for p in lake_root.rglob("*.tmp")]


def _maker(contents: list[bytes], fail_at: int | None = None) -> Callable[[int, str], None]:
    def make(index: int, path: str) -> None:
        Path(path).write_bytes(contents[index])
        if index == fail_at:
            raise RuntimeError(f"writer {index} failed")

    return make


def test_files_made_by_their_writers_appear_together_with_their_sizes(
    local_storage: Storage, lake_root: Path
) -> None:
    keys = ["t/date=2026-01-05/hour=08/a.parquet", "t/date=2026-01-05/hour=09/a.parquet"]
    contents = [b"first file", b"the second"]
    seen: list[bool] = []

    def make(index: int, path: str) -> None:
        seen.append(local_storage.exists(keys[0]))  # nothing is visible while files are made
        _maker(contents)(index, path)

    with ThreadPoolExecutor(2) as pool:
        sizes = local_storage.make_many_atomic(keys, make, pool)
    assert sizes == [10, 10] and seen == [False, False]
    assert [local_storage.read(k) for k in keys] == contents
    assert not [p for p in lake_root.rglob("*.tmp")]


def test_one_writer_failing_makes_none_of_the_files_visible(
    local_storage: Storage, lake_root: Path
) -> None:
    keys = [f"t/hour={h}/a.parquet" for h in range(4)]
    with ThreadPoolExecutor(2) as pool, pytest.raises(RuntimeError, match="writer 2 failed"):
        local_storage.make_many_atomic(keys, _maker([b"x"] * 4, fail_at=2), pool)
    assert not any(local_storage.exists(k) for k in keys)
    assert not [p for p in lake_root.rglob("*.tmp")]
