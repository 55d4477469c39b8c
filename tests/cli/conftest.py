"""Fixtures for the CLI tests: the `catlas` script pointed at the fixture web, seeded states."""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import pytest
from cli_harness import Catlas, iso

from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.sensor_run import run_one
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.clock import VirtualClock


@pytest.fixture
def hosts_file(tmp_path: Path, web: FixtureWeb) -> Path:
    return web.write_hosts_file(tmp_path / "fixture-hosts")


@pytest.fixture
def catlas(tmp_path: Path, hosts_file: Path) -> Catlas:
    """`catlas` run in tmp_path (so the state dir is the default `.catlas` there)."""
    return Catlas(tmp_path, {"CATLAS_HOSTS": str(hosts_file)})


@pytest.fixture
def observed_pricing(tmp_path: Path, hosts_file: Path) -> int:
    """Kestrel Labs' pricing page watched and observed once, in the `catlas` fixture's state."""
    return seed_sensor(
        tmp_path / ".catlas",
        hosts_file,
        now=DEFAULT_NOW,
        company="Kestrel Labs",
        website="http://kestrel-labs.com",
        surface="pricing",
        url="http://kestrel-labs.com/pricing",
        run=True,
    )


@pytest.fixture(scope="session")
def seed() -> Callable[..., int]:
    """Set up state through the services (no subprocess): see `seed_sensor`."""
    return seed_sensor


def seed_sensor(
    state_dir: Path,
    hosts: Path,
    *,
    now: datetime,
    company: str,
    website: str,
    surface: str,
    url: str,
    run: bool = False,
) -> int:
    """Set up a company with one sensor through the services (optionally run it once)."""
    settings = Settings(state_dir=str(state_dir), hosts=str(hosts), now=iso(now))
    runtime = Runtime(settings, clock=VirtualClock(now), rng=random.Random(7))
    try:
        company_id = catalog.add_company(runtime, name=company, website=website, tier=1)
        sensor_id = catalog.add_sensor(runtime, company_id=company_id, surface=surface, url=url)
        if run:
            result, _ = run_one(runtime, sensor_id)
            assert result.outcome.value == "ok", result
        return sensor_id
    finally:
        runtime.close()
