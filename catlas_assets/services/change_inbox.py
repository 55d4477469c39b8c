"""Read model of the change inbox: what `catlas changes` lists and what waits for delivery."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from catlas_assets.services.catalog import resolve_company
from catlas_assets.services.runtime import Runtime
from resources.state import inbox


def list_changes(
    runtime: Runtime,
    *,
    pending: bool = False,
    company: str | None = None,
    since: datetime | None = None,
) -> list[dict[str, Any]]:
    """Inbox entries oldest first: every one, or only those not delivered yet (`pending`)."""
    company_id = resolve_company(runtime, company)["id"] if company else None
    return inbox.list_changes(
        runtime.store,
        status="pending" if pending else None,
        company_id=company_id,
        since=since,
    )


def awaiting_delivery(runtime: Runtime) -> list[dict[str, Any]]:
    """Pending changes a delivery pass would still try (fewer attempts than the maximum)."""
    return inbox.list_changes(
        runtime.store, status="pending", max_attempts=runtime.settings.notify_max_attempts
    )
