"""`make reliability`: the heavier fault campaign, one table at the end.

kill -9 of a `catlas schedule`, of a site crawl and of a reprocess at random points (SQLite
and PostgreSQL), then a restart that must leave every run with a verdict, every
observation in the lake exactly once, no claim past its timeout, no page CRAWLING, no
object truncated (tests/chaos/invariants.py); the database connections cut and the S3
server stopped mid-run; a simulated day of 100,000 sensors over 2,000 fixture domains with
four workers on PostgreSQL; then the fuzz, hostile-page and stop suites with many more
examples. Not collected by pytest (no `test_` prefix).

Knobs: CATLAS_CHAOS_KILLS (kills per campaign), CATLAS_FLEET_SENSORS, CATLAS_FLEET_DOMAINS,
CATLAS_FLEET_ROUNDS, CATLAS_FUZZ_EXAMPLES."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: the repo root

from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from fixture_web import FixtureWeb
from tests.chaos import fleet
from tests.chaos.invariants import ZERO, measure
from tests.chaos.mesh_site import mesh_root
from tests.chaos.processes import catlas_env
from tests.chaos.test_killed_runs import PAGES, crawl_campaign, reprocess_campaign, watch_the_mesh
from tests.chaos.test_killed_runs import run as run_catlas

CATLAS = Path(sys.executable).with_name("catlas")
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
KILLS = int(os.environ.get("CATLAS_CHAOS_KILLS", "6"))
FLEET_SENSORS = int(os.environ.get("CATLAS_FLEET_SENSORS", "100000"))
FLEET_DOMAINS = int(os.environ.get("CATLAS_FLEET_DOMAINS", "2000"))
FLEET_ROUNDS = int(os.environ.get("CATLAS_FLEET_ROUNDS", "6"))


def _campaign(web: FixtureWeb, work: Path, database_url: str, totals: Counter[str]) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATLAS_")}
    env.update(
        CATLAS_STATE_DIR=str(work / "state"),
        CATLAS_DATABASE_URL=database_url,
        CATLAS_HOSTS=str(web.write_hosts_file(work / "hosts")),
        CATLAS_DOMAIN_SPACING_S="0",
        CATLAS_SCHEDULER_TICK_S="1",
    )
    runtime = Runtime(Settings.from_env(env))
    company = catalog.add_company(runtime, name="Load", website="http://swarm-load.com")
    for i in range(80):
        catalog.add_sensor(
            runtime, company_id=company, surface="products", url=f"http://swarm-load.com/load/{i}"
        )
    rng = random.Random(11)
    for _ in range(KILLS):
        proc = subprocess.Popen(
            [str(CATLAS), "schedule", "--no-onboarding"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(3.0, 9.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        totals["faults injected"] += 1
    done = subprocess.run(
        [str(CATLAS), "schedule", "--once"], env=env, capture_output=True, text=True, check=False
    )
    totals["runs survived"] += int("Traceback" not in done.stderr)
    totals["crashes"] += int("Traceback" in done.stderr)
    _check(runtime, totals)
    runtime.close()


def _check(runtime: Runtime, totals: Counter[str]) -> None:
    found = measure(runtime)
    totals["rows checked"] += found["rows checked"]
    for name in ZERO:
        totals[name] += found[name]


def _killed_crawls(web: FixtureWeb, work: Path, database_url: str, totals: Counter[str]) -> None:
    """kill -9 of site crawls, then of reprocess runs, each followed by a restart."""
    env = catlas_env(work, web, database_url, CATLAS_DOMAIN_CONCURRENCY="8")
    rng = random.Random(13)
    injected = crawl_campaign(web, env, KILLS, rng)
    runtime = Runtime(Settings.from_env(env))
    try:
        watch_the_mesh(runtime)
        ticked = run_catlas(env, "schedule", "--once")
        totals["crashes"] += int("Traceback" in ticked.stderr)
        injected += reprocess_campaign(env, KILLS, rng)
        totals["faults injected"] += injected
        totals["runs survived"] += 2  # the restarts: each asserted to end 0, no traceback
        _check(runtime, totals)
    finally:
        runtime.close()


def _with_database(run: Callable[[str], None]) -> None:
    name = f"catlas_chaos_{os.getpid()}"
    with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        run(f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}")
    finally:
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _fleet_day(totals: Counter[str]) -> None:
    with FixtureWeb(fleet=FLEET_DOMAINS) as web, tempfile.TemporaryDirectory() as tmp:

        def day(url: str) -> None:
            found = fleet.run_day(
                Path(tmp), web, url, count=FLEET_SENSORS, domains=FLEET_DOMAINS, workers=4,
                rounds=FLEET_ROUNDS,
            )  # fmt: skip
            totals["fleet sensors"] += FLEET_SENSORS
            totals["fleet domains"] += FLEET_DOMAINS
            totals["fleet pages fetched"] += found.fetched
            totals["rows lost"] += FLEET_SENSORS - found.fetched
            totals["double fetches"] += found.double_fetches
            totals["spacing violations"] += found.spacing_violations
            totals["spacing gaps across workers"] += found.cross_worker_gaps
            totals["peak RSS per worker (MiB)"] = round(max(found.peak_rss_mib))
            totals["rows checked"] += found.invariants["rows checked"]
            for name in ZERO:
                totals[name] += found.invariants[name]

        _with_database(day)


def _pytest(paths: list[str], totals: Counter[str], examples: int) -> int:
    """Run the suites; count a failing run as a crash. The tests that passed."""
    env = {**os.environ, "CATLAS_FUZZ_EXAMPLES": str(examples)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rf", "-p", "no:cacheprovider", *paths],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    totals["crashes"] += int(done.returncode != 0)
    totals["hangs"] += int("Timeout" in done.stdout)
    print(f"pytest {' '.join(paths)}: {last}", flush=True)
    for line in done.stdout.splitlines():
        if line.startswith("FAILED "):  # which test, so a failure can be run again alone
            print(f"  {line}", flush=True)
    passed = re.search(r"(\d+) passed", last)
    return int(passed.group(1)) if passed else 0


def main() -> None:
    totals: Counter[str] = Counter()
    with FixtureWeb() as web:
        with tempfile.TemporaryDirectory() as tmp:
            _campaign(web, Path(tmp), f"sqlite:///{tmp}/state.db", totals)
        with tempfile.TemporaryDirectory() as tmp:
            _with_database(lambda url: _campaign(web, Path(tmp), url, totals))
        forbidden = [r for r in web.requests if r.host in ("127.0.0.1", "localhost")]
        totals["forbidden requests"] += len(forbidden)
    with (
        tempfile.TemporaryDirectory() as tmp,
        FixtureWeb(root=mesh_root(Path(tmp) / "web", PAGES, 60)) as mesh,
    ):
        with tempfile.TemporaryDirectory() as work:
            _killed_crawls(mesh, Path(work), f"sqlite:///{work}/state.db", totals)
        with tempfile.TemporaryDirectory() as work:
            _with_database(lambda url: _killed_crawls(mesh, Path(work), url, totals))
    # Servers gone mid-run (cut database connections, a stopped S3 server): one fault each.
    survived = _pytest(["tests/chaos/test_servers_restarted.py"], totals, 0)
    totals["faults injected"] += survived
    totals["runs survived"] += survived
    _fleet_day(totals)
    examples = int(os.environ.get("CATLAS_FUZZ_EXAMPLES", "500"))
    _pytest(["tests/fuzz"], totals, examples)
    totals["bad inputs tried"] += examples * 21
    _pytest(
        [
            "tests/hostile",
            "tests/chaos",
            "tests/fetching/test_destination_spellings.py",
            "--ignore=tests/chaos/test_servers_restarted.py",
        ],
        totals,
        examples,
    )
    # The bad-input matrix through the real `catlas` script: one case per test.
    totals["bad inputs tried"] += _pytest(["tests/cli/test_cli_bad_input.py"], totals, examples)
    keys = ("faults injected", "runs survived", "rows checked", "rows lost", "duplicates",
            "runs without a verdict", "claims past their timeout", "pages left crawling",
            "objects truncated", "keys dangling", "temp files left", "fleet sensors",
            "fleet domains", "fleet pages fetched", "double fetches", "spacing violations",
            "spacing gaps across workers", "peak RSS per worker (MiB)", "bad inputs tried",
            "crashes", "hangs", "forbidden requests")  # fmt: skip
    width = max(len(k) for k in keys)
    print(f"{'measure':<{width}}  value")
    for key in keys:
        print(f"{key:<{width}}  {totals[key]}")
    bad = (*ZERO, "double fetches", "spacing violations", "spacing gaps across workers",
           "crashes", "hangs", "forbidden requests")  # fmt: skip
    sys.exit(1 if any(totals[k] for k in bad) else 0)


if __name__ == "__main__":
    main()
