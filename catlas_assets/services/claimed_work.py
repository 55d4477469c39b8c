"""Run a batch of claimed sensors under a guard: concurrency, stop rules, early release.

Workers (at most `fetch_concurrency`) take claimed sensors in claim order. Before each one
the guard says whether it may start: the run's request budget, a stop rule on the whole
run or on the sensor's registrable domain, an interruption. Whatever cannot run any more
is released at once (claims cleared), so it waits in the queue for the next run instead
of for the claim timeout.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from catlas_assets.domain.pipeline_data import SensorState
from catlas_assets.domain.run_guard import RunGuard
from catlas_assets.services.commit_groups import GroupCommitter
from catlas_assets.services.pipeline import SensorRunResult, run_sensor
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runtime import Runtime

POLL_S = 0.05


@dataclass
class ClaimedResult:
    runs: list[SensorRunResult] = field(default_factory=list)
    released: list[int] = field(default_factory=list)  # claimed but not reached


async def run_claimed(
    runtime: Runtime,
    claimed: list[SensorState],
    run_id: str,
    guard: RunGuard,
    control: RunControl,
    on_sensor_done: Callable[[SensorRunResult], None] | None = None,
) -> ClaimedResult:
    batch = _Batch(runtime, claimed, run_id, guard, control, on_sensor_done)
    count = max(1, min(runtime.settings.fetch_concurrency, len(claimed)))
    # What the runs hand to threads waits on the disk or the store's lock, not the CPU:
    # one thread per run in flight, so an archive write never queues behind a budget
    # reservation waiting for a group commit (the default pool has cores + 4 threads).
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(max_workers=count, thread_name_prefix="catlas-run")
    )
    async with runtime.fetcher() as fetcher:
        workers = [asyncio.create_task(batch.worker(fetcher)) for _ in range(count)]
        watcher = asyncio.create_task(batch.watch(workers))
        outcomes = await asyncio.gather(*workers, return_exceptions=True)
        watcher.cancel()
        await asyncio.gather(watcher, return_exceptions=True)
        await batch.committer.aclose()
    result = batch.result
    abandoned = [sensor.id for sensor in batch.in_flight.values()]
    finished = {x.sensor_id for x in result.runs}  # built once: the batch may be thousands
    abandoned += [s.id for s in claimed if s.id not in finished]  # cancelled or never taken
    await batch.release(sorted(set(abandoned) - set(result.released)))
    for outcome in outcomes:
        if isinstance(outcome, BaseException) and not isinstance(outcome, asyncio.CancelledError):
            raise outcome
    return result


class _Batch:
    """The claimed sensors of one run, the workers that take them and what they did."""

    def __init__(
        self,
        runtime: Runtime,
        claimed: list[SensorState],
        run_id: str,
        guard: RunGuard,
        control: RunControl,
        on_sensor_done: Callable[[SensorRunResult], None] | None,
    ) -> None:
        self.runtime = runtime
        self.run_id = run_id
        self.guard = guard
        self.control = control
        self.on_sensor_done = on_sensor_done
        self.result = ClaimedResult()
        self.queue: deque[SensorState] = deque(claimed)
        self.changed = asyncio.Condition()
        self.in_flight: dict[asyncio.Task[Any], SensorState] = {}
        settings = runtime.settings
        self.committer = GroupCommitter(
            runtime.store, max_runs=settings.commit_group_runs, max_wait_ms=settings.commit_group_ms
        )

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

    async def next_sensor(self) -> SensorState | None:
        guard = self.guard
        async with self.changed:
            while True:
                reason = self.control.interruption()
                if reason is not None:
                    guard.interrupt(reason)  # seen before the watcher's next poll
                if guard.stopped or not self.queue:
                    return None
                sensor = self.queue[0]
                if sensor.domain in guard.stopped_domains:
                    self.queue.popleft()
                    await self.release([sensor.id])
                    continue
                if guard.may_start(sensor.domain):
                    return self.queue.popleft()
                if guard.stopped:
                    return None
                await self.changed.wait()  # the budget waits on in-flight work's request count

    async def worker(self, fetcher: Any) -> None:
        guard = self.guard
        while (sensor := await self.next_sensor()) is not None:
            task = asyncio.current_task()
            assert task is not None
            self.in_flight[task] = sensor
            try:
                run = await run_sensor(
                    self.runtime, fetcher, sensor, self.run_id, committer=self.committer
                )
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
