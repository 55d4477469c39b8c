"""The lake and the object archive on s3:// against a real local S3-compatible server."""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import aiohttp
import fsspec.asyn
import pytest
import zstandard

from catlas_assets.domain.content_address import archive_key
from catlas_assets.errors import StorageError
from catlas_assets.services import catalog
from catlas_assets.services.tick import run_tick
from resources.archive import ObjectArchive
from resources.lake import Lake
from resources.state.archive_index import ArchiveIndex, record
from resources.storage import Storage

T0 = datetime(2026, 1, 5, 8, 40, tzinfo=UTC)
ListBucket = Callable[..., list[str]]


def test_storage_round_trip_on_s3(
    s3_endpoint: str, s3_bucket: str, s3_client: Any, list_bucket: ListBucket
) -> None:
    storage = Storage(f"s3://{s3_bucket}/prefix/", s3_endpoint_url=s3_endpoint)
    assert storage.is_s3
    assert storage.uri("a/b.txt") == f"s3://{s3_bucket}/prefix/a/b.txt"

    storage.write_atomic("a/b.txt", b"hello")
    storage.write_atomic("a/c.txt", b"world!")
    storage.write_atomic("a/c.txt", b"world!!")  # overwrite
    # a zero-byte "folder" marker as other S3 writers leave them
    s3_client.put_object(Bucket=s3_bucket, Key="prefix/a/", Body=b"")

    assert list_bucket(s3_bucket, "prefix/a/") == ["prefix/a/", "prefix/a/b.txt", "prefix/a/c.txt"]
    assert storage.read("a/b.txt") == b"hello"
    assert storage.read("a/c.txt") == b"world!!"
    assert storage.size("a/c.txt") == 7
    assert storage.exists("a/b.txt")
    assert not storage.exists("a/missing.txt")
    assert storage.glob("a/*.txt") == ["a/b.txt", "a/c.txt"]
    assert storage.glob("a/*") == ["a/b.txt", "a/c.txt"]

    storage.delete(["a/b.txt", "a/never-existed.txt"])
    assert storage.glob("a/*.txt") == ["a/c.txt"]
    assert "prefix/a/b.txt" not in list_bucket(s3_bucket)


def test_files_made_by_their_writers_are_uploaded_on_s3(
    s3_endpoint: str, s3_bucket: str, list_bucket: ListBucket
) -> None:
    storage = Storage(f"s3://{s3_bucket}/prefix", s3_endpoint_url=s3_endpoint)
    keys = ["t/one.parquet", "t/two.parquet"]

    def make(index: int, path: str) -> None:
        with open(path, "wb") as out:
            out.write(b"made %d" % index * (index + 1))

    assert storage.make_many_atomic(keys, make) == [6, 12]
    assert list_bucket(s3_bucket, "prefix/t/") == ["prefix/t/one.parquet", "prefix/t/two.parquet"]
    assert storage.read("t/two.parquet") == b"made 1made 1"

    def failing(index: int, path: str) -> None:
        make(index, path)
        if index == 1:
            raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        storage.make_many_atomic(["u/one.parquet", "u/two.parquet"], failing)
    assert list_bucket(s3_bucket, "prefix/u/") == []  # nothing uploaded


def test_a_request_body_orphaned_by_a_lost_s3_server_is_not_printed(
    s3_endpoint: str, s3_bucket: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The server went away mid-PUT: the request failed (reported once, as one line), and
    aiohttp's task that was writing its body fails unawaited. asyncio would print that
    task's traceback to stderr; it goes to the debug log. Other orphaned errors do not."""
    Storage(f"s3://{s3_bucket}/lake", s3_endpoint_url=s3_endpoint)
    loop = fsspec.asyn.get_loop()  # the loop s3fs runs its requests on
    handler = loop.get_exception_handler()
    assert handler is not None
    caplog.set_level(logging.DEBUG)
    never_retrieved = "Task exception was never retrieved"
    lost = aiohttp.ClientConnectionResetError("Cannot write to closing transport")
    handler(loop, {"message": never_retrieved, "exception": lost})
    assert [r.levelno for r in caplog.records] == [logging.DEBUG]
    assert "request body not sent" in caplog.records[0].getMessage()
    caplog.clear()
    handler(loop, {"message": never_retrieved, "exception": ValueError("a bug")})
    assert [(r.name, r.levelno) for r in caplog.records] == [("asyncio", logging.ERROR)]


def test_check_writable_on_s3(s3_endpoint: str, s3_bucket: str, list_bucket: ListBucket) -> None:
    Storage(f"s3://{s3_bucket}/lake", s3_endpoint_url=s3_endpoint).check_writable()
    assert list_bucket(s3_bucket) == []  # the probe is removed

    missing = "s3://no-such-bucket-for-catlas/lake"
    with pytest.raises(StorageError, match=f"cannot write to the lake at {missing}"):
        Storage(missing, s3_endpoint_url=s3_endpoint).check_writable()


def test_lake_on_s3_writes_compacts_and_queries_through_duckdb(
    s3_endpoint: str, s3_bucket: str, list_bucket: ListBucket
) -> None:
    lake = Lake(Storage(f"s3://{s3_bucket}/lake", s3_endpoint_url=s3_endpoint))

    def row(change_id: str, at: datetime) -> dict[str, Any]:
        return {
            "change_id": change_id,
            "sensor_id": 3,
            "company_id": 1,
            "surface": "pricing",
            "detected_at": at,
            "kind": "major",
            "status": "pending",
            "structured_delta": {"plan": "Pro", "price": [49, 59]},
        }

    # one batch spanning 08:xx and 09:xx, then a second batch in 08 with a repeated id
    lake.write_rows("changes", [row("c1", T0), row("c2", T0 + timedelta(minutes=30))], "fl_1")
    lake.write_rows("changes", [row("c3", T0 + timedelta(minutes=5)), row("c1", T0)], "fl_2")
    assert list_bucket(s3_bucket) == [
        "lake/changes/date=2026-01-05/hour=08/part-fl_1.parquet",
        "lake/changes/date=2026-01-05/hour=08/part-fl_2.parquet",
        "lake/changes/date=2026-01-05/hour=09/part-fl_1.parquet",
    ]
    assert lake.partitions("changes") == ["date=2026-01-05/hour=08", "date=2026-01-05/hour=09"]

    result = lake.compact("changes", "date=2026-01-05/hour=08")
    assert (result.files_before, result.rows, result.duplicates_dropped) == (2, 2, 1)
    keys = lake.files("changes", "date=2026-01-05/hour=08")
    assert len(keys) == 1 and "/compacted-" in keys[0]
    # the inputs stay, hidden, for readers that listed them before the swap
    assert len(list_bucket(s3_bucket, "lake/changes/date=2026-01-05/hour=08/")) == 4
    assert lake.compact("changes", "date=2026-01-05/hour=08").files_before == 1

    con = lake.connect()
    rows = con.execute(
        "SELECT change_id, detected_at, hour, structured_delta->>'$.price[1]' "
        "FROM changes ORDER BY change_id"
    ).fetchall()
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("c1", T0, 8, "59"),
        ("c2", T0 + timedelta(minutes=30), 9, "59"),
        ("c3", T0 + timedelta(minutes=5), 8, "59"),
    ]
    # every other table exists, empty
    assert con.execute("SELECT count(*) FROM observations").fetchone() == (0,)
    # DuckDB reads s3:// directly through the registered filesystem, too
    uris = [lake.storage.uri(k) for k in lake.files("changes")]
    direct = con.execute(
        "SELECT count(*) FROM read_parquet(?, hive_partitioning = true)", [uris]
    ).fetchone()
    assert direct == (3,)


def test_archive_on_s3(
    s3_endpoint: str, s3_bucket: str, s3_client: Any, list_bucket: ListBucket
) -> None:
    archive = ObjectArchive(Storage(f"s3://{s3_bucket}/lake", s3_endpoint_url=s3_endpoint))
    data = b"<html>" + b"Field Service Technician, Austin. " * 300 + b"</html>"
    digest = hashlib.sha256(data).hexdigest()

    first = archive.put(data)
    second = archive.put(data)

    assert first.key == second.key == f"objects/{digest[:2]}/{digest[2:4]}/{digest}.zst"
    assert first.new_bytes > 0
    assert second.new_bytes == 0
    assert list_bucket(s3_bucket) == [f"lake/{first.key}"]
    body = s3_client.get_object(Bucket=s3_bucket, Key=f"lake/{first.key}")["Body"].read()
    assert len(body) == first.new_bytes < len(data)
    assert zstandard.ZstdDecompressor().decompress(body) == data
    assert archive.get(first.key) == data


def test_a_pack_on_s3_is_one_object_read_back_by_ranges(
    s3_endpoint: str, s3_bucket: str, list_bucket: ListBucket, archive_index: ArchiveIndex
) -> None:
    storage = Storage(f"s3://{s3_bucket}/lake", s3_endpoint_url=s3_endpoint)
    datas = [b"<html>" + b"Field Service Technician, Austin. " * 300 + b"</html>", b"text"]

    packed = ObjectArchive(storage, archive_index).pack({archive_key(d): d for d in datas})
    with archive_index.store.transaction(write_lock=True) as conn:
        record(conn, packed.places)

    [pack] = list_bucket(s3_bucket)
    assert pack.startswith("lake/packs/") and [p.pack for p in packed.places] == [pack[5:]] * 2
    fresh = ObjectArchive(
        Storage(f"s3://{s3_bucket}/lake", s3_endpoint_url=s3_endpoint), archive_index
    )
    assert [fresh.get(archive_key(d)) for d in datas] == datas
    assert fresh.missing([archive_key(d) for d in datas] + [archive_key(b"none")]) == [
        archive_key(b"none")
    ]


def test_the_pipeline_end_to_end_with_an_s3_lake(
    make_runtime: Callable[..., Any],
    database_url: str,
    s3_endpoint: str,
    s3_bucket: str,
    list_bucket: ListBucket,
) -> None:
    runtime = make_runtime(
        database_url, lake_url=f"s3://{s3_bucket}/lake", s3_endpoint_url=s3_endpoint
    )
    runtime.storage.check_writable()
    company_id = catalog.add_company(
        runtime, name="Northwind Robotics", website="http://northwind-robotics.com"
    )
    sensor_id = catalog.add_sensor(
        runtime,
        company_id=company_id,
        surface="careers",
        url="http://northwind-robotics.com/careers",
    )

    result = run_tick(runtime)

    assert [(r.sensor_id, r.outcome.value, r.committed) for r in result.runs] == [
        (sensor_id, "ok", True)
    ]
    assert runtime.store.outbox_size() == 0
    con = runtime.lake.connect()
    observations = con.execute(
        "SELECT observation_id, run_id, sensor_id, company_id, outcome, http_status, "
        "fetched_at, object_key, text_key, blocks_key, date, hour FROM observations"
    ).fetchall()
    assert len(observations) == 1
    (obs_id, run_id, sid, cid, outcome, status, fetched_at, obj, text, blocks, day, hour) = (
        observations[0]
    )
    now = runtime.clock.now()
    assert (run_id, sid, cid, outcome, status) == (
        result.report.run_id,
        sensor_id,
        company_id,
        "ok",
        200,
    )
    assert fetched_at == now
    assert (day.isoformat(), hour) == (f"{now:%Y-%m-%d}", now.hour)

    snapshots = con.execute(
        "SELECT observation_id, sensor_id, version, captured_at, text_key, blocks_key "
        "FROM snapshots"
    ).fetchall()
    assert snapshots == [(obs_id, sensor_id, 1, now, text, blocks)]

    keys = set(list_bucket(s3_bucket))
    places = ArchiveIndex(runtime.store).locate([obj, text, blocks])
    assert {p.pack for p in places.values()} == {
        k.removeprefix("lake/") for k in keys if k.startswith("lake/packs/")
    }
    for key in (obj, text, blocks):
        assert key and key.startswith("objects/")
        assert f"lake/{key}" not in keys  # in the run's one pack, read by range
    assert len(places) == 3
    raw = runtime.archive.get(obj)
    assert b"<html" in raw.lower()
    assert hashlib.sha256(raw).hexdigest() in obj
    partition = f"date={now:%Y-%m-%d}/hour={now:%H}"
    assert any(k.startswith(f"lake/observations/{partition}/part-") for k in keys)
    assert any(k.startswith(f"lake/snapshots/{partition}/part-") for k in keys)
