"""dbt_intel over the demo lake: `dbt build` offline, locally and on S3; marts in Dagster."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pytest

from catlas_assets.services.dbt_build import environment
from catlas_assets.settings import Settings

REPO = Path(__file__).resolve().parents[2]
PROJECT = REPO / "dbt_intel"
DBT = Path(sys.executable).parent / "dbt"
MARTS = (
    "company_change_feed",
    "hiring_velocity",
    "pricing_history",
    "news_feed",
    "incident_history",
    "surface_health",
)

# The first test to run also lives through the session's demo (minutes on a busy machine).
pytestmark = pytest.mark.timeout(1800)


def dbt_build(tmp_path: Path, settings: Settings, *select: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **environment(settings), "TZ": "Asia/Tokyo"}
    # Cautious: only the tests of the selected models, not those that also read others.
    selection = ["--select", *select, "--indirect-selection", "cautious"] if select else []
    return subprocess.run(
        [str(DBT), "build", "--project-dir", str(PROJECT), "--profiles-dir", str(PROJECT),
         "--target-path", str(tmp_path / "target"), "--log-path", str(tmp_path / "logs"),
         *selection],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def rows(path: Path, sql: str) -> list[tuple[Any, ...]]:
    con = duckdb.connect(str(path), read_only=True, config={"autoinstall_known_extensions": False})
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def _check_marts(path: Path) -> None:
    for mart in MARTS:
        assert rows(path, f"select count(*) from {mart}")[0][0] > 0, mart
    feed = rows(path, "select distinct company_name from company_change_feed order by 1")
    assert [r[0] for r in feed] == ["Bluefin Analytics", "Northwind Robotics", "Orbit Pay"]
    pro = rows(
        path,
        "select price, valid_to is null from pricing_history "
        "where company_name = 'Northwind Robotics' and plan_name = 'Pro' order by valid_from",
    )
    assert pro == [(49.0, False), (59.0, True)]
    posted = rows(path, "select sum(jobs_posted), sum(jobs_no_longer_listed) from hiring_velocity")
    assert posted[0][0] >= 1 and posted[0][1] >= 1
    assert rows(path, "select name, impact from incident_history") == [("API latency", "major")]


def _staging_types(path: Path) -> set[str]:
    found = rows(
        path,
        "select table_type from information_schema.tables where starts_with(table_name, 'stg_')",
    )
    return {r[0] for r in found}


def test_dbt_build_passes_offline_on_the_demo_lake(demo_state: Path, tmp_path: Path) -> None:
    settings = Settings(state_dir=str(demo_state), dbt_duckdb_path=str(tmp_path / "intel.duckdb"))
    result = dbt_build(tmp_path, settings)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "ERROR=0" in result.stdout and " data tests" in result.stdout
    _check_marts(tmp_path / "intel.duckdb")
    assert _staging_types(tmp_path / "intel.duckdb") == {"VIEW"}  # new files at query time


def test_dbt_build_reads_an_s3_lake_through_fsspec(
    demo_state: Path, s3_demo_lake: tuple[str, str], tmp_path: Path
) -> None:
    lake_url, endpoint = s3_demo_lake
    settings = Settings(
        state_dir=str(demo_state),
        lake_url=lake_url,
        s3_endpoint_url=endpoint,
        dbt_duckdb_path=str(tmp_path / "intel.duckdb"),
    )
    assert environment(settings)["CATLAS_DBT_TARGET"] == "s3"
    # Every model and every dbt test, each lake read going through the fsspec filesystem.
    result = dbt_build(tmp_path, settings)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "ERROR=0" in result.stdout and " data tests" in result.stdout
    _check_marts(tmp_path / "intel.duckdb")  # the same answers as over the local lake
    # Staging is materialized on this target: the marts and tests read each S3 file once.
    assert _staging_types(tmp_path / "intel.duckdb") == {"BASE TABLE"}


def test_catlas_sql_shows_the_marts_beside_the_lake(demo_state: Path, tmp_path: Path) -> None:
    from catlas_assets import connect

    settings = Settings(state_dir=str(demo_state), dbt_duckdb_path=str(tmp_path / "intel.duckdb"))
    assert dbt_build(tmp_path, settings).returncode == 0
    con = connect(settings)
    names = {r[0] for r in con.execute("select table_name from information_schema.tables "
                                       "where table_catalog = 'memory'").fetchall()}  # fmt: skip
    assert set(MARTS) <= names and {"changes", "sensors", "companies"} <= names
    joined = con.execute(
        "select count(*) from company_change_feed f join changes c using (change_id)"
    ).fetchone()
    assert joined[0] > 0


def test_the_asset_graph_puts_dbt_models_downstream_of_the_lake_assets() -> None:
    from catlas_assets.definitions import defs

    graph = defs.resolve_asset_graph()
    parents = {
        key.to_user_string(): {p.to_user_string() for p in graph.get(key).parent_keys}
        for key in graph.get_all_asset_keys()
    }
    assert parents["stg_changes"] == {"changes"}
    assert parents["stg_entity_events"] == {"entity_events"}
    assert parents["stg_sensors"] == {"sensors"} and parents["stg_companies"] == {"companies"}
    assert {"stg_changes", "stg_companies", "stg_sensors"} <= parents["company_change_feed"]
    for mart in MARTS:
        assert mart in parents
    schedule = defs.resolve_schedule_def("dbt_build_schedule")
    assert schedule.cron_schedule == "30 3 * * *"


@pytest.mark.slow
def test_dagster_materializes_the_dbt_models_over_the_runtime_lake(
    demo_copy: Path, tmp_path: Path
) -> None:
    from dagster_dbt import DbtCliResource

    from catlas_assets.defs.dbt_models import dbt_intel_models
    from catlas_assets.defs.dbt_project import dbt_intel_project
    from catlas_assets.defs.resources import CatlasResource

    os.environ.setdefault("DO_NOT_TRACK", "1")
    intel = tmp_path / "dagster-intel.duckdb"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("CATLAS_DBT_DUCKDB_PATH", str(intel))
        result = dg.materialize(
            [dbt_intel_models],
            resources={
                "dbt": DbtCliResource(project_dir=dbt_intel_project),
                "catlas": CatlasResource(state_dir=str(demo_copy)),
            },
        )
    assert result.success
    materialized = {e.asset_key.to_user_string() for e in result.get_asset_materialization_events()}
    assert set(MARTS) <= materialized
    assert rows(intel, "select count(*) from surface_health")[0][0] > 0
