"""One scheduler tick: claim the due sensors, run them concurrently, record one verdict."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from catlas_assets.domain.verdict import Tally
from catlas_assets.domain.vocabulary import MEANINGFUL_OR_ABOVE, Outcome, RunKind, Stop
from catlas_assets.services import lake_sync
from catlas_assets.services.pipeline import SensorRun, run_sensor
from catlas_assets.services.runs import RunRecorder, RunReport
from catlas_assets.services.runtime import Runtime

SUCCESSES = (Outcome.OK, Outcome.CHANGED, Outcome.UNCHANGED, Outcome.NOT_MODIFIED)


@dataclass
class TickResult:
    report: RunReport
    runs: list[SensorRun] = field(default_factory=list)


def run_tick(
    runtime: Runtime,
    *,
    on_sensor_done: Callable[[SensorRun], None] | None = None,
    launch_handle: str | None = None,
) -> TickResult:
    started = time.monotonic()
    recorder = RunRecorder(runtime, RunKind.TICK, launch_handle=launch_handle)
    settings = runtime.settings
    claimed = runtime.store.claim_due(
        now=runtime.clock.now(),
        worker=runtime.worker,
        limit=settings.scheduler_claim_batch,
        claim_timeout_s=settings.claim_timeout_s,
    )
    runs = (
        asyncio.run(_run_all(runtime, claimed, recorder.run_id, on_sensor_done)) if claimed else []
    )
    # Unscoped: rows a crashed worker committed but never flushed go out with ours.
    lake_sync.flush(runtime)
    counters = count(runs, claimed=len(claimed))
    failed = counters["failed"] + counters["redirected"]
    tally = Tally(
        succeeded=sum(counters[o.value] for o in SUCCESSES),
        failures=failed,
        coverage_gaps=failed + counters["skipped"],
        productive=any(r.outcome in SUCCESSES for r in runs),
    )
    report = recorder.finish(
        stop=Stop.QUEUE_EMPTY,
        tally=tally,
        counters=counters,
        tick_ms=int((time.monotonic() - started) * 1000),
    )
    runtime.store.put_kv(
        "scheduler:heartbeat",
        {"worker": runtime.worker, "run_id": report.run_id, "at": report.completed_at.isoformat()},
        report.completed_at,
    )
    return TickResult(report, runs)


def count(runs: list[SensorRun], *, claimed: int) -> dict[str, int]:
    outcomes = Counter(r.outcome.value for r in runs if r.committed)
    counters = {o.value: outcomes.get(o.value, 0) for o in Outcome}
    counters["claimed"] = claimed
    counters["meaningful"] = sum(1 for r in runs if r.change_kind in MEANINGFUL_OR_ABOVE)
    counters["requests"] = sum(r.requests for r in runs)
    return counters


async def _run_all(
    runtime: Runtime,
    claimed: list[dict],
    run_id: str,
    on_sensor_done: Callable[[SensorRun], None] | None,
) -> list[SensorRun]:
    semaphore = asyncio.Semaphore(runtime.settings.fetch_concurrency)
    async with runtime.fetcher() as fetcher:

        async def one(row: dict) -> SensorRun:
            async with semaphore:
                result = await run_sensor(runtime, fetcher, row, run_id)
            if on_sensor_done is not None:
                on_sensor_done(result)
            return result

        return list(await asyncio.gather(*(one(row) for row in claimed)))
