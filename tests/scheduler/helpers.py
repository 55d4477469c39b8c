"""Shared helpers of the scheduler tests: fast politeness settings and sensor factories."""

from __future__ import annotations

from typing import Any

from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime

# The fixture web is ours: no spacing between requests, so tests do not wait on politeness.
FAST = {"domain_spacing_s": 0.0, "domain_concurrency": 64, "domain_daily_budget": 1_000_000}
LOAD = "http://swarm-load.com"
WALL = "http://brickwall-hosting.com"


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
