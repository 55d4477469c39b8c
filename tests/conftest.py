"""Shared test fixtures: real SQLite and real PostgreSQL, the real fixture web, a runtime.

Every state-store test takes ``database_url``, which is parametrized over both backends.
PostgreSQL tests use the throwaway database named by CATLAS_TEST_DATABASE_URL (created by
.ci/run); without it, one is created on the local server for the session and dropped after.
Under pytest-xdist each worker gets a database of its own beside the named one, because the
tests reset the schema they use.
"""

from __future__ import annotations

import os
import random
import secrets
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import psycopg
import pytest
from sqlalchemy.engine import make_url

from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.clock import VirtualClock

PG_ADMIN_URL = os.environ.get(
    "CATLAS_TEST_PG_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def _psycopg_dsn(url: str) -> str:
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


# Tests that share an expensive session fixture run on one xdist worker, built once.
_XDIST_GROUPS = {"tests/analyst/": "analyst-demo"}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for prefix, group in _XDIST_GROUPS.items():
            if item.nodeid.startswith(prefix):
                item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def postgres_database() -> Iterator[str]:
    """A PostgreSQL database for this test session (SQLAlchemy URL)."""
    given = os.environ.get("CATLAS_TEST_DATABASE_URL")
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if given and not worker:
        yield given
        return
    server = make_url(given or PG_ADMIN_URL)
    name = f"{server.database}_{worker}" if given else f"catlas_test_{secrets.token_hex(4)}"
    admin_url = _psycopg_dsn(server.set(database="postgres").render_as_string(hide_password=False))
    try:
        admin = psycopg.connect(admin_url, autocommit=True, connect_timeout=5)
    except psycopg.OperationalError as exc:
        pytest.fail(f"PostgreSQL is required for the state-store tests and did not answer: {exc}")
    with admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    url = server.set(drivername="postgresql+psycopg", database=name)
    yield url.render_as_string(hide_password=False)
    with psycopg.connect(admin_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def reset_postgres(url: str) -> None:
    with psycopg.connect(_psycopg_dsn(url), autocommit=True) as conn:
        conn.execute("DROP SCHEMA public CASCADE")
        conn.execute("CREATE SCHEMA public")


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """An empty state database on each backend."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'state.db'}"
    url = request.getfixturevalue("postgres_database")
    reset_postgres(url)
    return url


@pytest.fixture(scope="session")
def web_server() -> Iterator[FixtureWeb]:
    with FixtureWeb() as web:
        yield web


@pytest.fixture
def web(web_server: FixtureWeb) -> FixtureWeb:
    """The fixture web at day 0 with an empty request log."""
    web_server.set_now(DEFAULT_NOW)
    web_server.clear_requests()
    return web_server


class Sim:
    """A runtime whose virtual clock and the fixture web's move together."""

    def __init__(self, runtime: Runtime, web: FixtureWeb) -> None:
        self.runtime = runtime
        self.web = web

    @property
    def clock(self) -> VirtualClock:
        assert isinstance(self.runtime.clock, VirtualClock)
        return self.runtime.clock

    def advance(self, delta: timedelta) -> None:
        self.web.set_now(self.clock.advance(delta))


@pytest.fixture
def make_runtime(tmp_path: Path, web: FixtureWeb):
    hosts = web.write_hosts_file(tmp_path / "hosts")
    created: list[Runtime] = []

    def build(database_url: str | None = None, **overrides: object) -> Runtime:
        settings = Settings(
            state_dir=str(tmp_path / "state"),
            database_url=database_url or "",
            hosts=str(hosts),
            fetch_retries=0,
            domain_spacing_s=0.0,  # the fixture web is local; spacing tests set their own
        ).with_overrides(**overrides)
        runtime = Runtime(settings, clock=VirtualClock(DEFAULT_NOW), rng=random.Random(7))
        created.append(runtime)
        return runtime

    yield build
    for runtime in created:
        runtime.close()


@pytest.fixture
def sim(make_runtime, web: FixtureWeb, database_url: str) -> Sim:
    """A runtime on each state backend against the fixture web, clocks in step."""
    return Sim(make_runtime(database_url), web)
