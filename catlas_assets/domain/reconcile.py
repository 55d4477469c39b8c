"""Entity reconciliation, scoped to one sensor: previous full extraction vs the new one.

Identity per type: jobs by their fingerprint key (vendor id, else title + locations),
people / products / locations by `name_norm`, pricing plans by name (versioned: a new
price supersedes the old version), news by canonical URL, incidents by id.

Events: `added` (new key), `seen` (same key, same attributes: refreshes last_seen_at),
`updated` (same key, a material attribute changed: materiality.py; a new `updated_at` or
posting date alone is `seen`), `superseded` (a pricing plan's previous version,
closed with valid_to), `no_longer_listed` (a job gone), `removed` (any other entity gone).

Removals happen only from a trustworthy extraction: a structured answer (ATS or
Statuspage API, feed) or at least one entity extracted. The parse-degradation guard
refuses removals when an HTML listing drops more than 70 % of at least 10 entities; the
entities it held back stay in the sensor's current set, so that the listing's recovery
is not mistaken for new entities.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from catlas_assets.domain.extract.extraction import Extraction
from catlas_assets.domain.materiality import material_changes, settle_dates
from catlas_assets.domain.structured_delta import DeltaItem, DeltaUpdate, StatusDelta, display_name

GUARD_MIN_ENTITIES = 10
GUARD_MAX_DROP = 0.70
IGNORED_ATTRIBUTES = frozenset({"key", "summary"})


@dataclass
class Reconciliation:
    events: list[dict[str, Any]] = field(
        default_factory=list
    )  # entity_type, entity_key, event, attributes
    added: dict[str, list[DeltaItem]] = field(default_factory=dict)
    removed: dict[str, list[DeltaItem]] = field(default_factory=dict)
    updated: dict[str, list[DeltaUpdate]] = field(default_factory=dict)
    status: StatusDelta | None = None
    notes: list[str] = field(default_factory=list)
    degraded: bool = False
    current: Extraction | None = None  # the entity set carried forward (held-back merged in)


def _attributes(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k not in IGNORED_ATTRIBUTES}


def _item(entity_type: str, item: dict[str, Any]) -> DeltaItem:
    return {
        "key": item["key"],
        "name": display_name(entity_type, item),
        "attributes": _attributes(item),
    }


def trustworthy(extraction: Extraction) -> bool:
    return extraction.structured or extraction.count() >= 1


def follow_plans_by_price(
    old: list[dict[str, Any]], new: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Pricing cards sharing one name (`team`, `team#2`: extract/html.py) are followed by
    their price, not their place on the page: a card at a price the plan had keeps that
    plan's key, so a new card added above an old one is the new plan."""
    old_price = {i["key"]: i.get("price") for i in old}
    groups: dict[str, list[dict[str, Any]]] = {}
    for item in new:
        groups.setdefault(item["key"].split("#", 1)[0], []).append(item)
    out: list[dict[str, Any]] = []
    for base, group in groups.items():
        keys = [k for k in old_price if k.split("#", 1)[0] == base]
        if len(group) < 2 or not keys:
            out.extend(group)
            continue
        kept: dict[int, str] = {}
        for index, item in enumerate(group):
            match = next(
                (k for k in keys if old_price[k] == item.get("price") and k not in kept.values()),
                None,
            )
            if match is not None:
                kept[index] = match
        spare = (
            k
            for k in (base, *(f"{base}#{n}" for n in range(2, len(group) + len(keys) + 2)))
            if k not in kept.values()
        )
        out.extend({**item, "key": kept.get(i) or next(spare)} for i, item in enumerate(group))
    return sorted(out, key=lambda i: i["key"])


def reconcile(previous: Extraction | None, new: Extraction) -> Reconciliation:
    result = Reconciliation()
    new = new.canonical()
    before = previous.canonical() if previous is not None else None
    if before is not None and "pricing_plan" in new.entities:
        new.entities["pricing_plan"] = follow_plans_by_price(
            before.entities.get("pricing_plan", []), new.entities["pricing_plan"]
        )
    carried = {t: list(items) for t, items in new.entities.items()}
    types = sorted(set(new.entities) | (set(before.entities) if before else set()))
    can_remove = trustworthy(new)
    for entity_type in types:
        old = {i["key"]: i for i in (before.entities.get(entity_type, []) if before else [])}
        now = {
            i["key"]: settle_dates(entity_type, old.get(i["key"]), i)
            for i in new.entities.get(entity_type, [])
        }
        if entity_type in carried:
            carried[entity_type] = [now[i["key"]] for i in carried[entity_type]]
        for key in sorted(now):
            item = now[key]
            if key not in old:
                result.events.append(_event(entity_type, key, "added", item))
                result.added.setdefault(entity_type, []).append(_item(entity_type, item))
                continue
            was = _attributes(old[key])
            attrs = _attributes(item)
            changes = material_changes(entity_type, was, attrs)
            if not changes:
                # Same entity, at most book-keeping moved (materiality.py): seen again.
                result.events.append(_event(entity_type, key, "seen", item))
                continue
            if entity_type == "pricing_plan":
                result.events.append(_event(entity_type, key, "superseded", old[key]))
            result.events.append(_event(entity_type, key, "updated", item))
            result.updated.setdefault(entity_type, []).append(
                {
                    "key": key,
                    "name": display_name(entity_type, item),
                    "changes": changes,
                    "attributes": attrs,
                }
            )
        gone = sorted(set(old) - set(now))
        if not gone:
            continue
        dropped_share = len(gone) / len(old) if old else 0.0
        if not can_remove:
            result.notes.append(
                f"{len(gone)} {entity_type} entities not found, but nothing was extracted: "
                "removals held back"
            )
            carried.setdefault(entity_type, []).extend(old[k] for k in gone)
            result.degraded = True
            continue
        if not new.structured and len(old) >= GUARD_MIN_ENTITIES and dropped_share > GUARD_MAX_DROP:
            result.notes.append(
                f"parse-degradation guard: the {entity_type} listing dropped from {len(old)} to "
                f"{len(now)} entities ({dropped_share:.0%}); removals held back"
            )
            carried.setdefault(entity_type, []).extend(old[k] for k in gone)
            result.degraded = True
            continue
        event = "no_longer_listed" if entity_type == "job" else "removed"
        for key in gone:
            result.events.append(_event(entity_type, key, event, old[key]))
            result.removed.setdefault(entity_type, []).append(_item(entity_type, old[key]))
    result.status = _status_delta(before.status if before else None, new.status)
    result.current = Extraction(
        new.connector,
        new.surface,
        carried,
        new.status,
        dict(new.page),
        new.confidence,
        new.structured,
        new.extractor_version,
    ).canonical()
    return result


def _event(entity_type: str, key: str, event: str, item: dict[str, Any]) -> dict[str, Any]:
    return {
        "entity_type": entity_type,
        "entity_key": key,
        "event": event,
        "attributes": _attributes(item),
    }


def _status_delta(
    before: dict[str, Any] | None, after: dict[str, Any] | None
) -> StatusDelta | None:
    if before is None or after is None:
        return None
    was = {c["name"]: c["status"] for c in before.get("components", [])}
    moved = [
        {"name": c["name"], "before": was.get(c["name"]), "after": c["status"]}
        for c in after.get("components", [])
        if was.get(c["name"]) != c["status"]
    ]
    if before.get("indicator") == after.get("indicator") and not moved:
        return None
    return {"indicator": [before.get("indicator"), after.get("indicator")], "components": moved}
