"""Onboarding in Dagster: a job that materializes today's `discovery` partition (one
batch of discover jobs), and a sensor that requests it while discover jobs are due."""

import dagster as dg

from catlas_assets.discovery_assets import daily_partitions, discovery_asset
from catlas_assets.runtime_resource import CatlasRuntime
from catlas_assets.services.onboarding import pending_jobs

onboarding_job = dg.define_asset_job(
    "onboarding",
    selection=dg.AssetSelection.assets(discovery_asset),
    partitions_def=daily_partitions,
    description="Discover a batch of pending companies and seed their sensors.",
    tags={"catlas/kind": "discovery"},
)

BATCH_WINDOW_S = 300


@dg.sensor(
    job=onboarding_job, minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.STOPPED
)
def pending_companies(
    context: dg.SensorEvaluationContext, catlas: CatlasRuntime
) -> dg.SensorResult:
    """One onboarding run at a time while discover jobs are due."""
    in_flight = context.instance.get_runs_count(
        dg.RunsFilter(
            job_name=onboarding_job.name,
            statuses=[
                dg.DagsterRunStatus.QUEUED,
                dg.DagsterRunStatus.STARTING,
                dg.DagsterRunStatus.STARTED,
            ],
        )
    )
    if in_flight:
        return dg.SensorResult(skip_reason=f"{in_flight} onboarding run(s) in flight")
    runtime = catlas.build()
    try:
        now = runtime.clock.now()
        due = pending_jobs(runtime, now)
    finally:
        runtime.close()
    if not due:
        return dg.SensorResult(skip_reason="no discover job is due")
    window = int(now.timestamp()) // BATCH_WINDOW_S
    return dg.SensorResult(
        run_requests=[
            dg.RunRequest(run_key=f"onboarding-{window}", partition_key=f"{now:%Y-%m-%d}")
        ]
    )
