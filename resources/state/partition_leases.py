"""Leases on lake partitions, in the state store every catlas process shares.

Compaction and reprocess both read, change and rewrite a partition's `_superseded.json`;
two processes doing so at once lose one's hides (rows shown twice) or show neither set.
The lake takes one lease per (table, partition) around each such change: the database
decides who has it, whatever the lake's backend (a folder or S3) and on SQLite or
PostgreSQL alike. A holder killed on this host is noticed at once; one on another host
holds the partition until its lease expires.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime

from sqlalchemy import Engine

from catlas_assets.errors import StorageError
from resources.process_alive import local_worker_gone
from resources.state.leases import Leases

# Long enough for one partition's merge between two renewals; a dead remote holder's
# partition waits that long.
LEASE_TTL_S = 900


class PartitionLeases:
    """`hold(name)` for `resources.lake.Lake`: the lease on one partition, waited for."""

    def __init__(
        self,
        engine: Callable[[], Engine],
        worker: str,
        *,
        ttl_s: int = LEASE_TTL_S,
        wait_s: float = 2.0 * LEASE_TTL_S,
    ) -> None:
        self._engine = engine  # opened on first use: a reading process needs no store
        self.worker = worker
        self.ttl_s = ttl_s
        self.wait_s = wait_s

    @contextmanager
    def hold(self, name: str) -> Iterator[Callable[[], None]]:
        """Hold lease `name` while the body runs; it gets a `confirm()` to call before each
        write that must not happen once the lease is lost (it renews the lease)."""
        leases = Leases(self._engine())
        # Unique per holding: two threads of one process exclude each other too; the
        # worker part (host:pid) before the slash tells whether a holder's process is gone.
        holder = f"{self.worker}/{secrets.token_hex(4)}"
        give_up = time.monotonic() + self.wait_s
        pause = 0.02
        while not leases.acquire(name, holder, now=_now(), ttl_s=self.ttl_s):
            held_by = str((leases.get(name) or {}).get("holder") or "")
            if held_by and local_worker_gone(held_by.partition("/")[0]):
                leases.drop(name, held_by)  # killed mid-swap: nobody else will release it
                continue
            if time.monotonic() >= give_up:
                raise StorageError(f"lake partition {name} is still held by {held_by}")
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

        def confirm() -> None:
            if not leases.renew(name, holder, now=_now(), ttl_s=self.ttl_s):
                raise StorageError(f"lost the lease on lake partition {name}")

        try:
            yield confirm
        finally:
            leases.drop(name, holder)


def _now() -> datetime:
    # Wall time, not the run's clock: a lease is about processes running now, and a frozen
    # clock would never let a dead holder's lease expire.
    return datetime.now(UTC)
