"""A tick's Stop and Outcome against the real fixture web, on SQLite and PostgreSQL:
stop rules per domain, -n, --deadline, signals, "Not started", and early release of claims."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from catlas_assets.domain.vocabulary import RunOutcome, Stop
from catlas_assets.services import catalog
from catlas_assets.services.run_control import NOT_STARTED, RunControl
from catlas_assets.services.tick import run_tick
from fixture_web import FixtureWeb
from tests.scheduler.helpers import FAST, LOAD, WALL, add_sensors, page_requests

RULES = {"max_consecutive_failures": 3, "min_requests_for_error_rate": 100, "fetch_concurrency": 1}


def _unclaimed_and_due(runtime, ids: list[int]) -> bool:
    now = runtime.clock.now()
    rows = [runtime.store.sensor(i) for i in ids]
    return all(r["claimed_at"] is None and r["next_run_at"] <= now for r in rows)


def test_a_blocking_domain_is_released_while_the_other_domains_go_on(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, **RULES)
    wall = add_sensors(runtime, WALL, 8)
    load = add_sensors(runtime, LOAD, 5)

    report = run_tick(runtime).report

    assert len(page_requests(web, "brickwall-hosting.com")) == 3  # then the domain stopped
    assert len(page_requests(web, "swarm-load.com")) == 5
    assert report.stop is Stop.QUEUE_EMPTY and report.outcome is RunOutcome.SUCCESS
    assert "brickwall-hosting.com (consecutive_failures)" in report.detail
    c = report.counters
    assert (c["claimed"], c["failed"], c["released"], c["ok"]) == (13, 3, 5, 5)
    assert report.coverage_gaps == 3 + 5  # failed, or due and not reached
    # The five unreached sensors wait, unclaimed and still due, for the next run.
    unreached = [i for i in wall if runtime.store.sensor(i)["last_fetched_at"] is None]
    assert len(unreached) == 5 and _unclaimed_and_due(runtime, unreached)
    assert all(runtime.store.sensor(i)["claimed_at"] is None for i in load)


def test_a_tick_that_only_meets_a_blocking_site_stops_on_its_rule_and_fails(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, **RULES)
    add_sensors(runtime, WALL, 6)
    report = run_tick(runtime).report
    assert report.stop is Stop.CONSECUTIVE_FAILURES
    assert report.outcome is RunOutcome.FAILED  # nothing succeeded, failures remain
    assert len(page_requests(web, "brickwall-hosting.com")) == 3


def test_the_error_rate_rule_stops_a_blocking_domain_after_its_minimum(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(
        database_url,
        **FAST,
        fetch_concurrency=1,
        max_consecutive_failures=100,
        max_error_rate=0.5,
        min_requests_for_error_rate=4,
    )
    add_sensors(runtime, WALL, 9)
    report = run_tick(runtime).report
    assert report.stop is Stop.ERROR_RATE and report.outcome is RunOutcome.FAILED
    assert len(page_requests(web, "brickwall-hosting.com")) == 4


def test_max_requests_counts_every_request_and_releases_the_rest(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, fetch_concurrency=1)
    ids = add_sensors(runtime, LOAD, 10)
    report = run_tick(runtime, control=RunControl(max_requests=4)).report
    sent = [r for r in web.requests if r.host == "swarm-load.com"]  # robots.txt included
    assert len(sent) == report.counters["requests"] == 4
    assert report.stop is Stop.MAX_REQUESTS and report.outcome is RunOutcome.SUCCESS
    assert report.detail == "Reached max requests limit (4)"
    ran = [i for i in ids if runtime.store.sensor(i)["last_fetched_at"] is not None]
    rest = [i for i in ids if i not in ran]
    assert len(ran) == len(page_requests(web, "swarm-load.com"))
    assert report.counters["released"] == len(rest) > 0 and _unclaimed_and_due(runtime, rest)


def test_workers_that_wait_on_the_budget_are_woken_when_it_runs_out(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    """Four at once under a budget of four requests: the first answers leave the budget to
    the runs still under way, so their workers wait; the last run spends it, and the tick
    stops and ends (a waiting worker told nothing would keep it open for ever: the tick
    runs in a thread here, so that the test fails instead of hanging)."""
    runtime = make_runtime(database_url, **FAST, fetch_concurrency=4)
    ids = add_sensors(runtime, LOAD, 10)
    reports = []
    tick = threading.Thread(
        target=lambda: reports.append(run_tick(runtime, control=RunControl(max_requests=4))),
        daemon=True,
    )
    tick.start()
    tick.join(60)
    assert not tick.is_alive(), "the tick never ended: a worker waiting on the budget slept on"
    report = reports[0].report
    assert report.stop is Stop.MAX_REQUESTS and report.detail == "Reached max requests limit (4)"
    ran = [i for i in ids if runtime.store.sensor(i)["last_fetched_at"] is not None]
    rest = [i for i in ids if i not in ran]
    assert len(ran) == len(page_requests(web, "swarm-load.com")) == 4  # none past the budget
    assert report.counters["released"] == 6 and _unclaimed_and_due(runtime, rest)


def test_a_signal_mid_tick_releases_what_waits_and_the_tick_is_interrupted(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, fetch_concurrency=1)
    ids = add_sensors(runtime, LOAD, 12)
    control = RunControl()
    done: list[int] = []

    def on_done(run) -> None:
        done.append(run.sensor_id)
        if len(done) == 3:
            control.request_stop("Interrupted by SIGTERM")

    result = run_tick(runtime, control=control, on_sensor_done=on_done)
    report = result.report
    assert report.stop is Stop.INTERRUPTED and report.detail == "Interrupted by SIGTERM"
    assert report.outcome is RunOutcome.PARTIAL  # interrupted after requests succeeded
    assert len(result.runs) == 3 and report.counters["released"] == 9
    rest = [i for i in ids if i not in done]
    assert _unclaimed_and_due(runtime, rest)


def test_the_deadline_cancels_in_flight_fetches_and_releases_their_claims(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, fetch_concurrency=2)
    company = add_sensors(runtime, LOAD, 0, name="Slow")  # the company only
    assert company == []
    slow = [
        catalog.add_sensor(
            runtime,
            company_id=runtime.store.company_by_name("Slow")["id"],
            surface="products",
            url=f"{LOAD}/stalled/{i}",
        )
        for i in range(4)
    ]
    started = time.monotonic()
    report = run_tick(runtime, control=RunControl(deadline_s=0.5)).report
    assert time.monotonic() - started < 6  # not held by the 10 s pages
    assert report.stop is Stop.INTERRUPTED
    assert report.detail == "Reached the deadline (0.5 s)"
    assert report.outcome is RunOutcome.FAILED  # nothing succeeded, gaps remain
    assert report.counters["released"] == 4 and report.coverage_gaps == 4
    assert _unclaimed_and_due(runtime, slow)


def test_a_tick_stopped_before_it_started_is_failed_not_started_and_writes_nothing(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST)
    ids = add_sensors(runtime, LOAD, 3)
    first = run_tick(runtime).report  # a run that did start
    state = Path(runtime.settings.state_dir)
    before = (state / ".last_run.json").read_text()
    runs_before = runtime.store.runs(limit=50)
    assert all(runtime.store.sensor(i)["last_fetched_at"] is not None for i in ids)
    web.clear_requests()

    control = RunControl(deadline_s=0)
    report = run_tick(runtime, control=control).report
    assert (report.stop, report.outcome, report.detail) == (
        Stop.INTERRUPTED,
        RunOutcome.FAILED,
        NOT_STARTED,
    )
    stopped = RunControl()
    stopped.request_stop("Interrupted by SIGINT")
    assert run_tick(runtime, control=stopped).report.detail == NOT_STARTED
    # Nothing written: no run row, .last_run.json still describes the last run that started.
    assert runtime.store.runs(limit=50) == runs_before
    assert (state / ".last_run.json").read_text() == before
    assert json.loads(before)["tick"]["run_id"] == first.run_id
    assert web.requests == []


def test_a_tick_whose_crawl_raises_stops_on_error_and_releases_its_claims(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, fetch_concurrency=1)
    ids = add_sensors(runtime, LOAD, 3)

    def boom(run) -> None:
        raise RuntimeError("the progress display broke")

    with pytest.raises(RuntimeError):
        run_tick(runtime, on_sensor_done=boom)
    [row] = runtime.store.runs(limit=1)
    assert (row["stop"], row["outcome"]) == ("error", "failed")
    assert row["detail"] == "RuntimeError: the progress display broke"
    assert all(runtime.store.sensor(i)["claimed_at"] is None for i in ids)
