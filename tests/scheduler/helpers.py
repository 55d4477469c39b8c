"""Shared helpers of the scheduler tests: fast politeness settings and sensor factories."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from catlas_assets.domain.pipeline_data import SensorState
from catlas_assets.domain.vocabulary import SensorStatus
from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.clock import VirtualClock

# The fixture web is ours: no spacing between requests, so tests do not wait on politeness.
FAST = {"domain_spacing_s": 0.0, "domain_concurrency": 64, "domain_daily_budget": 1_000_000}
LOAD = "http://swarm-load.com"
WALL = "http://brickwall-hosting.com"
SITES = ("http://swarm-load.com", "http://kestrel-labs.com", "http://brickwall-hosting.com")


def sensor_on(i: int, domain: str) -> SensorState:
    """A claimed sensor of `domain` as a run reads it (for dealing and queue tests)."""
    return SensorState(
        id=i, company_id=1, surface="products", url=f"http://{domain}/{i}",
        connector="generic_html", status=SensorStatus.ACTIVE, base_interval_s=3600,
        current_interval_s=3600, quality_score=50.0, domain=domain,
    )  # fmt: skip


def tick_runtime(tmp_path: Path, web: FixtureWeb, name: str, **overrides: object) -> Runtime:
    """A SQLite runtime of its own folder on the fixture web, fast politeness, seeded."""
    settings = Settings(
        state_dir=str(tmp_path / name),
        hosts=str(web.write_hosts_file(tmp_path / "hosts")),
        fetch_retries=0,
    ).with_overrides(**FAST, **overrides)
    return Runtime(settings, clock=VirtualClock(DEFAULT_NOW), rng=random.Random(7))


def add_sensors(runtime: Runtime, site: str, count: int, *, name: str | None = None) -> list[int]:
    """`count` due sensors on distinct paths of `site` (one company per site)."""
    company_name = name or site.split("//")[1]
    found = runtime.store.company_by_name(company_name)
    company_id = (
        found["id"]
        if found
        else catalog.add_company(runtime, name=company_name, website=site, tier=3)
    )
    return [
        catalog.add_sensor(
            runtime, company_id=company_id, surface="products", url=f"{site}/load/{i}"
        )
        for i in range(count)
    ]


def page_requests(web: Any, host: str) -> list[Any]:
    """What the fixture server answered for `host`, robots.txt left out."""
    return [r for r in web.requests if r.host == host and r.path != "/robots.txt"]
