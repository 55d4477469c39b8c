"""A sensor run's new objects are one pack, whose places its commit records; every reader
(another process, the lake check, reprocess) finds them there, on both state backends."""

from __future__ import annotations

import hashlib
from pathlib import Path

from sqlalchemy import select

from catlas_assets.domain.content_address import archive_key
from catlas_assets.domain.pipeline_data import PackedObject
from catlas_assets.services import catalog, lake_checks
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import run_tick
from resources.archive import ObjectArchive
from resources.state.archive_index import ArchiveIndex, record
from resources.state.schema import archive_objects
from resources.state.store import StateStore
from resources.storage import Storage


def _index_rows(runtime: Runtime) -> list[tuple[str, str, int, int]]:
    with runtime.store.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(select(archive_objects))]  # type: ignore[misc]


def test_a_runs_objects_are_one_pack_that_every_reader_finds(
    make_runtime, database_url: str
) -> None:
    runtime = make_runtime(database_url)
    company = catalog.add_company(
        runtime, name="Northwind Robotics", website="http://northwind-robotics.com"
    )
    for path in ("careers", "pricing"):
        catalog.add_sensor(
            runtime,
            company_id=company,
            surface=path,
            url=f"http://northwind-robotics.com/{path}",
        )

    result = run_tick(runtime)

    assert sorted(r.outcome.value for r in result.runs) == ["ok", "ok"]
    lake = Path(runtime.storage.root)
    packs = sorted(p.relative_to(lake).as_posix() for p in lake.rglob("*.pack"))
    assert len(packs) == 2  # one a run
    assert list(lake.glob("objects/**/*.zst")) == []  # no object a file of its own
    rows = _index_rows(runtime)
    assert {pack for _, pack, _, _ in rows} == set(packs)
    named = lake_checks.object_keys(runtime.lake)
    assert named == {key for key, _, _, _ in rows}  # raw, text, blocks, extraction: each named
    # Frames lie end to end: a pack is its frames and nothing else.
    for pack in packs:
        frames = sorted((offset, length) for _, p, offset, length in rows if p == pack)
        assert [o for o, _ in frames] == [0, *[o + n for o, n in frames][:-1]]
        assert sum(n for _, n in frames) == (lake / pack).stat().st_size

    # Another process: no memory of what was packed, only the state store and the lake.
    other = make_runtime(database_url)
    assert lake_checks.dangling_keys(other.lake, other.archive) == []
    for key in named:
        assert archive_key(other.archive.get(key)) == key
    [observation] = (
        other.lake.connect()
        .execute("SELECT object_key FROM observations WHERE surface = 'careers'")
        .fetchall()
    )
    assert b"<html" in other.archive.get(observation[0]).lower()


def test_an_index_keeps_the_first_place_of_a_key(tmp_path: Path, database_url: str) -> None:
    store = StateStore.open(database_url)
    try:
        index = ArchiveIndex(store)
        key = archive_key(b"one")
        first = PackedObject(key, "packs/aa/first.pack", 0, 12)
        with store.transaction(write_lock=True) as conn:
            record(conn, [first, first._replace(pack="packs/bb/twice.pack")])  # one statement
        with store.transaction(write_lock=True) as conn:
            record(conn, [PackedObject(key, "packs/cc/later.pack", 40, 12)])
            record(conn, [])

        assert index.locate([key, archive_key(b"none"), key]) == {key: first}
        many = [
            PackedObject(archive_key(str(i).encode()), "packs/x.pack", i, 1) for i in range(1200)
        ]
        with store.transaction(write_lock=True) as conn:
            record(conn, many)
        found = index.locate(p.key for p in many)  # more than one statement's worth
        assert found == {p.key: p for p in many}
    finally:
        store.close()


def test_objects_of_a_lake_written_before_packs_are_still_read(
    tmp_path: Path, database_url: str
) -> None:
    store = StateStore.open(database_url)
    try:
        storage = Storage(str(tmp_path / "lake"))
        old, new = b"stored before packs", b"stored in a pack"
        ObjectArchive(storage).put(old)  # an object of its own: no index row
        archive = ObjectArchive(storage, ArchiveIndex(store))

        packed = archive.pack({archive_key(old): old, archive_key(new): new})

        assert [s.new_bytes > 0 for s in packed.stored] == [False, True]
        assert [p.key for p in packed.places] == [archive_key(new)]
        assert archive.get(archive_key(old)) == old and archive.get(archive_key(new)) == new
        assert hashlib.sha256(archive.get(archive_key(old))).hexdigest() in archive_key(old)
    finally:
        store.close()


def test_an_object_stored_alone_is_written_when_only_an_uncommitted_pack_holds_it(
    tmp_path: Path, database_url: str
) -> None:
    """A site page (`put`) records no place: a pack whose run has not committed (and may
    never) is no home for it."""
    store = StateStore.open(database_url)
    try:
        storage = Storage(str(tmp_path / "lake"))
        archive = ObjectArchive(storage, ArchiveIndex(store))
        data = b"<html>the same page, under a sensor and in a site crawl</html>"
        archive.pack({archive_key(data): data})  # its run's commit never comes

        stored = archive.put(data)

        assert stored.new_bytes > 0 and (tmp_path / "lake" / stored.key).is_file()
        elsewhere = ObjectArchive(Storage(str(tmp_path / "lake")), ArchiveIndex(store))
        assert elsewhere.get(stored.key) == data
    finally:
        store.close()
