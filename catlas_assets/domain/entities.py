"""`entities` derived from `entity_events` (SCD2): one row per version of an entity.

Pure: events in, rows out. A version starts at `added` or `updated` (valid_from) and ends
at the next version, at `superseded`, `removed` or `no_longer_listed` (valid_to). Per
entity: first_seen_at (first event), last_seen_at (last time it was listed: added, seen,
updated), removed_at (when it left and did not come back), status `active` or `removed`.
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


def derive(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    by_entity: dict[tuple[int, int, str, str], list[dict[str, Any]]] = defaultdict(list)
    for event in events:
        key = (event["company_id"], event["sensor_id"], event["entity_type"], event["entity_key"])
        by_entity[key].append(event)
    rows: list[dict[str, Any]] = []
    for (company_id, sensor_id, entity_type, entity_key), items in sorted(by_entity.items()):
        # `superseded` sorts before the `updated` written at the same instant.
        items.sort(key=lambda e: (e["observed_at"], e["event"] != "superseded", e["event_id"]))
        first_seen = items[0]["observed_at"]
        listed = [e["observed_at"] for e in items if e["event"] in LISTED]
        last_seen: datetime | None = max(listed) if listed else None
        removed_at = items[-1]["observed_at"] if items[-1]["event"] in CLOSES else None
        versions: list[dict[str, Any]] = []
        for event in items:
            if event["event"] in OPENS or (event["event"] == "seen" and not versions):
                if versions and versions[-1]["valid_to"] is None:
                    versions[-1]["valid_to"] = event["observed_at"]
                versions.append(
                    {
                        "valid_from": event["observed_at"],
                        "valid_to": None,
                        "attributes": event["attributes"],
                        "entity_label": event.get("entity_label"),
                    }
                )
            elif (
                (event["event"] in CLOSES or event["event"] == "superseded")
                and versions
                and versions[-1]["valid_to"] is None
            ):
                versions[-1]["valid_to"] = event["observed_at"]
        for index, version in enumerate(versions):
            ident = f"{company_id}:{sensor_id}:{entity_type}:{entity_key}:{version['valid_from'].isoformat()}"
            attributes = version["attributes"]
            rows.append(
                {
                    "entity_version_id": "ent_" + hashlib.sha256(ident.encode()).hexdigest()[:24],
                    "company_id": company_id,
                    "sensor_id": sensor_id,
                    "entity_type": entity_type,
                    "entity_key": entity_key,
                    "entity_label": version["entity_label"] or _label(entity_type, attributes),
                    "version": index + 1,
                    "first_seen_at": first_seen,
                    "last_seen_at": last_seen,
                    "removed_at": removed_at,
                    "valid_from": version["valid_from"],
                    "valid_to": version["valid_to"],
                    "status": "removed" if removed_at is not None else "active",
                    "is_current": version["valid_to"] is None,
                    "attributes": attributes
                    if isinstance(attributes, str)
                    else json.dumps(attributes, sort_keys=True),
                }
            )
    return rows


def _label(entity_type: str, attributes: Any) -> str | None:
    """An event written before entity_label existed: the name from its attributes."""
    if isinstance(attributes, str):
        try:
            attributes = json.loads(attributes)
        except ValueError:
            return None
    return entity_label(entity_type, attributes)
