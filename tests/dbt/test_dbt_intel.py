"""The dbt project over the lake: parse and build offline against a lake written by Lake.

dbt runs in a subprocess, as an analyst would run it; target, logs and the DuckDB file go to
the test's tmp folder so the repository stays clean. TZ is set far from UTC so that a day
computed in local time instead of UTC shows up as a wrong count.
"""

from __future__ import annotations

import logging
import os
import secrets
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pytest
import yaml

from resources.lake import Lake
from resources.lake_tables import DIMENSIONS, TABLES
from resources.storage import Storage

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "dbt_intel"
DBT = Path(sys.executable).parent / "dbt"

JAN5 = datetime(2026, 1, 5, tzinfo=UTC)


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2026, 1, day, hour, minute, tzinfo=UTC)


def observation(obs_id: str, fetched_at: datetime, outcome: str, **extra: Any) -> dict[str, Any]:
    return {
        "observation_id": obs_id,
        "run_id": "run_1",
        "sensor_id": 1,
        "company_id": 1,
        "surface": "careers",
        "url": "https://northwind-robotics.com/careers",
        "final_url": "https://northwind-robotics.com/careers",
        "fetched_at": fetched_at,
        "outcome": outcome,
        "http_status": 200,
        "not_modified": False,
        "changed": outcome == "changed",
        "noise": False,
        "elapsed_ms": 120,
        "bytes": 5120,
        "requests": 1,
        **extra,
    }


def snapshot(snapshot_id: str, captured_at: datetime, version: int) -> dict[str, Any]:
    return {
        "snapshot_id": snapshot_id,
        "run_id": "run_1",
        "sensor_id": 1,
        "company_id": 1,
        "surface": "careers",
        "version": version,
        "previous_snapshot_id": None,
        "observation_id": f"obs_{snapshot_id}",
        "captured_at": captured_at,
        "simhash": 12345,
        "extracted": {"jobs": [{"title": "Robotics Engineer"}]},
        "extracted_summary": {"blocks": 3},
        "extractor_version": "1",
    }


def change(
    change_id: str,
    detected_at: datetime,
    *,
    company_id: int = 1,
    surface: str = "careers",
    kind: str = "meaningful",
    significance: float = 0.5,
) -> dict[str, Any]:
    return {
        "change_id": change_id,
        "run_id": "run_1",
        "sensor_id": company_id * 10,
        "company_id": company_id,
        "surface": surface,
        "snapshot_id": f"snp_{change_id}",
        "previous_snapshot_id": f"snp_prev_{change_id}",
        "detected_at": detected_at,
        "significance": significance,
        "kind": kind,
        "status": "pending",
        "summary": f"change {change_id}",
        "structured_delta": {"added": [change_id]},
    }


CHANGES = [
    # Two meaningful careers changes for company 1 on 2026-01-05 (UTC), in two hours; the
    # second is 08:30 on 2026-01-06 in Tokyo, so a local-time day would move it.
    change("chg_a", at(5, 8, 15), significance=0.6),
    change("chg_b", at(5, 23, 30), significance=0.7),
    change("chg_c", at(5, 10), surface="pricing", kind="major", significance=0.9),
    change("chg_d", at(6, 0, 30), significance=0.4),
    change("chg_e", at(6, 9), company_id=2, kind="minor", significance=0.2),
]


def write(lake: Lake, table: str, rows: Iterable[Mapping[str, Any]], batch_id: str) -> None:
    assert lake.write_rows(table, list(rows), batch_id=batch_id)


def dbt(
    command: str, tmp_path: Path, lake_root: Path | str, **extra_env: str
) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DO_NOT_TRACK": "1",
        "TZ": "Asia/Tokyo",
        "CATLAS_LAKE_URL": str(lake_root),
        "CATLAS_DBT_DUCKDB_PATH": str(tmp_path / "x.duckdb"),
        **extra_env,
    }
    return subprocess.run(
        [
            str(DBT),
            command,
            "--project-dir",
            str(PROJECT),
            "--profiles-dir",
            str(PROJECT),
            "--target-path",
            str(tmp_path / "target"),
            "--log-path",
            str(tmp_path / "logs"),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def ok(result: subprocess.CompletedProcess[str]) -> None:
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]


def query(tmp_path: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(
        str(tmp_path / "x.duckdb"),
        read_only=True,
        config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
    )
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def test_build_over_a_lake_counts_changes_per_utc_day(tmp_path: Path) -> None:
    lake_root = tmp_path / "lake"
    lake = Lake(Storage(str(lake_root)))
    write(
        lake,
        "observations",
        [
            observation("obs_1", at(5, 8, 15), "changed"),
            observation("obs_2", at(5, 9), "unchanged", noise=True),
            observation("obs_3", at(6, 9), "failed", http_status=503, failure_class="http_5xx"),
        ],
        "b1",
    )
    write(lake, "snapshots", [snapshot("snp_1", at(5, 8, 15), 1)], "b1")
    write(lake, "changes", CHANGES, "b1")
    # The same change again in a second, not yet compacted batch: read once.
    write(lake, "changes", CHANGES[:1], "b2")

    ok(dbt("parse", tmp_path, lake_root))
    assert (tmp_path / "target" / "manifest.json").is_file()
    ok(dbt("build", tmp_path, lake_root))

    assert query(
        tmp_path,
        "select change_date, company_id, surface, kind, change_count, max_significance "
        "from fct_changes_daily order by all",
    ) == [
        (JAN5.date(), 1, "careers", "meaningful", 2, 0.7),
        (JAN5.date(), 1, "pricing", "major", 1, 0.9),
        (at(6, 0).date(), 1, "careers", "meaningful", 1, 0.4),
        (at(6, 0).date(), 2, "careers", "minor", 1, 0.2),
    ]
    assert query(tmp_path, "select count(*), count(distinct change_id) from stg_changes") == [
        (5, 5)
    ]
    assert query(
        tmp_path,
        "select outcome, noise, response_bytes, fetched_date from stg_observations "
        "order by observation_id",
    ) == [
        ("changed", False, 5120, JAN5.date()),
        ("unchanged", True, 5120, JAN5.date()),
        ("failed", False, 5120, at(6, 0).date()),
    ]
    assert query(tmp_path, "select extracted->'jobs'->0->>'title' from stg_snapshots") == [
        ("Robotics Engineer",)
    ]
    columns = {row[0] for row in query(tmp_path, "select column_name from (describe stg_changes)")}
    assert {"date", "hour", "status"}.isdisjoint(columns)
    assert "status_at_write" in columns
    assert (tmp_path / "logs" / "dbt.log").is_file()


def test_unknown_change_kind_fails_the_build(tmp_path: Path) -> None:
    lake_root = tmp_path / "lake"
    lake = Lake(Storage(str(lake_root)))
    write(lake, "changes", [*CHANGES[:2], change("chg_x", at(5, 12), kind="bogus")], "b1")

    result = dbt("build", tmp_path, lake_root)

    assert result.returncode != 0
    assert "FAIL 1 accepted_values_stg_changes_kind" in result.stdout, result.stdout[-4000:]


def test_a_lake_without_files_builds_empty_models(tmp_path: Path) -> None:
    lake_root = tmp_path / "lake"
    lake_root.mkdir()

    ok(dbt("build", tmp_path, lake_root))

    assert query(tmp_path, "select count(*) from fct_changes_daily") == [(0,)]
    assert query(tmp_path, "select count(*) from stg_observations") == [(0,)]


AWS_ENV = {
    "AWS_ACCESS_KEY_ID": "test",
    "AWS_SECRET_ACCESS_KEY": "test",
    "AWS_DEFAULT_REGION": "us-east-1",
}


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    """A local S3-compatible server (moto's, over real HTTP), credentials in the environment."""
    from moto.server import ThreadedMotoServer

    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with pytest.MonkeyPatch.context() as patch:
        for name, value in AWS_ENV.items():
            patch.setenv(name, value)
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
        server.start()
        try:
            host, port = server.get_host_and_port()
            yield f"http://{host}:{port}"
        finally:
            server.stop()


@pytest.fixture(params=["local", "s3"])
def swap_lake(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Lake, dict[str, str]]:
    """A lake and the environment dbt reads it with: a local folder or a bucket on S3."""
    if request.param == "local":
        return Lake(Storage(str(tmp_path / "lake"))), {}
    endpoint = request.getfixturevalue("s3_endpoint")
    bucket = f"catlas-{secrets.token_hex(6)}"
    Storage(f"s3://{bucket}", s3_endpoint_url=endpoint).fs.mkdir(bucket)
    lake = Lake(Storage(f"s3://{bucket}/lake", s3_endpoint_url=endpoint))
    return lake, {"CATLAS_DBT_TARGET": "s3", "CATLAS_S3_ENDPOINT_URL": endpoint}


def test_files_hidden_by_a_reprocess_or_a_compaction_are_read_by_no_model(
    swap_lake: tuple[Lake, dict[str, str]], tmp_path: Path
) -> None:
    lake, env = swap_lake
    hour8, hour10 = "date=2026-01-05/hour=08", "date=2026-01-05/hour=10"
    write(lake, "changes", CHANGES, "b1")
    write(lake, "changes", CHANGES[:1], "b2")  # the same change again, merged by compaction
    write(lake, "snapshots", [snapshot("snp_old", at(5, 8, 15), 1)], "b1")
    # Reprocess: hour 08's change gets new ids; hour 10's is gone.
    lake.replace_partition("changes", hour8, [change("chg_a2", at(5, 8, 20), significance=0.8)])
    lake.replace_partition("changes", hour10, [])
    lake.replace_partition("snapshots", hour8, [snapshot("snp_new", at(5, 8, 15), 2)])
    lake.compact("changes", "date=2026-01-05/hour=23")
    write(lake, "changes", [change("chg_f", at(5, 8, 40))], "b3")  # a flush after the swap
    lake.compact("changes", hour8)
    # Every replaced file is still on disk, hidden.
    assert len(lake.storage.glob("changes/*/*/*.parquet")) > len(lake.files("changes"))
    with lake.connect() as con:
        expected = sorted(con.execute("select change_id from changes").fetchall())
    assert [c for (c,) in expected] == ["chg_a2", "chg_b", "chg_d", "chg_e", "chg_f"]

    ok(dbt("build", tmp_path, lake.storage.url, **env))

    assert sorted(query(tmp_path, "select change_id from stg_changes")) == expected
    assert query(tmp_path, "select snapshot_id, version from stg_snapshots") == [("snp_new", 2)]
    assert query(
        tmp_path,
        "select surface, kind, change_count, max_significance from fct_changes_daily "
        "where change_date = '2026-01-05' order by all",
    ) == [("careers", "meaningful", 3, 0.8)]


DUCKDB_TYPES = {
    pa.string(): "varchar",
    pa.int64(): "bigint",
    pa.int32(): "integer",
    pa.bool_(): "boolean",
    pa.float64(): "double",
    pa.timestamp("us", tz="UTC"): "timestamp with time zone",
}


SOURCES = [
    ("lake", name) for name in ("observations", "snapshots", "changes", "entity_events", "failures")
] + [("dims", name) for name in DIMENSIONS]


@pytest.mark.parametrize(("source", "table"), SOURCES)
def test_source_columns_match_the_lake_schema(source: str, table: str) -> None:
    sources = yaml.safe_load((PROJECT / "models/staging/_lake__sources.yml").read_text())
    (lake_source,) = [s for s in sources["sources"] if s["name"] == source]
    (declared,) = [t for t in lake_source["tables"] if t["name"] == table]
    spec = TABLES[table] if source == "lake" else DIMENSIONS[table]
    expected = [(f.name, DUCKDB_TYPES[f.type]) for f in spec.schema]
    assert [(c["name"], c["data_type"]) for c in declared["columns"]] == expected
    assert declared["meta"]["dagster"]["asset_key"] == [table]
