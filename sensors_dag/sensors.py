"""Dagster sensors: request a crawl tick while catlas sensors are due."""

import dagster as dg

from catlas_assets.defs.resources import CatlasResource
from sensors_dag.in_flight import runs_in_flight
from sensors_dag.jobs import crawl_tick

TICK_WINDOW_S = 60


@dg.sensor(
    job=crawl_tick,
    minimum_interval_seconds=30,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description=(
        "Requests a batched crawl_tick run per 60 s window while catlas sensors are due "
        "(at most CATLAS_MAX_CONCURRENT_CRAWL_RUNS in flight)."
    ),
)
def due_sensors(context: dg.SensorEvaluationContext, catlas: CatlasResource) -> dg.SensorResult:
    """One crawl tick per window while sensors are due and fewer than
    `max_concurrent_crawl_runs` ticks are in flight.

    Cheap by construction: one Dagster run count and one indexed probe per claimable status
    (`next_due_at`), whatever the number of sensors. The cursor holds the last window a run
    was requested for, so a window never asks twice even if its run finished quickly.
    """
    with catlas.reading() as state:
        limit = state.settings.max_concurrent_crawl_runs
        in_flight = runs_in_flight(context.instance, crawl_tick.name)
        if in_flight >= limit:
            return dg.SensorResult(skip_reason=f"{in_flight} crawl tick(s) in flight (max {limit})")
        now = state.now()
        due = state.next_due_at()
    if due is None or due > now:
        return dg.SensorResult(skip_reason="no sensor is due")
    window = int(now.timestamp()) // TICK_WINDOW_S
    if context.cursor and int(context.cursor) >= window:
        return dg.SensorResult(skip_reason=f"a crawl tick was already requested in window {window}")
    return dg.SensorResult(
        run_requests=[dg.RunRequest(run_key=f"tick-{window}")], cursor=str(window)
    )
