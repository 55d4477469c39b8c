"""Several scheduler processes on one PostgreSQL database: every due sensor runs exactly
once, none twice, none lost; a worker killed with SIGKILL mid-tick is taken over after the
claim timeout without losing or duplicating anything in the lake.

The fixture server's request log is the witness of what was fetched; the lake (read back
with DuckDB) is the witness of what was stored.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import distinct, func, insert, select

from catlas_assets.services import lake_checks
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb
from resources.state.schema import archive_objects, sensors
from resources.state.store import StateStore
from tests.cli.cli_harness import iso
from tests.conftest import reset_postgres

SENSORS = 2000
KILLED_RUN_SENSORS = 600  # the takeover needs no more to show itself
CLAIM_TIMEOUT_S = 900
WORKER = """
import sys
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import run_tick
from catlas_assets.settings import Settings

runtime = Runtime(Settings.from_env())
while True:  # tick until this worker finds nothing left to claim
    report = run_tick(runtime).report
    print(report.summary_line, flush=True)
    if report.counters["claimed"] == 0:
        break
runtime.close()
"""


@pytest.fixture
def pg(postgres_database: str) -> Iterator[str]:
    reset_postgres(postgres_database)
    yield postgres_database


def seed(url: str, count: int = SENSORS) -> list[int]:
    """`count` due sensors on distinct paths of the load host (one bulk insert)."""
    store = StateStore.open(url)
    try:
        company = store.add_company(
            name="Swarm",
            website="http://swarm-load.com",
            domain="swarm-load.com",
            importance=0.5,
            tier=3,
            now=DEFAULT_NOW,
        )
        rows = [
            {
                "company_id": company,
                "surface": "products",
                "url": f"http://swarm-load.com/load/{i}",
                "connector": "generic_html",
                "status": "pending",
                "tier": "C",
                "base_interval_s": 86400,
                "current_interval_s": 86400,
                "next_run_at": DEFAULT_NOW,
                "priority": 0.5,
                "quality_score": 50.0,
                "config": {},
                "created_at": DEFAULT_NOW,
                "updated_at": DEFAULT_NOW,
            }
            for i in range(count)
        ]
        with store.engine.begin() as conn:
            conn.execute(insert(sensors), rows)
        return [r["id"] for r in store.list_sensors()]
    finally:
        store.close()


def worker_env(tmp_path: Path, web: FixtureWeb, url: str, name: str, **extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATLAS_")}
    env.update(
        CATLAS_DATABASE_URL=url,
        CATLAS_HOSTS=str(web.write_hosts_file(tmp_path / "hosts")),
        CATLAS_LAKE_URL=str(tmp_path / "lake"),  # one shared lake
        CATLAS_STATE_DIR=str(tmp_path / name),
        CATLAS_NOW=iso(DEFAULT_NOW),
        CATLAS_FETCH_CONCURRENCY="8",
        CATLAS_SCHEDULER_CLAIM_BATCH="200",
        CATLAS_CLAIM_TIMEOUT_S=str(CLAIM_TIMEOUT_S),
        CATLAS_DOMAIN_SPACING_S="0",
        CATLAS_DOMAIN_CONCURRENCY="64",
        CATLAS_DOMAIN_DAILY_BUDGET="1000000",
        CATLAS_FETCH_RETRIES="0",
    )
    env.update(extra)
    return env


def start(env: dict) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", WORKER],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def descendants(pid: int) -> set[int]:
    """The processes `pid` started, and theirs (Linux's /proc)."""
    found: set[int] = set()
    todo = [pid]
    while todo:
        for task in Path(f"/proc/{todo.pop()}/task").glob("*"):
            with contextlib.suppress(OSError):
                children = {int(c) for c in (task / "children").read_text().split()}
                todo.extend(children - found)
                found |= children
    return found


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True  # gone


def finish(workers: list[subprocess.Popen]) -> None:
    for w in workers:
        out, err = w.communicate(timeout=240)
        assert w.returncode == 0, out + err
        assert "Traceback" not in err, err


def load_paths(web: FixtureWeb) -> Counter[str]:
    return Counter(r.path for r in web.requests if r.path.startswith("/load/"))


def lake_observations(tmp_path: Path, url: str) -> Counter[int]:
    runtime = Runtime(Settings(database_url=url, lake_url=str(tmp_path / "lake")))
    try:
        rows = runtime.lake.connect().execute("SELECT sensor_id FROM observations").fetchall()
    finally:
        runtime.close()
    return Counter(r[0] for r in rows)


def archive_figures(tmp_path: Path, url: str) -> tuple[list[str], int, int]:
    """Keys lake rows name that the archive lacks; packs on disk; packs the index names."""
    runtime = Runtime(Settings(database_url=url, lake_url=str(tmp_path / "lake")))
    try:
        dangling = lake_checks.dangling_keys(runtime.lake, runtime.archive)
        with runtime.store.engine.connect() as conn:
            recorded = conn.execute(select(func.count(distinct(archive_objects.c.pack)))).scalar()
    finally:
        runtime.close()
    return dangling, len(list((tmp_path / "lake" / "packs").rglob("*.pack"))), int(recorded or 0)


def store_figures(url: str) -> tuple[int, int]:
    store = StateStore.open(url)
    try:
        rows = store.list_sensors()
    finally:
        store.close()
    fetched = sum(1 for r in rows if r["last_fetched_at"] is not None)
    claimed = sum(1 for r in rows if r["claimed_at"] is not None)
    return fetched, claimed


@pytest.mark.postgres
@pytest.mark.parametrize("processes", [2, 4])
def test_every_due_sensor_runs_exactly_once_across_worker_processes(
    tmp_path: Path, web: FixtureWeb, pg: str, processes: int
) -> None:
    ids = seed(pg)
    workers = [start(worker_env(tmp_path, web, pg, f"w{n}")) for n in range(processes)]
    finish(workers)

    fetched = load_paths(web)
    assert len(fetched) == SENSORS and set(fetched.values()) == {1}  # none twice, none lost
    assert lake_observations(tmp_path, pg) == Counter(dict.fromkeys(ids, 1))
    assert store_figures(pg) == (SENSORS, 0)  # all run, no claim left behind
    store = StateStore.open(pg)
    try:
        ticks = [r for r in store.runs(limit=500, kind="tick") if r["claimed"] > 0]
    finally:
        store.close()
    assert sum(r["claimed"] for r in ticks) == SENSORS
    assert len({r["worker"] for r in ticks}) == processes  # the work was shared


@pytest.mark.postgres
def test_a_killed_worker_is_taken_over_after_the_claim_timeout(
    tmp_path: Path, web: FixtureWeb, pg: str
) -> None:
    ids = seed(pg, KILLED_RUN_SENSORS)
    # Worker A claims half the sensors in one batch and works through them slowly.
    doomed = start(
        worker_env(
            tmp_path,
            web,
            pg,
            "a",
            CATLAS_SCHEDULER_CLAIM_BATCH=str(KILLED_RUN_SENSORS // 2),
            CATLAS_FETCH_CONCURRENCY="2",
            CATLAS_LANES="2",
            CATLAS_LANE_MIN_BATCH="1",
        )
    )
    deadline = time.monotonic() + 120
    while sum(load_paths(web).values()) < 60:
        assert time.monotonic() < deadline and doomed.poll() is None
        time.sleep(0.05)
    lanes = descendants(doomed.pid)
    doomed.kill()  # SIGKILL mid-tick: no cleanup of any kind
    doomed.wait(timeout=30)
    # Its lanes and their parsers see it gone and exit; none is left holding its sockets.
    assert len(lanes) >= 4  # two lanes, a parser each
    deadline = time.monotonic() + 30
    while left := {pid for pid in lanes if Path(f"/proc/{pid}").exists() and not _zombie(pid)}:
        assert time.monotonic() < deadline, f"still running after their tick died: {left}"
        time.sleep(0.1)
    fetched_by_a = set(load_paths(web))

    # Worker B, at the same instant, cannot take A's fresh claims: it runs the rest.
    finish([start(worker_env(tmp_path, web, pg, "b"))])
    fetched, claimed = store_figures(pg)
    assert 0 < claimed < KILLED_RUN_SENSORS // 2 + 1  # A's unfinished claims are still held
    assert fetched + claimed == KILLED_RUN_SENSORS

    # After the claim timeout, worker C takes A's claims over; nothing else is due yet.
    later = iso(DEFAULT_NOW + timedelta(seconds=CLAIM_TIMEOUT_S + 1))
    finish([start(worker_env(tmp_path, web, pg, "c", CATLAS_NOW=later))])

    assert store_figures(pg) == (KILLED_RUN_SENSORS, 0)
    requests = load_paths(web)
    assert len(requests) == KILLED_RUN_SENSORS  # none lost
    twice = {path for path, n in requests.items() if n > 1}
    assert set(requests.values()) <= {1, 2}
    assert twice <= fetched_by_a  # only A's uncommitted fetches were repeated
    # The lake: one observation per sensor, A's committed rows included, none duplicated.
    assert lake_observations(tmp_path, pg) == Counter(dict.fromkeys(ids, 1))
    # The archive: every key a lake row names is found (packs of A's runs killed before
    # their commit are on disk, named by no index row, and harm nothing).
    dangling, packs_on_disk, packs_recorded = archive_figures(tmp_path, pg)
    assert dangling == [] and packs_on_disk >= packs_recorded > 0
