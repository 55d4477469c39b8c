"""`catlas run-sensor`: run one sensor now, whatever its schedule, as a run of its own."""

from __future__ import annotations

import asyncio

from catlas_assets.domain.verdict import Tally
from catlas_assets.domain.vocabulary import MEANINGFUL_OR_ABOVE, RunKind, Stop
from catlas_assets.services import lake_sync
from catlas_assets.services.pipeline import SensorRun, run_sensor
from catlas_assets.services.runs import RunRecorder, RunReport
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import SUCCESSES, count


def run_one(
    runtime: Runtime, sensor_id: int, *, force: bool = False
) -> tuple[SensorRun, RunReport]:
    row = runtime.store.claim_sensor(
        sensor_id,
        now=runtime.clock.now(),
        worker=runtime.worker,
        claim_timeout_s=runtime.settings.claim_timeout_s,
    )
    recorder = RunRecorder(runtime, RunKind.SENSOR)

    async def go() -> SensorRun:
        async with runtime.fetcher() as fetcher:
            return await run_sensor(runtime, fetcher, row, recorder.run_id, force=force)

    try:
        result = asyncio.run(go())
    except BaseException:
        runtime.store.release_claims([sensor_id], runtime.worker)
        raise
    # Unscoped: rows a crashed worker committed but never flushed go out with ours.
    lake_sync.flush(runtime)
    counters = count([result], claimed=1)
    success = result.outcome in SUCCESSES
    report = recorder.finish(
        stop=Stop.QUEUE_EMPTY,
        tally=Tally(
            succeeded=int(success),
            failures=int(not success),
            coverage_gaps=int(not success),
            productive=success,
        ),
        counters=counters,
        detail=result.summary[:200] if result.change_kind in MEANINGFUL_OR_ABOVE else "",
    )
    return result, report
