"""A tick claims its batch in two parts: the first (two sensors per run in flight) starts
running while the rest is claimed in a thread. Same results as one claim, in lanes and in
one process; the rest is released when the run stopped meanwhile, and a failing second
claim fails the tick with every claim released (real fixture web, SQLite and PostgreSQL)."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from catlas_assets.domain.pipeline_data import SensorState
from catlas_assets.domain.vocabulary import SensorStatus, Stop
from catlas_assets.errors import StorageError
from catlas_assets.services.lanes import deal
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import first_part, run_tick
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.clock import VirtualClock
from tests.scheduler.helpers import FAST, LOAD, add_sensors

SITES = ("http://swarm-load.com", "http://kestrel-labs.com", "http://brickwall-hosting.com")


def _sensor(i: int, domain: str) -> SensorState:
    return SensorState(
        id=i, company_id=1, surface="products", url=f"http://{domain}/{i}",
        connector="generic_html", status=SensorStatus.ACTIVE, base_interval_s=3600,
        current_interval_s=3600, quality_score=50.0, domain=domain,
    )  # fmt: skip


def test_the_rest_of_a_batch_is_dealt_onto_the_first_part() -> None:
    first = [_sensor(i, "a.com") for i in range(4)] + [_sensor(9, "b.com")]
    route = deal(first, 2)
    assert route == {"a.com": 0, "b.com": 1}
    rest = [_sensor(10 + i, d) for i, d in enumerate(["a.com"] * 3 + ["c.com"] * 2 + ["d.com"])]
    more = deal(rest, 2, route, [4, 1])
    # a.com keeps its lane (now 7 there); c.com (2) goes to the lighter lane 1, d.com too.
    assert more == {"a.com": 0, "b.com": 1, "c.com": 1, "d.com": 1}
    assert route == {"a.com": 0, "b.com": 1}  # the earlier deal is not changed in place


def test_the_first_part_is_two_sensors_for_each_run_in_flight() -> None:
    assert first_part(Settings().with_overrides(fetch_concurrency=16)) == 32
    assert first_part(Settings().with_overrides(fetch_concurrency=1)) == 2


def _runtime(tmp_path: Path, web: FixtureWeb, name: str, **overrides: object) -> Runtime:
    settings = Settings(
        state_dir=str(tmp_path / name),
        hosts=str(web.write_hosts_file(tmp_path / "hosts")),
        fetch_retries=0,
    ).with_overrides(**FAST, **overrides)
    return Runtime(settings, clock=VirtualClock(DEFAULT_NOW), rng=random.Random(7))


def _claims(runtime: Runtime) -> list[int]:
    """Record the limit of every claim the tick makes."""
    limits: list[int] = []
    claim = runtime.store.claim_due

    def recorded(**kwargs: Any) -> list[dict[str, Any]]:
        limits.append(kwargs["limit"])
        return claim(**kwargs)

    runtime.store.claim_due = recorded  # type: ignore[method-assign]
    return limits


@pytest.mark.parametrize("lanes", [0, 2])
def test_a_batch_claimed_in_parts_ends_as_one_claim_does(
    tmp_path: Path, web: FixtureWeb, lanes: int
) -> None:
    """Every sensor runs once and ends in the same state, next run included (the seeds are
    drawn in claim order, and the rest comes after the first part)."""
    finals = {}
    for name, concurrency in (("whole", 16), ("parts", 2)):
        runtime = _runtime(
            tmp_path, web, f"{name}-{lanes}", lanes=lanes, lane_min_batch=1,
            fetch_concurrency=concurrency,
        )  # fmt: skip
        try:
            for site in SITES:
                add_sensors(runtime, site, 6)
            limits = _claims(runtime)
            report = run_tick(runtime).report
            rows = [runtime.store.sensor(i) for i in range(1, 19)]
            assert all(r["claimed_at"] is None for r in rows)
            finals[name] = (
                {k: v for k, v in report.counters.items() if k != "tick_ms"},
                [(r["url"], r["status"], r["next_run_at"], r["normalized_hash"]) for r in rows],
                runtime.lake.connect().sql("SELECT count(*) FROM observations").fetchall(),
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
    claim = runtime.store.claim_due
    control = RunControl(deadline_s=0.5)

    def late(**kwargs: Any) -> list[dict[str, Any]]:
        if kwargs["limit"] != 2:  # the rest: claimed once the deadline has stopped the run
            while not control.deadline_passed():
                time.sleep(0.02)
            time.sleep(0.1)  # the watcher has seen it
        return claim(**kwargs)

    runtime.store.claim_due = late  # type: ignore[method-assign]
    report = run_tick(runtime, control=control).report

    assert report.stop is Stop.INTERRUPTED
    c = report.counters
    assert c["claimed"] == 6 and c["ok"] + c["released"] == 6 and c["ok"] <= 2
    rows = [runtime.store.sensor(i) for i in ids]
    assert all(r["claimed_at"] is None for r in rows)
    assert sum(r["last_fetched_at"] is None for r in rows) == c["released"] >= 4


def test_a_failing_claim_of_the_rest_fails_the_tick_and_releases_every_claim(
    make_runtime, web: FixtureWeb, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST, fetch_concurrency=1)
    ids = add_sensors(runtime, LOAD, 5)
    claim = runtime.store.claim_due
    calls: list[str] = []

    def broken(**kwargs: Any) -> list[dict[str, Any]]:
        calls.append(threading.current_thread().name)
        if kwargs["limit"] != 2:
            raise StorageError("the state database went away")
        return claim(**kwargs)

    runtime.store.claim_due = broken  # type: ignore[method-assign]
    with pytest.raises(StorageError, match="went away"):
        run_tick(runtime)

    assert calls[0] == "MainThread" and calls[1] != "MainThread"  # the rest, in a thread
    [row] = runtime.store.runs(limit=1)
    assert (row["stop"], row["outcome"]) == ("error", "failed")
    assert "the state database went away" in row["detail"]
    assert all(runtime.store.sensor(i)["claimed_at"] is None for i in ids)
