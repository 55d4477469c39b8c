"""`make reliability`: the heavier fault campaign, one table at the end.

kill -9 of a `catlas schedule` subprocess at random points (SQLite and PostgreSQL), then a
restart that must leave every run with a verdict, every observation in the lake exactly
once and the counters equal to what reached the lake; then the fuzz, hostile-page and
stop suites with many more examples. Not collected by pytest (no `test_` prefix)."""

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
from pathlib import Path

import psycopg

from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from fixture_web import FixtureWeb

CATLAS = Path(sys.executable).with_name("catlas")
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
KILLS = int(os.environ.get("CATLAS_CHAOS_KILLS", "6"))
COUNTED = ("ok", "changed", "unchanged", "not_modified", "failed", "redirected")


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
    runs = runtime.store.runs(limit=100_000)
    totals["runs without a verdict"] += sum(1 for r in runs if r["completed_at"] is None)
    con = runtime.lake.connect()
    rows = con.execute(
        "SELECT run_id, count(*), count(DISTINCT observation_id) FROM observations GROUP BY run_id"
    ).fetchall()
    con.close()
    in_lake = {run_id: n for run_id, n, _ in rows}
    totals["rows checked"] += sum(in_lake.values())
    totals["duplicates"] += sum(n - distinct for _, n, distinct in rows)
    for run in runs:
        if run["kind"] != "tick" or run["completed_at"] is None:
            continue
        claimed = sum(int(run[k] or 0) for k in COUNTED)
        totals["rows lost"] += max(0, claimed - in_lake.get(run["id"], 0))
    totals["rows lost"] += runtime.store.outbox_size()


def _pytest(paths: list[str], totals: Counter[str], examples: int) -> int:
    """Run the suites; count a failing run as a crash. The tests that passed."""
    env = {**os.environ, "CATLAS_FUZZ_EXAMPLES": str(examples)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *paths],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    last = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else ""
    totals["crashes"] += int(done.returncode != 0)
    totals["hangs"] += int("Timeout" in done.stdout)
    print(f"pytest {' '.join(paths)}: {last}", flush=True)
    passed = re.search(r"(\d+) passed", last)
    return int(passed.group(1)) if passed else 0


def main() -> None:
    totals: Counter[str] = Counter()
    with FixtureWeb() as web:
        with tempfile.TemporaryDirectory() as tmp:
            _campaign(web, Path(tmp), f"sqlite:///{tmp}/state.db", totals)
        name = f"catlas_chaos_{os.getpid()}"
        with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}"')
        try:
            with tempfile.TemporaryDirectory() as tmp:
                url = f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
                _campaign(web, Path(tmp), url, totals)
        finally:
            with psycopg.connect(PG_ADMIN, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        forbidden = [r for r in web.requests if r.host in ("127.0.0.1", "localhost")]
        totals["forbidden requests"] += len(forbidden)
    examples = int(os.environ.get("CATLAS_FUZZ_EXAMPLES", "500"))
    _pytest(["tests/fuzz"], totals, examples)
    totals["bad inputs tried"] += examples * 21
    _pytest(
        ["tests/hostile", "tests/chaos", "tests/fetching/test_destination_spellings.py"],
        totals,
        examples,
    )
    # The bad-input matrix through the real `catlas` script: one case per test.
    totals["bad inputs tried"] += _pytest(["tests/cli/test_cli_bad_input.py"], totals, examples)
    keys = ("faults injected", "runs survived", "rows checked", "rows lost", "duplicates",
            "runs without a verdict", "bad inputs tried", "crashes", "hangs",
            "forbidden requests")  # fmt: skip
    width = max(len(k) for k in keys)
    print(f"{'measure':<{width}}  value")
    for key in keys:
        print(f"{key:<{width}}  {totals[key]}")
    bad = ("rows lost", "duplicates", "runs without a verdict", "crashes", "hangs",
           "forbidden requests")  # fmt: skip
    sys.exit(1 if any(totals[k] for k in bad) else 0)


if __name__ == "__main__":
    main()
