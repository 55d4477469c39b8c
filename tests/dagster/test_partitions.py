"""Honest partitions: each hour's materialization carries its own figures (also inside one
range run), each asset check judges one hour, and each check fails on a planted defect."""

from __future__ import annotations

import io
from datetime import timedelta
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from catlas_assets.definitions import defs
from catlas_assets.defs.partitions import lake_partition
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services import catalog, lake_checks
from catlas_assets.services.compaction import compact_partition
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.sensor_run import run_one
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources import lake_latest
from resources.state.archive_index import ArchiveIndex
from sensors_dag.jobs import crawl_tick

HOUR = DEFAULT_NOW.replace(minute=0, second=0, microsecond=0)
KEYS = [(HOUR + timedelta(hours=h)).strftime("%Y-%m-%d-%H:00") for h in (-1, 0, 1, 2)]


@pytest.fixture
def configured(tmp_path: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch) -> CatlasResource:
    hosts = web.write_hosts_file(tmp_path / "hosts")
    monkeypatch.setenv("CATLAS_NOW", DEFAULT_NOW.isoformat())
    resource = CatlasResource(state_dir=str(tmp_path / "state"), hosts=str(hosts))
    runtime = resource.build()
    company = catalog.add_company(
        runtime, name="Northwind Robotics", website="http://northwind-robotics.com", tier=1
    )
    for surface, path in (("careers", "/careers"), ("pricing", "/pricing")):
        catalog.add_sensor(
            runtime, company_id=company, surface=surface, url=f"http://northwind-robotics.com{path}"
        )
    runtime.close()
    return resource


def _materializations(result: dg.ExecuteInProcessResult) -> dict[tuple[str, str], dict]:
    found = {}
    for event in result.get_asset_materialization_events():
        mat = event.event_specific_data.materialization  # type: ignore[union-attr]
        found[(mat.asset_key.to_user_string(), mat.partition)] = mat.metadata
    return found


def test_a_range_run_stamps_each_hour_with_its_own_figures(
    configured: CatlasResource, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Hour 0: the first tick (2 snapshots). Hour 2: one forced re-run (1 unchanged).
    assert crawl_tick.execute_in_process(resources={"catlas": configured}).success
    monkeypatch.setenv("CATLAS_NOW", (DEFAULT_NOW + timedelta(hours=2)).isoformat())
    runtime = configured.build()
    try:
        run_one(runtime, runtime.store.list_sensors()[0]["id"], force=True)
    finally:
        runtime.close()

    job = defs.resolve_job_def("compact_lake")
    result = job.execute_in_process(
        resources={"catlas": configured},
        tags={
            "dagster/asset_partition_range_start": KEYS[0],
            "dagster/asset_partition_range_end": KEYS[-1],
        },
    )
    assert result.success
    mats = _materializations(result)
    rows = {key: mats[("observations", key)]["rows"].value for key in KEYS}
    assert rows == {KEYS[0]: 0, KEYS[1]: 2, KEYS[2]: 0, KEYS[3]: 1}
    assert mats[("observations", KEYS[1])]["outcome/ok"].value == 2
    assert mats[("observations", KEYS[3])]["outcome/unchanged"].value == 1
    assert mats[("observations", KEYS[3])]["outcome/ok"].value == 0
    assert mats[("snapshots", KEYS[1])]["rows"].value == 2
    assert mats[("snapshots", KEYS[3])]["rows"].value == 0
    assert mats[("observations", KEYS[0])]["bytes"].value == 0

    # The observations asset folded every compacted hour into the kept latest table.
    runtime = configured.build()
    try:
        kept = lake_latest.kept_files(runtime.lake)
        assert kept and lake_latest.covers(runtime.lake, kept[-1]) == set(
            runtime.lake.files("observations")
        )
        con = runtime.lake.connect()
        latest = con.execute(
            "SELECT outcome FROM latest_observations ORDER BY fetched_at"
        ).fetchall()
        con.close()
    finally:
        runtime.close()
    assert latest == [("ok",), ("unchanged",)]  # one row per sensor, the forced re-run last
    assert mats[("observations", KEYS[1])]["bytes"].value > 0

    # One evaluation per hour for each check, plus the range's verdict.
    per_hour = {
        (e.check_name, e.partition)
        for e in result.get_asset_check_evaluations()
        if e.partition is not None
    }
    assert {("observations_unique_ids", key) for key in KEYS} <= per_hour
    assert {("changes_have_snapshots", key) for key in KEYS} <= per_hour
    assert all(e.passed for e in result.get_asset_check_evaluations())


@pytest.fixture
def compacted(configured: CatlasResource) -> Runtime:
    assert crawl_tick.execute_in_process(resources={"catlas": configured}).success
    runtime = Runtime(Settings.from_env(state_dir=configured.state_dir, hosts=configured.hosts))
    compact_partition(runtime, lake_partition(KEYS[1]))
    yield runtime
    runtime.close()


PART = lake_partition(KEYS[1])


def _rows(runtime: Runtime, table: str) -> list[dict]:
    return runtime.lake.read(table, PART).to_pylist()


def _plant_duplicate(runtime: Runtime) -> None:
    runtime.lake.write_rows("snapshots", _rows(runtime, "snapshots")[:1], "planted-1")


def _plant_orphan_snapshot(runtime: Runtime) -> None:
    row = {**_rows(runtime, "snapshots")[0], "snapshot_id": "snp_x", "observation_id": "obs_x"}
    runtime.lake.write_rows("snapshots", [row], "planted-2")


def _plant_orphan_change(runtime: Runtime) -> None:
    snapshot = _rows(runtime, "snapshots")[0]
    row = {
        "change_id": "chg_x",
        "sensor_id": snapshot["sensor_id"],
        "company_id": snapshot["company_id"],
        "surface": snapshot["surface"],
        "snapshot_id": "snp_missing",
        "detected_at": snapshot["captured_at"],
        "kind": "minor",
        "status": "pending",
    }
    runtime.lake.write_rows("changes", [row], "planted-3")


def _plant_orphan_event(runtime: Runtime) -> None:
    snapshot = _rows(runtime, "snapshots")[0]
    row = {
        "event_id": "evt_x",
        "company_id": snapshot["company_id"],
        "sensor_id": snapshot["sensor_id"],
        "entity_type": "job",
        "entity_key": "x",
        "event": "added",
        "observed_at": snapshot["captured_at"],
        "snapshot_id": "snp_missing",
    }
    runtime.lake.write_rows("entity_events", [row], "planted-4")


def _plant_lost_object(runtime: Runtime) -> None:
    """The pack that holds a snapshot's text goes (or its file, for an object of its own)."""
    key = _rows(runtime, "snapshots")[0]["text_key"]
    place = ArchiveIndex(runtime.store).locate([key]).get(key)
    runtime.storage.delete([place.pack if place is not None else key])


def _plant_extra_observation(runtime: Runtime) -> None:
    row = {**_rows(runtime, "observations")[0], "observation_id": "obs_extra"}
    runtime.lake.write_rows("observations", [row], "planted-5")


def _plant_off_schema_file(runtime: Runtime) -> None:
    table = pa.table({"snapshot_id": pa.array([1], pa.int64())})
    sink = io.BytesIO()
    pq.write_table(table, sink)
    runtime.storage.write_atomic(
        f"snapshots/{PART}/part-planted-off-schema.parquet", sink.getvalue()
    )


DEFECTS = {
    "unique_ids": (_plant_duplicate, lambda r: lake_checks.unique_ids(r, "snapshots", PART)),
    "snapshot_without_observation": (
        _plant_orphan_snapshot,
        lambda r: lake_checks.orphans(r, "snapshots", PART, "observations", "observation_id"),
    ),
    "change_without_snapshot": (
        _plant_orphan_change,
        lambda r: lake_checks.orphans(r, "changes", PART, "snapshots", "snapshot_id"),
    ),
    "event_without_snapshot": (
        _plant_orphan_event,
        lambda r: lake_checks.orphans(r, "entity_events", PART, "snapshots", "snapshot_id"),
    ),
    "key_not_archived": (
        _plant_lost_object,
        lambda r: lake_checks.missing_objects(r, "snapshots", PART),
    ),
    "rows_differ_from_run_counters": (
        _plant_extra_observation,
        lambda r: lake_checks.counts_match_runs(r, PART),
    ),
    "schema_not_declared": (
        _plant_off_schema_file,
        lambda r: lake_checks.schema_as_declared(r, "snapshots", PART),
    ),
}


@pytest.mark.parametrize("defect", sorted(DEFECTS))
def test_each_check_passes_then_fails_on_its_planted_defect(
    compacted: Runtime, defect: str
) -> None:
    plant, probe = DEFECTS[defect]
    assert probe(compacted).passed
    plant(compacted)
    finding = probe(compacted)
    assert not finding.passed, finding.metadata


def test_a_failed_check_is_reported_on_its_own_hour(
    compacted: Runtime, configured: CatlasResource
) -> None:
    _plant_duplicate(compacted)
    result = defs.resolve_job_def("compact_lake").execute_in_process(
        partition_key=KEYS[1], resources={"catlas": configured}
    )
    evaluations = {e.check_name: e for e in result.get_asset_check_evaluations()}
    # Compaction keeps one row per id, so the duplicate is dropped and the check passes...
    assert evaluations["snapshots_unique_ids"].passed
    assert evaluations["snapshots_unique_ids"].partition == KEYS[1]
    # ... while an orphan survives compaction and fails its hour's check.
    _plant_orphan_snapshot(compacted)
    result = defs.resolve_job_def("compact_lake").execute_in_process(
        partition_key=KEYS[1], resources={"catlas": configured}, raise_on_error=False
    )
    evaluations = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert not evaluations["snapshots_have_observations"].passed
    assert evaluations["snapshots_have_observations"].partition == KEYS[1]
