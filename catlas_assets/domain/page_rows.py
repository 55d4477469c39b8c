"""A webpage seen as the pipeline sees a sensor, and its lake rows re-keyed to `webpage_id`.

A site crawl runs the same pure decision (`observe`) as a sensor run; these helpers build
the state it reads from a `webpages` row and lay its rows out for the page, pure.
"""

from __future__ import annotations

from typing import Any

from catlas_assets.domain.pipeline_data import SensorState
from catlas_assets.domain.urls import registrable_domain
from catlas_assets.domain.vocabulary import Outcome, PageEvent, SensorStatus

Row = dict[str, Any]

# A page's history is a sensor's: observations, snapshots, changes, entity events, failures.
PAGE_TABLES = ("observations", "snapshots", "changes", "entity_events", "failures")

# The sensor-state fields a page keeps, and the column that holds each.
KEPT = {
    "etag": "etag",
    "last_modified": "last_modified",
    "normalized_hash": "normalized_hash",
    "structured_hash": "structured_hash",
    "snapshot_version": "snapshot_version",
    "last_snapshot_id": "last_snapshot_id",
    "last_blocks_key": "blocks_key",
    "last_text_key": "text_key",
    "last_extraction_key": "extraction_key",
}

EVENT_OF = {
    Outcome.OK: PageEvent.NEW,
    Outcome.CHANGED: PageEvent.CHANGED,
    Outcome.UNCHANGED: PageEvent.UNCHANGED,
    Outcome.NOT_MODIFIED: PageEvent.UNCHANGED,
    Outcome.FAILED: PageEvent.FAILED,
    Outcome.SKIPPED: PageEvent.SKIPPED,
    Outcome.REDIRECTED: PageEvent.REDIRECTED,
}


def page_state(
    page: Row, config: Row, *, url: str | None = None, fresh: bool = False
) -> SensorState:
    """The page as `observe` reads a sensor; `fresh` forgets its hashes (re-process all)."""
    target = url or page["url"]
    return SensorState(
        id=page["id"],
        company_id=config["company_id"],
        surface=config["surface"],
        url=target,
        connector="generic_html",
        status=SensorStatus.ACTIVE,
        base_interval_s=86400,
        current_interval_s=86400,
        quality_score=50.0,
        etag=page["etag"],
        last_modified=page["last_modified"],
        normalized_hash=None if fresh else page["normalized_hash"],
        structured_hash=None if fresh else page["structured_hash"],
        snapshot_version=page["snapshot_version"],
        last_snapshot_id=page["last_snapshot_id"],
        last_blocks_key=page["blocks_key"],
        last_text_key=page["text_key"],
        last_extraction_key=page["extraction_key"],
        domain=registrable_domain(target),
    )


def page_rows(rows: dict[str, list[Row]], page_id: int, config_name: str) -> dict[str, list[Row]]:
    """`observe`'s rows for a page: keyed by `webpage_id`, no sensor and no sensor lineage."""
    out: dict[str, list[Row]] = {}
    for table in PAGE_TABLES:
        for row in rows.get(table) or []:
            row = {**row, "sensor_id": None, "webpage_id": page_id}
            if "lineage_id" in row:
                row["lineage_id"] = None  # a lineage is a chain of sensors
            if table == "observations":
                row["crawl_config"] = config_name
            out.setdefault(table, []).append(row)
    return out


def kept_state(sensor_update: Row) -> Row:
    return {column: sensor_update[key] for key, column in KEPT.items() if key in sensor_update}
