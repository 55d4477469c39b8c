"""The documented production instance (dagster_home/dagster.prod.yaml) loaded for real:
dagster-postgres storage in its own database on the real PostgreSQL, the queued run
coordinator with its tag limits, compute logs on S3 through dagster-aws (a local S3
server); a job run on it, and a range run's per-hour materializations, are read back by a
second instance from the same file."""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import boto3
import dagster as dg
import psycopg
import pytest
from moto.server import ThreadedMotoServer
from sqlalchemy.engine import make_url

from catlas_assets.definitions import defs
from catlas_assets.defs.resources import CatlasResource
from fixture_web import DEFAULT_NOW, FixtureWeb
from tests.conftest import PG_ADMIN_URL
from tests.dagster.watched_hour import fetch_kestrel_pages

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


@pytest.fixture
def production_home(
    tmp_path: Path, dagster_database: str, s3: str, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """A DAGSTER_HOME holding the production file, its environment set (local S3 server)."""
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
    return home


def test_production_instance_runs_a_job_and_reads_it_back(
    tmp_path: Path, production_home: Path
) -> None:
    home = production_home
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


def test_a_range_run_on_the_production_instance_keeps_each_hours_figures(
    tmp_path: Path, production_home: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three hours compacted in one run on PostgreSQL storage; a second instance reads one
    materialization per hour back, each with its own rows (2 in the watched hour, else 0)."""
    monkeypatch.setenv("CATLAS_NOW", DEFAULT_NOW.isoformat())
    monkeypatch.setenv("CATLAS_DOMAIN_SPACING_S", "0")
    resource = CatlasResource(
        state_dir=str(tmp_path / "state"), hosts=str(web.write_hosts_file(tmp_path / "hosts"))
    )
    runtime = resource.build()
    try:
        fetch_kestrel_pages(runtime)
    finally:
        runtime.close()
    hour = DEFAULT_NOW.replace(minute=0, second=0, microsecond=0)
    keys = [(hour + timedelta(hours=h)).strftime("%Y-%m-%d-%H:00") for h in (-1, 0, 1)]
    with dg.DagsterInstance.from_config(str(production_home)) as instance:
        result = defs.resolve_job_def("compact_lake").execute_in_process(
            instance=instance,
            resources={"catlas": resource},
            tags={
                "dagster/asset_partition_range_start": keys[0],
                "dagster/asset_partition_range_end": keys[-1],
            },
        )
        assert result.success
    with dg.DagsterInstance.from_config(str(production_home)) as again:
        records = again.fetch_materializations(dg.AssetKey("observations"), limit=10).records
        rows = {
            r.asset_materialization.partition: r.asset_materialization.metadata["rows"].value
            for r in records
            if r.run_id == result.run_id and r.asset_materialization is not None
        }
    assert rows == {keys[0]: 0, keys[1]: 2, keys[2]: 0}
