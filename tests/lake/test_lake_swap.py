"""Reprocess and compaction swap a partition's files: a reader sees the old set or the new one."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from resources import lake as lake_module
from resources.lake import HIDDEN_STATE, Lake
from resources.state.partition_leases import PartitionLeases
from resources.state.store import StateStore
from resources.storage import Storage

HOUR = "date=2026-01-05/hour=08"
T0 = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)


def snapshot(snapshot_id: str, minute: int = 0) -> dict[str, Any]:
    return {
        "snapshot_id": snapshot_id,
        "sensor_id": 1,
        "company_id": 1,
        "surface": "careers",
        "version": 1,
        "captured_at": T0 + timedelta(minutes=minute),
        "normalized_hash": f"h-{snapshot_id}",
        "extracted": {"jobs": [snapshot_id]},
    }


def rows(prefix: str, count: int) -> list[dict[str, Any]]:
    return [snapshot(f"{prefix}{i}", i % 60) for i in range(count)]


@pytest.fixture(params=["local", "s3"])
def lake(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Lake]:
    if request.param == "local":
        yield Lake(Storage(str(tmp_path / "lake")))
        return
    endpoint = request.getfixturevalue("s3_endpoint")
    bucket = request.getfixturevalue("s3_bucket")
    yield Lake(Storage(f"s3://{bucket}/lake", s3_endpoint_url=endpoint))


def count(lake: Lake) -> int:
    con = lake.connect()
    try:
        result = con.execute("SELECT count(*) FROM snapshots").fetchone()
    finally:
        con.close()
    assert result is not None
    return int(result[0])


def test_a_view_opened_before_a_reprocess_keeps_the_old_rows(lake: Lake) -> None:
    lake.write_rows("snapshots", rows("old", 3), batch_id="fl_a")
    lake.write_rows("snapshots", rows("more", 2), batch_id="fl_b")
    before = lake.connect()

    lake.replace_partition("snapshots", HOUR, rows("new", 7))

    assert before.execute("SELECT count(*) FROM snapshots").fetchone() == (5,)
    old_ids = before.execute("SELECT min(snapshot_id) FROM snapshots").fetchone()
    assert old_ids is not None and str(old_ids[0]).startswith("more")
    assert count(lake) == 7
    assert lake.read("snapshots", HOUR).num_rows == 7
    (key,) = lake.files("snapshots", HOUR)
    assert "/replaced-" in key


def test_compaction_then_reprocess_show_one_set_each_time(lake: Lake) -> None:
    lake.write_rows("snapshots", rows("a", 4), batch_id="fl_a")
    lake.write_rows("snapshots", rows("a", 4), batch_id="fl_b")  # the same ids again
    assert count(lake) == 8
    lake.compact("snapshots", HOUR)
    assert count(lake) == 4
    lake.replace_partition("snapshots", HOUR, rows("b", 2))
    assert count(lake) == 2
    lake.write_rows("snapshots", rows("c", 1), batch_id="fl_c")  # a flush after the swap
    assert count(lake) == 3
    assert lake.compact("snapshots", HOUR).rows == 3
    assert count(lake) == 3


def test_a_reader_in_a_loop_never_fails_nor_sees_both_sets(lake: Lake) -> None:
    sizes = (3, 11)
    lake.replace_partition("snapshots", HOUR, rows("x", sizes[0]))
    seen: list[int] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def read_loop() -> None:
        while not stop.is_set():
            try:
                seen.append(count(lake))
            except BaseException as exc:  # the test reports any failure
                errors.append(exc)
                return

    reader = threading.Thread(target=read_loop)
    reader.start()
    try:
        for round_ in range(12):
            size = sizes[(round_ + 1) % 2]
            if round_ % 3 == 2:
                # two flushes of the same ids, compacted back to `size` rows
                lake.replace_partition("snapshots", HOUR, rows("y", size)[: size // 2])
                lake.write_rows("snapshots", rows("y", size)[size // 2 :], f"fl_{round_}")
                lake.compact("snapshots", HOUR)
            else:
                lake.replace_partition("snapshots", HOUR, rows(f"r{round_}-", size))
    finally:
        stop.set()
        reader.join(timeout=60)
    assert errors == []
    # The halves are seen between a compaction round's replace and its second flush.
    assert seen and set(seen) <= {sizes[0], sizes[1], sizes[0] // 2, sizes[1] // 2}


class Stop(Exception):
    pass


@pytest.mark.parametrize("step", [1, 2])
def test_a_swap_stopped_after_any_step_leaves_the_old_set(
    lake: Lake, step: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    lake.write_rows("snapshots", rows("old", 3), batch_id="fl_a")
    lake.write_rows("snapshots", rows("old", 3), batch_id="fl_b")
    write = lake.storage.write_atomic
    calls = 0

    def stopping(key: str, data: bytes) -> None:
        nonlocal calls
        calls += 1
        if calls > step:
            raise Stop(key)
        write(key, data)

    monkeypatch.setattr(lake.storage, "write_atomic", stopping)
    with pytest.raises(Stop):
        lake.replace_partition("snapshots", HOUR, rows("new", 5))
    monkeypatch.setattr(lake.storage, "write_atomic", write)

    assert count(lake) == 6
    assert len(lake.files("snapshots", HOUR)) == 2
    (orphan,) = lake.hidden("snapshots", HOUR)
    assert orphan.startswith("replaced-")
    orphan_key = f"snapshots/{HOUR}/{orphan}"
    assert lake.storage.exists(orphan_key) == (step == 2)

    # Within the grace period the orphan stays; past it, the next compaction removes it.
    lake.compact("snapshots", HOUR)
    assert orphan in lake.hidden("snapshots", HOUR)
    later = time.time() + 2 * lake_module.HIDDEN_GRACE_S
    monkeypatch.setattr(lake_module.time, "time", lambda: later)
    result = lake.compact("snapshots", HOUR)
    assert result.rows == 3 and count(lake) == 3
    assert not lake.storage.exists(orphan_key)
    # The inputs the first compaction hid were only now past their grace, too.
    assert lake.hidden("snapshots", HOUR) == {}
    assert not lake.storage.exists(f"snapshots/{HOUR}/{HIDDEN_STATE}")
    assert lake.storage.glob(f"snapshots/{HOUR}/*") == lake.files("snapshots", HOUR)


def test_hidden_files_stay_for_the_grace_period(lake: Lake) -> None:
    lake.write_rows("snapshots", rows("a", 2), batch_id="fl_a")
    lake.write_rows("snapshots", rows("b", 2), batch_id="fl_b")
    lake.compact("snapshots", HOUR)
    flushes = [f"snapshots/{HOUR}/part-fl_a.parquet", f"snapshots/{HOUR}/part-fl_b.parquet"]
    assert all(lake.storage.exists(k) for k in flushes)
    assert lake.collect_garbage("snapshots", HOUR) == []
    assert lake.collect_garbage("snapshots", HOUR, grace_s=0) == flushes
    assert not any(lake.storage.exists(k) for k in flushes)
    assert count(lake) == 4


def test_concurrent_compaction_and_reprocess_of_one_hour_lose_and_double_nothing(
    lake: Lake, database_url: str
) -> None:
    """Two writers as two processes would be: own Lake, own store connection, one database."""
    stores = [StateStore.open(database_url), StateStore.open(database_url)]
    compactor, reprocessor = (
        Lake(
            Storage(lake.storage.url, s3_endpoint_url=_endpoint(lake)),
            PartitionLeases(lambda s=store: s.engine, f"host:{n}"),  # type: ignore[misc]
        )
        for n, store in enumerate(stores)
    )
    ids = [f"s{i}" for i in range(6)]

    def generation(number: int, of: list[str]) -> list[dict[str, Any]]:
        return [{**snapshot(i, n), "version": number} for n, i in enumerate(of)]

    reprocessor.write_rows("snapshots", generation(0, ids), batch_id="fl_0")
    rounds = 6
    done = threading.Event()
    errors: list[BaseException] = []

    def compact_loop() -> None:
        try:
            while not done.is_set():
                compactor.compact("snapshots", HOUR)
                time.sleep(random.uniform(0, 0.03))  # a schedule's pause: the lock is free
        except BaseException as exc:  # the test reports any failure
            errors.append(exc)

    thread = threading.Thread(target=compact_loop)
    thread.start()
    try:
        for number in range(1, rounds + 1):
            # A reprocess of the hour, then a flush of the rest of its rows: two files to merge.
            reprocessor.replace_partition("snapshots", HOUR, generation(number, ids[:3]))
            reprocessor.write_rows("snapshots", generation(number, ids[3:]), f"fl_{number}")
    finally:
        done.set()
        thread.join(timeout=120)
    assert errors == []
    compactor.compact("snapshots", HOUR)

    con = lake.connect()
    try:
        found = con.execute("SELECT snapshot_id, version FROM snapshots ORDER BY 1").fetchall()
    finally:
        con.close()
    assert found == [(i, rounds) for i in ids]
    for store in stores:
        store.engine.dispose()


def _endpoint(lake: Lake) -> str:
    options = getattr(lake.storage.fs, "client_kwargs", None) or {}
    return str(options.get("endpoint_url", ""))


@pytest.mark.parametrize("torn_call", [0, 1, 2, 3])
@pytest.mark.parametrize("other_hour_swapped", [False, True])
def test_a_listing_that_missed_a_first_swaps_state_shows_no_mixed_set(
    lake: Lake, monkeypatch: pytest.MonkeyPatch, torn_call: int, other_hour_swapped: bool
) -> None:
    """A listing is no snapshot: one taken during the first swap of an hour can hold the new
    file and miss the state written before it (a page of an S3 listing fetched earlier)."""
    lake.write_rows("snapshots", rows("old", 3), batch_id="fl_a")
    lake.write_rows("snapshots", rows("old", 3), batch_id="fl_b")
    if other_hour_swapped:
        later = [{**r, "captured_at": r["captured_at"] + timedelta(hours=1)} for r in rows("o", 2)]
        lake.write_rows("snapshots", later, batch_id="fl_c")
        lake.replace_partition("snapshots", "date=2026-01-05/hour=09", later)
    written = lake.replace_partition("snapshots", HOUR, rows("new", 4))
    state = f"snapshots/{HOUR}/{HIDDEN_STATE}"
    glob = lake.storage.glob
    calls = 0

    def torn_glob(pattern: str) -> list[str]:
        nonlocal calls
        calls += 1
        listed = glob(pattern)
        return [k for k in listed if k != state] if calls == torn_call + 1 else listed

    monkeypatch.setattr(lake.storage, "glob", torn_glob)
    for where in (HOUR, None):
        calls = 0
        hour_files = [k for k in lake.files("snapshots", where) if f"/{HOUR}/" in k]
        assert hour_files == [written.key]
