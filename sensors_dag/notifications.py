"""New meaningful changes -> notification: a job that delivers the inbox, and its sensor."""

import dagster as dg

from catlas_assets.defs.resources import CatlasResource
from catlas_assets.services.notify import deliver_pending
from catlas_assets.services.runtime import WebhookNotifier


@dg.op(description="Post pending changes to the webhook and mark them delivered.")
def notify_changes_op(
    context: dg.OpExecutionContext,
    catlas: CatlasResource,
    notifier: dg.ResourceParam[WebhookNotifier | None],
) -> None:
    result = deliver_pending(catlas.runtime, notifier)
    context.log.info(
        f"delivered {result.delivered}, failed {result.failed}, still pending {result.waiting}"
    )


@dg.job(description="Deliver the change inbox to the webhook.", tags={"catlas/kind": "notify"})
def notify_changes() -> None:
    notify_changes_op()


@dg.sensor(
    job=notify_changes,
    minimum_interval_seconds=60,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Requests a delivery run when the notifier is on and changes wait.",
)
def pending_changes(context: dg.SensorEvaluationContext, catlas: CatlasResource) -> dg.SensorResult:
    """A delivery run when the notifier is on and changes wait (one per newest change)."""
    with catlas.reading() as state:
        if not state.settings.notify_webhook_url:
            return dg.SensorResult(skip_reason="the notifier is off (CATLAS_NOTIFY_WEBHOOK_URL)")
        pending = state.changes_awaiting_delivery()
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
daily_entities = dg.build_schedule_from_partitioned_job(
    derive_entities_job,
    hour_of_day=2,
    description="Daily at 02:00 UTC: derive yesterday's entities from its entity_events.",
)


refresh_feed_job = dg.define_asset_job(
    "refresh_change_feed",
    selection=dg.AssetSelection.assets("change_feed"),
    description="Refresh the Atom feed of changes in the lake (daily).",
)
daily_change_feed = dg.build_schedule_from_partitioned_job(
    refresh_feed_job,
    hour_of_day=3,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Daily at 03:00 UTC: refresh the Atom feed of changes in the lake.",
)
