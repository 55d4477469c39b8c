"""Deliver pending changes to the webhook and mark them delivered (retries, no duplicates)."""

from __future__ import annotations

from dataclasses import dataclass

from catlas_assets.errors import ConfigError
from catlas_assets.services.change_inbox import awaiting_delivery
from catlas_assets.services.runtime import Runtime
from resources.notifier import WebhookNotifier, slack_message
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
    for change in awaiting_delivery(runtime):
        result = notifier.send(change["change_id"], slack_message(change, change["company"]))
        if result.ok:
            delivered += int(
                inbox.mark_delivered(runtime.store, change["change_id"], runtime.clock.now())
            )
        else:
            failed += 1
            inbox.record_failure(runtime.store, change["change_id"], result.detail)
    waiting = len(inbox.list_changes(runtime.store, status="pending"))
    return NotifyResult(delivered, failed, waiting)
