"""The Dagster fronts of repair: the `repair` job and its 30-minute schedule, and the
run-failure sensor that turns a failed run into a review item."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import dagster as dg
import pytest

from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services import catalog
from catlas_assets.services.periodic import cadence_of
from fixture_web import DEFAULT_NOW, FixtureWeb
from sensors_dag.repair import failed_runs_to_review, repair_job, repair_schedule


@pytest.fixture
def resource(tmp_path: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch) -> CatlasResource:
    monkeypatch.setenv("CATLAS_NOW", DEFAULT_NOW.isoformat())
    monkeypatch.setenv("CATLAS_DOMAIN_SPACING_S", "0")
    return CatlasResource(
        state_dir=str(tmp_path / "state"), hosts=str(web.write_hosts_file(tmp_path / "h"))
    )


def test_the_schedule_asks_for_one_repair_run_every_30_minutes() -> None:
    assert repair_schedule.cron_schedule == cadence_of("repair").cron() == "*/30 * * * *"
    context = dg.build_schedule_context(
        scheduled_execution_time=DEFAULT_NOW + timedelta(minutes=30)
    )
    requests = repair_schedule.evaluate_tick(context).run_requests
    assert requests is not None and len(requests) == 1
    assert repair_schedule.job_name == "repair"


def test_the_repair_job_records_one_repair_run_with_its_dagster_handle(
    resource: CatlasResource,
) -> None:
    runtime = resource.build()
    company = catalog.add_company(
        runtime, name="Wayfarer Tools", website="http://wayfarer-tools.com"
    )
    sensor_id = catalog.add_sensor(
        runtime, company_id=company, surface="pricing", url="http://wayfarer-tools.com/pricing"
    )
    # A redirected sensor is repair's: the retry finds the page where it was.
    runtime.store.update_company(company, onboarding_status="active")
    from resources.state import repair_store

    repair_store.update_sensor(runtime.store, sensor_id, now=DEFAULT_NOW, status="redirected")
    result = repair_job.execute_in_process(resources={"catlas": resource})
    assert result.success
    (run,) = runtime.store.runs(kind="repair")
    assert run["launch_handle"] == result.run_id and run["launcher"] == "dagster"
    assert run["outcome"] == "success" and run["productive"]
    assert runtime.store.sensor(sensor_id)["status"] == "active"  # recovered
    runtime.close()


@dg.op
def _boom() -> None:
    raise RuntimeError("the lake was unreachable")


@dg.job
def _doomed() -> None:
    _boom()


def test_a_failed_run_becomes_one_review_item(resource: CatlasResource) -> None:
    instance = dg.DagsterInstance.ephemeral()
    failed = _doomed.execute_in_process(instance=instance, raise_on_error=False)
    assert not failed.success
    event = failed.get_run_failure_event()
    run = instance.get_run_by_id(failed.run_id)
    assert run is not None
    for _ in range(2):  # the sensor may see one failure twice: still one item
        with dg.build_run_status_sensor_context(
            sensor_name="failed_runs_to_review",
            dagster_event=event,
            dagster_instance=instance,
            dagster_run=run,
            resources={"catlas": resource},
        ) as context:
            failed_runs_to_review(context.for_run_failure())
    runtime = resource.build()
    (item,) = runtime.store.list_review(kind="run_failed")
    assert item["detail"]["dagster_run_id"] == failed.run_id
    assert item["detail"]["job"] == "_doomed"
    runtime.close()
