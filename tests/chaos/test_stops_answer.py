"""A worker always answers --deadline and SIGTERM: a real `catlas schedule` subprocess over a
site whose robots.txt made a backtracking matcher run for minutes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from catlas_assets.services import catalog
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings
from fixture_web import FixtureWeb

CATLAS = Path(sys.executable).with_name("catlas")
HOST = "slow-robots.com"
# Far more than any stop takes; a hang (the old matcher) would hit it and fail the test.
HANG_S = 90


@pytest.fixture(scope="module")
def slow_web(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FixtureWeb]:
    root = tmp_path_factory.mktemp("slow-web")
    site = root / HOST
    site.mkdir()
    rules = "\n".join(f"Disallow: /*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b{i}" for i in range(20))
    (site / "robots.txt").write_text(f"User-agent: *\n{rules}\n")
    (site / "_site.toml").write_text(
        '[[route]]\npath = "/*"\nstatus = 200\ndelay_ms = 300\nbody = "<p>slow</p>"\n'
    )
    with FixtureWeb(root=root) as web:
        yield web


def _env(slow_web: FixtureWeb, tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATLAS_")}
    env.update(
        CATLAS_STATE_DIR=str(tmp_path / "state"),
        CATLAS_HOSTS=str(slow_web.write_hosts_file(tmp_path / "hosts")),
        CATLAS_DOMAIN_SPACING_S="0",
        CATLAS_SCHEDULER_TICK_S="1",
    )
    settings = Settings.from_env(env)
    runtime = Runtime(settings)
    try:
        company = catalog.add_company(runtime, name="Slow", website=f"http://{HOST}")
        for i in range(60):
            catalog.add_sensor(
                runtime, company_id=company, surface="products", url=f"http://{HOST}/{'a' * 40}{i}"
            )
    finally:
        runtime.close()
    return env


def test_sigterm_stops_a_daemon_over_a_hostile_robots_txt(slow_web, tmp_path: Path) -> None:
    env = _env(slow_web, tmp_path)
    proc = subprocess.Popen(
        [str(CATLAS), "schedule", "--no-onboarding"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # The first request reached the server: the tick is running.
    while not any(r.host == HOST and r.path != "/robots.txt" for r in slow_web.requests):
        assert proc.poll() is None, proc.communicate()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=HANG_S)
    assert "Traceback" not in err
    assert "interrupted" in out  # the tick and the daemon got their verdict


def test_the_deadline_stops_a_tick_over_a_hostile_robots_txt(slow_web, tmp_path: Path) -> None:
    env = _env(slow_web, tmp_path)
    done = subprocess.run(
        [str(CATLAS), "schedule", "--once", "--deadline", "2"],
        env=env,
        capture_output=True,
        text=True,
        timeout=HANG_S,
        check=False,
    )
    assert "Traceback" not in done.stderr
    assert "interrupted" in done.stdout + done.stderr, done
