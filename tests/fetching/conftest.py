"""Fixtures for the fetch-layer tests: sensors on the fixture web's fault hosts, run for real."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import select

from catlas_assets.services import catalog
from catlas_assets.services.pipeline import SensorRunResult
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.sensor_run import run_one
from fixture_web import FixtureWeb
from resources.state.domain_budgets import DomainBudgets
from resources.state.schema import cost_ledger, review_queue


@dataclass
class Watch:
    """One runtime (state, lake, clock) watching the fixture web, and what the server saw."""

    runtime: Runtime
    web: FixtureWeb
    company_id: int = 0

    def sensor(self, url: str, surface: str = "careers") -> int:
        if not self.company_id:
            self.company_id = catalog.add_company(
                self.runtime, name="Faultline", website="http://faultline.dev/"
            )
        return catalog.add_sensor(
            self.runtime, company_id=self.company_id, surface=surface, url=url
        )

    def run(self, sensor_id: int, *, force: bool = True) -> SensorRunResult:
        result, _report = run_one(self.runtime, sensor_id, force=force)
        return result

    def row(self, sensor_id: int) -> dict[str, Any]:
        return self.runtime.store.sensor(sensor_id)

    def advance(self, delta: timedelta) -> None:
        self.web.set_now(self.runtime.clock.advance(delta))  # type: ignore[attr-defined]

    def requested(self, host: str | None = None) -> list[str]:
        """`host/path` of every request the fixture server received (optionally one host)."""
        return [f"{r.host}{r.path}" for r in self.web.requests if host is None or r.host == host]

    def reviews(self, kind: str | None = None) -> list[dict[str, Any]]:
        with self.runtime.store.engine.connect() as conn:
            query = select(review_queue).order_by(review_queue.c.id)
            if kind:
                query = query.where(review_queue.c.kind == kind)
            return [dict(r) for r in conn.execute(query).mappings()]

    def ledger(self) -> list[dict[str, Any]]:
        with self.runtime.store.engine.connect() as conn:
            return [dict(r) for r in conn.execute(select(cost_ledger)).mappings()]

    @property
    def budgets(self) -> DomainBudgets:
        return self.runtime.domain_budgets


@pytest.fixture
def watch(make_runtime: Callable[..., Runtime], web: FixtureWeb) -> Callable[..., Watch]:
    """A Watch on SQLite (`database_url=` for PostgreSQL too); settings as keyword overrides."""

    def build(database_url: str | None = None, **overrides: Any) -> Watch:
        return Watch(make_runtime(database_url, **overrides), web)

    return build
