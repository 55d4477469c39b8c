"""Repair in Dagster: the `repair` job on a 30-minute schedule, and failed runs to review.

The job runs the same pass as `catlas repair` and the daemon's periodic task, under that
task's lease (services/periodic.py), so the two never overlap; its schedule's cron is the
task's cadence. The run-failure sensor turns any failed run of this code location into a
`run_failed` review item (DESIGN.md Orchestration: run failure -> review item).
"""

import dagster as dg

from catlas_assets.defs.resources import CatlasResource
from catlas_assets.domain.vocabulary import RunOutcome
from catlas_assets.services import periodic
from catlas_assets.services.repair import repair_pass
from catlas_assets.services.review import open_run_failed
from catlas_assets.settings import Settings

TZ = Settings.from_env().tz


@dg.op(description="One repair pass: failing, stale and redirected sensors (spec: Repair).")
def repair_op(context: dg.OpExecutionContext, catlas: CatlasResource) -> dg.Output[str]:
    runtime = catlas.runtime
    with periodic.leased(runtime, "repair"):
        result = repair_pass(runtime, launch_handle=context.run_id)
    report = result.report
    assert report is not None  # not a dry run
    metadata = {
        "catlas_run_id": report.run_id,
        "outcome": report.outcome.value,
        "stop": report.stop.value,
        "detail": report.detail,
        "productive": report.productive,
        **{name: dg.MetadataValue.int(value) for name, value in report.counters.items()},
    }
    if report.outcome is RunOutcome.FAILED:
        raise dg.Failure(description=report.summary_line, metadata=metadata)
    context.log.info(report.summary_line)
    return dg.Output(report.run_id, metadata=metadata)


@dg.job(name="repair", description="One repair pass.", tags={"catlas/kind": "repair"})
def repair_job() -> None:
    repair_op()


repair_schedule = dg.ScheduleDefinition(
    name="repair_schedule",
    job=repair_job,
    cron_schedule=periodic.cadence_of("repair").cron(),
    execution_timezone=TZ,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Every 30 minutes: one repair pass over failing, stale and redirected sensors.",
)


@dg.run_failure_sensor(
    name="failed_runs_to_review",
    description="A failed Dagster run becomes a `run_failed` review item.",
    default_status=dg.DefaultSensorStatus.STOPPED,
)
def failed_runs_to_review(context: dg.RunFailureSensorContext, catlas: CatlasResource) -> None:
    run = context.dagster_run
    message = context.failure_event.message or "the run failed"
    item = open_run_failed(
        catlas.runtime, dagster_run_id=run.run_id, job=run.job_name, message=message
    )
    context.log.info(f"run {run.run_id} of {run.job_name} failed: review item {item}")
