"""Dagster schedules for the scheduler's periodic tasks (the same ones the daemon runs).

Each job calls `services.periodic.run_task`, which takes the task's lease in the state
store: with a `catlas schedule` daemon running too, a task never runs twice at once.
Compaction keeps its partitioned asset schedule (sensors_dag/schedules.py), whose
materialization holds the same lease. Schedules start stopped; cron runs in CATLAS_TZ.
"""

import os

import dagster as dg

from catlas_assets.runtime_resource import CatlasRuntime
from catlas_assets.services import periodic

TZ = os.environ.get("CATLAS_TZ", "UTC") or "UTC"


def _task_job(name: str) -> dg.JobDefinition:
    @dg.op(name=f"{name}_op", description=f"Run the periodic task {name} under its lease.")
    def _op(context: dg.OpExecutionContext, catlas: CatlasRuntime) -> dg.Output[bool]:
        runtime = catlas.build()
        try:
            result = periodic.run_task(runtime, name, holder=f"dagster:{context.run_id}")
        finally:
            runtime.close()
        context.log.info(f"{name}: {result.detail}")
        return dg.Output(result.ran, metadata={"ran": result.ran, "detail": result.detail})

    @dg.job(name=f"periodic_{name}", tags={"catlas/kind": "periodic"})
    def _job() -> None:
        _op()

    return _job


stale_claim_sweep_job = _task_job("stale_claim_sweep")
repair_job = _task_job("repair")
crawl_stats_job = dg.define_asset_job("crawl_stats_job", selection=["crawl_stats"])

periodic_jobs = [stale_claim_sweep_job, repair_job, crawl_stats_job]
periodic_schedules = [
    dg.ScheduleDefinition(
        job=stale_claim_sweep_job,
        cron_schedule="*/5 * * * *",
        execution_timezone=TZ,
        default_status=dg.DefaultScheduleStatus.STOPPED,
    ),
    dg.ScheduleDefinition(
        job=repair_job,
        cron_schedule="*/30 * * * *",
        execution_timezone=TZ,
        default_status=dg.DefaultScheduleStatus.STOPPED,
    ),
    dg.ScheduleDefinition(
        job=crawl_stats_job,
        cron_schedule="*/15 * * * *",
        execution_timezone=TZ,
        default_status=dg.DefaultScheduleStatus.STOPPED,
    ),
]
