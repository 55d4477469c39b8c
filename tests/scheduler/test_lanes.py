"""Lanes: a large tick's sensors run in worker processes, one per core, with the same
results, stop rules and verdicts as in one process (real fixture web, SQLite and PostgreSQL)."""

from __future__ import annotations

import multiprocessing
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import select

from catlas_assets.domain.vocabulary import RunOutcome, Stop
from catlas_assets.errors import StorageError
from catlas_assets.services import catalog
from catlas_assets.services.lanes import LaneDied, deal, lane_count
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import run_tick
from fixture_web import FixtureWeb
from resources.state.connector_stats import all_stats
from resources.state.schema import domain_budgets
from tests.scheduler.helpers import (
    FAST,
    LOAD,
    SITES,
    WALL,
    add_sensors,
    page_requests,
    sensor_on,
    tick_runtime,
)

LANES = {"lanes": 2, "lane_min_batch": 1}


def test_domains_are_dealt_whole_the_largest_first_to_the_lightest_lane() -> None:
    sizes = {"a.com": 5, "b.com": 3, "c.com": 3, "d.com": 2, "e.com": 1}
    sensors = [sensor_on(i, d) for d, n in sizes.items() for i in range(n)]
    route = deal(sensors, 2)
    load = [sum(sizes[d] for d, lane in route.items() if lane == n) for n in range(2)]
    assert sorted(load) == [7, 7]  # a + d (7) against b + c + e (7)
    assert route["a.com"] == 0 and route["b.com"] == 1  # ties go to the lowest lane
    assert deal(list(reversed(sensors)), 2) == route  # the same batch deals the same way
    assert set(deal(sensors, 8).values()) == {0, 1, 2, 3, 4}  # no lane gets two of five


def test_lanes_are_one_per_core_at_most_eight_and_none_on_one_core() -> None:
    assert lane_count(-1, cpus=1) == 0
    assert lane_count(-1, cpus=2) == 2
    assert lane_count(-1, cpus=64) == 8
    assert lane_count(0, cpus=64) == 0 and lane_count(3, cpus=1) == 3


def test_a_tick_in_lanes_stores_what_one_process_stores(tmp_path: Path, web: FixtureWeb) -> None:
    """The same sensors, the same seed: every sensor ends in the same state, next run
    included (each one's jitter is drawn in claim order by the tick, not by its lane)."""
    finals = {}
    for name, lanes in (("one", {"lanes": 0}), ("lanes", LANES)):
        runtime = tick_runtime(tmp_path, web, name, **lanes)
        try:
            for site in SITES:
                add_sensors(runtime, site, 6)
            report = run_tick(runtime).report
            rows = [runtime.store.sensor(i) for i in range(1, 19)]
            finals[name] = (
                {k: v for k, v in report.counters.items() if k != "tick_ms"},
                [(r["url"], r["status"], r["next_run_at"], r["normalized_hash"]) for r in rows],
                runtime.lake.connect().sql("SELECT count(*) FROM observations").fetchall(),
            )
            assert all(r["claimed_at"] is None for r in rows)
        finally:
            runtime.close()
    assert finals["lanes"] == finals["one"]
    assert finals["one"][2] == [(18,)]
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("catlas-lane")]


def test_a_lanes_teardown_after_it_says_closed_is_done_when_the_tick_returns(
    tmp_path: Path, web: FixtureWeb
) -> None:
    """A lane says "closed" once its runs are committed, and the tick flushes the lake
    while the lane writes its connector stats and gives its unused budget back: both are
    written by the time the tick returns (it waits for the lanes to exit)."""
    runtime = tick_runtime(tmp_path, web, "teardown", **LANES)
    try:
        for site in SITES[:2]:
            add_sensors(runtime, site, 6)
        report = run_tick(runtime).report
        assert report.counters["claimed"] == 12
        stats = all_stats(runtime.store)["generic_html"]["stats"]
        assert stats["runs"] == 12 and sum(stats["outcomes"].values()) == 12
        with runtime.store.engine.connect() as conn:
            query = select(domain_budgets.c.domain, domain_budgets.c.used_today)
            used = {domain: n for domain, n in conn.execute(query)}
        # What each domain was sent (robots.txt included), not the units leased ahead.
        sent = {d: len([r for r in web.requests if r.host == d]) for d in used}
        assert used == sent and sorted(used) == ["kestrel-labs.com", "swarm-load.com"]
        assert all(n >= 6 for n in sent.values())
    finally:
        runtime.close()
    assert _lane_names() == []


def test_a_claim_that_comes_back_too_small_for_lanes_runs_in_the_tick_process(
    tmp_path: Path, web: FixtureWeb
) -> None:
    """The lanes start before the claim, from a count of what is due; another worker that
    claims part of it meanwhile leaves a batch that runs in the tick's own process."""
    runtime = tick_runtime(tmp_path, web, "raced", lanes=2, lane_min_batch=10)
    try:
        ids = add_sensors(runtime, SITES[0], 12)
        claim = runtime.store.claim_due
        started: list[str] = []

        def raced(**kwargs: object) -> list:
            started.extend(_lane_names())  # the count saw twelve: the lanes are starting
            # Between the count and this claim, another worker takes five of the twelve.
            claim(**{**kwargs, "worker": "other", "limit": 5})  # type: ignore[arg-type]
            return claim(**kwargs)  # type: ignore[arg-type]

        runtime.store.claim_due = raced  # type: ignore[method-assign]
        lanes_seen: list[str] = []
        tick = run_tick(runtime, on_sensor_done=lambda _run: lanes_seen.extend(_lane_names()))
        report = tick.report
        assert (report.counters["claimed"], report.counters["ok"]) == (7, 7)
        assert sorted(started) == ["catlas-lane-0", "catlas-lane-1"]
        assert lanes_seen == []  # ended before the batch ran
        others = [i for i in ids if runtime.store.sensor(i)["claimed_by"] == "other"]
        assert len(others) == 5
    finally:
        runtime.close()
    assert _lane_names() == []


def test_the_lanes_start_before_the_run_is_recorded_and_end_when_it_cannot_be(
    tmp_path: Path, web: FixtureWeb
) -> None:
    """The lanes start first, so that their start overlaps the tick's own (the run's row,
    the claim); a tick whose run cannot be recorded ends them and claims nothing."""
    runtime = tick_runtime(tmp_path, web, "unrecorded", **LANES)
    try:
        ids = add_sensors(runtime, SITES[0], 6)
        starting: list[str] = []

        def refused(**_kwargs: object) -> None:
            starting.extend(_lane_names())
            raise StorageError("attempt to write a readonly database")

        runtime.store.start_run = refused  # type: ignore[method-assign]
        with pytest.raises(StorageError, match="readonly"):
            run_tick(runtime)
        assert sorted(starting) == ["catlas-lane-0", "catlas-lane-1"]
        assert all(runtime.store.sensor(i)["claimed_at"] is None for i in ids)
        assert runtime.store.runs(limit=5) == []
    finally:
        runtime.close()
    assert _lane_names() == []


def _lane_names() -> list[str]:
    return [p.name for p in multiprocessing.active_children() if p.name.startswith("catlas-lane")]


def test_a_domains_stop_rule_holds_across_lanes(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    rules = {"max_consecutive_failures": 3, "min_requests_for_error_rate": 100}
    runtime = make_runtime(database_url, **FAST, **rules, **LANES, fetch_concurrency=1)
    wall = add_sensors(runtime, WALL, 8)
    add_sensors(runtime, LOAD, 5)

    report = run_tick(runtime).report

    assert len(page_requests(web, "brickwall-hosting.com")) == 3  # then the domain stopped
    assert len(page_requests(web, "swarm-load.com")) == 5
    c = report.counters
    assert (c["claimed"], c["failed"], c["released"], c["ok"]) == (13, 3, 5, 5)
    assert "brickwall-hosting.com (consecutive_failures)" in report.detail
    unreached = [i for i in wall if runtime.store.sensor(i)["last_fetched_at"] is None]
    assert len(unreached) == 5
    assert all(runtime.store.sensor(i)["claimed_at"] is None for i in unreached)


def _slow_sensors(runtime: Runtime, count: int, route: str = "slow") -> list[int]:
    """`count` sensors of pages answered after 3 s (`slow`) or 10 s (`stalled`)."""
    company = catalog.add_company(runtime, name="Slow", website=LOAD, tier=3)
    return [
        catalog.add_sensor(
            runtime, company_id=company, surface="products", url=f"{LOAD}/{route}/{i}"
        )
        for i in range(count)
    ]


def test_the_deadline_cancels_runs_in_lanes_and_releases_their_claims(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, **LANES, fetch_concurrency=2)
    slow = _slow_sensors(runtime, 4, "stalled")
    started = time.monotonic()
    report = run_tick(runtime, control=RunControl(deadline_s=1.5)).report
    assert time.monotonic() - started < 7  # not held by the 10 s pages
    assert report.stop is Stop.INTERRUPTED and report.outcome is RunOutcome.FAILED
    assert report.counters["released"] == 4
    rows = [runtime.store.sensor(i) for i in slow]
    assert all(r["claimed_at"] is None and r["last_fetched_at"] is None for r in rows)
    assert not [p for p in multiprocessing.active_children() if p.name.startswith("catlas-lane")]


def test_a_lane_that_dies_fails_the_tick_with_a_verdict_and_releases_the_claims(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, **LANES, fetch_concurrency=2)
    slow = _slow_sensors(runtime, 2)

    def kill_a_lane() -> None:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            lanes = [p for p in multiprocessing.active_children() if p.name == "catlas-lane-0"]
            if lanes and web.in_flight:  # its slow page is being answered
                os.kill(lanes[0].pid, signal.SIGKILL)
                return
            time.sleep(0.02)

    killer = threading.Thread(target=kill_a_lane)
    killer.start()
    with pytest.raises(LaneDied, match="killed by signal 9"):
        run_tick(runtime)
    killer.join()
    [row] = runtime.store.runs(limit=1)
    assert (row["stop"], row["outcome"]) == ("error", "failed")
    assert "LaneDied" in row["detail"]
    assert all(runtime.store.sensor(i)["claimed_at"] is None for i in slow)
