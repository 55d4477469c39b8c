"""Which attribute changes of an entity are material: the ones an analyst is told about.

A job that keeps its title, place, department, employment type and pay but shows a new
`updated_at`, a re-resolved posting date, a new URL slug or requisition number has not
changed in any way that matters; an ATS touches `updated_at` whenever a recruiter saves,
and boards with relative dates move their posting date daily. Such a job is `seen`, not
`updated` (reconcile.py), so it raises neither a change nor an entity event.

For jobs the material attributes are an allow-list (what the job *is*); for every other
entity type the book-keeping attributes below (timestamps of the record, counters, sort
positions) are immaterial and everything else is material.
"""

from __future__ import annotations

from datetime import date
from typing import Any

MATERIAL_JOB_FIELDS = frozenset(
    {
        "title",
        "locations",
        "department",
        "team",
        "employment_type",
        "workplace_type",
        "remote",
        "compensation",
    }
)
# Record book-keeping, never what an entity says: timestamps, counters, order.
BOOKKEEPING_FIELDS = frozenset(
    {
        "updated_at",
        "modified_at",
        "last_updated",
        "position",
        "sort",
        "sort_order",
        "order",
        "rank",
        "views",
        "view_count",
        "applicants",
        "applicant_count",
        "count",
    }
)


def material(entity_type: str, field: str) -> bool:
    if entity_type == "job":
        return field in MATERIAL_JOB_FIELDS
    return field not in BOOKKEEPING_FIELDS


def material_changes(
    entity_type: str, before: dict[str, Any], after: dict[str, Any]
) -> dict[str, list[Any]]:
    """`{field: [before, after]}` for the material attributes that differ."""
    return {
        k: [before.get(k), after.get(k)]
        for k in sorted(set(before) | set(after))
        if before.get(k) != after.get(k) and material(entity_type, k)
    }


# A posting date resolved from relative text can move by a day (fetched near midnight, a
# board in another time zone) or fall open ("30+ Days Ago"): it is the same date.
DATE_JITTER_DAYS = 1


def _day(value: Any) -> date | None:
    if not isinstance(value, str):
        return None
    try:
        return date.fromisoformat(value[:10])
    except ValueError:
        return None


def settle_dates(
    entity_type: str, before: dict[str, Any] | None, after: dict[str, Any]
) -> dict[str, Any]:
    """`after`, keeping the job's earlier `posted_at` when the new one is the same date
    re-resolved (within a day) or no date at all, so the entity's history does not move."""
    if entity_type != "job" or before is None:
        return after
    was, now = before.get("posted_at"), after.get("posted_at")
    if was is None or was == now:
        return after
    was_day, now_day = _day(was), _day(now)
    if now is None or (
        was_day is not None
        and now_day is not None
        and abs((now_day - was_day).days) <= DATE_JITTER_DAYS
    ):
        return {**after, "posted_at": was}
    return after
