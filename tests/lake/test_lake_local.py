"""The Parquet lake on a local folder: partitions, batch replacement, refusals, types, DuckDB."""

from __future__ import annotations

import io
import json
import os
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catlas_assets.errors import StorageError
from resources.lake import Lake, partition_of
from resources.lake_tables import DIMENSIONS, TABLES

T0 = datetime(2026, 1, 5, 8, 15, tzinfo=UTC)


def observation(obs_id: str, fetched_at: datetime | str, **extra: Any) -> dict[str, Any]:
    return {
        "observation_id": obs_id,
        "run_id": "run_1",
        "sensor_id": 1,
        "company_id": 1,
        "surface": "careers",
        "url": "https://northwind-robotics.com/careers",
        "fetched_at": fetched_at,
        "outcome": "ok",
        "http_status": 200,
        "not_modified": False,
        "changed": False,
        **extra,
    }


def change(change_id: str, detected_at: datetime, **extra: Any) -> dict[str, Any]:
    return {
        "change_id": change_id,
        "run_id": "run_1",
        "sensor_id": 1,
        "company_id": 1,
        "surface": "pricing",
        "snapshot_id": f"snp_{change_id}",
        "detected_at": detected_at,
        "significance": 0.5,
        "kind": "major",
        "status": "pending",
        "summary": f"change {change_id}",
        **extra,
    }


def disk_files(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


# -- partitions -------------------------------------------------------------------------


def test_rows_land_in_their_utc_hour_and_one_batch_may_span_two_hours(
    local_lake: Lake, lake_root: Path
) -> None:
    rows = [
        observation("obs_a", datetime(2026, 1, 5, 8, 59, 59, 999999, tzinfo=UTC)),
        observation("obs_b", datetime(2026, 1, 5, 9, 0, 0, tzinfo=UTC)),
        observation("obs_c", datetime(2026, 1, 5, 8, 0, 0, tzinfo=UTC)),
    ]
    written = local_lake.write_rows("observations", rows, batch_id="fl_1")

    assert [(w.partition, w.rows) for w in written] == [
        ("date=2026-01-05/hour=08", 2),
        ("date=2026-01-05/hour=09", 1),
    ]
    assert disk_files(lake_root) == [
        "observations/date=2026-01-05/hour=08/part-fl_1.parquet",
        "observations/date=2026-01-05/hour=09/part-fl_1.parquet",
    ]
    for w in written:
        assert w.bytes == (lake_root / w.key).stat().st_size
    hour_08 = local_lake.read("observations", "date=2026-01-05/hour=08")
    assert sorted(hour_08.column("observation_id").to_pylist()) == ["obs_a", "obs_c"]
    hour_09 = local_lake.read("observations", "date=2026-01-05/hour=09")
    assert hour_09.column("observation_id").to_pylist() == ["obs_b"]


def test_arrow_columns_out_of_time_order_land_in_their_hours_in_their_order(
    local_lake: Lake, lake_root: Path
) -> None:
    # A bulk writer hands over columns, not rows; only some of the schema's columns.
    times = [T0 + timedelta(hours=h, minutes=m) for h, m in [(1, 0), (0, 5), (1, 9), (0, 1)]]
    data = pa.table(
        {
            "observation_id": ["o9a", "o8a", "o9b", "o8b"],
            "sensor_id": pa.array([1, 2, 3, 4], pa.int32()),  # cast to the schema's int64
            "fetched_at": pa.array(times, pa.timestamp("us", tz="UTC")),
            "changed": [True, False, False, True],
        }
    )
    written = local_lake.write_arrow("observations", data, batch_id="bulk")

    assert [(w.partition, w.rows) for w in written] == [
        ("date=2026-01-05/hour=08", 2),
        ("date=2026-01-05/hour=09", 2),
    ]
    con = local_lake.connect()
    got = con.execute(
        "SELECT hour, observation_id, sensor_id, changed, url FROM observations "
        "ORDER BY hour, fetched_at DESC"
    ).fetchall()
    assert got == [
        (8, "o8a", 2, False, None),
        (8, "o8b", 4, True, None),
        (9, "o9b", 3, False, None),
        (9, "o9a", 1, True, None),
    ]
    # Within a file the rows keep the order they were handed over in.
    stored = pq.read_table(lake_root / written[1].key).column("observation_id").to_pylist()
    assert stored == ["o9a", "o9b"]
    assert local_lake.write_arrow("observations", data.slice(0, 0), batch_id="none") == []
    with pytest.raises(StorageError, match=r"unknown column\(s\) \['colour'\]"):
        local_lake.write_arrow(
            "observations", data.append_column("colour", pa.array(["r"] * 4)), batch_id="x"
        )


def test_arrow_columns_in_many_chunks_land_as_one_row_group_in_their_order(
    local_lake: Lake, lake_root: Path
) -> None:
    # A flush hands over one chunk per commit group (each unpacked from its own stream).
    groups = [
        pa.table(
            {
                "observation_id": [f"o{g}{i}" for i in range(3)],
                "fetched_at": pa.array(
                    [T0 + timedelta(minutes=g * 3 + i) for i in range(3)],
                    pa.timestamp("us", tz="UTC"),
                ),
            }
        )
        for g in range(4)
    ]
    data = pa.concat_tables(groups)
    assert data.column("observation_id").num_chunks == 4

    [written] = local_lake.write_arrow("observations", data, batch_id="fl_groups")

    stored = pq.ParquetFile(lake_root / written.key)
    assert (stored.metadata.num_row_groups, written.rows) == (1, 12)
    assert stored.read().column("observation_id").to_pylist() == [
        f"o{g}{i}" for g in range(4) for i in range(3)
    ]


@pytest.mark.parametrize(
    ("fetched_at", "partition"),
    [
        # 23:30 at UTC-05:00 is 04:30 UTC the next day: the date rolls over.
        (
            datetime(2026, 1, 5, 23, 30, tzinfo=timezone(timedelta(hours=-5))),
            "date=2026-01-06/hour=04",
        ),
        # 01:30 at UTC+02:00 is 23:30 UTC the day before.
        (
            datetime(2026, 1, 6, 1, 30, tzinfo=timezone(timedelta(hours=2))),
            "date=2026-01-05/hour=23",
        ),
        # ISO text, as rows come back from the outbox.
        ("2026-03-01T00:00:00+00:00", "date=2026-03-01/hour=00"),
        ("2026-03-01T00:30:00+01:00", "date=2026-02-28/hour=23"),
    ],
)
def test_partition_is_the_utc_event_time_whatever_the_offset(
    local_lake: Lake, fetched_at: datetime | str, partition: str
) -> None:
    written = local_lake.write_rows("observations", [observation("o1", fetched_at)], "b")
    assert [w.partition for w in written] == [partition]
    assert local_lake.partitions("observations") == [partition]


def test_each_table_partitions_by_its_own_event_time_column(local_lake: Lake) -> None:
    at = datetime(2026, 1, 7, 13, 5, tzinfo=UTC)
    for name, spec in TABLES.items():
        row = {spec.id_column: f"{name}_1", spec.time_column: at}
        local_lake.write_rows(name, [row], batch_id="b1")
        assert local_lake.partitions(name) == ["date=2026-01-07/hour=13"], name


def test_rewriting_the_same_batch_replaces_it(local_lake: Lake) -> None:
    first = [observation(f"o{i}", T0 + timedelta(minutes=i)) for i in range(3)]
    local_lake.write_rows("observations", first, batch_id="fl_same")
    local_lake.write_rows("observations", first, batch_id="fl_same")
    assert local_lake.read("observations").num_rows == 3
    assert len(local_lake.files("observations")) == 1

    second = [observation("o9", T0)]
    local_lake.write_rows("observations", second, batch_id="fl_same")
    assert local_lake.read("observations").column("observation_id").to_pylist() == ["o9"]

    local_lake.write_rows("observations", first, batch_id="fl_other")
    assert local_lake.read("observations").num_rows == 4
    assert len(local_lake.files("observations")) == 2


# -- refusals -----------------------------------------------------------------------------


def test_unknown_table_is_refused_by_name(local_lake: Lake, lake_root: Path) -> None:
    with pytest.raises(StorageError, match=r"unknown lake table 'observation'"):
        local_lake.write_rows("observation", [observation("o1", T0)], batch_id="b")
    with pytest.raises(StorageError, match="unknown lake table"):
        local_lake.files("nope")
    assert not lake_root.exists() or disk_files(lake_root) == []


def test_unknown_column_is_refused_and_nothing_of_the_batch_is_written(
    local_lake: Lake, lake_root: Path
) -> None:
    rows = [
        observation("o1", T0),
        # a later hour, so a partition-by-partition writer would already have written hour 08
        observation("o2", T0 + timedelta(hours=1), fetchd_at="typo", colour="red"),
    ]
    with pytest.raises(
        StorageError, match=r"observations: unknown column\(s\) \['colour', 'fetchd_at'\]"
    ):
        local_lake.write_rows("observations", rows, batch_id="b")
    assert not lake_root.exists() or disk_files(lake_root) == []


def test_a_row_without_its_event_time_is_refused_clearly(local_lake: Lake) -> None:
    row = observation("o1", T0)
    del row["fetched_at"]
    with pytest.raises(StorageError, match="fetched_at"):
        local_lake.write_rows("observations", [row], batch_id="b")


# -- types ----------------------------------------------------------------------------------


def test_timestamps_are_stored_as_utc_instants(local_lake: Lake, lake_root: Path) -> None:
    offset = timezone(timedelta(hours=5, minutes=30))
    local_at = datetime(2026, 1, 5, 14, 0, 0, 123456, tzinfo=offset)  # 08:30:00.123456 UTC
    local_lake.write_rows("observations", [observation("o1", local_at)], batch_id="b")

    (key,) = local_lake.files("observations")
    stored = pq.read_table(lake_root / key)
    assert stored.schema.field("fetched_at").type == pa.timestamp("us", tz="UTC")
    value = stored.column("fetched_at")[0].as_py()
    assert value == local_at
    assert value.utcoffset() == timedelta(0)
    assert (value.hour, value.minute, value.microsecond) == (8, 30, 123456)

    con = local_lake.connect()
    con.execute("SET TimeZone = 'UTC'")
    (text,) = con.execute(
        "SELECT strftime(fetched_at, '%Y-%m-%d %H:%M:%S.%f') FROM observations"
    ).fetchone()
    assert text == "2026-01-05 08:30:00.123456"


@pytest.fixture
def machine_zone_new_york() -> Iterator[None]:
    """Run with the process's local time zone far from UTC (naive values must not use it)."""
    before = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    time.tzset()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("TZ", None)
        else:
            os.environ["TZ"] = before
        time.tzset()


@pytest.mark.parametrize("naive", [datetime(2026, 1, 5, 23, 30), "2026-01-05T23:30:00"])
def test_a_naive_time_is_taken_as_utc_for_both_partition_and_value(
    local_lake: Lake, machine_zone_new_york: None, naive: datetime | str
) -> None:
    written = local_lake.write_rows("observations", [observation("o1", naive)], batch_id="b")
    assert [w.partition for w in written] == ["date=2026-01-05/hour=23"]
    value = local_lake.read("observations").column("fetched_at")[0].as_py()
    assert value == datetime(2026, 1, 5, 23, 30, tzinfo=UTC)
    assert partition_of(value) == written[0].partition


def test_json_columns_are_json_text_readable_with_duckdb(local_lake: Lake, lake_root: Path) -> None:
    delta = {
        "added": ["Staff Robotics Engineer"],
        "plan": {"name": "Pro", "price": 59},
        "city": "Zürich",
    }
    local_lake.write_rows("changes", [change("c1", T0, structured_delta=delta)], batch_id="b")
    local_lake.write_rows(
        "entity_events",
        [
            {
                "event_id": "e1",
                "entity_type": "job",
                "entity_key": "staff-robotics-engineer",
                "event": "added",
                "observed_at": T0,
                "attributes": {"title": "Staff Robotics Engineer", "tags": ["berlin", "onsite"]},
            }
        ],
        batch_id="b",
    )

    (key,) = local_lake.files("changes")
    stored = pq.read_table(lake_root / key)
    assert stored.schema.field("structured_delta").type == pa.string()
    text = stored.column("structured_delta")[0].as_py()
    assert isinstance(text, str)
    assert json.loads(text) == delta
    assert "Zürich" in text  # not \u-escaped

    con = local_lake.connect()
    assert con.execute(
        "SELECT structured_delta->>'$.plan.name', structured_delta->>'$.added[0]', "
        "structured_delta->>'city', (structured_delta->'$.plan.price')::INT FROM changes"
    ).fetchone() == ("Pro", "Staff Robotics Engineer", "Zürich", 59)
    assert con.execute(
        "SELECT attributes->>'title', attributes->>'$.tags[1]' FROM entity_events"
    ).fetchone() == ("Staff Robotics Engineer", "onsite")


def test_json_columns_accept_text_and_null(local_lake: Lake) -> None:
    local_lake.write_rows(
        "changes",
        [
            change("c1", T0, structured_delta='{"already": "json"}'),
            change("c2", T0 + timedelta(minutes=1)),
        ],
        batch_id="b",
    )
    rows = (
        local_lake.connect()
        .execute("SELECT change_id, structured_delta->>'already' FROM changes ORDER BY change_id")
        .fetchall()
    )
    assert rows == [("c1", "json"), ("c2", None)]


# -- DuckDB -----------------------------------------------------------------------------------


def _columns(con: duckdb.DuckDBPyConnection, name: str) -> dict[str, str]:
    return {row[0]: row[1] for row in con.execute(f"DESCRIBE {name}").fetchall()}


def test_every_table_is_queryable_even_with_no_files_and_typed(local_lake: Lake) -> None:
    con = local_lake.connect()
    names = {
        row[0] for row in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
    }
    dimensions = set(DIMENSIONS) | {f"{d}_history" for d in DIMENSIONS}
    # `changes` is a view over the rows as written (`changes_written`) and the deliveries;
    # `latest_observations` each sensor's latest row (tests/lake/test_lake_latest.py).
    assert names == set(TABLES) | dimensions | {"changes_written", "latest_observations"}
    for name, spec in TABLES.items():
        assert con.execute(f"SELECT count(*) FROM {name}").fetchone() == (0,)
        columns = _columns(con, name)
        assert list(columns)[: len(spec.schema.names)] == spec.schema.names
        assert columns[spec.time_column] == "TIMESTAMP WITH TIME ZONE"
    observations = _columns(con, "observations")
    assert observations["sensor_id"] == "BIGINT"
    assert observations["http_status"] == "INTEGER"
    assert observations["not_modified"] == "BOOLEAN"
    assert _columns(con, "changes")["significance"] == "DOUBLE"


def test_an_empty_table_has_the_same_columns_as_one_with_files(local_lake: Lake) -> None:
    """A query written against a populated lake (partition filters included) runs on an empty one."""
    empty = _columns(local_lake.connect(), "changes")
    local_lake.write_rows("changes", [change("c1", T0)], batch_id="b")
    con = local_lake.connect()
    assert _columns(con, "changes") == empty
    query = "SELECT count(*) FROM {} WHERE date = DATE '2026-01-05' AND hour = 8"
    assert con.execute(query.format("changes")).fetchone() == (1,)
    assert con.execute(query.format("snapshots")).fetchone() == (0,)


def test_views_see_new_files_and_plain_duckdb_reads_the_same_rows(
    local_lake: Lake, lake_root: Path
) -> None:
    rows = [change(f"c{i}", T0 + timedelta(minutes=25 * i)) for i in range(6)]  # 08:15 .. 10:20
    local_lake.write_rows("changes", rows[:4], batch_id="b1")
    local_lake.write_rows("changes", rows[4:], batch_id="b2")

    query = "SELECT change_id, detected_at, summary, date, hour FROM {} ORDER BY change_id"
    via_lake = local_lake.connect().execute(query.format("changes")).fetchall()
    assert [r[0] for r in via_lake] == [f"c{i}" for i in range(6)]
    assert [(r[3].isoformat(), r[4]) for r in via_lake] == [
        ("2026-01-05", 8),
        ("2026-01-05", 8),
        ("2026-01-05", 9),
        ("2026-01-05", 9),
        ("2026-01-05", 9),
        ("2026-01-05", 10),
    ]

    plain = duckdb.connect(config={"autoinstall_known_extensions": False})
    source = f"read_parquet('{lake_root}/changes/*/*/*.parquet', hive_partitioning = true)"
    via_plain = plain.execute(query.format(source)).fetchall()
    assert [r[:3] for r in via_plain] == [r[:3] for r in via_lake]
    assert [(str(r[3]), int(r[4])) for r in via_plain] == [
        (r[3].isoformat(), r[4]) for r in via_lake
    ]


def test_lake_read_matches_the_files(local_lake: Lake, lake_root: Path) -> None:
    rows = [observation(f"o{i}", T0 + timedelta(hours=i)) for i in range(3)]
    local_lake.write_rows("observations", rows, batch_id="b")
    table = local_lake.read("observations")
    assert table.schema == TABLES["observations"].schema
    from_disk = pa.concat_tables(
        pq.read_table(io.BytesIO((lake_root / k).read_bytes()))
        for k in local_lake.files("observations")
    )
    assert sorted(table.column("observation_id").to_pylist()) == sorted(
        from_disk.column("observation_id").to_pylist()
    )
    assert table.num_rows == 3


def _old_file(lake_root: Path, table: str, rows: list[dict[str, Any]], dropped: set[str]) -> None:
    """A file as an older catlas wrote it: the table's columns without `dropped`."""
    schema = pa.schema([f for f in TABLES[table].schema if f.name not in dropped])
    folder = lake_root / table / "date=2026-01-05" / "hour=08"
    folder.mkdir(parents=True, exist_ok=True)
    data = pa.Table.from_pylist(
        [{k: v for k, v in r.items() if k not in dropped} for r in rows], schema=schema
    )
    pq.write_table(data, folder / "part-old.parquet")


def test_a_column_no_file_has_yet_reads_as_typed_nulls(local_lake: Lake, lake_root: Path) -> None:
    """Queries written for the current schema run on a lake written before a column existed."""
    declared = _columns(local_lake.connect(), "changes")
    dropped = {"webpage_id", "lineage_id", "structured_delta"}
    assert dropped <= set(declared)
    _old_file(lake_root, "changes", [change("c1", T0)], dropped)
    con = local_lake.connect()
    assert _columns(con, "changes") == declared
    got = con.execute(
        "SELECT change_id, webpage_id, lineage_id, structured_delta->>'$.x' FROM changes"
    ).fetchall()
    assert got == [("c1", None, None, None)]
    # Once a file has the columns, the union of both reads the old rows as NULL.
    local_lake.write_rows("changes", [{**change("c2", T0), "webpage_id": 7}], batch_id="new")
    con = local_lake.connect()
    assert _columns(con, "changes") == declared
    assert sorted(con.execute("SELECT change_id, webpage_id FROM changes").fetchall()) == [
        ("c1", None),
        ("c2", 7),
    ]
