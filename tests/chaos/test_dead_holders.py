"""What a killed process leaves is recognised as dead: a zombie (killed, not yet reaped) is
not alive, and a task lease it held is taken over at once instead of after its TTL."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

from catlas_assets.services import periodic
from resources.process_alive import alive, local_worker_gone
from resources.state.leases import Leases
from tests.chaos.test_dead_runs import _dead_pid


def test_a_killed_child_not_yet_reaped_is_dead() -> None:
    child = subprocess.Popen(["sleep", "60"])
    try:
        assert alive(child.pid)
        child.kill()
        deadline = time.monotonic() + 10
        while Path(f"/proc/{child.pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z":
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert not alive(child.pid)  # a zombie: its parent (this test) has not reaped it
    finally:
        child.wait()
    assert alive(os.getpid())


def test_only_this_hosts_workers_are_judged() -> None:
    host = socket.gethostname()
    assert local_worker_gone(f"{host}:{_dead_pid()}") is True
    assert local_worker_gone(f"{host}:{os.getpid()}") is False
    assert local_worker_gone("elsewhere:12") is None and local_worker_gone(None) is None


def test_a_lease_held_by_a_dead_process_is_taken_over_at_once(make_runtime) -> None:
    runtime = make_runtime()
    dead = f"{socket.gethostname()}:{_dead_pid()}"
    leases = Leases(runtime.store.engine)
    assert leases.acquire("lake_compaction", dead, now=runtime.clock.now(), ttl_s=3600)

    started = time.monotonic()
    with periodic.leased(runtime, "lake_compaction", wait_s=30):
        assert (leases.get("lake_compaction") or {})["holder"] == runtime.worker
    assert time.monotonic() - started < 15  # not the TTL, not the 30 s of waiting
