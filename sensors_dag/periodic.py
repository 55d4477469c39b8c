"""Dagster schedules for the scheduler's periodic tasks (the same ones the daemon runs).

Each job calls `services.periodic.run_task`, which takes the task's lease in the state
store: with a `catlas schedule` daemon running too, a task never runs twice at once.
Every cadence is the one `services/periodic.py` declares; cron runs in `CATLAS_TZ`.
Compaction keeps its partitioned asset schedule (sensors_dag/schedules.py), whose
materialization holds the same lease. Schedules start stopped.
"""

from typing import Any

import dagster as dg

from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services import periodic
from catlas_assets.settings import Settings

TZ = Settings.from_env().tz


def _task_job(name: str) -> dg.JobDefinition:
    @dg.op(name=f"{name}_op", description=f"Run the periodic task {name} under its lease.")
    def _op(context: dg.OpExecutionContext, catlas: CatlasResource) -> dg.Output[bool]:
        result = periodic.run_task(catlas.runtime, name, holder=f"dagster:{context.run_id}")
        context.log.info(f"{name}: {result.detail}")
        return dg.Output(result.ran, metadata={"ran": result.ran, "detail": result.detail})

    @dg.job(
        name=f"periodic_{name}",
        tags={"catlas/kind": "periodic"},
        description=f"The periodic task {name}, under the same lease as the daemon's.",
    )
    def _job() -> None:
        _op()

    return _job


def _schedule(job: Any, cadence: periodic.Cadence) -> dg.ScheduleDefinition:
    """`job`: a job or an asset job (`define_asset_job`'s type is not public)."""
    return dg.ScheduleDefinition(
        job=job,
        cron_schedule=cadence.cron(),
        execution_timezone=TZ,
        default_status=dg.DefaultScheduleStatus.STOPPED,
        description=f"{job.name} on cron {cadence.cron()} ({TZ}).",
    )


stale_claim_sweep_job = _task_job("stale_claim_sweep")
crawl_stats_job = dg.define_asset_job(
    "crawl_stats_job",
    selection=["crawl_stats"],
    description="Materialize crawl_stats: the stats-crawl figures as metadata over time.",
)

periodic_jobs = [stale_claim_sweep_job, crawl_stats_job]
periodic_schedules = [
    _schedule(stale_claim_sweep_job, periodic.cadence_of("stale_claim_sweep")),
    _schedule(crawl_stats_job, periodic.CRAWL_STATS_CADENCE),
]
