"""New meaningful changes -> notification: a job that delivers the inbox, and its sensor."""

import dagster as dg

from catlas_assets.runtime_resource import CatlasRuntime
from catlas_assets.services.notify import deliver_pending
from resources.state import inbox


@dg.op(description="Post pending changes to the webhook and mark them delivered.")
def notify_changes_op(context: dg.OpExecutionContext, catlas: CatlasRuntime) -> None:
    runtime = catlas.build()
    try:
        result = deliver_pending(runtime)
    finally:
        runtime.close()
    context.log.info(
        f"delivered {result.delivered}, failed {result.failed}, still pending {result.waiting}"
    )


@dg.job(description="Deliver the change inbox to the webhook.", tags={"catlas/kind": "notify"})
def notify_changes() -> None:
    notify_changes_op()


@dg.sensor(
    job=notify_changes, minimum_interval_seconds=60, default_status=dg.DefaultSensorStatus.STOPPED
)
def pending_changes(context: dg.SensorEvaluationContext, catlas: CatlasRuntime) -> dg.SensorResult:
    """A delivery run when the notifier is on and changes wait (one per newest change)."""
    runtime = catlas.build()
    try:
        if not runtime.settings.notify_webhook_url:
            return dg.SensorResult(skip_reason="the notifier is off (CATLAS_NOTIFY_WEBHOOK_URL)")
        pending = inbox.list_changes(
            runtime.store, status="pending", max_attempts=runtime.settings.notify_max_attempts
        )
    finally:
        runtime.close()
    if not pending:
        return dg.SensorResult(skip_reason="no pending change")
    newest = pending[-1]["change_id"]
    if context.cursor == newest:
        return dg.SensorResult(skip_reason="a delivery was already requested for these changes")
    return dg.SensorResult(run_requests=[dg.RunRequest(run_key=f"notify-{newest}")], cursor=newest)


derive_entities_job = dg.define_asset_job(
    "derive_entities",
    selection=dg.AssetSelection.assets("entities"),
    description="Derive the SCD2 entities table from entity_events (daily).",
)
daily_entities = dg.build_schedule_from_partitioned_job(derive_entities_job, hour_of_day=2)
