"""Derive the `entities` lake table (SCD2) one UTC day at a time (the daily asset's work).

Day D's state is day D-1's state advanced by day D's `entity_events`: no derivation reads
more than one day of events. A day whose previous state is missing has it derived first,
walking forward from the last day that has one (or from the first day with events).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from catlas_assets.domain.entities import advance
from catlas_assets.services.runtime import Runtime

EVENT_COLUMNS = (
    "event_id, company_id, sensor_id, lineage_id, entity_type, entity_key, entity_label, event, "
    "observed_at, attributes"
)


@dataclass(frozen=True)
class Derived:
    day: date
    events: int  # events of this day
    rows: int  # versions in the state as of this day
    current: int
    removed: int
    days_derived: int  # this day plus the missing days before it derived on the way


def state_partition(day: date) -> str:
    return f"date={day:%Y-%m-%d}/hour=00"


def _days_with_state(runtime: Runtime) -> set[date]:
    return {
        date.fromisoformat(p.split("/")[0].removeprefix("date="))
        for p in runtime.lake.partitions("entities")
    }


def _first_event_day(runtime: Runtime) -> date | None:
    if not runtime.lake.files("entity_events"):
        return None
    con = runtime.lake.connect()
    try:
        row = con.execute("SELECT min(date) FROM entity_events").fetchone()
    finally:
        con.close()
    return row[0] if row and row[0] is not None else None


def _events_of(runtime: Runtime, day: date) -> list[dict[str, Any]]:
    if not runtime.lake.files("entity_events"):
        return []
    con = runtime.lake.connect()
    try:
        # A sensor's surface is one history across moves; a crawled page's items stay in
        # entity_events (joined to `webpages`), outside the SCD2 table keyed by lineage.
        cursor = con.execute(
            f"SELECT {EVENT_COLUMNS} FROM entity_events WHERE date = ? AND sensor_id IS NOT NULL",
            [day],
        )
        columns = [d[0] for d in cursor.description]
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
    finally:
        con.close()


def _state_of(runtime: Runtime, day: date) -> list[dict[str, Any]]:
    return runtime.lake.read("entities", state_partition(day)).to_pylist()


def derive_day(runtime: Runtime, day: date) -> Derived:
    """Write day `day`'s state (deriving any missing days before it first)."""
    have = _days_with_state(runtime)
    earlier = [d for d in have if d < day]
    start = max(earlier) + timedelta(days=1) if earlier else _first_event_day(runtime)
    days = []
    if start is not None:
        days = [start + timedelta(days=n) for n in range((day - start).days)]
    state = _state_of(runtime, max(earlier)) if earlier else []
    events: list[dict[str, Any]] = []
    for current in [*days, day]:
        events = _events_of(runtime, current)
        state = advance(state, events)
        runtime.lake.replace_partition("entities", state_partition(current), state)
    return Derived(
        day=day,
        events=len(events),
        rows=len(state),
        current=sum(1 for r in state if r["is_current"] and r["status"] == "active"),
        removed=sum(1 for r in state if r["is_current"] and r["status"] == "removed"),
        days_derived=len(days) + 1,
    )


def derive_entities(runtime: Runtime, day: date | None = None) -> Derived:
    """Derive `entities` up to `day` (default: today by the clock)."""
    return derive_day(runtime, day or runtime.clock.now().date())
