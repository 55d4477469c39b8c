"""`entities` derived from `entity_events` (SCD2): one row per version of an entity.

Pure: state and events in, state out. A version starts at `added` or `updated`
(valid_from) and ends at the next version, at `superseded`, `removed` or
`no_longer_listed` (valid_to). Per entity: first_seen_at (first event), last_seen_at (last
time it was listed: added, seen, updated), removed_at (when it left and did not come back),
status `active` or `removed`.

`advance` moves a state forward by one batch of later events (the daily asset gives it the
previous day's state and one day of events); `derive` is `advance` from nothing.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from datetime import datetime
from typing import Any

from catlas_assets.domain.lake_rows import entity_label

OPENS = frozenset({"added", "updated"})
LISTED = frozenset({"added", "seen", "updated"})
CLOSES = frozenset({"removed", "no_longer_listed"})

EntityKey = tuple[int, int, str, str]
Row = dict[str, Any]


def derive(events: list[Row]) -> list[Row]:
    return advance([], events)


def _key(row: Row) -> EntityKey:
    # One history per surface across moves: grouped by the chain's first sensor.
    lineage = row.get("lineage_id") or row["sensor_id"]
    return (row["company_id"], lineage, row["entity_type"], row["entity_key"])


def advance(state: list[Row], events: list[Row]) -> list[Row]:
    """The state after `events`, all later than (or at) the state's last event."""
    versions: dict[EntityKey, list[Row]] = defaultdict(list)
    for row in state:
        versions[_key(row)].append(dict(row))
    by_entity: dict[EntityKey, list[Row]] = defaultdict(list)
    for event in events:
        by_entity[_key(event)].append(event)
    for key, items in by_entity.items():
        versions[key] = _apply(key, sorted(versions[key], key=lambda r: r["version"]), items)
    return [row for key in sorted(versions) for row in versions[key]]


def _apply(key: EntityKey, versions: list[Row], items: list[Row]) -> list[Row]:
    # `superseded` sorts before the `updated` written at the same instant.
    items = sorted(
        items, key=lambda e: (e["observed_at"], e["event"] != "superseded", e["event_id"])
    )
    first_seen = versions[0]["first_seen_at"] if versions else items[0]["observed_at"]
    listed = [e["observed_at"] for e in items if e["event"] in LISTED]
    previous_seen = versions[0]["last_seen_at"] if versions else None
    last_seen: datetime | None = max(
        [*listed, *([previous_seen] if previous_seen else [])], default=None
    )
    removed_at = items[-1]["observed_at"] if items[-1]["event"] in CLOSES else None
    sensor_id = items[-1]["sensor_id"]  # the sensor that saw it last
    for event in items:
        is_open = bool(versions) and versions[-1]["valid_to"] is None
        if event["event"] in OPENS or (event["event"] == "seen" and not versions):
            if is_open:
                versions[-1]["valid_to"] = event["observed_at"]
            versions.append(_version(key, len(versions) + 1, event))
        elif (event["event"] in CLOSES or event["event"] == "superseded") and is_open:
            versions[-1]["valid_to"] = event["observed_at"]
    for version in versions:
        version.update(
            sensor_id=sensor_id,
            first_seen_at=first_seen,
            last_seen_at=last_seen,
            removed_at=removed_at,
            status="removed" if removed_at is not None else "active",
            is_current=version["valid_to"] is None,
        )
    return versions


def _version(key: EntityKey, number: int, event: Row) -> Row:
    company_id, lineage_id, entity_type, entity_key = key
    valid_from = event["observed_at"]
    ident = f"{company_id}:{lineage_id}:{entity_type}:{entity_key}:{valid_from.isoformat()}"
    attributes = event["attributes"]
    return {
        "entity_version_id": "ent_" + hashlib.sha256(ident.encode()).hexdigest()[:24],
        "company_id": company_id,
        "sensor_id": event["sensor_id"],
        "lineage_id": lineage_id,
        "entity_type": entity_type,
        "entity_key": entity_key,
        "entity_label": event.get("entity_label") or _label(entity_type, event["attributes"]),
        "version": number,
        "valid_from": valid_from,
        "valid_to": None,
        "attributes": attributes
        if isinstance(attributes, str)
        else json.dumps(attributes, sort_keys=True),
    }


def _label(entity_type: str, attributes: Any) -> str | None:
    """An event written before entity_label existed: the name from its attributes."""
    if isinstance(attributes, str):
        try:
            attributes = json.loads(attributes)
        except ValueError:
            return None
    return entity_label(entity_type, attributes)
