"""The kept latest-observation table and its view (`latest_observations`).

Whatever the kept table's age, the view must answer what the reduction over the whole
`observations` view answers; the kept table only decides how much is read to get there.
"""

from __future__ import annotations

import posixpath
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from resources import lake_latest
from resources.lake import Lake
from resources.storage import Storage

T0 = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)

# The reduction the view must agree with, over the history itself.
EXPECTED = (
    "SELECT sensor_id, webpage_id, observation_id, outcome, fetched_at, date, hour "
    "FROM observations QUALIFY row_number() OVER (PARTITION BY sensor_id, webpage_id "
    "ORDER BY fetched_at DESC, observation_id DESC) = 1 ORDER BY ALL"
)
SEEN = (
    "SELECT sensor_id, webpage_id, observation_id, outcome, fetched_at, date, hour "
    "FROM latest_observations ORDER BY ALL"
)


def obs(observation_id: str, sensor_id: int | None, minutes: int, outcome: str = "unchanged",
        webpage_id: int | None = None) -> dict[str, Any]:  # fmt: skip
    return {
        "observation_id": observation_id,
        "run_id": "run_1",
        "sensor_id": sensor_id,
        "webpage_id": webpage_id,
        "company_id": 1,
        "surface": "careers",
        "url": f"https://acme.test/{sensor_id}",
        "fetched_at": T0 + timedelta(minutes=minutes),
        "outcome": outcome,
        "content_hash": f"h-{observation_id}",
    }


def answers(lake: Lake) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]], str]:
    """What the view says, what the history says, and the view's SQL (the files it names)."""
    con = lake.connect()
    try:
        seen = con.execute(SEEN).fetchall()
        expected = con.execute(EXPECTED).fetchall()
        sql = con.execute(
            "SELECT coalesce(sql, '') FROM duckdb_views() WHERE view_name = 'latest_observations'"
        ).fetchone()
        return seen, expected, sql[0] if sql else ""
    finally:
        con.close()


def first_hours(lake: Lake) -> None:
    """Two hours, three sensors and one site-crawl page; sensor 1 seen in both hours."""
    lake.write_rows(
        "observations",
        [obs("o1", 1, 0), obs("o2", 2, 5, "changed"), obs("o3", None, 7, "ok", webpage_id=9)],
        batch_id="b1",
    )
    lake.write_rows("observations", [obs("o4", 1, 65, "not_modified"), obs("o5", 3, 70)], "b2")


def test_an_empty_lake_has_the_view_with_every_column(local_lake: Lake) -> None:
    con = local_lake.connect()
    columns = [row[0] for row in con.execute("DESCRIBE latest_observations").fetchall()]
    assert columns == lake_latest.SCHEMA.names
    assert con.execute("SELECT count(*) FROM latest_observations").fetchone() == (0,)


def test_without_a_kept_table_the_view_reduces_the_history(local_lake: Lake) -> None:
    first_hours(local_lake)
    seen, expected, _ = answers(local_lake)
    assert seen == expected
    assert [(s, w, o) for s, w, o, *_ in seen] == [
        (1, None, "o4"),
        (2, None, "o2"),
        (3, None, "o5"),
        (None, 9, "o3"),
    ]


def test_an_update_keeps_one_row_per_sensor_and_the_view_reads_it_alone(
    local_lake: Lake, tmp_path: Path
) -> None:
    first_hours(local_lake)
    done = local_lake.update_latest()
    assert done.key is not None and done.rows == 4 and done.files_folded == 2
    kept = pq.read_table(tmp_path / "lake" / done.key)
    assert kept.schema.names == lake_latest.SCHEMA.names
    assert kept.column("sensor_id").to_pylist() == [1, 2, 3, None]  # sorted: lookups prune
    seen, expected, sql = answers(local_lake)
    assert seen == expected
    assert posixpath.basename(done.key) in sql
    assert "observations/date=" not in sql  # no history file read


def test_files_written_after_the_update_are_folded_in_as_the_view_reads(
    local_lake: Lake,
) -> None:
    first_hours(local_lake)
    local_lake.update_latest()
    # A newer row for sensor 2, an older one for sensor 3 (written late), a new sensor.
    local_lake.write_rows(
        "observations",
        [obs("o6", 2, 130, "changed"), obs("o7", 3, 1), obs("o8", 4, 131)],
        batch_id="b3",
    )
    seen, expected, sql = answers(local_lake)
    assert seen == expected
    assert {s: o for s, _, o, *_ in seen} == {1: "o4", 2: "o6", 3: "o5", 4: "o8", None: "o3"}
    assert "part-b3.parquet" in sql and "part-b1.parquet" not in sql
    done = local_lake.update_latest()
    assert done.files_folded == 2  # the late file lands in an hour already covered
    seen, expected, sql = answers(local_lake)
    assert seen == expected and "observations/date=" not in sql


def test_a_row_written_twice_is_kept_once(local_lake: Lake, tmp_path: Path) -> None:
    """Two files of an hour not yet compacted can hold the same row (a batch written again
    under another name): the first build and the view both keep it once."""
    first_hours(local_lake)
    local_lake.write_rows("observations", [obs("o4", 1, 65, "not_modified")], "b2-again")
    seen, expected, _ = answers(local_lake)
    assert seen == expected
    assert [o for _, _, o, *_ in seen] == ["o4", "o2", "o5", "o3"]
    done = local_lake.update_latest()
    assert done.rows == 4
    assert answers(local_lake)[0] == seen


def test_a_tie_in_time_goes_to_the_greater_id_on_both_paths(local_lake: Lake) -> None:
    local_lake.write_rows("observations", [obs("o_a", 1, 10), obs("o_b", 1, 10)], "b1")
    assert answers(local_lake)[0][0][2] == "o_b"
    local_lake.update_latest()
    local_lake.write_rows("observations", [obs("o_0", 1, 10)], "b2")  # same instant, lower id
    seen, expected, _ = answers(local_lake)
    assert seen == expected and seen[0][2] == "o_b"


def test_compaction_keeps_the_answer_and_an_update_with_nothing_new_writes_nothing(
    local_lake: Lake, tmp_path: Path
) -> None:
    first_hours(local_lake)
    local_lake.write_rows("observations", [obs("o9", 2, 20)], "b3")  # a second file in hour 08
    first = local_lake.update_latest()
    merged = local_lake.compact("observations", "date=2026-01-05/hour=08")
    assert merged.files_before == 2
    seen, expected, sql = answers(local_lake)
    assert seen == expected and "compacted-" in sql  # the merged file is new to the table
    again = local_lake.update_latest()
    assert again.key is not None and again.files_folded == 1 and again.rows == first.rows
    idle = local_lake.update_latest()
    assert idle.key is None and idle.files_folded == 0
    assert len(lake_latest.kept_files(local_lake)) == 2  # within the grace period


def test_superseded_kept_files_are_deleted_after_the_grace_period(local_lake: Lake) -> None:
    first_hours(local_lake)
    local_lake.update_latest()
    local_lake.write_rows("observations", [obs("o6", 2, 130)], "b3")
    second = local_lake.update_latest()
    assert len(lake_latest.kept_files(local_lake)) == 2
    local_lake.write_rows("observations", [obs("o7", 2, 131)], "b4")
    third = local_lake.update_latest(grace_s=0)
    assert third.deleted == 2
    assert lake_latest.kept_files(local_lake) == [third.key]
    assert second.key != third.key
    seen, expected, _ = answers(local_lake)
    assert seen == expected


def test_a_view_opened_before_an_update_keeps_its_file(local_lake: Lake) -> None:
    first_hours(local_lake)
    local_lake.update_latest()
    con = local_lake.connect()
    local_lake.write_rows("observations", [obs("o6", 2, 130)], "b3")
    local_lake.update_latest()  # default grace: the file `con` names stays
    assert con.execute("SELECT count(*) FROM latest_observations").fetchone() == (4,)
    con.close()


def test_names_sort_by_time_even_when_the_clock_is_behind(
    local_lake: Lake, monkeypatch: pytest.MonkeyPatch
) -> None:
    first_hours(local_lake)
    first = local_lake.update_latest()
    monkeypatch.setattr(lake_latest.time, "time", lambda: 0.0)  # a host whose clock is behind
    local_lake.write_rows("observations", [obs("o6", 2, 130)], "b3")
    second = local_lake.update_latest(grace_s=10**12)
    assert first.key is not None and second.key is not None and second.key > first.key
    assert lake_latest.kept_files(local_lake)[-1] == second.key


def test_the_kept_table_on_s3(s3_endpoint: str, s3_bucket: str) -> None:
    lake = Lake(Storage(f"s3://{s3_bucket}/lake", s3_endpoint_url=s3_endpoint))
    first_hours(lake)
    done = lake.update_latest()
    assert done.key is not None and done.key.startswith("latest_observations/latest-")
    lake.write_rows("observations", [obs("o6", 2, 130)], "b3")
    seen, expected, sql = answers(lake)
    assert seen == expected and f"s3://{s3_bucket}/lake/{done.key}" in sql
