"""Derive the `entities` lake table (SCD2) from `entity_events` (the daily asset's work)."""

from __future__ import annotations

from dataclasses import dataclass

from catlas_assets.domain.entities import derive
from catlas_assets.services.runtime import Runtime

# Rewritten whole at each derivation: each hour partition's file has this fixed name, so a
# new derivation replaces the old one instead of adding to it.
BATCH_ID = "derived"


@dataclass(frozen=True)
class Derived:
    events: int
    rows: int
    current: int
    removed: int


def derive_entities(runtime: Runtime) -> Derived:
    con = runtime.lake.connect()
    cursor = con.execute(
        "SELECT event_id, company_id, sensor_id, entity_type, entity_key, entity_label, event, "
        "observed_at, attributes FROM entity_events"
    )
    columns = [d[0] for d in cursor.description]
    events = [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    rows = derive(events)
    if rows:
        runtime.lake.write_rows("entities", rows, BATCH_ID)
    return Derived(
        events=len(events),
        rows=len(rows),
        current=sum(1 for r in rows if r["is_current"] and r["status"] == "active"),
        removed=sum(1 for r in rows if r["is_current"] and r["status"] == "removed"),
    )
