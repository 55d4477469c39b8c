"""The `connectors` table: one row per connector with its running stats (JSON)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, insert, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert

from catlas_assets.domain.connector_tally import StatsTally
from resources.state.schema import connectors
from resources.state.store import StateStore


def apply_change(
    conn: Connection,
    store: StateStore,
    *,
    name: str,
    kind: str,
    version: str,
    now: datetime,
    tally: StatsTally,
) -> None:
    """Add `tally` to the connector's stats, in the caller's transaction (which holds the
    write lock: no lost update)."""
    query = select(connectors.c.stats).where(connectors.c.name == name)
    if store.is_postgres:
        # Several workers may meet a new connector at once: create its row race-free,
        # then lock it (SQLite's write lock already serialises this transaction).
        conn.execute(
            postgresql_insert(connectors)
            .values(name=name, kind=kind, version=version, enabled=True, stats={}, updated_at=now)
            .on_conflict_do_nothing(index_elements=["name"])
        )
        query = query.with_for_update()
    row = conn.execute(query).first()
    if row is None:
        conn.execute(
            insert(connectors).values(
                name=name,
                kind=kind,
                version=version,
                enabled=True,
                stats=tally.applied_to({}),
                updated_at=now,
            )
        )
    else:
        conn.execute(
            update(connectors)
            .where(connectors.c.name == name)
            .values(stats=tally.applied_to(row[0] or {}), version=version, updated_at=now)
        )


def all_stats(store: StateStore) -> dict[str, dict[str, Any]]:
    with store.engine.connect() as conn:
        return {r.name: dict(r._mapping) for r in conn.execute(select(connectors))}
