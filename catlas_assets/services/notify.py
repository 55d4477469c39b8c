"""Deliver pending changes to the webhook and mark them delivered (retries, no duplicates);
announce a finished run's verdict on the same webhook."""

from __future__ import annotations

from dataclasses import dataclass

from catlas_assets.domain.vocabulary import RunOutcome
from catlas_assets.errors import CatlasError, ConfigError
from catlas_assets.services import lake_sync
from catlas_assets.services.change_inbox import awaiting_delivery
from catlas_assets.services.change_view import publish_diff, seen_at
from catlas_assets.services.dimensions import export_dimensions
from catlas_assets.services.runs import RunReport
from catlas_assets.services.runtime import Runtime
from resources.notifier import (
    Delivery,
    WebhookNotifier,
    run_message,
    run_start_message,
    slack_message,
)
from resources.state import inbox


@dataclass(frozen=True)
class NotifyResult:
    delivered: int
    failed: int
    waiting: int  # still pending after this pass (to be retried)


def deliver_pending(runtime: Runtime, notifier: WebhookNotifier | None = None) -> NotifyResult:
    """One delivery pass through `notifier` (default: the runtime's, closed with it)."""
    notifier = notifier or runtime.notifier
    if notifier is None:
        raise ConfigError("the notifier is off: set CATLAS_NOTIFY_WEBHOOK_URL to a webhook URL")
    delivered = failed = 0
    lake_sync.flush(runtime)  # the changes' rows are in the lake, so their diffs can be made
    for change in awaiting_delivery(runtime):
        page_url = seen_at(runtime, change)
        message = slack_message(
            change, change["company"], page_url=page_url, diff_url=_diff(runtime, change)
        )
        result = notifier.send(change["change_id"], message)
        if result.ok:
            delivered += int(
                inbox.mark_delivered(runtime.store, change["change_id"], runtime.clock.now())
            )
        else:
            failed += 1
            inbox.record_failure(runtime.store, change["change_id"], result.detail)
    waiting = len(inbox.list_changes(runtime.store, status="pending"))
    if delivered:
        # SQL over the lake sees a delivery as soon as `catlas changes` does.
        export_dimensions(runtime)
    return NotifyResult(delivered, failed, waiting)


def _diff(runtime: Runtime, change: dict[str, object]) -> str:
    """The diff page's link; none when it cannot be made (the message goes out anyway)."""
    try:
        return publish_diff(runtime, str(change["change_id"]))
    except (CatlasError, OSError):
        return ""


def announce_start(runtime: Runtime, run_id: str, title: str) -> Delivery | None:
    """Post that a run began (None while the notifier is off); best effort, as the verdict."""
    notifier = runtime.notifier
    if notifier is None:
        return None
    return notifier.send(f"{run_id}:start", run_start_message(title, run_id))


def announce_run(runtime: Runtime, report: RunReport, title: str) -> Delivery | None:
    """Post the run's verdict (None while the notifier is off). Best effort: the run row is
    the record, so a refused post is returned, never raised."""
    notifier = runtime.notifier
    if notifier is None:
        return None
    failed = report.outcome is RunOutcome.FAILED
    return notifier.send(report.run_id, run_message(title, report.summary_line, failed=failed))
