"""Real `catlas` processes for the fault suites: their environment, and a kill -9 at a point
chosen from what the fixture server has seen (a random number of its requests)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from fixture_web import FixtureWeb

CATLAS = Path(sys.executable).with_name("catlas")
WAIT_S = 60.0


def catlas_env(tmp_path: Path, web: FixtureWeb, database_url: str, **extra: str) -> dict[str, str]:
    """The environment of a `catlas` process on this state and the fixture web."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATLAS_")}
    env.update(
        CATLAS_STATE_DIR=str(tmp_path / "state"),
        CATLAS_DATABASE_URL=database_url,
        CATLAS_HOSTS=str(web.write_hosts_file(tmp_path / "hosts")),
        CATLAS_DOMAIN_SPACING_S="0",
        CATLAS_FETCH_RETRIES="0",
        CATLAS_SCHEDULER_TICK_S="1",
    )
    env.update(extra)
    return env


def start(env: dict[str, str], *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [str(CATLAS), *args],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(CATLAS), *args], env=env, capture_output=True, text=True, timeout=300, check=False
    )


def kill_when(proc: subprocess.Popen[str], ready: Callable[[], bool], pause: float = 0.0) -> bool:
    """SIGKILL `proc` `pause` seconds after `ready()` holds; False when it ended first."""
    deadline = time.monotonic() + WAIT_S
    while not ready():
        if proc.poll() is not None:
            proc.communicate()
            return False
        assert time.monotonic() < deadline, "the process never reached the kill point"
        time.sleep(0.01)
    time.sleep(pause)
    if proc.poll() is not None:
        proc.communicate()
        return False
    proc.send_signal(signal.SIGKILL)  # no cleanup of any kind
    # Not reaped first: its parser processes, which hold its pipes, must see it dead (a
    # zombie) and exit on their own, or this waits for ever.
    proc.communicate(timeout=WAIT_S)
    return True
