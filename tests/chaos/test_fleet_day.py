"""The fast version of the fleet day (`make reliability` runs 100,000 sensors over 2,000
domains): 1,000 sensors over 100 fixture domains, four worker processes on PostgreSQL."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from fixture_web import FixtureWeb
from tests.chaos.fleet import run_day
from tests.chaos.invariants import broken
from tests.conftest import reset_postgres

SENSORS = 1_000  # in about 20 s on two cores
DOMAINS = 100
WORKERS = int(os.environ.get("CATLAS_FLEET_WORKERS", "4"))


@pytest.fixture(scope="module")
def fleet_web() -> Iterator[FixtureWeb]:
    with FixtureWeb(fleet=DOMAINS) as web:
        yield web


@pytest.mark.postgres
def test_four_workers_fetch_every_page_once_and_keep_every_domain_spaced(
    fleet_web: FixtureWeb, tmp_path: Path, postgres_database: str
) -> None:
    reset_postgres(postgres_database)

    day = run_day(
        tmp_path, fleet_web, postgres_database, count=SENSORS, domains=DOMAINS, workers=WORKERS,
        rounds=2,
    )  # fmt: skip

    assert day.fetched == SENSORS and day.double_fetches == 0
    assert day.spacing_violations == 0, f"closest gap {day.closest_gap_s:.3f}s"
    # The domain's turns in the store space the workers between them too.
    assert day.cross_worker_gaps == 0
    assert len(day.peak_rss_mib) == 2 * WORKERS and all(m > 0 for m in day.peak_rss_mib)
    assert broken(day.invariants) == {}
    assert day.invariants["rows checked"] == SENSORS
