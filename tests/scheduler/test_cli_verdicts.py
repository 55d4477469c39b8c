"""The verdict as a shell sees it: exit codes and --fail-when, .last_run.json per run kind,
"Not started", the held SQLite storage lock, report --stale-after, stats-crawl, SIGTERM."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from datetime import timedelta
from pathlib import Path

import pytest

from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.clock import VirtualClock
from resources.state.scheduler_lock import scheduler_lock
from tests.cli.cli_harness import CATLAS, Catlas, assert_no_traceback, db_rows, iso, table_rows
from tests.scheduler.helpers import FAST, LOAD, WALL, add_sensors, page_requests

FAST_ENV = {f"CATLAS_{k.upper()}": str(v) for k, v in FAST.items()}
LAST_RUN_FIELDS = {
    "run_id",
    "kind",
    "stop",
    "outcome",
    "detail",
    "started_at",
    "completed_at",
    "counters",
    "coverage_gaps",
    "empty_streak",
}


@pytest.fixture
def state(tmp_path: Path) -> Path:
    return tmp_path / ".catlas"


@pytest.fixture
def cli(tmp_path: Path, web: FixtureWeb) -> Catlas:
    hosts = web.write_hosts_file(tmp_path / "fixture-hosts")
    return Catlas(
        tmp_path,
        {
            "CATLAS_HOSTS": str(hosts),
            "CATLAS_NOW": iso(DEFAULT_NOW),
            "CATLAS_FETCH_RETRIES": "0",
            **FAST_ENV,
        },
    )


def seed(state: Path, web: FixtureWeb, *sites: tuple[str, int]) -> list[int]:
    settings = Settings(
        state_dir=str(state), hosts=str(web.write_hosts_file(state.parent / "fixture-hosts"))
    )
    runtime = Runtime(settings, clock=VirtualClock(DEFAULT_NOW), rng=random.Random(7))
    try:
        return [i for site, n in sites for i in add_sensors(runtime, site, n)]
    finally:
        runtime.close()


def test_a_successful_tick_exits_0_and_a_failed_one_exits_1_unless_fail_when_never(
    cli: Catlas, state: Path, web: FixtureWeb
) -> None:
    seed(state, web, (LOAD, 3))
    ok = cli.run("schedule", "--once")
    assert ok.code == 0 and "verdict: success" in ok.out, str(ok)

    seed(state, web, (WALL, 2))
    later = iso(DEFAULT_NOW + timedelta(minutes=1))
    failed = cli.run("schedule", "--once", CATLAS_NOW=later)  # only the wall is due
    assert_no_traceback(failed)
    assert failed.code == 1 and "verdict: failed" in failed.out, str(failed)
    assert failed.err == ""
    again = cli.run("schedule", "--once", "--fail-when", "never", CATLAS_NOW=later)
    assert again.code == 0, str(again)


def test_fail_when_any_all_never_over_a_daemons_runs(
    cli: Catlas, state: Path, web: FixtureWeb
) -> None:
    seed(state, web, (WALL, 2))
    env = {"CATLAS_SCHEDULER_TICK_S": "1"}
    runs = {}
    for mode, code in (("any", 1), ("all", 0), ("never", 0)):
        # First tick: the wall fails (failed); then idle ticks (success); lifetime: failed.
        result = cli.run(
            "schedule", "--no-onboarding", "--deadline", "1.5s", "--fail-when", mode, **env
        )
        assert_no_traceback(result)
        assert result.code == code, str(result)
        runs[mode] = result
    assert "daemon" in runs["any"].out and "verdict: failed" in runs["any"].out


def test_last_run_json_mirrors_each_kind_and_agrees_with_report(
    cli: Catlas, state: Path, web: FixtureWeb
) -> None:
    [sensor, *_] = seed(state, web, (LOAD, 2))
    cli.ok("schedule", "--once")
    cli.run("run-sensor", str(sensor), "--force")
    last = json.loads((state / ".last_run.json").read_text())
    assert set(last) >= {"tick", "sensor"}
    for kind in ("tick", "sensor"):
        assert set(last[kind]) >= LAST_RUN_FIELDS, last[kind]
        assert last[kind]["kind"] == kind
    rows = {r["run"]: r for r in table_rows(cli.ok("report").out)}
    for kind in ("tick", "sensor"):
        row = rows[last[kind]["run_id"]]
        assert (row["kind"], row["stop"], row["outcome"], row["gaps"], row["streak"]) == (
            kind,
            last[kind]["stop"],
            last[kind]["outcome"],
            str(last[kind]["coverage_gaps"]),
            str(last[kind]["empty_streak"]),
        )
    assert last["tick"]["counters"]["claimed"] == 2


def test_a_run_stopped_before_it_started_reports_not_started_and_writes_nothing(
    cli: Catlas, state: Path, web: FixtureWeb
) -> None:
    seed(state, web, (LOAD, 2))
    cli.ok("schedule", "--once")
    before = (state / ".last_run.json").read_text()
    runs = db_rows(state, "SELECT count(*) FROM crawl_runs")
    web.clear_requests()
    later = iso(DEFAULT_NOW + timedelta(days=3))  # everything is due again
    for args in (("schedule", "--once"), ("schedule",), ("run-sensor", "1")):
        result = cli.run(*args, "--deadline", "0", CATLAS_NOW=later)
        assert_no_traceback(result)
        assert result.code == 1, str(result)
        assert "Not started" in result.out and "verdict: failed" in result.out
    assert (state / ".last_run.json").read_text() == before
    assert db_rows(state, "SELECT count(*) FROM crawl_runs") == runs
    assert web.requests == []


def test_a_second_scheduler_on_the_same_sqlite_file_is_refused_naming_it(
    cli: Catlas, state: Path, web: FixtureWeb
) -> None:
    seed(state, web, (LOAD, 2))
    db = state / "state.db"
    runs = db_rows(state, "SELECT count(*) FROM crawl_runs")
    with scheduler_lock(f"sqlite:///{db}"):
        for args in (("schedule", "--once"), ("schedule", "--no-onboarding")):
            result = cli.run(*args, "--deadline", "5s")
            assert_no_traceback(result)
            assert result.code == 1, str(result)
            assert "stop: error" in result.out and str(db) in result.out.replace("\n", "")
    assert not (state / ".last_run.json").exists()
    assert db_rows(state, "SELECT count(*) FROM crawl_runs") == runs
    assert db_rows(state, "SELECT count(*) FROM sensors WHERE claimed_at IS NOT NULL") == [(0,)]
    assert web.requests == []
    cli.ok("schedule", "--once")  # the lock is free again


def test_report_stale_after_lists_what_was_not_productive_for_n_runs(
    cli: Catlas, state: Path, web: FixtureWeb
) -> None:
    [wall, _] = seed(state, web, (WALL, 2))
    for days in (0, 2, 5):  # three ticks, each only meeting the blocking site
        cli.run("schedule", "--once", CATLAS_NOW=iso(DEFAULT_NOW + timedelta(days=days)))
    out = cli.ok("report", "--stale-after", "3").out
    assert "run kinds not productive for 3 runs in a row: 1" in out
    assert "sensors not productive for 3 runs in a row: 2" in out
    assert f"│ {wall} " in out
    none = cli.ok("report", "--stale-after", "4").out
    assert "run kinds not productive for 4 runs in a row: 0" in none


def test_stats_crawl_prints_throughput_outcomes_failing_and_backlog(
    cli: Catlas, state: Path, web: FixtureWeb
) -> None:
    seed(state, web, (LOAD, 3), (WALL, 1))
    cli.run("schedule", "--once")
    stats = json.loads(cli.ok("stats-crawl", "--json").out)
    assert stats["ticks"] == 1 and stats["sensor_runs"] == 4
    assert stats["outcomes"]["ok"] == 3 and stats["outcomes"]["failed"] == 1
    assert stats["due_backlog"] == 0 and stats["sensors"] == 4
    later = json.loads(
        cli.ok("stats-crawl", "--json", CATLAS_NOW=iso(DEFAULT_NOW + timedelta(days=9))).out
    )
    assert later["due_backlog"] == 4 and later["oldest_due_lag_s"] > 0
    assert "due_backlog" in cli.ok("stats-crawl").out


def test_sigterm_lets_in_flight_sensors_finish_releases_the_rest_and_exits_cleanly(
    tmp_path: Path, state: Path, web: FixtureWeb
) -> None:
    settings = Settings(state_dir=str(state), hosts=str(web.write_hosts_file(tmp_path / "h")))
    runtime = Runtime(settings, clock=VirtualClock(DEFAULT_NOW), rng=random.Random(7))
    company = add_sensors(runtime, LOAD, 0, name="Slow")
    assert company == []
    from catlas_assets.services import catalog

    company_id = runtime.store.company_by_name("Slow")["id"]
    for i in range(6):
        catalog.add_sensor(
            runtime, company_id=company_id, surface="products", url=f"{LOAD}/slow/{i}"
        )
    runtime.close()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("CATLAS_")},
        "CATLAS_HOSTS": str(tmp_path / "h"),
        "CATLAS_NOW": iso(DEFAULT_NOW),
        "CATLAS_FETCH_CONCURRENCY": "2",
        "CATLAS_FETCH_RETRIES": "0",
        "COLUMNS": "250",
        **FAST_ENV,
    }
    daemon = subprocess.Popen(
        [str(CATLAS), "schedule", "--no-onboarding"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        # robots.txt is logged at once; the slow pages are logged when answered (3 s later).
        while not any(r.host == "swarm-load.com" for r in web.requests):
            assert time.monotonic() < deadline and daemon.poll() is None
            time.sleep(0.05)
        time.sleep(0.5)  # the first two slow pages are in flight now
        assert page_requests(web, "swarm-load.com") == []
        daemon.send_signal(signal.SIGTERM)
        out, err = daemon.communicate(timeout=30)
    finally:
        if daemon.poll() is None:
            daemon.kill()
    assert "Traceback" not in err, err
    assert daemon.returncode == 0, out + err  # interrupted after successes: partial
    assert "stop: interrupted - Interrupted by SIGTERM" in out
    fetched = db_rows(state, "SELECT count(*) FROM sensors WHERE last_fetched_at IS NOT NULL")
    assert fetched == [(2,)]  # the two in flight finished and were committed
    assert db_rows(state, "SELECT count(*) FROM sensors WHERE claimed_at IS NOT NULL") == [(0,)]
    assert len(page_requests(web, "swarm-load.com")) == 2
    kinds = dict(db_rows(state, "SELECT kind, outcome FROM crawl_runs"))
    assert kinds == {"tick": "partial", "daemon": "partial"}
