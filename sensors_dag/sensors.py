"""Dagster sensors: request a crawl tick while catlas sensors are due."""

import dagster as dg

from catlas_assets.runtime_resource import CatlasRuntime
from sensors_dag.jobs import crawl_tick

TICK_WINDOW_S = 60


@dg.sensor(
    job=crawl_tick, minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.STOPPED
)
def due_sensors(context: dg.SensorEvaluationContext, catlas: CatlasRuntime) -> dg.SensorResult:
    """One crawl tick per window while sensors are due and fewer than
    `max_concurrent_crawl_runs` ticks are in flight.

    Cheap by construction: one Dagster run count and one indexed probe per claimable status
    (`next_due_at`), whatever the number of sensors. The cursor holds the last window a run
    was requested for, so a window never asks twice even if its run finished quickly.
    """
    runtime = catlas.build()
    try:
        limit = runtime.settings.max_concurrent_crawl_runs
        in_flight = context.instance.get_runs_count(
            dg.RunsFilter(
                job_name=crawl_tick.name,
                statuses=[
                    dg.DagsterRunStatus.QUEUED,
                    dg.DagsterRunStatus.NOT_STARTED,
                    dg.DagsterRunStatus.STARTING,
                    dg.DagsterRunStatus.STARTED,
                ],
            )
        )
        if in_flight >= limit:
            return dg.SensorResult(skip_reason=f"{in_flight} crawl tick(s) in flight (max {limit})")
        now = runtime.clock.now()
        due = runtime.store.next_due_at()
    finally:
        runtime.close()
    if due is None or due > now:
        return dg.SensorResult(skip_reason="no sensor is due")
    window = int(now.timestamp()) // TICK_WINDOW_S
    if context.cursor and int(context.cursor) >= window:
        return dg.SensorResult(skip_reason=f"a crawl tick was already requested in window {window}")
    return dg.SensorResult(
        run_requests=[dg.RunRequest(run_key=f"tick-{window}")], cursor=str(window)
    )
