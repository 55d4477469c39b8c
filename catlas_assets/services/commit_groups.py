"""Group the commits of concurrent sensor runs: a batch of N runs or every M ms.

A run hands its writes to the committer and waits for its group's transaction; the
committer flushes when N runs are waiting, when every run in flight is waiting (none
could join the group before it is written, so waiting longer only adds latency), or M ms
after the first of them; one flush at a time (runs that finish during a flush form the
next group). With N = 1 every run commits alone, as `StateStore.commit_sensor_run` does.
The guarantees are the store's (`resources/state/group_commit.py`): nothing of a run
counts before its group commits.

A group is written on the event loop's own thread when SQLite's write lock is free, else in
a thread that waits for it (`resources/state/loop_writes.py`).

Connector stats are counters for people (`catlas connectors`), read by no decision, and
every run of a connector updates its one row: the committer holds them back and writes
them with the first group at least `STATS_EVERY_S` after the last write, and at its close.
A worker killed in between loses at most that long of them, never a run.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import datetime

from resources.state.group_commit import (
    ConnectorChange,
    RunCommit,
    commit_runs,
    record_stats,
    summed,
)
from resources.state.loop_writes import write_from_loop
from resources.state.store import StateStore

log = logging.getLogger(__name__)
# Connector stats written once a second a worker at most (a read-modify-write of the
# connector's row; a tick's groups were one each).
STATS_EVERY_S = 1.0


class GroupCommitter:
    def __init__(
        self,
        store: StateStore,
        *,
        max_runs: int,
        max_wait_ms: int,
        in_flight: Callable[[], int] | None = None,
    ) -> None:
        """`in_flight` counts the runs under way that may still hand a commit over (those
        waiting for one included)."""
        self._store = store
        self._max_runs = max(1, max_runs)
        self._max_wait_s = max(0, max_wait_ms) / 1000
        self._in_flight = in_flight
        self._committing = 0  # runs of the group being written now
        self._pending: list[tuple[RunCommit, asyncio.Future[bool]]] = []
        self._flushing = asyncio.Lock()
        self._timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        # Of committed runs, not written yet: one summed tally per connector.
        self._stats: list[ConnectorChange] = []
        self._stats_due: float | None = None  # loop time of the next write
        self._last_now: datetime | None = None

    async def commit(self, run: RunCommit) -> bool:
        """Whether `run` was committed (False: its claim was lost), once its group is."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[bool] = loop.create_future()
        self._pending.append((run, future))
        if len(self._pending) >= self._max_runs or self._max_wait_s == 0 or self._all_waiting():
            self._start_flush()
        elif self._timer is None:
            self._timer = loop.call_later(self._max_wait_s, self._start_flush)
        return await asyncio.shield(future)

    def _all_waiting(self) -> bool:
        if self._in_flight is None:
            return False
        return len(self._pending) + self._committing >= self._in_flight()

    def _start_flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        task = asyncio.get_running_loop().create_task(self._flush())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _flush(self) -> None:
        async with self._flushing:
            batch, self._pending = self._pending, []
            if not batch:
                return
            if self._timer is not None and not self._pending:
                self._timer.cancel()
                self._timer = None
            self._committing = len(batch)
            runs = [r for r, _ in batch]
            try:
                applied = await self._commit(runs)
            except BaseException as exc:
                self._committing = 0
                for _, future in batch:
                    if not future.done():
                        future.set_exception(exc)
                if not isinstance(exc, Exception):
                    raise
                return
            self._committing = 0
            for (_, future), ok in zip(batch, applied, strict=True):
                if not future.done():
                    future.set_result(ok)
            if self._pending and self._all_waiting():
                self._start_flush()  # the runs that came during this flush wait for nothing

    async def _commit(self, runs: list[RunCommit]) -> list[bool]:
        store, clock = self._store, asyncio.get_running_loop().time()
        if self._stats_due is None:
            self._stats_due = clock + STATS_EVERY_S
        # The group's own stats wait; those held back go with it once they are due.
        due, self._stats = (self._stats, []) if clock >= self._stats_due else ([], self._stats)
        prepared = store.prepare_runs(runs)  # once, however often the write is tried
        try:
            applied = await write_from_loop(
                store,
                lambda wait: commit_runs(
                    store, runs, wait=wait, prepared=prepared, stats=due, own_stats=False
                ),
            )
        except BaseException:
            self._stats[:0] = due  # not written: they go with a later group
            raise
        if due:
            self._stats_due = clock + STATS_EVERY_S
        own = [r.connector for r, ok in zip(runs, applied, strict=True) if ok and r.connector]
        if own:
            self._stats = summed([*self._stats, *own])
        self._last_now = max(r.now for r in runs)
        return applied

    async def drain(self) -> None:
        """Commit what still waits (a cancelled run's commit goes on), and wait for the
        flushes under way: every run handed over is then committed or refused."""
        if self._pending:
            self._start_flush()
        while self._tasks:
            with contextlib.suppress(Exception):
                await asyncio.gather(*list(self._tasks))

    async def aclose(self) -> None:
        """`drain`, then write the connector stats held back."""
        await self.drain()
        async with self._flushing:
            stats, self._stats = self._stats, []
            if not stats:
                return
            assert self._last_now is not None
            store, now = self._store, self._last_now
            try:
                await write_from_loop(
                    store, lambda wait: record_stats(store, stats, now, wait=wait)
                )
            except Exception as exc:  # the runs stand: only their counters are lost
                runs = sum(change.tally.runs for change in stats)
                log.warning("connector stats of %d runs not written (%s)", runs, exc)
