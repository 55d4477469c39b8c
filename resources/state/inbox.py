"""The change inbox's reads and delivery bookkeeping (the table lives in schema.py)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select, update

from resources.state.schema import change_inbox, companies
from resources.state.store import StateStore


def list_changes(
    store: StateStore,
    *,
    status: str | None = None,
    company_id: int | None = None,
    since: datetime | None = None,
    max_attempts: int | None = None,
) -> list[dict[str, Any]]:
    query = (
        select(change_inbox, companies.c.name.label("company"))
        .join(companies, companies.c.id == change_inbox.c.company_id)
        .order_by(change_inbox.c.detected_at, change_inbox.c.change_id)
    )
    if status:
        query = query.where(change_inbox.c.status == status)
    if company_id is not None:
        query = query.where(change_inbox.c.company_id == company_id)
    if since is not None:
        query = query.where(change_inbox.c.detected_at >= since)
    if max_attempts is not None:
        query = query.where(change_inbox.c.attempts < max_attempts)
    with store.engine.connect() as conn:
        return [dict(r) for r in conn.execute(query).mappings()]


def mark_delivered(store: StateStore, change_id: str, now: datetime) -> bool:
    """True when this call delivered it (a change is marked once, whoever races)."""
    with store.transaction() as conn:
        result = conn.execute(
            update(change_inbox)
            .where(change_inbox.c.change_id == change_id, change_inbox.c.status == "pending")
            .values(status="delivered", delivered_at=now, attempts=change_inbox.c.attempts + 1)
        )
        return result.rowcount == 1


def record_failure(store: StateStore, change_id: str, error: str) -> None:
    with store.transaction() as conn:
        conn.execute(
            update(change_inbox)
            .where(change_inbox.c.change_id == change_id, change_inbox.c.status == "pending")
            .values(attempts=change_inbox.c.attempts + 1, last_error=error[:500])
        )
