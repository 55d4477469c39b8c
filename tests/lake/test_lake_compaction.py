"""Hourly compaction: merge, dedupe, idempotence, crash recovery, and atomic file writes."""

from __future__ import annotations

import io
import json
import posixpath
import secrets
import threading
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from resources.lake import HIDDEN_STATE, REPLACES_KEY, Compaction, Lake
from resources.storage import Storage

HOUR = "date=2026-01-05/hour=08"
T0 = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)


def snapshot(snapshot_id: str, minute: int, **extra: Any) -> dict[str, Any]:
    return {
        "snapshot_id": snapshot_id,
        "sensor_id": 1,
        "company_id": 1,
        "surface": "careers",
        "version": 1,
        "captured_at": T0 + timedelta(minutes=minute),
        "normalized_hash": f"h-{snapshot_id}",
        "extracted": {"jobs": [snapshot_id]},
        **extra,
    }


def write_three_batches(lake: Lake) -> None:
    """Three tick batches in one hour: 6 rows, one id (s2) written twice."""
    lake.write_rows("snapshots", [snapshot("s1", 10), snapshot("s2", 5)], batch_id="fl_a")
    lake.write_rows("snapshots", [snapshot("s3", 30), snapshot("s2", 5)], batch_id="fl_b")
    lake.write_rows("snapshots", [snapshot("s4", 1), snapshot("s5", 59)], batch_id="fl_c")


def leftovers(root: Path) -> list[str]:
    """Temp or hidden files anywhere in the lake folder."""
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.is_file() and (p.name.startswith(".") or p.name.endswith(".tmp"))
    )


def forget_hidden(root: Path, keys: Iterable[str]) -> None:
    """The lake as an older compaction left it: inputs deleted, no visibility state."""
    (root / "snapshots" / HOUR / HIDDEN_STATE).unlink()
    for key in keys:
        (root / key).unlink()


def ids(lake: Lake) -> list[str]:
    return lake.read("snapshots", HOUR).column("snapshot_id").to_pylist()


def test_compaction_merges_the_hour_into_one_file_without_duplicate_ids(
    local_lake: Lake, lake_root: Path
) -> None:
    write_three_batches(local_lake)
    assert len(local_lake.files("snapshots", HOUR)) == 3

    result = local_lake.compact("snapshots", HOUR)

    (key,) = local_lake.files("snapshots", HOUR)
    assert posixpath.basename(key).startswith("compacted-")
    assert result == Compaction(
        table="snapshots",
        partition=HOUR,
        files_before=3,
        rows=5,
        bytes=(lake_root / key).stat().st_size,
        duplicates_dropped=1,
    )
    # sorted by event time, one row per id, nothing lost
    assert ids(local_lake) == ["s4", "s2", "s1", "s3", "s5"]
    meta = pq.read_schema(lake_root / key).metadata
    assert json.loads(meta[REPLACES_KEY]) == [
        "part-fl_a.parquet",
        "part-fl_b.parquet",
        "part-fl_c.parquet",
    ]
    # the values and JSON text survive the merge
    con = local_lake.connect()
    assert con.execute(
        "SELECT count(*), count(DISTINCT snapshot_id), max(extracted->>'$.jobs[0]') FROM snapshots"
    ).fetchone() == (5, 5, "s5")
    assert leftovers(lake_root) == []


def test_compaction_is_idempotent(local_lake: Lake, lake_root: Path) -> None:
    write_three_batches(local_lake)
    first = local_lake.compact("snapshots", HOUR)
    files = local_lake.files("snapshots", HOUR)
    content = (lake_root / files[0]).read_bytes()

    again = local_lake.compact("snapshots", HOUR)

    assert local_lake.files("snapshots", HOUR) == files
    assert (lake_root / files[0]).read_bytes() == content
    assert again == Compaction("snapshots", HOUR, 1, first.rows, first.bytes, 0)


def test_compaction_only_touches_its_own_table_and_hour(local_lake: Lake) -> None:
    write_three_batches(local_lake)
    local_lake.write_rows("snapshots", [snapshot("n1", 65)], batch_id="fl_a")  # hour 09
    local_lake.write_rows("changes", [{"change_id": "c1", "detected_at": T0}], batch_id="fl_a")
    local_lake.compact("snapshots", HOUR)
    assert local_lake.files("snapshots", "date=2026-01-05/hour=09") == [
        "snapshots/date=2026-01-05/hour=09/part-fl_a.parquet"
    ]
    assert local_lake.files("changes") == ["changes/date=2026-01-05/hour=08/part-fl_a.parquet"]


def test_new_batches_after_a_compaction_are_merged_into_a_new_compacted_file(
    local_lake: Lake,
) -> None:
    write_three_batches(local_lake)
    local_lake.compact("snapshots", HOUR)
    (old,) = local_lake.files("snapshots", HOUR)
    local_lake.write_rows("snapshots", [snapshot("s6", 40), snapshot("s1", 10)], batch_id="fl_d")

    result = local_lake.compact("snapshots", HOUR)

    (new,) = local_lake.files("snapshots", HOUR)
    assert new != old
    assert (result.files_before, result.rows, result.duplicates_dropped) == (2, 6, 1)
    assert sorted(ids(local_lake)) == ["s1", "s2", "s3", "s4", "s5", "s6"]


def test_an_empty_or_single_file_hour_is_reported_without_rewriting(
    local_lake: Lake, lake_root: Path
) -> None:
    assert local_lake.compact("snapshots", HOUR) == Compaction("snapshots", HOUR, 0, 0, 0, 0)
    local_lake.write_rows("snapshots", [snapshot("s1", 1)], batch_id="fl_a")
    (key,) = local_lake.files("snapshots", HOUR)
    before = (lake_root / key).stat()
    result = local_lake.compact("snapshots", HOUR)
    assert result == Compaction("snapshots", HOUR, 1, 1, before.st_size, 0)
    assert local_lake.files("snapshots", HOUR) == [key]
    assert (lake_root / key).stat().st_mtime_ns == before.st_mtime_ns


@pytest.mark.parametrize("survivors", ["all", "one"])
def test_an_interrupted_compaction_is_finished_by_the_next_one(
    local_lake: Lake, lake_root: Path, survivors: str
) -> None:
    """A compaction of the older kind (write, then delete the inputs) stopped mid-delete."""
    write_three_batches(local_lake)
    inputs = {k: (lake_root / k).read_bytes() for k in local_lake.files("snapshots", HOUR)}
    done = local_lake.compact("snapshots", HOUR)
    (compacted,) = local_lake.files("snapshots", HOUR)
    forget_hidden(lake_root, inputs)
    # put back what the interrupted run had not deleted yet
    restore = sorted(inputs) if survivors == "all" else sorted(inputs)[1:2]
    for key in restore:
        (lake_root / key).write_bytes(inputs[key])
    assert local_lake.read("snapshots", HOUR).num_rows > done.rows  # readers see doubles now

    result = local_lake.compact("snapshots", HOUR)

    assert local_lake.files("snapshots", HOUR) == [compacted]
    assert result.rows == 5
    assert sorted(ids(local_lake)) == ["s1", "s2", "s3", "s4", "s5"]
    assert leftovers(lake_root) == []


def test_recovery_keeps_batches_that_arrived_after_the_interrupted_run(
    local_lake: Lake, lake_root: Path
) -> None:
    write_three_batches(local_lake)
    inputs = {k: (lake_root / k).read_bytes() for k in local_lake.files("snapshots", HOUR)}
    local_lake.compact("snapshots", HOUR)
    forget_hidden(lake_root, inputs)
    for key, data in inputs.items():
        (lake_root / key).write_bytes(data)
    local_lake.write_rows("snapshots", [snapshot("s7", 20)], batch_id="fl_late")

    result = local_lake.compact("snapshots", HOUR)

    assert (result.rows, result.duplicates_dropped) == (6, 0)
    assert sorted(ids(local_lake)) == ["s1", "s2", "s3", "s4", "s5", "s7"]
    (only,) = local_lake.files("snapshots", HOUR)
    assert posixpath.basename(only).startswith("compacted-")


# -- atomic writes ------------------------------------------------------------------------------


def test_temp_files_are_never_listed(local_storage: Storage, lake_root: Path) -> None:
    """A writer that died mid-write leaves a hidden temp file: no glob may return it."""
    local_storage.write_atomic("snapshots/date=2026-01-05/hour=08/part-ok.parquet", b"x")
    folder = lake_root / "snapshots/date=2026-01-05/hour=08"
    (folder / ".part-dead.parquet.1a2b3c4d.tmp").write_bytes(b"half")
    (folder / ".part-dead2.parquet").write_bytes(b"half")

    for pattern in ("snapshots/*/*/*", "snapshots/*/*/*.parquet", "snapshots/**"):
        listed = local_storage.glob(pattern)
        assert all(not posixpath.basename(k).startswith(".") for k in listed), pattern
        assert all(not k.endswith(".tmp") for k in listed), pattern
    assert local_storage.glob("snapshots/*/*/*") == [
        "snapshots/date=2026-01-05/hour=08/part-ok.parquet"
    ]


def test_write_atomic_leaves_no_temp_file_and_overwrites_whole(
    local_storage: Storage, lake_root: Path
) -> None:
    local_storage.write_atomic("a/b/file.bin", b"first version, longer than the second")
    local_storage.write_atomic("a/b/file.bin", b"second")
    assert (lake_root / "a/b/file.bin").read_bytes() == b"second"
    assert sorted(p.name for p in (lake_root / "a/b").iterdir()) == ["file.bin"]


def test_a_reader_never_sees_a_partial_parquet_file(local_lake: Lake, lake_root: Path) -> None:
    """Rewrite one batch file over and over while another thread lists and parses it."""
    big = [snapshot(f"s{i}", i % 60, normalized_hash=secrets.token_hex(32)) for i in range(1500)]
    local_lake.write_rows("snapshots", big, batch_id="fl_hot")
    stop = threading.Event()
    problems: list[str] = []
    reads = 0

    def reader() -> None:
        nonlocal reads
        while not stop.is_set():
            for key in local_lake.storage.glob("snapshots/*/*/*"):
                if not key.endswith(".parquet"):
                    problems.append(f"listed {key}")
                    continue
                try:
                    data = local_lake.storage.read(key)
                    rows = pq.read_table(io.BytesIO(data)).num_rows
                except FileNotFoundError:
                    continue
                except Exception as exc:
                    problems.append(f"{key}: {exc}")
                    continue
                reads += 1
                if rows != len(big):
                    problems.append(f"{key}: {rows} rows")

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for _ in range(10):
            local_lake.write_rows("snapshots", big, batch_id="fl_hot")
    finally:
        stop.set()
        thread.join()
    assert problems == []
    assert reads > 0
    assert leftovers(lake_root) == []
