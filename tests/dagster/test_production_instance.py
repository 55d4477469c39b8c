"""The documented production instance (dagster_home/dagster.prod.yaml) loaded for real:
dagster-postgres storage in its own database on the real PostgreSQL, the queued run
coordinator with its tag limits, compute logs on S3 through dagster-aws (a local S3
server); a job run on it is read back by a second instance from the same file."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import boto3
import dagster as dg
import psycopg
import pytest
from moto.server import ThreadedMotoServer
from sqlalchemy.engine import make_url

from catlas_assets.definitions import defs
from catlas_assets.defs.resources import CatlasResource
from tests.conftest import PG_ADMIN_URL

ROOT = Path(__file__).resolve().parents[2]
PROD = ROOT / "dagster_home" / "dagster.prod.yaml"

pytestmark = pytest.mark.postgres


@pytest.fixture
def dagster_database() -> Iterator[str]:
    """Dagster's own database, beside (never inside) catlas's."""
    name = f"dagster_test_{secrets.token_hex(4)}"
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    url = make_url(PG_ADMIN_URL).set(drivername="postgresql+psycopg2", database=name)
    yield url.render_as_string(hide_password=False)
    with psycopg.connect(PG_ADMIN_URL, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def s3() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0)
    server.start()
    host, port = server.get_host_and_port()
    yield f"http://{host}:{port}"
    server.stop()


def test_production_instance_runs_a_job_and_reads_it_back(
    tmp_path: Path, dagster_database: str, s3: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in {
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
        "DAGSTER_PG_URL": dagster_database,
        "DAGSTER_LOG_BUCKET": "catlas-dagster-logs",
        "DAGSTER_LOG_PREFIX": "compute-logs",
        "AWS_ENDPOINT_URL_S3": s3,
    }.items():
        monkeypatch.setenv(name, value)
    boto3.client("s3", endpoint_url=s3).create_bucket(Bucket="catlas-dagster-logs")
    home = tmp_path / "dagster"
    home.mkdir()
    shutil.copyfile(PROD, home / "dagster.yaml")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    resource = CatlasResource(state_dir=str(tmp_path / "state"))

    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        assert type(instance.event_log_storage).__name__ == "PostgresEventLogStorage"
        coordinator = instance.run_coordinator
        assert type(coordinator).__name__ == "QueuedRunCoordinator"
        limits = {
            (x["key"], x.get("value")): x["limit"]
            for x in coordinator.get_run_queue_config().tag_concurrency_limits
        }
        assert limits[("catlas/kind", "tick")] == 4
        assert type(instance.compute_log_manager).__name__ == "S3ComputeLogManager"
        assert instance.get_ref().run_launcher_data.class_name == "EcsRunLauncher"
        result = defs.resolve_job_def("budgets_reset").execute_in_process(
            instance=instance, resources={"catlas": resource}
        )
        assert result.success
        run_id = result.run_id

    with dg.DagsterInstance.from_config(str(home)) as again:
        run = again.get_run_by_id(run_id)
        assert run is not None and run.status == dg.DagsterRunStatus.SUCCESS
        assert run.job_name == "budgets_reset"
        assert run.tags["catlas/kind"] == "periodic"
        steps = again.get_records_for_run(run_id).records
        assert any(
            r.event_log_entry.dagster_event_type == dg.DagsterEventType.RUN_SUCCESS for r in steps
        )
    assert os.environ["DAGSTER_PG_URL"].startswith("postgresql+psycopg2://")
