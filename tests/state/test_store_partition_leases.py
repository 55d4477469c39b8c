"""Lake partition leases in the state store: one holder at a time, a dead one replaced."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from catlas_assets.errors import StorageError
from resources.state.leases import Leases
from resources.state.partition_leases import PartitionLeases
from resources.state.schema import task_leases
from resources.state.store import StateStore

NAME = "lake:0:snapshots/date=2026-01-05/hour=08"


def test_a_second_holder_waits_for_the_first(database_url: str) -> None:
    store = StateStore.open(database_url)
    first = PartitionLeases(lambda: store.engine, "host:1")
    second = PartitionLeases(lambda: store.engine, "host:2")
    order: list[str] = []
    held = threading.Event()

    def hold_a_while() -> None:
        with first.hold(NAME):
            held.set()
            order.append("first in")
            time.sleep(0.3)
            order.append("first out")

    thread = threading.Thread(target=hold_a_while)
    thread.start()
    held.wait(10)
    with second.hold(NAME):
        order.append("second in")
    thread.join(10)
    assert order == ["first in", "first out", "second in"]
    # Released leases leave no row behind: one per table-hour would pile up.
    with store.engine.connect() as conn:
        assert conn.execute(select(task_leases.c.name)).all() == []


def test_a_killed_local_holder_is_replaced_at_once(database_url: str) -> None:
    store = StateStore.open(database_url)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    holder = f"{socket.gethostname()}:{dead.pid}/feed"
    now = datetime.now(UTC)
    assert Leases(store.engine).acquire(NAME, holder, now=now, ttl_s=900)
    leases = PartitionLeases(lambda: store.engine, "host:2", wait_s=30)
    started = time.monotonic()
    with leases.hold(NAME):
        pass
    assert time.monotonic() - started < 10  # not the 30 s of waiting


def test_a_live_remote_holder_makes_the_wait_give_up(database_url: str) -> None:
    store = StateStore.open(database_url)
    assert Leases(store.engine).acquire(NAME, "elsewhere:1/feed", now=datetime.now(UTC), ttl_s=900)
    leases = PartitionLeases(lambda: store.engine, "host:2", wait_s=0.3)
    with pytest.raises(StorageError, match="still held by elsewhere:1/feed"), leases.hold(NAME):
        pass


def test_a_lease_lost_by_expiry_stops_the_holder_before_its_next_write(
    database_url: str,
) -> None:
    store = StateStore.open(database_url)
    leases = PartitionLeases(lambda: store.engine, "host:1")
    with leases.hold(NAME) as confirm:
        confirm()  # held: renews
        with store.engine.begin() as conn:  # a pause longer than the lease's life
            conn.execute(
                update(task_leases).values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
            )
        with pytest.raises(StorageError, match="lost the lease"):
            confirm()
