"""Maintenance in Dagster: the daily budgets reset, and the `maintenance` job that prunes
old Dagster runs (Dagster 1.13 prunes ticks, never run event logs) and compacts the lake's
small files. Both on schedules in `CATLAS_TZ`, started stopped like every schedule."""

from datetime import UTC, datetime, timedelta

import dagster as dg

from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services import compaction, periodic
from catlas_assets.settings import Settings

TZ = Settings.from_env().tz
FINISHED = [dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED]
PRUNE_BATCH = 500


def prune_runs(instance: dg.DagsterInstance, older_than: datetime, *, keep: str = "") -> int:
    """Delete finished runs created before `older_than` (their event logs go with them)."""
    deleted = 0
    while True:
        records = instance.get_run_records(
            filters=dg.RunsFilter(statuses=FINISHED, created_before=older_than),
            limit=PRUNE_BATCH,
        )
        doomed = [r.dagster_run.run_id for r in records if r.dagster_run.run_id != keep]
        for run_id in doomed:
            instance.delete_run(run_id)
        deleted += len(doomed)
        if len(records) < PRUNE_BATCH:
            return deleted


@dg.op(description="Delete Dagster runs older than CATLAS_DAGSTER_RUN_RETENTION_DAYS.")
def prune_dagster_runs(context: dg.OpExecutionContext, catlas: CatlasResource) -> int:
    days = catlas.runtime.settings.dagster_run_retention_days
    # Dagster stamps runs with the wall clock, whatever catlas's clock says.
    cutoff = datetime.now(UTC) - timedelta(days=days)
    deleted = prune_runs(context.instance, cutoff, keep=context.run_id)
    context.log.info(f"deleted {deleted} run(s) created before {cutoff:%Y-%m-%d %H:%M}Z")
    context.add_output_metadata({"runs_deleted": deleted, "cutoff": cutoff.isoformat()})
    return deleted


@dg.op(description="Merge every lake partition's small files into one (under its lease).")
def compact_small_files(context: dg.OpExecutionContext, catlas: CatlasResource) -> int:
    with periodic.leased(catlas.runtime, "lake_compaction"):
        done = compaction.compact_all(catlas.runtime)
    context.add_output_metadata(
        {
            "partitions_checked": len(done.partitions),
            "partitions_compacted": len(done.merged),
            "files_merged": sum(r.files_before for r in done.merged),
            "latest_observations_rows": done.latest.rows,
            "latest_observations_files_folded": done.latest.files_folded,
        }
    )
    return len(done.merged)


@dg.job(
    description="Prune old Dagster runs and compact the lake's small files.",
    tags={"catlas/kind": "maintenance"},
)
def maintenance() -> None:
    prune_dagster_runs()
    compact_small_files()


@dg.op(description="Start the new budget day of every domain (the lazy reset, made visible).")
def budgets_reset_op(context: dg.OpExecutionContext, catlas: CatlasResource) -> str:
    result = periodic.run_task(catlas.runtime, "budgets_reset", holder=f"dagster:{context.run_id}")
    context.add_output_metadata({"ran": result.ran, "detail": result.detail})
    return result.detail


@dg.job(
    name="budgets_reset",
    description="Reset the domains' daily request budgets at the start of the day.",
    tags={"catlas/kind": "periodic"},
)
def budgets_reset_job() -> None:
    budgets_reset_op()


maintenance_schedule = dg.ScheduleDefinition(
    job=maintenance,
    cron_schedule="30 3 * * *",
    execution_timezone=TZ,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Daily at 03:30: prune old Dagster runs, compact small lake files.",
)
budgets_reset_schedule = dg.ScheduleDefinition(
    job=budgets_reset_job,
    cron_schedule="5 0 * * *",
    execution_timezone="UTC",  # budget days are UTC days
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Daily at 00:05 UTC: start the new budget day of every domain.",
)
