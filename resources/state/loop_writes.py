"""A short state write from an event loop: on the loop's own thread when SQLite's write lock
is free, else in a thread that waits for it.

A write in a thread takes turns with the loop on the interpreter lock while it holds the
state file's write lock. On a tick of 2,000 304s in two lanes, the lanes' writes (group
commits, budget leases) held the file for most of the tick, ~40 % of that time waiting for
the interpreter, and the other lane waited for the file. On the loop a write costs the loop
its own CPU (a few ms for a group of runs) and never waits for another writer: a lock that
is taken is tried again every `RETRY_S` (another writer's transaction takes a few ms) for
`PATIENCE_S`, the loop going on meanwhile, then the write waits for it in a thread.
PostgreSQL writes always go to a thread: their statements go over the network and may wait
for other workers' row locks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from resources.state.writer_queue import WriterBusy

if TYPE_CHECKING:  # the store brings SQLAlchemy: its callers have it already
    from resources.state.store import StateStore

T = TypeVar("T")

RETRY_S = 0.001
PATIENCE_S = 0.05


async def write_from_loop(store: StateStore, write: Callable[[bool], T]) -> T:
    """`write(wait)`: one write transaction of `store`, begun with `wait` (see
    `StateStore.transaction`); with `wait=False` it raises `WriterBusy` having written
    nothing."""
    if store.is_postgres:
        return await asyncio.to_thread(write, True)
    loop = asyncio.get_running_loop()
    until = loop.time() + PATIENCE_S
    while True:
        try:
            return write(False)
        except WriterBusy:
            if loop.time() >= until:
                break
        await asyncio.sleep(RETRY_S)
    return await asyncio.to_thread(write, True)
