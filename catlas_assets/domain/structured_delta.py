"""The `structured_delta` of a change (a `changes` row's JSON column), and its summary sentence.

Shape (every key always present; lists may be empty)::

    {
      "added":    {"job": [Item, ...], "pricing_plan": [...], ...},   # entities new on the page
      "removed":  {"job": [Item, ...], ...},                          # no longer listed / removed
      "updated":  {"pricing_plan": [Update, ...], ...},               # same key, new attributes
      "status":   null | {"indicator": [before, after],
                          "components": [{"name", "before", "after"}]},
      "blocks_added":   ["text", ...],    # first 20 content blocks that appeared
      "blocks_removed": ["text", ...],    # first 20 that disappeared
      "reasons":  ["why the significance is what it is", ...],
      "notes":    ["e.g. the parse-degradation guard held removals back", ...]
    }

    Item   = {"key", "name", "attributes": {...}}
    Update = {"key", "name", "changes": {"field": [before, after], ...}, "attributes": {...}}
"""

from __future__ import annotations

from typing import Any, TypedDict


class DeltaItem(TypedDict):
    key: str
    name: str
    attributes: dict[str, Any]


class DeltaUpdate(TypedDict):
    key: str
    name: str
    changes: dict[str, list[Any]]
    attributes: dict[str, Any]  # after the update


class StatusDelta(TypedDict):
    indicator: list[str | None]
    components: list[dict[str, Any]]


class StructuredDelta(TypedDict):
    added: dict[str, list[DeltaItem]]
    removed: dict[str, list[DeltaItem]]
    updated: dict[str, list[DeltaUpdate]]
    status: StatusDelta | None
    blocks_added: list[str]
    blocks_removed: list[str]
    reasons: list[str]
    notes: list[str]


def empty_delta() -> StructuredDelta:
    return {
        "added": {},
        "removed": {},
        "updated": {},
        "status": None,
        "blocks_added": [],
        "blocks_removed": [],
        "reasons": [],
        "notes": [],
    }


def has_typed_change(delta: StructuredDelta) -> bool:
    return bool(
        any(delta["added"].values())
        or any(delta["removed"].values())
        or any(delta["updated"].values())
        or delta["status"]
    )


def display_name(entity_type: str, item: dict[str, Any]) -> str:
    first = ("title", "name") if entity_type in ("job", "news") else ("name", "title")
    return str(item.get(first[0]) or item.get(first[1]) or item.get("key") or "?")


CURRENCY_SIGNS = {"USD": "$", "EUR": "€", "GBP": "£"}
NOUNS = {
    "job": ("job", "jobs"),
    "pricing_plan": ("plan", "plans"),
    "news": ("news item", "news items"),
    "person": ("person", "people"),
    "product": ("product", "products"),
    "location": ("location", "locations"),
    "incident": ("incident", "incidents"),
}


def _money(attributes: dict[str, Any]) -> str:
    price = attributes.get("price")
    if price is None:
        return attributes.get("price_text") or "no listed price"
    sign = CURRENCY_SIGNS.get(attributes.get("currency") or "", "")
    amount = f"{price:g}" if isinstance(price, float) else str(price)
    period = attributes.get("billing_period")
    return f"{sign}{amount}" + (f" per {period}" if period else "")


def _with_place(item: DeltaItem) -> str:
    locations = item["attributes"].get("locations") or []
    return item["name"] + (f" ({'; '.join(locations)})" if locations else "")


def _listing(items: list[str], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _count(entity_type: str, n: int) -> str:
    one, many = NOUNS.get(entity_type, (entity_type, entity_type + "s"))
    return f"{n} {one if n == 1 else many}"


def _status_parts(status: StatusDelta | None) -> list[str]:
    if not status:
        return []
    parts = []
    before, after = status["indicator"]
    if before != after:
        parts.append(f"status {after} (was {before})")
    moved = [f"{c['name']} {c['after']}" for c in status["components"]]
    if moved:
        parts.append("components: " + _listing(moved))
    return parts


def _job_parts(
    added: list[DeltaItem], removed: list[DeltaItem], updated: list[DeltaUpdate]
) -> list[str]:
    parts = []
    if added:
        parts.append(
            f"{_count('job', len(added))} posted: " + _listing([_with_place(i) for i in added])
        )
    if removed:
        parts.append(
            f"{_count('job', len(removed))} no longer listed: "
            + _listing([_with_place(i) for i in removed])
        )
    if updated:
        parts.append(
            f"{_count('job', len(updated))} updated: "
            + _listing([f"{u['name']} ({', '.join(sorted(u['changes']))})" for u in updated])
        )
    return parts


def _plan_parts(
    added: list[DeltaItem], removed: list[DeltaItem], updated: list[DeltaUpdate]
) -> list[str]:
    parts = [f"new plan {item['name']}: {_money(item['attributes'])}" for item in added]
    for update in updated:
        changes = update["changes"]
        if any(
            k in changes for k in ("price", "currency", "billing_period", "prices", "price_text")
        ):
            after = dict(update.get("attributes") or {})
            before = {**after, **{k: v[0] for k, v in changes.items()}}
            old, new = _money(before), _money(after)
            period = after.get("billing_period")
            suffix = f" per {period}"
            if period and old.endswith(suffix) and new.endswith(suffix):
                old = old.removesuffix(suffix)
            parts.append(f"{update['name']}: {old} → {new}")
        else:
            parts.append(f"{update['name']}: {', '.join(sorted(changes))} changed")
    parts.extend(f"plan removed: {item['name']}" for item in removed)
    return parts


def _incident_parts(
    added: list[DeltaItem], removed: list[DeltaItem], updated: list[DeltaUpdate]
) -> list[str]:
    parts = []
    for item in added:
        a = item["attributes"]
        parts.append(f"incident {item['name']} ({a.get('impact')}, {a.get('status')})")
    parts.extend(f"incident {item['name']} closed" for item in removed)
    parts.extend(
        f"incident {update['name']} updated: {', '.join(sorted(update['changes']))}"
        for update in updated
    )
    return parts


def _entity_parts(
    entity_type: str, added: list[DeltaItem], removed: list[DeltaItem], updated: list[DeltaUpdate]
) -> list[str]:
    parts = []
    for items, verb in ((added, "added"), (removed, "removed"), (updated, "updated")):
        if items:
            names = [i["name"] for i in items]
            parts.append(f"{_count(entity_type, len(items))} {verb}: " + _listing(names))
    return parts


def _block_parts(delta: StructuredDelta) -> list[str]:
    parts = []
    for blocks, verb in ((delta["blocks_added"], "added"), (delta["blocks_removed"], "removed")):
        if blocks:
            parts.append(
                f"{len(blocks)} block(s) {verb}: " + _listing([repr(t[:60]) for t in blocks])
            )
    return parts


def summary(delta: StructuredDelta) -> str:
    """One sentence an analyst can read ("2 jobs posted: ...; Pro: $49 → $59 per month")."""
    parts = _status_parts(delta["status"])
    for entity_type in sorted(set(delta["added"]) | set(delta["removed"]) | set(delta["updated"])):
        added = delta["added"].get(entity_type, [])
        removed = delta["removed"].get(entity_type, [])
        updated = delta["updated"].get(entity_type, [])
        if entity_type == "job":
            parts += _job_parts(added, removed, updated)
        elif entity_type == "pricing_plan":
            parts += _plan_parts(added, removed, updated)
        elif entity_type == "incident":
            parts += _incident_parts(added, removed, updated)
        else:
            parts += _entity_parts(entity_type, added, removed, updated)
    if not parts:
        parts = _block_parts(delta)
    if delta["notes"]:
        # A note (the degradation guard) says more than the block churn that came with it.
        parts.insert(0, "note: " + "; ".join(delta["notes"]))
    return "; ".join(parts) if parts else "no content change"
