"""A page that takes too long to parse fails its own sensor as PARSING, naming the bound,
and the other sensors of the tick commit; in a thread the same bound stops the parse."""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest

from catlas_assets.domain.vocabulary import FailureClass, Outcome, RunOutcome
from catlas_assets.services import catalog
from catlas_assets.services.parse_time_limit import ParseTimeout, time_limit
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import run_tick
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.clock import VirtualClock

SITE = "slow-parse.com"
WORDS = ["alpha", "beta", "gamma", "delta", "omega", "sigma", "kappa"]
CALM = 3


def _slow_page() -> str:
    """About 4 MB of ordinary news markup: seconds of normalizing and extracting."""
    rng = random.Random(1)
    items = "".join(
        f"<article><h2>Item {i}</h2><p>{' '.join(rng.choice(WORDS) for _ in range(30))}</p>"
        "</article>"
        for i in range(20_000)
    )
    return f"<html><body>{items}</body></html>"


@pytest.fixture(scope="module")
def slow_web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureWeb]:
    root = tmp_path_factory.mktemp("slow-web")
    site = root / SITE
    site.mkdir()
    (site / "slow.html").write_text(_slow_page())
    for i in range(CALM):
        (site / f"calm{i}.html").write_text(f"<html><body><h1>News {i}</h1></body></html>")
    with FixtureWeb(root=root) as web:
        yield web


def test_a_parse_over_its_time_bound_fails_that_sensor_as_parsing(
    slow_web: FixtureWeb, tmp_path: Path
) -> None:
    workers = 1  # the default: parses run in pool processes, bounded by a timer signal
    settings = Settings(
        state_dir=str(tmp_path / "state"),
        hosts=str(slow_web.write_hosts_file(tmp_path / "hosts")),
        fetch_retries=0,
        domain_spacing_s=0.0,
        observe_workers=workers,
        parse_timeout_s=0.1,  # the page takes far longer, even on a fast machine
    )
    runtime = Runtime(settings, clock=VirtualClock(DEFAULT_NOW), rng=random.Random(7))
    try:
        company = catalog.add_company(runtime, name="Slow", website=f"http://{SITE}", tier=3)
        slow = catalog.add_sensor(
            runtime, company_id=company, surface="newsroom", url=f"http://{SITE}/slow.html"
        )
        calm = [
            catalog.add_sensor(
                runtime, company_id=company, surface="newsroom", url=f"http://{SITE}/calm{i}.html"
            )
            for i in range(CALM)
        ]

        result = run_tick(runtime)

        by_id = {r.sensor_id: r for r in result.runs}
        assert by_id[slow].failure_class is FailureClass.PARSING
        detail = runtime.store.sensor(slow)["last_failure_detail"]
        assert "CATLAS_PARSE_TIMEOUT_S" in detail and "0.1s" in detail
        assert all(by_id[i].outcome is Outcome.OK for i in calm)
        assert result.report.outcome is not RunOutcome.FAILED
        # The pool survived the interrupted parse: a later tick parses in it again.
        clock = runtime.clock
        assert isinstance(clock, VirtualClock)
        clock.advance(timedelta(days=8))
        later = {r.sensor_id: r for r in run_tick(runtime).runs}
        assert all(later[i].failure_class is None for i in calm)
    finally:
        runtime.close()


def test_a_parse_in_a_thread_is_stopped_at_its_bound() -> None:
    """With CATLAS_OBSERVE_WORKERS=0 the parse runs in a thread: the bound is an exception
    raised into that thread between two Python steps (one long call inside the C parser is
    stopped only when it returns, so the work here is Python steps: a diff gone quadratic)."""
    outcome: list[str] = []

    def parse() -> None:
        try:
            with time_limit(0.1):
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline:
                    sum(range(1000))
            outcome.append("finished")
        except ParseTimeout:
            outcome.append("stopped")

    worker = threading.Thread(target=parse)
    worker.start()
    worker.join(timeout=60)
    assert outcome == ["stopped"]
