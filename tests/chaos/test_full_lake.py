"""A full or read-only lake on a real run: stop `error`, outcome `failed`, one error line and
a non-zero exit; the committed rows wait in the outbox and reach the lake once it has room.
No temp file of an unfinished write survives: the next worker removes it.

The full disk is real: a 16 KiB tmpfs mounted over the lake folder in a private mount
namespace (`unshare -m`), so only the `catlas` process under test sees it. It holds the
run's four archived objects (a page each; one of them two runs share, written once) and
not its Parquet files.
"""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import time
from datetime import timedelta
from pathlib import Path

import pytest

from catlas_assets.services.dead_runs import remove_stale_tmp
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import run_tick
from fixture_web import DEFAULT_NOW
from resources.storage import TMP_FOLDER
from tests.chaos.test_dead_runs import _dead_pid
from tests.cli.cli_harness import CATLAS, iso
from tests.scheduler.helpers import FAST, LOAD, add_sensors


def _can_mount() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", "mount -t tmpfs -o size=4k tmpfs /mnt"],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


needs_mount = pytest.mark.skipif(not _can_mount(), reason="no private mount namespace here")


def _catlas_on_a_mounted_lake(
    runtime: Runtime, lake: Path, options: str, command: str = "schedule --once"
) -> tuple[int, str, str]:
    """`catlas COMMAND` with a tmpfs (`options`) over `lake`: exit code, stdout, and stderr
    followed by the temp files left in the lake (listed inside the namespace, before it goes)."""
    lake.mkdir(parents=True, exist_ok=True)
    script = (
        f"mount -t tmpfs -o {options} tmpfs {lake} || exit 99; "
        f"{CATLAS} {command}; code=$?; "
        f"find {lake} -name '*.tmp' >&2; exit $code"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("CATLAS_")}
    env.update(
        CATLAS_STATE_DIR=runtime.settings.state_dir,
        CATLAS_HOSTS=runtime.settings.hosts,
        CATLAS_LAKE_URL=str(lake),
        CATLAS_NOW=iso(DEFAULT_NOW + timedelta(hours=1)),
        CATLAS_DOMAIN_SPACING_S="0",
        CATLAS_SCHEDULER_TICK_S="1",
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    return done.returncode, done.stdout, done.stderr


def _rows(runtime: Runtime, query: str) -> list[tuple[object, ...]]:
    con = sqlite3.connect(Path(runtime.settings.state_dir) / "state.db")
    try:
        return con.execute(query).fetchall()
    finally:
        con.close()


@needs_mount
def test_a_full_lake_fails_the_run_and_keeps_the_rows_until_there_is_room(
    make_runtime, tmp_path: Path
) -> None:
    runtime = make_runtime(**FAST)
    add_sensors(runtime, LOAD, 3)
    runtime.close()
    lake = tmp_path / "lake"

    code, out, err = _catlas_on_a_mounted_lake(runtime, lake, "size=16k")

    assert code == 3, (out, err)
    [line] = err.splitlines()  # one error line and no temp file listed after it
    assert line.startswith("catlas: error: cannot write to the lake") and "No space" in line
    assert "Traceback" not in out + err
    [(stop, outcome, ok)] = _rows(runtime, "SELECT stop, outcome, ok FROM crawl_runs")
    assert (stop, outcome, ok) == ("error", "failed", 0)
    assert _rows(runtime, "SELECT count(*) FROM lake_outbox")[0][0] > 0

    # Room again (the plain folder): the next tick flushes what waited; nothing was lost.
    after = make_runtime(**FAST)
    run_tick(after)
    assert _rows(after, "SELECT count(*) FROM lake_outbox") == [(0,)]
    assert after.lake.read("observations").num_rows == 3


@needs_mount
def test_a_daemon_on_a_full_lake_stops_failed_and_exits_non_zero(
    make_runtime, tmp_path: Path
) -> None:
    runtime = make_runtime(**FAST)
    add_sensors(runtime, LOAD, 3)
    runtime.close()

    code, out, err = _catlas_on_a_mounted_lake(
        runtime, tmp_path / "lake", "size=16k", "schedule --deadline 60s --no-onboarding"
    )

    assert code == 1, (out, err)
    assert "Traceback" not in out + err and ".tmp" not in err
    daemon = _rows(runtime, "SELECT stop, outcome, detail FROM crawl_runs WHERE kind = 'daemon'")
    [(stop, outcome, detail)] = daemon
    assert (stop, outcome) == ("error", "failed") and "No space left" in str(detail)
    assert _rows(runtime, "SELECT count(*) FROM lake_outbox")[0][0] > 0


@needs_mount
def test_a_read_only_lake_refuses_the_run_before_it_claims_anything(
    make_runtime, tmp_path: Path
) -> None:
    runtime = make_runtime(**FAST)
    add_sensors(runtime, LOAD, 2)
    runtime.close()

    code, out, err = _catlas_on_a_mounted_lake(runtime, tmp_path / "lake", "ro")

    assert code == 3, (out, err)
    [line] = err.splitlines()
    assert "cannot write to the lake" in line and "Read-only" in line
    assert _rows(runtime, "SELECT count(*) FROM crawl_runs") == [(0,)]
    assert _rows(runtime, "SELECT count(*) FROM sensors WHERE claimed_by IS NOT NULL") == [(0,)]


def test_a_worker_removes_the_temp_files_of_writes_that_never_finished(make_runtime) -> None:
    runtime = make_runtime(**FAST)
    # Every write goes through the lake's one temp folder (no walk of the objects to find it).
    folder = Path(runtime.settings.resolved_lake_url) / TMP_FOLDER
    folder.mkdir(parents=True)
    host = socket.gethostname()
    dead = folder / f".abcd.zst.{host}~{_dead_pid()}.0123abcd.tmp"
    old = folder / ".abcd.zst.other-host~12.0123abcd.tmp"
    live = folder / f".abcd.zst.{host}~{os.getpid()}.0123abcd.tmp"  # a write in progress
    recent = folder / ".abcd.zst.other-host~13.0123abcd.tmp"
    for path in (dead, old, live, recent):
        path.write_bytes(b"half")
    hour_ago = time.time() - 3700
    os.utime(old, (hour_ago, hour_ago))

    run_tick(runtime)  # a worker's first tick

    assert sorted(p.name for p in folder.iterdir()) == sorted([live.name, recent.name])
    assert remove_stale_tmp(runtime) == []  # once per process: later ticks do not walk again
