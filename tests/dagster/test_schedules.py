"""The schedules of DESIGN.md evaluated for real (build_schedule_context), the maintenance
and budgets-reset jobs run, and the worker's runless asset events."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest

from catlas_assets.cli.runless import report_tick
from catlas_assets.definitions import defs
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.domain.vocabulary import RunOutcome, Stop
from catlas_assets.services import catalog
from catlas_assets.services.runs import RunReport
from catlas_assets.services.sensor_run import run_one
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.lake import partition_of
from sensors_dag.maintenance import prune_runs

AT = datetime(2026, 3, 10, 4, 30, tzinfo=UTC)


def _requests(name: str, when: datetime) -> list[dg.RunRequest]:
    schedule = defs.resolve_schedule_def(name)
    with dg.build_schedule_context(scheduled_execution_time=when) as context:
        result = schedule.evaluate_tick(context)
    return list(result.run_requests or [])


def test_hourly_compaction_asks_for_the_hour_that_just_ended() -> None:
    [request] = _requests("compact_lake_schedule", AT.replace(minute=10))
    assert request.partition_key == "2026-03-10-03:00"


def test_daily_entities_asks_for_yesterday() -> None:
    [request] = _requests("derive_entities_schedule", AT.replace(hour=2, minute=0))
    assert request.partition_key == "2026-03-09"


@pytest.mark.parametrize(
    ("name", "job"),
    [("maintenance_schedule", "maintenance"), ("budgets_reset_schedule", "budgets_reset")],
)
def test_daily_schedules_request_their_job(name: str, job: str) -> None:
    assert defs.resolve_schedule_def(name).job_name == job
    [request] = _requests(name, AT)
    assert request.partition_key is None


@pytest.fixture
def resource(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CatlasResource:
    monkeypatch.setenv("CATLAS_NOW", AT.isoformat())
    return CatlasResource(state_dir=str(tmp_path / "state"))


def test_maintenance_prunes_old_runs_and_keeps_recent_ones(resource: CatlasResource) -> None:
    with dg.instance_for_test() as instance:
        old = defs.resolve_job_def("budgets_reset").execute_in_process(
            instance=instance, resources={"catlas": resource}
        )
        assert instance.has_run(old.run_id)
        # The retention (30 days by default) keeps a run made just now...
        result = defs.resolve_job_def("maintenance").execute_in_process(
            instance=instance, resources={"catlas": resource}
        )
        assert result.success
        assert result.output_for_node("prune_dagster_runs") == 0
        assert instance.has_run(old.run_id)
        # ... and a cutoff after it deletes it, with its event log, but not the current run.
        deleted = prune_runs(instance, datetime.now(UTC) + timedelta(seconds=1), keep="")
        assert deleted == 2
        assert not instance.has_run(old.run_id)
        assert instance.get_records_for_run(old.run_id).records == []


def test_maintenance_merges_an_hours_small_files(
    tmp_path: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CATLAS_NOW", DEFAULT_NOW.isoformat())
    monkeypatch.setenv("CATLAS_DOMAIN_SPACING_S", "0")
    resource = CatlasResource(
        state_dir=str(tmp_path / "state"), hosts=str(web.write_hosts_file(tmp_path / "hosts"))
    )
    hour = partition_of(DEFAULT_NOW)
    runtime = resource.build()
    try:
        company = catalog.add_company(
            runtime, name="Kestrel Labs", website="http://kestrel-labs.com", tier=1
        )
        sensor = catalog.add_sensor(
            runtime, company_id=company, surface="pricing", url="http://kestrel-labs.com/pricing"
        )
        for _ in range(2):  # two runs in one hour: two small files
            run_one(runtime, sensor, force=True)
        assert len(runtime.lake.files("observations", hour)) == 2
    finally:
        runtime.close()
    with dg.instance_for_test() as instance:
        result = defs.resolve_job_def("maintenance").execute_in_process(
            instance=instance, resources={"catlas": resource}
        )
    assert result.success and result.output_for_node("compact_small_files") >= 1
    (step,) = [
        e
        for e in result.all_events
        if e.is_successful_output and e.step_key == "compact_small_files"
    ]
    metadata = step.event_specific_data.metadata  # type: ignore[union-attr]
    # The merged hour was folded into the kept latest table: one sensor.
    assert metadata["latest_observations_rows"].value == 1
    assert metadata["latest_observations_files_folded"].value == 1
    runtime = resource.build()
    try:
        assert len(runtime.lake.files("observations", hour)) == 1
        assert runtime.lake.read("observations", hour).num_rows == 2
    finally:
        runtime.close()


def test_budgets_reset_starts_the_new_day(resource: CatlasResource) -> None:
    runtime = resource.build()
    try:
        runtime.domain_budgets.reserve("kestrel-labs.com", AT - timedelta(days=1))
        assert runtime.domain_budgets.get("kestrel-labs.com")["used_today"] == 1
    finally:
        runtime.close()
    with dg.instance_for_test() as instance:
        result = defs.resolve_job_def("budgets_reset").execute_in_process(
            instance=instance, resources={"catlas": resource}
        )
    assert "1 domain budget(s) reset" in result.output_for_node("budgets_reset_op")
    runtime = resource.build()
    try:
        budget = runtime.domain_budgets.get("kestrel-labs.com")
        assert (budget["used_today"], budget["budget_day"]) == (0, "2026-03-10")
    finally:
        runtime.close()


def test_a_worker_tick_is_reported_as_runless_materializations() -> None:
    report = RunReport(
        run_id="run_x",
        kind="tick",
        stop=Stop.QUEUE_EMPTY,
        outcome=RunOutcome.SUCCESS,
        detail="",
        started_at=AT,
        completed_at=AT,
        counters={"claimed": 3, "ok": 1, "changed": 1, "unchanged": 1},
    )
    with dg.instance_for_test() as instance:
        assert report_tick(instance, report) == 4
        event = instance.get_latest_materialization_event(dg.AssetKey("observations"))
        assert event is not None and event.run_id == ""
        materialization = event.asset_materialization
        assert materialization.partition == "2026-03-10-04:00"
        assert materialization.metadata["tick_rows"].value == 3
        assert materialization.metadata["outcome"].value == "success"
        assert instance.get_latest_materialization_event(dg.AssetKey("changes")) is not None
