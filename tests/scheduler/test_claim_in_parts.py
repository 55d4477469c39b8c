"""A tick claims its batch in two parts: the first (two sensors per run in flight) starts
running while the rest is claimed in a thread. Same results as one claim, in lanes and in
one process; the rest is released when the run stopped meanwhile, and a failing second
claim fails the tick with every claim released (real fixture web, SQLite and PostgreSQL)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from catlas_assets.domain.vocabulary import Stop
from catlas_assets.errors import StorageError
from catlas_assets.services import catalog
from catlas_assets.services.lanes import deal
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import first_part, run_tick
from catlas_assets.settings import Settings
from fixture_web import FixtureWeb
from resources import governor
from tests.scheduler.helpers import FAST, LOAD, SITES, add_sensors, sensor_on, tick_runtime


def test_the_rest_of_a_batch_is_dealt_onto_the_first_part() -> None:
    first = [sensor_on(i, "a.com") for i in range(4)] + [sensor_on(9, "b.com")]
    route = deal(first, 2)
    assert route == {"a.com": 0, "b.com": 1}
    rest = [sensor_on(10 + i, d) for i, d in enumerate(["a.com"] * 3 + ["c.com"] * 2 + ["d.com"])]
    more = deal(rest, 2, route, [4, 1])
    # a.com keeps its lane (now 7 there); c.com (2) goes to the lighter lane 1, d.com too.
    assert more == {"a.com": 0, "b.com": 1, "c.com": 1, "d.com": 1}
    assert route == {"a.com": 0, "b.com": 1}  # the earlier deal is not changed in place


def test_the_first_part_is_two_sensors_for_each_run_in_flight() -> None:
    assert first_part(Settings().with_overrides(fetch_concurrency=16)) == 32
    assert first_part(Settings().with_overrides(fetch_concurrency=1)) == 2


def _before_each_claim(runtime: Runtime, before: Callable[[int], None]) -> None:
    """Call `before(limit)` ahead of every claim the tick makes (it may raise)."""
    claim = runtime.store.claim_due

    def wrapped(**kwargs: Any) -> list[dict[str, Any]]:
        before(kwargs["limit"])
        return claim(**kwargs)

    runtime.store.claim_due = wrapped  # type: ignore[method-assign]


@pytest.mark.parametrize("lanes", [0, 2])
def test_a_batch_claimed_in_parts_ends_as_one_claim_does(
    tmp_path: Path, web: FixtureWeb, lanes: int
) -> None:
    """Every sensor runs once and ends in the same state, next run included (the seeds are
    drawn in claim order, and the rest comes after the first part)."""
    finals = {}
    for name, concurrency in (("whole", 16), ("parts", 2)):
        runtime = tick_runtime(
            tmp_path, web, f"{name}-{lanes}", lanes=lanes, lane_min_batch=1,
            fetch_concurrency=concurrency,
        )  # fmt: skip
        try:
            for site in SITES:
                add_sensors(runtime, site, 6)
            limits: list[int] = []
            _before_each_claim(runtime, limits.append)
            report = run_tick(runtime).report
            rows = [runtime.store.sensor(i) for i in range(1, 19)]
            assert all(r["claimed_at"] is None for r in rows)
            finals[name] = (
                {k: v for k, v in report.counters.items() if k != "tick_ms"},
                [(r["url"], r["status"], r["next_run_at"], r["normalized_hash"]) for r in rows],
                runtime.lake.connect().sql("SELECT count(*) FROM observations").fetchall(),
                # The leases the lanes took together went back, but for what was used.
                [runtime.domain_budgets.get(d.split("//")[1])["used_today"] for d in SITES],
            )
        finally:
            runtime.close()
        # 32 covers the 18 due at once; with two in flight the first part is 4, then the rest.
        assert limits == ([32] if name == "whole" else [4, 496])
    assert finals["parts"] == finals["whole"]
    assert finals["parts"][0]["claimed"] == 18 and finals["parts"][2] == [(18,)]


def test_the_rest_claimed_after_the_run_stopped_is_released_unrun(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, fetch_concurrency=1)
    ids = add_sensors(runtime, LOAD, 6)
    control = RunControl(deadline_s=0.5)

    def late(limit: int) -> None:
        if limit != 2:  # the rest: claimed once the deadline has stopped the run
            while not control.deadline_passed():
                time.sleep(0.02)
            time.sleep(0.1)  # the watcher has seen it

    _before_each_claim(runtime, late)
    report = run_tick(runtime, control=control).report

    assert report.stop is Stop.INTERRUPTED
    c = report.counters
    assert c["claimed"] == 6 and c["ok"] + c["released"] == 6 and c["ok"] <= 2
    rows = [runtime.store.sensor(i) for i in ids]
    assert all(r["claimed_at"] is None for r in rows)
    assert sum(r["last_fetched_at"] is None for r in rows) == c["released"] >= 4


def test_a_sensor_the_stop_released_before_the_rest_was_claimed_is_not_claimed_again(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, fetch_concurrency=1)
    company = catalog.add_company(runtime, name="Slow", website=LOAD, tier=3)
    ids = [  # pages that take 3 s: the first part's first runs past the deadline
        catalog.add_sensor(runtime, company_id=company, surface="products", url=f"{LOAD}/slow/{i}")
        for i in range(6)
    ]
    control = RunControl(deadline_s=0.5)
    drained: list[bool] = []

    def after_the_drain(limit: int) -> None:
        if limit == 2:
            return  # the first part: one runs, one waits in the queue
        # The stop drains the queue: its sensor is released while the first still runs.
        deadline = time.monotonic() + 10
        while sum(runtime.store.sensor(i)["claimed_at"] is not None for i in ids) != 1:
            assert time.monotonic() < deadline, "the queue was never drained"
            time.sleep(0.02)
        drained.append(True)

    _before_each_claim(runtime, after_the_drain)
    report = run_tick(runtime, control=control).report

    assert drained and report.stop is Stop.INTERRUPTED
    c = report.counters
    assert c["claimed"] == 6 and c["ok"] + c["released"] == 6
    assert all(runtime.store.sensor(i)["claimed_at"] is None for i in ids)


def test_a_failing_claim_of_the_rest_fails_the_tick_and_releases_every_claim(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, fetch_concurrency=1)
    ids = add_sensors(runtime, LOAD, 5)
    calls: list[str] = []

    def broken(limit: int) -> None:
        calls.append(threading.current_thread().name)
        if limit != 2:
            raise StorageError("the state database went away")

    _before_each_claim(runtime, broken)
    with pytest.raises(StorageError, match="went away"):
        run_tick(runtime)

    assert calls[0] == "MainThread" and calls[1] != "MainThread"  # the rest, in a thread
    [row] = runtime.store.runs(limit=1)
    assert (row["stop"], row["outcome"]) == ("error", "failed")
    assert "the state database went away" in row["detail"]
    assert all(runtime.store.sensor(i)["claimed_at"] is None for i in ids)


def test_the_domains_of_each_part_take_their_budget_leases_together(
    tmp_path: Path, web: FixtureWeb, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A lease lives a second; on a loaded machine the rest can come later than that, and
    # its domains then rightly lease again. The count asserted here is of one lease each.
    monkeypatch.setattr(governor, "LEASE_TTL_S", 3600.0)
    runtime = tick_runtime(tmp_path, web, "leases", lanes=0, fetch_concurrency=2)
    try:
        for site in SITES:
            add_sensors(runtime, site, 6)
        budgets = runtime.domain_budgets
        together: list[list[str]] = []
        alone: list[str] = []
        reserve_many, reserve = budgets.reserve_many, budgets.reserve

        # A lease counts once its transaction returned: a try on the loop that finds SQLite's
        # write lock taken (the rest's claim, say) wrote nothing and is tried again.
        def many(domains: list[str], *args: Any, **kwargs: Any) -> Any:
            granted = reserve_many(domains, *args, **kwargs)
            together.append(sorted(domains))
            return granted

        def one(domain: str, *args: Any, **kwargs: Any) -> Any:
            granted = reserve(domain, *args, **kwargs)
            alone.append(domain)
            return granted

        budgets.reserve_many, budgets.reserve = many, one  # type: ignore[method-assign]
        report = run_tick(runtime).report
        assert report.counters["claimed"] == 18 and report.counters["requests"] >= 18
        # The first part's domains, then the rest's new ones: each leased once, together.
        leased = [d for call in together for d in call]
        assert sorted(leased) == sorted(site.split("//")[1] for site in SITES)
        assert 1 <= len(together) <= 2 and alone == []
    finally:
        runtime.close()


def test_a_tick_stopped_hard_while_the_rest_is_claimed_releases_it_too(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    """Ctrl+C reaching the loop (not the tick's own signal handling) while the rest's claim
    is still in its thread: the loop's end waits for the thread, and what it claimed goes
    back with the first part, not held until the claim timeout."""
    runtime = make_runtime(database_url, **FAST, fetch_concurrency=1)
    ids = add_sensors(runtime, LOAD, 6)
    first_done = threading.Event()
    waited: list[bool] = []

    def slow_rest(limit: int) -> None:
        if limit != 2:
            # The first part runs meanwhile: this thread is not one its runs need.
            waited.append(first_done.wait(5))
            time.sleep(0.2)  # still claiming when the interrupt reaches the loop

    def interrupt(_run: object) -> None:
        first_done.set()
        raise KeyboardInterrupt

    _before_each_claim(runtime, slow_rest)
    with pytest.raises(KeyboardInterrupt):
        run_tick(runtime, on_sensor_done=interrupt)
    assert waited == [True]
    rows = [runtime.store.sensor(i) for i in ids]
    assert all(r["claimed_at"] is None for r in rows)
