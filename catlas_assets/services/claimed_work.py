"""Run a batch of claimed sensors under a guard: concurrency, stop rules, early release.

Workers (at most `fetch_concurrency`) take claimed sensors in claim order. Before each one
the guard says whether it may start: the run's request budget, a stop rule on the whole
run or on the sensor's registrable domain, an interruption. Whatever cannot run any more
is released at once (claims cleared), so it waits in the queue for the next run instead
of for the claim timeout.

Where a sensor runs is the runner's business: in this process (one fetcher, one group
committer), or, for a batch of at least `CATLAS_LANE_MIN_BATCH`, in lanes (`lanes.py`,
`lanes_for`), worker processes that use every core. The queue, the guard and the verdict
stay here.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from catlas_assets.domain.pipeline_data import SensorState
from catlas_assets.domain.run_guard import RunGuard
from catlas_assets.services.commit_groups import GroupCommitter
from catlas_assets.services.lanes import Lanes, lane_count
from catlas_assets.services.pipeline import SensorRunResult, run_sensor
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runtime import Runtime
from catlas_assets.settings import Settings

POLL_S = 0.05

# Runs one sensor with the seed of its schedule's jitter (drawn in claim order).
RunOne = Callable[[SensorState, int], Awaitable[SensorRunResult]]
# Claims the rest of a batch (in a thread: the loop goes on running the first part).
ClaimRest = Callable[[], Awaitable[list[SensorState]]]
# Readies the runner for more of the batch: its lanes deal the new domains, and a
# governor takes their budget leases together.
AddSensors = Callable[[list[SensorState]], None]


@dataclass
class ClaimedResult:
    runs: list[SensorRunResult] = field(default_factory=list)
    released: list[int] = field(default_factory=list)  # claimed but not reached


def lanes_for(runtime: Runtime, run_id: str, now: datetime) -> Lanes | None:
    """The lanes of a tick about to claim at least `CATLAS_LANE_MIN_BATCH` sensors, their
    processes started (None: this process runs the batch).

    Asked before the claim (an index probe tells), so the lanes start while the claim runs;
    and before the batch's event loop runs, so a lane can be a fork of this process. The
    tick ends them when its claim comes back smaller (`enough_for_lanes`)."""
    settings = runtime.settings
    count = lane_count(settings.lanes)
    if not count:
        return None
    due = runtime.store.due_count(
        now=now, claim_timeout_s=settings.claim_timeout_s, up_to=_min_batch(settings)
    )
    if due < _min_batch(settings):
        return None
    lanes = Lanes(runtime, run_id, count)
    lanes.spawn()
    return lanes


def enough_for_lanes(settings: Settings, claimed: int) -> bool:
    """Whether a claimed batch of `claimed` sensors runs in lanes."""
    return claimed >= _min_batch(settings)


def _min_batch(settings: Settings) -> int:
    return max(1, settings.lane_min_batch)


async def run_claimed(
    runtime: Runtime,
    claimed: list[SensorState],
    run_id: str,
    guard: RunGuard,
    control: RunControl,
    on_sensor_done: Callable[[SensorRunResult], None] | None = None,
    lanes: Lanes | None = None,
    *,
    more: ClaimRest | None = None,
) -> ClaimedResult:
    """Run `claimed` (in `lanes` when given, see `lanes_for`), under `guard`.

    `more`, when given, claims the rest of the batch while the first sensors run; what it
    returns is appended to `claimed` (the caller's list: it releases what it holds) and
    queued after them, in its claim order."""
    fetch_concurrency = runtime.settings.fetch_concurrency
    count = max(1, fetch_concurrency if more else min(fetch_concurrency, len(claimed)))
    # What the runs hand to threads waits on the disk or the store's lock, not the CPU:
    # one thread per run in flight, so an archive write never queues behind a budget
    # reservation waiting for a group commit (the default pool has cores + 4 threads),
    # and one for the rest of the claim.
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(max_workers=count + (more is not None), thread_name_prefix="catlas-run")
    )
    in_flight: dict[asyncio.Task[Any], SensorState] = {}
    async with _runner(runtime, run_id, lanes, claimed, lambda: len(in_flight)) as (run_one, add):
        batch = _Batch(runtime, claimed, guard, control, on_sensor_done, run_one, in_flight)
        feeder = None
        if more is not None:
            batch.awaiting_more = True  # before any worker looks at the queue
            feeder = asyncio.create_task(batch.feed(more, claimed, add))
        workers = [asyncio.create_task(batch.worker()) for _ in range(count)]
        watcher = asyncio.create_task(batch.watch(workers))
        outcomes = await asyncio.gather(*workers, return_exceptions=True)
        if feeder is not None:  # what it claimed is in `claimed` before anything is released
            outcomes += await asyncio.gather(feeder, return_exceptions=True)
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
    result = batch.result
    abandoned = [sensor.id for sensor in batch.in_flight.values()]
    finished = {x.sensor_id for x in result.runs}  # built once: the batch may be thousands
    abandoned += [s.id for s in claimed if s.id not in finished]  # cancelled or never taken
    await batch.release(sorted(set(abandoned) - set(result.released)))
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(outcome, asyncio.CancelledError):
            raise outcome
    return result


@asynccontextmanager
async def _runner(
    runtime: Runtime,
    run_id: str,
    lanes: Lanes | None,
    claimed: list[SensorState],
    in_flight: Callable[[], int],
) -> AsyncIterator[tuple[RunOne, AddSensors]]:
    """Where this batch's sensors run: its lanes, or this process (`in_flight` counts its
    runs under way), with what readies it for more of the batch. On the way out every run
    handed over has been committed (or cancelled)."""
    if lanes is not None:
        try:
            await lanes.connect(claimed)
            yield lanes.run, lanes.add
        finally:
            await lanes.aclose()
        return
    settings = runtime.settings
    async with runtime.fetcher() as fetcher:
        committer = GroupCommitter(
            runtime.store,
            max_runs=settings.commit_group_runs,
            max_wait_ms=settings.commit_group_ms,
            in_flight=in_flight,
        )

        async def run_one(sensor: SensorState, seed: int) -> SensorRunResult:
            return await run_sensor(
                runtime, fetcher, sensor, run_id, committer=committer, seed=seed
            )

        def add(sensors: list[SensorState]) -> None:
            if fetcher.governor is not None:
                fetcher.governor.lease(s.domain for s in sensors)

        add(claimed)
        try:
            yield run_one, add
        finally:
            await committer.aclose()


class _Batch:
    """The claimed sensors of one run, the workers that take them and what they did."""

    def __init__(
        self,
        runtime: Runtime,
        claimed: list[SensorState],
        guard: RunGuard,
        control: RunControl,
        on_sensor_done: Callable[[SensorRunResult], None] | None,
        run_one: RunOne,
        in_flight: dict[asyncio.Task[Any], SensorState],
    ) -> None:
        self.runtime = runtime
        self.run_one = run_one
        self.guard = guard
        self.control = control
        self.on_sensor_done = on_sensor_done
        self.result = ClaimedResult()
        self.queue: deque[SensorState] = deque(claimed)
        self.changed = asyncio.Condition()
        self.in_flight = in_flight
        self.awaiting_more = False  # the rest of the claim is on its way: an empty queue waits
        self.waiting = 0  # workers waiting on `changed`

    async def _wait(self) -> None:
        """Wait on `changed` (its lock held) until a notification."""
        self.waiting += 1
        try:
            await self.changed.wait()
        finally:
            self.waiting -= 1

    async def feed(self, more: ClaimRest, claimed: list[SensorState], add: AddSensors) -> None:
        """Queue the rest of the claim when it comes (if the run has stopped meanwhile, no
        worker takes it: it is released with whatever else was not reached)."""
        try:
            sensors = await more()
            claimed.extend(sensors)
            add(sensors)
            self.queue.extend(sensors)
        finally:
            self.awaiting_more = False
            async with self.changed:
                self.changed.notify_all()

    async def release(self, ids: list[int]) -> None:
        if ids:
            self.result.released.extend(ids)
            await asyncio.to_thread(self.runtime.store.release_claims, ids, self.runtime.worker)

    async def drain(self, domain: str | None = None) -> None:
        """Release what waits in the queue (all of it, or one domain's share)."""
        keep, drop = [], []
        while self.queue:
            sensor = self.queue.popleft()
            (drop if domain is None or sensor.domain == domain else keep).append(sensor)
        self.queue.extend(keep)
        await self.release([s.id for s in drop])

    def _take(self) -> SensorState | None:
        """The next sensor when it may start at once, without waiting or releasing
        anything; else None, and `next_sensor` decides under the condition's lock."""
        queue = self.queue
        if not queue or self.control.interruption() is not None:
            return None
        # The guard says no to a stopped run or domain, and to a spent budget.
        return queue.popleft() if self.guard.may_start(queue[0].domain) else None

    async def next_sensor(self) -> SensorState | None:
        if (sensor := self._take()) is not None:
            return sensor
        guard = self.guard
        async with self.changed:
            while True:
                reason = self.control.interruption()
                if reason is not None:
                    guard.interrupt(reason)  # seen before the watcher's next poll
                if guard.stopped:
                    return None
                if not self.queue:
                    if not self.awaiting_more:
                        return None
                    await self._wait()
                    continue
                sensor = self.queue[0]
                if sensor.domain in guard.stopped_domains:
                    self.queue.popleft()
                    await self.release([sensor.id])
                    continue
                if guard.may_start(sensor.domain):
                    return self.queue.popleft()
                if guard.stopped:
                    return None
                await self._wait()  # the budget waits on in-flight work's request count

    async def worker(self) -> None:
        guard = self.guard
        while (sensor := await self.next_sensor()) is not None:
            # Drawn as the sensor leaves the queue, before any await: in claim order.
            seed = self.runtime.rng.getrandbits(64)
            task = asyncio.current_task()
            assert task is not None
            self.in_flight[task] = sensor
            try:
                run = await self.run_one(sensor, seed)
            except asyncio.CancelledError:
                guard.in_flight = max(0, guard.in_flight - 1)
                raise
            finally:
                self.in_flight.pop(task, None)
            self.control.spend(run.requests)
            self.result.runs.append(run)
            stopped = guard.finished(
                sensor.domain,
                outcome=run.outcome,
                failure_class=run.failure_class,
                requests=run.requests,
            )
            if stopped is not None:
                await self.drain(sensor.domain)
            if guard.stopped:
                await self.drain()
            if self.waiting:  # a finished run may let them start (budget, stop, queue end)
                async with self.changed:
                    self.changed.notify_all()
            if self.on_sensor_done is not None:
                self.on_sensor_done(run)

    async def watch(self, workers: list[asyncio.Task[Any]]) -> None:
        """Turn a signal or the deadline into a stop; cancel in-flight work when told to."""
        while any(not w.done() for w in workers):
            reason = self.control.interruption()
            if reason is not None and not self.guard.stopped:
                self.guard.interrupt(reason)
                await self.drain()
                async with self.changed:
                    self.changed.notify_all()
            if reason is not None and self.control.must_cancel():
                for task in list(self.in_flight):
                    task.cancel()
                for w in workers:
                    w.cancel()
                return
            await asyncio.sleep(POLL_S)
