"""Onboarding in Dagster: a job that materializes today's `discovery` partition (one
batch of discover jobs), and a sensor that requests it while discover jobs are due."""

import dagster as dg

from catlas_assets.defs.discovery import discovery_asset
from catlas_assets.defs.resources import CatlasResource
from sensors_dag.in_flight import runs_in_flight

onboarding_job = dg.define_asset_job(
    "onboarding",
    selection=dg.AssetSelection.assets(discovery_asset),
    description="Discover a batch of pending companies and seed their sensors.",
    tags={"catlas/kind": "discovery"},
)

BATCH_WINDOW_S = 300


@dg.sensor(
    job=onboarding_job,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Requests one onboarding run at a time while discover jobs are due.",
)
def pending_companies(
    context: dg.SensorEvaluationContext, catlas: CatlasResource
) -> dg.SensorResult:
    """One onboarding run at a time while discover jobs are due."""
    in_flight = runs_in_flight(context.instance, onboarding_job.name)
    if in_flight:
        return dg.SensorResult(skip_reason=f"{in_flight} onboarding run(s) in flight")
    with catlas.reading() as state:
        now = state.now()
        due = state.due_discover_jobs(now)
    if not due:
        return dg.SensorResult(skip_reason="no discover job is due")
    window = int(now.timestamp()) // BATCH_WINDOW_S
    return dg.SensorResult(
        run_requests=[
            dg.RunRequest(run_key=f"onboarding-{window}", partition_key=f"{now:%Y-%m-%d}")
        ]
    )
