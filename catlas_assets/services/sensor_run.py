"""`catlas run-sensor`: run one sensor now, whatever its schedule, as a run of its own."""

from __future__ import annotations

import asyncio

from catlas_assets.domain.verdict import Tally
from catlas_assets.domain.vocabulary import (
    MEANINGFUL_OR_ABOVE,
    PRODUCTIVE,
    SUCCESSES,
    Outcome,
    RunKind,
    Stop,
)
from catlas_assets.services import event_loop, lake_sync
from catlas_assets.services.pipeline import SensorRunResult, run_sensor, sensor_state
from catlas_assets.services.run_control import RunControl
from catlas_assets.services.runs import RunRecorder, RunReport, unstarted_report
from catlas_assets.services.runtime import Runtime
from catlas_assets.services.tick import count


def run_one_within(
    runtime: Runtime, sensor_id: int, *, force: bool, control: RunControl
) -> tuple[SensorRunResult | None, RunReport]:
    """`run_one` under `-n` and `--deadline`: "Not started", or interrupted at the deadline."""
    if control.stop_before_start() or control.budget_stop():
        return None, unstarted_report(RunKind.SENSOR, runtime.clock.now())
    try:
        return run_one(runtime, sensor_id, force=force, timeout_s=control.remaining_s())
    except _DeadlineReached as reached:
        return None, reached.report


class _DeadlineReached(Exception):
    def __init__(self, report: RunReport) -> None:
        self.report = report


def run_one(
    runtime: Runtime, sensor_id: int, *, force: bool = False, timeout_s: float | None = None
) -> tuple[SensorRunResult, RunReport]:
    row = runtime.store.claim_sensor(
        sensor_id,
        now=runtime.clock.now(),
        worker=runtime.worker,
        claim_timeout_s=runtime.settings.claim_timeout_s,
    )
    recorder = RunRecorder(runtime, RunKind.SENSOR)

    async def go() -> SensorRunResult:
        async with asyncio.timeout(timeout_s), runtime.fetcher() as fetcher:
            return await run_sensor(
                runtime, fetcher, sensor_state(row), recorder.run_id, force=force
            )

    try:
        result = event_loop.run(go())
    except TimeoutError:
        # The deadline: the claim goes back to the queue at once, the run is interrupted.
        runtime.store.release_claims([sensor_id], runtime.worker)
        report = recorder.finish(
            stop=Stop.INTERRUPTED,
            tally=Tally(coverage_gaps=1),
            counters=count([], claimed=1),
            detail=f"Reached the deadline ({timeout_s:g} s)",
        )
        raise _DeadlineReached(report) from None
    except BaseException:
        runtime.store.release_claims([sensor_id], runtime.worker)
        raise
    # Unscoped: rows a crashed worker committed but never flushed go out with ours.
    lake_sync.flush(runtime)
    counters = count([result], claimed=1)
    success = result.outcome in SUCCESSES
    skipped = result.outcome is Outcome.SKIPPED  # postponed by politeness: a gap, no failure
    report = recorder.finish(
        stop=Stop.QUEUE_EMPTY,
        tally=Tally(
            succeeded=int(success),
            failures=int(not success and not skipped),
            coverage_gaps=int(not success),
            productive=result.outcome in PRODUCTIVE,
        ),
        counters=counters,
        detail=(
            result.summary[:200] if result.change_kind in MEANINGFUL_OR_ABOVE or skipped else ""
        ),
    )
    return result, report
