"""The Dagster front of onboarding: the sensor asks for a run while discover jobs are due,
and materializing a day of `discovery` runs one onboarding batch with its metadata."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import dagster as dg
import pytest

from catlas_assets.definitions import defs
from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services import catalog
from fixture_web import DEFAULT_NOW, FixtureWeb
from sensors_dag.onboarding import pending_companies


@pytest.fixture
def resource(tmp_path: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch) -> CatlasResource:
    hosts = web.write_hosts_file(tmp_path / "hosts")
    monkeypatch.setenv("CATLAS_NOW", DEFAULT_NOW.isoformat())
    monkeypatch.setenv("CATLAS_DOMAIN_SPACING_S", "0")  # the fixture web is local
    return CatlasResource(state_dir=str(tmp_path / "state"), hosts=str(hosts))


def test_sensor_requests_onboarding_only_while_discover_jobs_are_due(
    resource: CatlasResource,
) -> None:
    with (
        dg.instance_for_test() as instance,
        dg.build_sensor_context(instance=instance, resources={"catlas": resource}) as context,
    ):
        assert pending_companies(context).run_requests == []
        runtime = resource.build()
        catalog.add_company(runtime, name="Saltmarsh", website="http://saltmarsh.io")
        runtime.close()
        [request] = pending_companies(context).run_requests
        assert request.partition_key == f"{DEFAULT_NOW:%Y-%m-%d}"

        result = defs.resolve_job_def("onboarding").execute_in_process(
            instance=instance,
            resources={"catlas": resource},
            partition_key=request.partition_key,
        )
        assert result.success
        [materialization] = result.asset_materializations_for_node("discovery")
        metadata = materialization.metadata
        assert metadata["companies_discovered"].value == 1
        assert metadata["sensors_created"].value == 3
        runtime = resource.build()
        try:
            run = runtime.store.runs(limit=1, kind="discovery")[0]
            assert run["launch_handle"] == result.run_id
            [(rows,)] = runtime.lake.connect().sql("SELECT count(*) FROM discovery").fetchall()
            assert rows == metadata["candidates"].value > 3
        finally:
            runtime.close()
        assert pending_companies(context).run_requests == []


def test_a_past_day_reports_its_own_batch_without_fetching(
    resource: CatlasResource, web: FixtureWeb
) -> None:
    runtime = resource.build()
    catalog.add_company(runtime, name="Saltmarsh", website="http://saltmarsh.io")
    runtime.close()
    today = f"{DEFAULT_NOW:%Y-%m-%d}"
    with dg.instance_for_test() as instance:
        job = defs.resolve_job_def("onboarding")
        first = job.execute_in_process(
            instance=instance, resources={"catlas": resource}, partition_key=today
        )
        [today_mat] = first.asset_materializations_for_node("discovery")
        assert today_mat.metadata["day/rows"].value == today_mat.metadata["candidates"].value
        assert today_mat.metadata["day/batches"].value == 1
        web.clear_requests()
        yesterday = f"{DEFAULT_NOW - timedelta(days=1):%Y-%m-%d}"
        past = job.execute_in_process(
            instance=instance, resources={"catlas": resource}, partition_key=yesterday
        )
        [past_mat] = past.asset_materializations_for_node("discovery")
        assert past_mat.metadata["day/rows"].value == 0
        assert "catlas_run_id" not in past_mat.metadata
        assert web.requests == []
        tomorrow = f"{DEFAULT_NOW + timedelta(days=1):%Y-%m-%d}"
        refused = job.execute_in_process(
            instance=instance,
            resources={"catlas": resource},
            partition_key=tomorrow,
            raise_on_error=False,
        )
        assert not refused.success
