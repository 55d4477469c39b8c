"""One bad site never stops the crawl: a tick over 50 sensors, 10 of them on hostile pages
served by the real fixture server, on SQLite and PostgreSQL."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from catlas_assets.domain.connectors.generic_html import GenericHtml
from catlas_assets.domain.vocabulary import FailureClass, Outcome, RunOutcome, Stop
from catlas_assets.services import catalog
from catlas_assets.services.daemon import run_daemon
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import run_tick
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.clock import VirtualClock
from tests.hostile.hostile_site import CALM, CALM_COUNT, HOSTILE, HOSTILE_PAGES, write_sites

FAST = {"domain_spacing_s": 0.0, "domain_concurrency": 64, "domain_daily_budget": 1_000_000}


@pytest.fixture(scope="module")
def hostile_web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureWeb]:
    root = write_sites(tmp_path_factory.mktemp("hostile-web"))
    with FixtureWeb(root=root) as web:
        yield web


@pytest.fixture
def runtime(hostile_web: FixtureWeb, database_url: str, tmp_path: Path) -> Iterator[Runtime]:
    hosts = hostile_web.write_hosts_file(tmp_path / "hosts")
    settings = Settings(
        state_dir=str(tmp_path / "state"),
        database_url=database_url,
        hosts=str(hosts),
        fetch_retries=0,
        # The rules that stop a run on many failures would end this one early.
        max_consecutive_failures=1000,
        min_requests_for_error_rate=1000,
    ).with_overrides(**FAST)
    built = Runtime(settings, clock=VirtualClock(DEFAULT_NOW), rng=random.Random(7))
    yield built
    built.close()


def _add_sensors(runtime: Runtime) -> tuple[list[int], dict[int, str]]:
    calm_company = catalog.add_company(runtime, name="Calm", website=f"http://{CALM}", tier=3)
    bad_company = catalog.add_company(runtime, name="Hostile", website=f"http://{HOSTILE}", tier=3)
    calm = [
        catalog.add_sensor(
            runtime, company_id=calm_company, surface="products", url=f"http://{CALM}/ok/{i}"
        )
        for i in range(CALM_COUNT)
    ]
    hostile = {
        catalog.add_sensor(
            runtime,
            company_id=bad_company,
            surface=surface,
            url=f"http://{HOSTILE}{path}",
            connector=connector,
        ): name
        for name, (connector, surface, path, _ctype, _body) in HOSTILE_PAGES.items()
    }
    return calm, hostile


def _lake_observations(runtime: Runtime) -> dict[int, list[str]]:
    glob = Path(runtime.settings.resolved_lake_url) / "observations" / "**" / "*.parquet"
    rows = duckdb.sql(
        f"select sensor_id, outcome from read_parquet('{glob}', union_by_name=true)"
    ).fetchall()
    out: dict[int, list[str]] = {}
    for sensor_id, outcome in rows:
        out.setdefault(int(sensor_id), []).append(outcome)
    return out


def test_ten_hostile_pages_in_fifty_sensors_fail_alone_and_the_rest_commits(
    runtime: Runtime,
) -> None:
    calm, hostile = _add_sensors(runtime)

    result = run_tick(runtime)

    report = result.report
    assert report.stop is Stop.QUEUE_EMPTY and report.outcome is not RunOutcome.FAILED
    by_id = {r.sensor_id: r for r in result.runs}
    assert len(by_id) == 50 and all(r.committed for r in result.runs)
    assert all(by_id[i].outcome is Outcome.OK for i in calm)
    classes = {hostile[i]: by_id[i].failure_class for i in hostile}
    # Refused as unreadable, or not of the vendor's shape; the others are read as data.
    assert classes["charset-hex"] is FailureClass.PARSING
    assert classes["charset-base64"] is FailureClass.PARSING
    assert classes["xml-encoding"] is FailureClass.SCHEMA
    assert classes["greenhouse-departments"] is FailureClass.SCHEMA
    assert classes["statuspage-mixed"] is FailureClass.SCHEMA
    for name in ("jsonld-number-title", "broken-link", "deep-nesting", "nul-title"):
        assert classes[name] is None, name
    assert report.counters["failed"] == sum(1 for c in classes.values() if c is not None)
    assert report.counters["ok"] == 40 + sum(1 for c in classes.values() if c is None)
    # Every sensor's observation reached the lake (the flush ran for all of them).
    lake = _lake_observations(runtime)
    assert set(lake) == set(calm) | set(hostile)
    assert all(len(outcomes) == 1 for outcomes in lake.values())
    # A NUL in a job title is stored without it (PostgreSQL refuses NUL in text).
    nul = next(i for i, name in hostile.items() if name == "nul-title")
    assert runtime.store.sensor(nul)["last_failure_class"] is None


def test_a_parser_that_raises_fails_its_sensor_as_unknown_and_the_tick_goes_on(
    runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    calm, _hostile = _add_sensors(runtime)
    victim = calm[3]
    original = GenericHtml.parse
    # Parsed in this process: a pool process would not see the patched parser.
    monkeypatch.setattr(runtime.observe_pool, "workers", 0)

    def exploding(self, pages, surface, now):  # type: ignore[no-untyped-def]
        if pages[0].url.endswith("/ok/3"):
            raise ZeroDivisionError("a parser bug")
        return original(self, pages, surface, now)

    monkeypatch.setattr(GenericHtml, "parse", exploding)
    # Not one of the data errors a parser is expected to meet: only the boundary catches it.
    monkeypatch.setattr("catlas_assets.domain.observe.DATA_ERRORS", (TypeError,), raising=True)

    result = run_tick(runtime)

    by_id = {r.sensor_id: r for r in result.runs}
    assert by_id[victim].failure_class is FailureClass.UNKNOWN
    assert by_id[victim].committed
    row = runtime.store.sensor(victim)
    assert row["last_failure_class"] == "UNKNOWN"
    assert row["last_failure_detail"] == "ZeroDivisionError: a parser bug"
    assert all(by_id[i].outcome is Outcome.OK for i in calm if i != victim)
    assert victim in _lake_observations(runtime)


def test_the_daemon_keeps_ticking_over_hostile_pages(runtime: Runtime) -> None:
    _add_sensors(runtime)
    runtime.settings = runtime.settings.with_overrides(scheduler_tick_s=0.01)
    control = RunControl()

    def after_tick(report) -> None:  # type: ignore[no-untyped-def]
        if report.counters["claimed"] == 0:  # the queue is empty: the hostile tick is behind
            control.request_stop("seen enough ticks")

    result = run_daemon(
        runtime, control, onboarding=False, periodic_tasks=False, on_tick=after_tick
    )

    assert len(result.ticks) >= 2
    assert result.ticks[0].counters["claimed"] == 50
    assert result.report.stop is Stop.INTERRUPTED  # stopped by us, not by an error
