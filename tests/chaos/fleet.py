"""A simulated day of many sensors over many fixture domains, with several `catlas` worker
processes on one PostgreSQL database.

The sensors fall due spread over the day (interval one day); the workers run at a handful
of virtual instants of that day (CATLAS_NOW), each ticking until nothing is left to claim,
so every sensor is due exactly once. The fixture server's request log is the witness: no
page fetched twice, and no two requests to one domain closer than the spacing. Each worker
reports its peak RSS.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from sqlalchemy import insert

from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from fixture_web import DEFAULT_NOW, FixtureWeb, fleet_host
from resources.state.schema import sensors
from resources.state.store import StateStore
from tests.chaos.invariants import measure
from tests.cli.cli_harness import iso

SPACING_S = 0.5
# One request at a time, the next leaves a spacing after the last answer was read, which is
# after the server stamped its arrival: arrivals are a full spacing apart, whatever the
# load. The allowance is for the two clocks (the workers' wall clock, the log's monotonic).
JITTER_S = 0.002
WORKER = """
import resource
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import run_tick
from catlas_assets.settings import Settings

runtime = Runtime(Settings.from_env())
while run_tick(runtime).report.counters["claimed"]:
    pass  # tick until this worker finds nothing left to claim
runtime.close()
print(f"peak_rss_kib={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}", flush=True)
"""


@dataclass
class FleetDay:
    fetched: int
    double_fetches: int
    spacing_violations: int  # two requests of one worker process to one domain too close
    # The same between two worker processes: the domain's turns in the store space them
    # (the next request leaves only after the last one's answer, plus the spacing).
    cross_worker_gaps: int
    closest_gap_s: float
    peak_rss_mib: list[float]
    invariants: Counter[str]


def seed(url: str, count: int, domains: int, rounds: int) -> None:
    """`count` sensors over `domains` fleet domains, due spread over `rounds` instants."""
    store = StateStore.open(url)
    try:
        company = store.add_company(
            name="Fleet", website=f"http://{fleet_host(0)}", domain=fleet_host(0),
            importance=0.5, tier=3, now=DEFAULT_NOW,
        )  # fmt: skip
        rows = [
            {
                "company_id": company,
                "surface": "products",
                "url": f"http://{fleet_host(i % domains)}/load/{i}",
                "connector": "generic_html",
                "status": "pending",
                "tier": "C",
                "base_interval_s": 86400,
                "current_interval_s": 86400,
                "next_run_at": _instant(i % rounds, rounds),
                "priority": 0.5,
                "quality_score": 50.0,
                "config": {},
                "created_at": DEFAULT_NOW,
                "updated_at": DEFAULT_NOW,
            }
            for i in range(count)
        ]
        with store.engine.begin() as conn:
            for start in range(0, len(rows), 10_000):
                conn.execute(insert(sensors), rows[start : start + 10_000])
    finally:
        store.close()


# The rounds span 20 hours: a sensor fetched at the first one is due again at the earliest
# after 21.6 (a day less the schedule's 10 % jitter), so each is due once in the day.
DAY_SPAN = timedelta(hours=20)


def _instant(n: int, rounds: int) -> datetime:
    return DEFAULT_NOW + DAY_SPAN * n / max(1, rounds - 1)


def _env(tmp_path: Path, web: FixtureWeb, url: str, n: int, now: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATLAS_")}
    env.update(
        CATLAS_DATABASE_URL=url,
        CATLAS_HOSTS=str(tmp_path / "hosts"),
        CATLAS_LAKE_URL=str(tmp_path / "lake"),  # one shared lake
        CATLAS_STATE_DIR=str(tmp_path / f"w{n}"),
        CATLAS_NOW=now,
        CATLAS_FETCH_CONCURRENCY="16",
        CATLAS_SCHEDULER_CLAIM_BATCH="500",
        CATLAS_DOMAIN_SPACING_S=str(SPACING_S),
        CATLAS_DOMAIN_CONCURRENCY="1",
        CATLAS_DOMAIN_DAILY_BUDGET="1000000",
        CATLAS_FETCH_RETRIES="0",
        CATLAS_OBSERVE_WORKERS="0",  # four workers on a small machine: no parser pools
        CATLAS_LANES="0",  # and no lanes: the workers are the processes here
        # Each worker process signs its requests: the log tells whose spacing a gap broke.
        CATLAS_USER_AGENT=f"catlas-fleet-r{now}-w{n}",
    )
    return env


def run_day(
    tmp_path: Path, web: FixtureWeb, url: str, *, count: int, domains: int, workers: int,
    rounds: int,
) -> FleetDay:  # fmt: skip
    web.write_hosts_file(tmp_path / "hosts")
    seed(url, count, domains, rounds)
    rss: list[float] = []
    for n in range(rounds):
        now = _instant(n, rounds)
        web.set_now(now)
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", WORKER],
                env=_env(tmp_path, web, url, w, iso(now)),
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for w in range(workers)
        ]
        for proc in procs:
            out, err = proc.communicate(timeout=1800)
            assert proc.returncode == 0 and "Traceback" not in err, out + err
            peak = re.search(r"peak_rss_kib=(\d+)", out)
            assert peak is not None, out
            rss.append(int(peak.group(1)) / 1024)
    # One fetch per page and virtual instant: a later round may find a page due again.
    pages = Counter((r.host, r.path, r.at) for r in web.requests if r.path.startswith("/load/"))
    mine, everyone = _gaps(web, lambda r: (r.host, r.user_agent)), _gaps(web, lambda r: r.host)
    runtime = Runtime(Settings(database_url=url, lake_url=str(tmp_path / "lake")))
    try:
        invariants = measure(runtime)
    finally:
        runtime.close()
    return FleetDay(
        fetched=len({(host, path) for host, path, _ in pages}),
        double_fetches=sum(n - 1 for n in pages.values()),
        spacing_violations=_too_close(mine),
        cross_worker_gaps=_too_close(everyone) - _too_close(mine),
        closest_gap_s=min(mine, default=0.0),
        peak_rss_mib=rss,
        invariants=invariants,
    )


def _gaps(web: FixtureWeb, key) -> list[float]:  # type: ignore[no-untyped-def]
    """The gaps between consecutive requests of each `key` (real seconds, server side)."""
    times: dict[object, list[float]] = defaultdict(list)
    for r in web.requests:
        times[key(r)].append(r.received)
    return [b - a for seen in times.values() for a, b in itertools.pairwise(sorted(seen))]


def _too_close(gaps: list[float]) -> int:
    return sum(1 for g in gaps if g < SPACING_S - JITTER_S)
