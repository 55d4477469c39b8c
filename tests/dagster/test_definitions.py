"""The Dagster front: the code location loads, the crawl tick runs the real pipeline, and
materializing an hour of the history assets compacts the lake and records counts."""

from __future__ import annotations

import warnings
from pathlib import Path

import dagster as dg
import pytest

from catlas_assets.definitions import defs
from catlas_assets.defs.partitions import lake_partition
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.sensor_run import run_one
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from sensors_dag.jobs import crawl_tick

PARTITION = DEFAULT_NOW.strftime("%Y-%m-%d-%H:00")


def test_code_location_loads_with_jobs_assets_sensors_and_schedules() -> None:
    repo = defs.get_repository_def()
    assert {"crawl_tick", "compact_lake"} <= {job.name for job in repo.get_all_jobs()}
    assert {"observations", "snapshots", "changes"} <= {
        key.to_user_string() for key in repo.asset_graph.get_all_asset_keys()
    }
    assert repo.has_sensor_def("due_sensors")
    assert repo.has_schedule_def("compact_lake_schedule")


def test_lake_partition_maps_dagster_keys_to_hive_paths() -> None:
    assert lake_partition("2026-01-05-08:00") == "date=2026-01-05/hour=08"


@pytest.fixture
def configured(tmp_path: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch) -> CatlasResource:
    hosts = web.write_hosts_file(tmp_path / "hosts")
    monkeypatch.setenv("CATLAS_NOW", DEFAULT_NOW.isoformat())
    resource = CatlasResource(state_dir=str(tmp_path / "state"), hosts=str(hosts))
    runtime = Runtime(Settings.from_env(state_dir=str(tmp_path / "state"), hosts=str(hosts)))
    company = catalog.add_company(
        runtime, name="Northwind Robotics", website="http://northwind-robotics.com", tier=1
    )
    for surface, path in (("careers", "/careers"), ("pricing", "/pricing")):
        catalog.add_sensor(
            runtime, company_id=company, surface=surface, url=f"http://northwind-robotics.com{path}"
        )
    runtime.close()
    return resource


def test_crawl_tick_job_runs_due_sensors_through_the_shared_service(
    configured: CatlasResource,
) -> None:
    result = crawl_tick.execute_in_process(resources={"catlas": configured})
    assert result.success
    metadata = result.output_for_node("crawl_tick_op")
    runtime = configured.build()
    try:
        run = runtime.store.runs(limit=1)[0]
        assert run["id"] == metadata
        assert run["launch_handle"] == result.run_id  # Dagster's id is the handle, not run_id
        assert (run["claimed"], run["ok"], run["outcome"]) == (2, 2, "success")
        rows = (
            runtime.lake.connect()
            .sql("SELECT surface, outcome FROM observations ORDER BY surface")
            .fetchall()
        )
        assert rows == [("careers", "ok"), ("pricing", "ok")]
    finally:
        runtime.close()


def test_materializing_an_hour_compacts_files_and_reports_row_counts(
    configured: CatlasResource,
) -> None:
    # Two ticks in the same hour leave two files per table; the second finds nothing new.
    assert crawl_tick.execute_in_process(resources={"catlas": configured}).success
    runtime = configured.build()
    try:
        sensor_ids = [s["id"] for s in runtime.store.list_sensors()]
        run_one(runtime, sensor_ids[0], force=True)  # unchanged: one more observation file
        partition = lake_partition(PARTITION)
        assert len(runtime.lake.files("observations", partition)) == 2
    finally:
        runtime.close()

    job = defs.resolve_job_def("compact_lake")
    result = job.execute_in_process(partition_key=PARTITION, resources={"catlas": configured})
    assert result.success
    materializations = {
        event.asset_key.to_user_string(): event.metadata
        for event in result.get_asset_materialization_events()
        for event in [event.event_specific_data.materialization]  # type: ignore[union-attr]
    }
    assert materializations["observations"]["rows"].value == 3
    assert materializations["observations"]["files_compacted"].value == 2
    assert materializations["snapshots"]["rows"].value == 2
    assert materializations["changes"]["rows"].value == 0
    checks = {
        evaluation.check_name: evaluation.passed
        for evaluation in result.get_asset_check_evaluations()
    }
    assert {
        "observations_unique_ids",
        "snapshots_unique_ids",
        "changes_unique_ids",
        "changes_have_snapshots",
        "snapshots_have_observations",
        "observations_keys_archived",
        "observations_match_runs",
        "object_keys_resolve",
    } <= set(checks)
    assert all(checks.values()), checks
    runtime = configured.build()
    try:
        assert len(runtime.lake.files("observations", lake_partition(PARTITION))) == 1
    finally:
        runtime.close()


def test_due_sensors_sensor_requests_one_tick_per_window(configured: CatlasResource) -> None:
    instance = dg.DagsterInstance.ephemeral()
    sensor = defs.resolve_sensor_def("due_sensors")
    with dg.build_sensor_context(instance=instance, resources={"catlas": configured}) as context:
        result = sensor(context)
    assert isinstance(result, dg.SensorResult)
    assert len(result.run_requests or []) == 1
    assert result.run_requests[0].run_key.startswith("tick-")


def test_due_sensors_sensor_skips_when_nothing_is_due(configured: CatlasResource) -> None:
    assert crawl_tick.execute_in_process(resources={"catlas": configured}).success
    sensor = defs.resolve_sensor_def("due_sensors")
    with dg.build_sensor_context(
        instance=dg.DagsterInstance.ephemeral(), resources={"catlas": configured}
    ) as context:
        result = sensor(context)
    assert not result.run_requests
    assert result.skip_reason is not None
    assert result.skip_reason.skip_message == "no sensor is due"


def test_partitioned_checks_and_single_run_assets_build_without_preview_warnings() -> None:
    from catlas_assets.defs import checks, dagster_previews, history
    from catlas_assets.services import lake_checks

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = checks._partition_check(
            "observations", "probe", "a probe", lambda r, p: lake_checks.unique_ids(r, "x", p)
        )
        asset = history._history_asset("observations")
    assert [str(w.message) for w in caught] == []
    (spec,) = built.check_specs
    assert spec.partitions_def is not None  # still partitioned: only the warning is gone
    assert asset.backfill_policy == dg.BackfillPolicy.single_run()

    # Narrow: any other preview or beta warning still reaches the user.
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with dagster_previews.partitioned_checks(), dagster_previews.asset_backfill_policy():
            warnings.warn("another preview API", dg.PreviewWarning, stacklevel=1)
            warnings.warn("another beta API", dg.BetaWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["another preview API", "another beta API"]
