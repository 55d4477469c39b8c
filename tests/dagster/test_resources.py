"""The Dagster resources: one catlas runtime per run (the state store opened once, closed at
the end), the sensors' read-only way in, and the deployment (`CATLAS_ENV`) choosing the
resources, production refusing the embedded defaults and never creating the schema."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from catlas_assets.definitions import defs
from catlas_assets.defs.resources import (
    RESOURCES_LOCAL,
    RESOURCES_PROD,
    CatlasResource,
    resources_for,
)
from catlas_assets.errors import CatlasError, ConfigError, StorageError
from catlas_assets.services import catalog
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.state.store import StateStore
from sensors_dag.jobs import crawl_tick

ROOT = Path(__file__).resolve().parents[2]
PARTITION = DEFAULT_NOW.strftime("%Y-%m-%d-%H:00")


class StoreSpy:
    """Counts the state stores opened and closed; each call goes through to the real one."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.opened = 0
        self.closed = 0
        real_open, real_close = StateStore.open.__func__, StateStore.close  # type: ignore[attr-defined]

        def open_(cls, url: str, *, auto_create: bool = True) -> StateStore:
            self.opened += 1
            return real_open(cls, url, auto_create=auto_create)

        def close(store: StateStore) -> None:
            self.closed += 1
            real_close(store)

        monkeypatch.setattr(StateStore, "open", classmethod(open_))
        monkeypatch.setattr(StateStore, "close", close)


@pytest.fixture
def configured(tmp_path: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch) -> CatlasResource:
    hosts = web.write_hosts_file(tmp_path / "hosts")
    monkeypatch.setenv("CATLAS_NOW", DEFAULT_NOW.isoformat())
    resource = CatlasResource(state_dir=str(tmp_path / "state"), hosts=str(hosts))
    runtime = resource.build()
    company = catalog.add_company(runtime, name="Northwind Robotics", website=None, tier=1)
    catalog.add_sensor(
        runtime, company_id=company, surface="careers", url="http://northwind-robotics.com/careers"
    )
    runtime.close()
    return resource


def test_one_run_of_many_steps_opens_the_state_store_once_and_closes_it(
    configured: CatlasResource, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert crawl_tick.execute_in_process(resources={"catlas": configured}).success
    spy = StoreSpy(monkeypatch)
    # Four assets, fourteen checks per partition and the archive-key sweep.
    job = defs.resolve_job_def("compact_lake")
    result = job.execute_in_process(partition_key=PARTITION, resources={"catlas": configured})
    assert result.success
    assert len(result.get_asset_check_evaluations()) == 15
    assert (spy.opened, spy.closed) == (1, 1)


def test_a_tick_run_opens_one_state_store_for_the_tick_and_its_figures(
    configured: CatlasResource, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = StoreSpy(monkeypatch)
    assert crawl_tick.execute_in_process(resources={"catlas": configured}).success
    assert (spy.opened, spy.closed) == (1, 1)


def test_reading_outside_a_run_opens_for_the_block_and_closes_after(
    configured: CatlasResource, monkeypatch: pytest.MonkeyPatch
) -> None:
    spy = StoreSpy(monkeypatch)
    with configured.reading() as state:
        assert state.next_due_at() is not None
        assert state.now() == DEFAULT_NOW
        assert (spy.opened, spy.closed) == (1, 0)
    assert (spy.opened, spy.closed) == (1, 1)


def test_the_run_runtime_is_refused_outside_a_run(configured: CatlasResource) -> None:
    with pytest.raises(CatlasError, match="outside a Dagster run"):
        _ = configured.runtime


# -- deployments ---------------------------------------------------------------------------


def test_an_unknown_deployment_is_refused_by_name() -> None:
    with pytest.raises(ConfigError, match="CATLAS_ENV='staging' is not one of local, prod"):
        Settings.from_env({"CATLAS_ENV": "staging"})


def test_local_is_the_default_deployment_and_takes_the_local_resources() -> None:
    settings = Settings.from_env({})
    assert settings.env == "local"
    assert resources_for(settings) is RESOURCES_LOCAL
    assert RESOURCES_LOCAL["catlas"].prod is False


def test_prod_refuses_the_embedded_sqlite_state_and_a_local_lake() -> None:
    with pytest.raises(ConfigError) as refused:
        resources_for(Settings.from_env({"CATLAS_ENV": "prod"}))
    message = str(refused.value)
    assert message.startswith("CATLAS_ENV=prod: ")
    assert "CATLAS_DATABASE_URL must be a PostgreSQL URL" in message
    assert "CATLAS_LAKE_URL must be an s3:// URL" in message
    only_lake = Settings.from_env(
        {"CATLAS_ENV": "prod", "CATLAS_DATABASE_URL": "postgresql+psycopg://u@db/catlas"}
    )
    with pytest.raises(ConfigError, match="CATLAS_LAKE_URL") as lake_only:
        resources_for(only_lake)
    assert "CATLAS_DATABASE_URL" not in str(lake_only.value)


def test_prod_with_postgresql_and_s3_takes_the_prod_resources() -> None:
    settings = Settings.from_env(
        {
            "CATLAS_ENV": "prod",
            "CATLAS_DATABASE_URL": "postgresql+psycopg://u@db/catlas",
            "CATLAS_LAKE_URL": "s3://lake/catlas",
        }
    )
    assert resources_for(settings) is RESOURCES_PROD
    assert RESOURCES_PROD["catlas"].prod is True
    assert (
        set(RESOURCES_PROD)
        == set(RESOURCES_LOCAL)
        == {
            "catlas",
            "state_store",
            "lake",
            "archive",
            "notifier",
        }
    )


def test_a_prod_run_never_creates_the_schema(postgres_database: str) -> None:
    from tests.conftest import reset_postgres

    reset_postgres(postgres_database)
    resource = CatlasResource(
        prod=True, database_url=postgres_database, lake_url="s3://lake/catlas"
    )
    runtime = resource.build()
    try:
        with pytest.raises(StorageError, match="catlas db upgrade"):
            _ = runtime.store
    finally:
        runtime.close()
    with pytest.raises(ConfigError, match="CATLAS_LAKE_URL"):
        CatlasResource(prod=True, database_url=postgres_database).build()


def test_the_code_location_does_not_load_as_prod_on_the_embedded_defaults(
    tmp_path: Path,
) -> None:
    (tmp_path / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    env = {
        **os.environ,
        "DAGSTER_HOME": str(tmp_path),
        "CATLAS_STATE_DIR": str(tmp_path / "s"),
        "CATLAS_ENV": "prod",
    }
    dagster = str(Path(sys.executable).parent / "dagster")
    result = subprocess.run(
        [dagster, "definitions", "validate", "-w", "workspace.yaml"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode != 0
    assert "CATLAS_ENV=prod: CATLAS_DATABASE_URL must be a PostgreSQL URL" in (
        result.stdout + result.stderr
    )
