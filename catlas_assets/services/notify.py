"""Deliver pending changes to the webhook and mark them delivered (retries, no duplicates)."""

from __future__ import annotations

from dataclasses import dataclass

from catlas_assets.errors import ConfigError
from catlas_assets.services.runtime import Runtime
from resources.notifier import WebhookNotifier, slack_message
from resources.state import inbox


@dataclass(frozen=True)
class NotifyResult:
    delivered: int
    failed: int
    waiting: int  # still pending after this pass (to be retried)


def deliver_pending(runtime: Runtime, notifier: WebhookNotifier | None = None) -> NotifyResult:
    settings = runtime.settings
    own = notifier is None
    if notifier is None:
        if not settings.notify_webhook_url:
            raise ConfigError("the notifier is off: set CATLAS_NOTIFY_WEBHOOK_URL to a webhook URL")
        notifier = WebhookNotifier(
            settings.notify_webhook_url,
            timeout_s=settings.notify_timeout_s,
            user_agent=settings.user_agent,
        )
    delivered = failed = 0
    try:
        pending = inbox.list_changes(
            runtime.store, status="pending", max_attempts=settings.notify_max_attempts
        )
        for change in pending:
            result = notifier.send(change["change_id"], slack_message(change, change["company"]))
            if result.ok:
                delivered += int(
                    inbox.mark_delivered(runtime.store, change["change_id"], runtime.clock.now())
                )
            else:
                failed += 1
                inbox.record_failure(runtime.store, change["change_id"], result.detail)
    finally:
        if own:
            notifier.close()
    waiting = len(inbox.list_changes(runtime.store, status="pending"))
    return NotifyResult(delivered, failed, waiting)
