"""The lake rows one sensor run writes, pure: observation, snapshot, change, entity events,
failure.

`observe` decides what a run is (its outcome, whether it makes a snapshot or a change);
these builders only lay what it decided out as the lake tables hold it (schemas in
resources/lake_tables.py). Snapshot, change and event ids derive from the observation id,
so processing the same fetch again gives the same rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from catlas_assets.domain.extract.extraction import EXTRACTOR_VERSION, Extraction
from catlas_assets.domain.pipeline_data import Fetched, SensorState
from catlas_assets.domain.repair import lineage_of
from catlas_assets.domain.significance import Comparison
from catlas_assets.domain.structured_delta import StructuredDelta, display_name
from catlas_assets.domain.vocabulary import ChangeKind, ChangeStatus, FailureClass, Outcome
from catlas_assets.ids import derived_id

Row = dict[str, Any]


@dataclass(frozen=True)
class ObjectKeys:
    """The archive keys of one fetch's objects."""

    raw: str
    text: str
    blocks: str
    extraction: str = ""  # only a snapshot archives its full extraction


def validators(fetched: Fetched) -> Row:
    # Refreshed on every 200: a validator the server dropped must not be sent again.
    return {
        "etag": fetched.headers.get("etag"),
        "last_modified": fetched.headers.get("last-modified"),
    }


def observation_row(
    sensor: SensorState, fetched: Fetched, *, observation_id: str, run_id: str, now: datetime
) -> Row:
    """What every observation of the fetch carries; each outcome adds its own columns."""
    return {
        "observation_id": observation_id,
        "run_id": run_id,
        "sensor_id": sensor.id,
        "company_id": sensor.company_id,
        "surface": sensor.surface,
        "url": sensor.url,
        "final_url": fetched.final_url,
        "fetched_at": now,
        "http_status": fetched.status,
        "elapsed_ms": fetched.elapsed_ms,
        "bytes": len(fetched.body),
        "content_type": fetched.content_type or None,
        "connector": sensor.connector,
        "requests": fetched.requests,
        "extractor_version": EXTRACTOR_VERSION,
        "not_modified": False,
        "changed": False,
        "noise": False,
    }


def content_observation(
    base: Row, fetched: Fetched, *, content_hash: str, hashes: Row, raw_key: str
) -> Row:
    """The observation of a 200 that was extracted: validators, hashes and the raw object."""
    return {
        **base,
        **validators(fetched),
        "content_hash": content_hash,
        "normalized_hash": hashes["normalized_hash"],
        "structured_hash": hashes["structured_hash"],
        "object_key": raw_key,
    }


def failure_row(base: Row, fetched: Fetched, failure_class: FailureClass) -> Row:
    return {
        "observation_id": base["observation_id"],
        "run_id": base["run_id"],
        "sensor_id": base["sensor_id"],
        "company_id": base["company_id"],
        "at": base["fetched_at"],
        "failure_class": failure_class,
        "http_status": fetched.status,
        "detail": fetched.failure_detail[:500],
    }


def snapshot_id_for(observation_id: str) -> str:
    return derived_id("snp", observation_id)


def snapshot_row(
    sensor: SensorState,
    base: Row,
    *,
    version: int,
    hashes: Row,
    keys: ObjectKeys,
    extraction: Extraction,
    blocks: int,
    max_items: int,
    max_bytes: int,
) -> Row:
    """Snapshot `version` of the sensor; `extracted` is bounded, the full one is archived."""
    return {
        "snapshot_id": snapshot_id_for(base["observation_id"]),
        "run_id": base["run_id"],
        "sensor_id": sensor.id,
        "lineage_id": lineage_of(sensor.id, sensor.config),
        "company_id": sensor.company_id,
        "surface": sensor.surface,
        "version": version,
        "previous_snapshot_id": sensor.last_snapshot_id,
        "observation_id": base["observation_id"],
        "captured_at": base["fetched_at"],
        **hashes,
        "object_key": keys.raw,
        "text_key": keys.text,
        "blocks_key": keys.blocks,
        "extraction_key": keys.extraction,
        "extracted": extraction.structured_payload(max_items, max_bytes),
        "extracted_summary": {**extraction.summary(), "blocks": blocks},
        "extractor_version": EXTRACTOR_VERSION,
    }


def snapshot_observation(row: Row, *, first: bool, keys: ObjectKeys) -> Row:
    """The observation of a fetch that made a snapshot (`ok` for the first, else `changed`)."""
    return {
        **row,
        "outcome": Outcome.OK if first else Outcome.CHANGED,
        "changed": not first,
        "text_key": keys.text,
        "blocks_key": keys.blocks,
    }


def entity_event_rows(
    sensor: SensorState, events: list[Row], *, snapshot_id: str, run_id: str, now: datetime
) -> list[Row]:
    return [
        {
            "event_id": derived_id(
                "eev",
                f"{snapshot_id}:{event['entity_type']}:{event['entity_key']}:{event['event']}",
            ),
            "run_id": run_id,
            "company_id": sensor.company_id,
            "sensor_id": sensor.id,
            "lineage_id": lineage_of(sensor.id, sensor.config),
            "entity_type": event["entity_type"],
            "entity_key": event["entity_key"],
            "entity_label": entity_label(event["entity_type"], event["attributes"]),
            "event": event["event"],
            "observed_at": now,
            "snapshot_id": snapshot_id,
            "attributes": event["attributes"],
        }
        for event in events
    ]


def entity_label(entity_type: str, attributes: Any) -> str | None:
    """The readable name beside an entity's key: a job's title, a plan's or person's name."""
    if not isinstance(attributes, dict):
        return None
    label = display_name(entity_type, attributes)
    return None if label == "?" else label


def change_id_for(snapshot_id: str) -> str:
    return derived_id("chg", snapshot_id)


def change_row(
    sensor: SensorState,
    *,
    snapshot_id: str,
    run_id: str,
    now: datetime,
    comparison: Comparison,
    kind: ChangeKind,
    status: ChangeStatus,
    summary: str,
    delta: StructuredDelta,
) -> Row:
    return {
        "change_id": change_id_for(snapshot_id),
        "run_id": run_id,
        "sensor_id": sensor.id,
        "lineage_id": lineage_of(sensor.id, sensor.config),
        "company_id": sensor.company_id,
        "surface": sensor.surface,
        "snapshot_id": snapshot_id,
        "previous_snapshot_id": sensor.last_snapshot_id,
        "detected_at": now,
        "significance": comparison.significance,
        "kind": kind,
        "status": status,
        "summary": summary,
        "structured_delta": delta,
    }
