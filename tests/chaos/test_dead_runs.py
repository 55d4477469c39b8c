"""Every run gets a verdict: a run left open by a process that died is closed by the next
worker, with the counters of what reached the lake (real fixture web, both backends)."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from dataclasses import replace

from catlas_assets.domain.vocabulary import RunKind, RunOutcome, Stop
from catlas_assets.services.claimed_work import run_claimed
from catlas_assets.services.dead_runs import DETAIL
from catlas_assets.services.pipeline import sensor_state
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runs import RunRecorder
from catlas_assets.services.tick import run_tick
from tests.scheduler.helpers import FAST, LOAD, add_sensors


def _dead_pid() -> int:
    done = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    )
    return int(done.stdout)


def test_a_run_left_open_by_a_dead_process_is_closed_with_what_reached_the_lake(
    make_runtime, database_url: str
) -> None:
    runtime = make_runtime(database_url, **FAST)
    add_sensors(runtime, LOAD, 4)
    # A worker of this host whose process is gone: it claimed, ran and committed, then died
    # before flushing the lake and before closing its run.
    dead = replace(runtime, worker=f"{socket.gethostname()}:{_dead_pid()}")
    recorder = RunRecorder(dead, RunKind.TICK)
    claimed = dead.store.claim_due(
        now=dead.clock.now(), worker=dead.worker, limit=10, claim_timeout_s=600
    )
    sensors = [sensor_state(row) for row in claimed]
    control = RunControl()
    done = asyncio.run(
        run_claimed(dead, sensors, recorder.run_id, control.guard(dead.settings), control)
    )
    assert len(done.runs) == 4 and dead.store.run(recorder.run_id)["completed_at"] is None

    report = run_tick(runtime).report  # the next worker's tick

    row = runtime.store.run(recorder.run_id)
    assert row["completed_at"] is not None
    assert row["stop"] == Stop.ERROR and row["detail"] == DETAIL
    assert row["outcome"] == RunOutcome.PARTIAL  # it did work before it died
    assert row["ok"] == 4  # the four observations it wrote, now in the lake
    assert runtime.store.open_runs() == []
    assert report.stop is Stop.QUEUE_EMPTY


def test_a_live_run_of_another_worker_is_left_open(make_runtime, database_url: str) -> None:
    runtime = make_runtime(database_url, **FAST)
    alive = replace(runtime, worker=f"{socket.gethostname()}:1")  # pid 1 is always alive
    recorder = RunRecorder(alive, RunKind.TICK)
    run_tick(runtime)
    assert runtime.store.run(recorder.run_id)["completed_at"] is None
