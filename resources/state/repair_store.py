"""What repair and the review queue write: attempts, migrations, retirements, review items.

A migration is one transaction: the old sensor `retired` with `config.successor_id`, the
new one `pending` with `config.predecessor_id` and the old one's last snapshot state (so
its first fetch is compared with the predecessor's last snapshot), and the old sensor's
open `sensor_migration` items closed. History is never deleted.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Connection, and_, insert, or_, select, update

from catlas_assets.domain.repair import REPAIRABLE
from catlas_assets.domain.vocabulary import (
    DiscoveryMethod,
    FailureClass,
    ReviewKind,
    ReviewStatus,
    SensorStatus,
)
from catlas_assets.errors import CatlasError, NotFoundError
from resources.state.schema import review_queue, sensors
from resources.state.store import StateStore

Row = dict[str, Any]

# The predecessor's last snapshot: what the successor's first fetch is compared with.
_CARRIED = (
    "normalized_hash",
    "structured_hash",
    "simhash",
    "snapshot_version",
    "last_snapshot_id",
    "last_blocks_key",
    "last_text_key",
    "last_extraction_key",
    "tier",
    "base_interval_s",
    "current_interval_s",
    "priority",
    "quality_score",
    "connector",
)


def repair_due(store: StateStore, *, limit: int) -> list[Row]:
    """Sensors repair looks at (domain/repair.needs_repair), oldest first; the cool-down
    is the caller's (it lives in `config`)."""
    query = (
        select(sensors)
        .where(
            or_(
                sensors.c.status.in_([s.value for s in REPAIRABLE]),
                and_(
                    sensors.c.status == SensorStatus.ACTIVE,
                    sensors.c.last_failure_class == FailureClass.PAGE_REMOVED,
                    sensors.c.consecutive_failures >= 2,
                ),
            )
        )
        .order_by(sensors.c.id)
        .limit(limit)
    )
    waiting = select(review_queue.c.sensor_id, review_queue.c.detail).where(
        review_queue.c.kind == ReviewKind.SENSOR_MIGRATION,
        review_queue.c.status == ReviewStatus.OPEN,
    )
    with store.engine.connect() as conn:
        # A sensor whose candidates a person is choosing from is not tried again meanwhile.
        parked = {r[0] for r in conn.execute(waiting) if "candidates" in (r[1] or {})}
        rows = [dict(r) for r in conn.execute(query).mappings()]
    return [r for r in rows if r["id"] not in parked]


def update_sensor(
    store: StateStore, sensor_id: int, *, now: datetime, config: Row | None = None, **values: Any
) -> Row:
    """Merge `config` into the sensor's config and set `values`; returns the new row."""
    with store.transaction(write_lock=True) as conn:
        row = _row(conn, sensor_id)
        merged = {**(row["config"] or {}), **(config or {})}
        conn.execute(
            update(sensors)
            .where(sensors.c.id == sensor_id)
            .values(config=merged, updated_at=now, **values)
        )
        return {**row, **values, "config": merged}


def migrate(
    store: StateStore,
    old: Row,
    *,
    url: str,
    new_config: Row,
    note: str,
    now: datetime,
    keep_item: int | None = None,
) -> int:
    """Retire `old` in favour of a new sensor on `url`; returns the new sensor's id."""
    with store.transaction(write_lock=True) as conn:
        current = _row(conn, old["id"])
        if (current["config"] or {}).get("successor_id"):
            raise CatlasError(f"sensor {old['id']} has moved already")
        values = {k: current[k] for k in _CARRIED}
        taken = conn.execute(
            select(sensors.c.id).where(
                sensors.c.company_id == current["company_id"],
                sensors.c.surface == current["surface"],
                sensors.c.url == url,
            )
        ).first()
        if taken is not None:
            raise CatlasError(f"sensor {taken[0]} watches {url} already")
        new_id = conn.execute(
            insert(sensors).values(
                company_id=current["company_id"],
                surface=current["surface"],
                url=url,
                status=SensorStatus.PENDING,
                next_run_at=now,
                discovery_method=DiscoveryMethod.REPAIR,
                discovery_confidence=current["discovery_confidence"],
                consecutive_unchanged=0,
                consecutive_failures=0,
                config=new_config,
                created_at=now,
                updated_at=now,
                **values,
            )
        ).inserted_primary_key[0]
        conn.execute(
            update(sensors)
            .where(sensors.c.id == old["id"])
            .values(
                status=SensorStatus.RETIRED,
                retired_at=now,
                claimed_at=None,
                claimed_by=None,
                updated_at=now,
                config={**(current["config"] or {}), "successor_id": int(new_id)},
            )
        )
        conn.execute(
            update(review_queue)
            .where(
                review_queue.c.sensor_id == old["id"],
                review_queue.c.kind == ReviewKind.SENSOR_MIGRATION,
                review_queue.c.status == ReviewStatus.OPEN,
                review_queue.c.id != (keep_item or 0),
            )
            .values(status=ReviewStatus.CLOSED, closed_at=now, detail=_noted(conn, old["id"], note))
        )
        return int(new_id)


def retire(store: StateStore, sensor_id: int, *, detail: Row, now: datetime) -> None:
    with store.transaction(write_lock=True) as conn:
        conn.execute(
            update(sensors)
            .where(sensors.c.id == sensor_id)
            .values(status=SensorStatus.RETIRED, retired_at=now, updated_at=now)
        )
        row = _row(conn, sensor_id)
        _open(conn, ReviewKind.SENSOR_RETIRED, row, detail, now)


def open_review(store: StateStore, kind: str, sensor: Row, detail: Row, now: datetime) -> int:
    """Open an item for the sensor, or refresh the detail of its open one of that kind."""
    with store.transaction(write_lock=True) as conn:
        return _open(conn, kind, sensor, detail, now)


def _open(conn: Connection, kind: str, sensor: Row, detail: Row, now: datetime) -> int:
    existing = conn.execute(
        select(review_queue.c.id, review_queue.c.detail).where(
            review_queue.c.kind == kind,
            review_queue.c.sensor_id == sensor["id"],
            review_queue.c.status == ReviewStatus.OPEN,
        )
    ).first()
    if existing is not None:
        conn.execute(
            update(review_queue)
            .where(review_queue.c.id == existing[0])
            .values(detail={**(existing[1] or {}), **detail})
        )
        return int(existing[0])
    return int(
        conn.execute(
            insert(review_queue).values(
                kind=kind,
                status=ReviewStatus.OPEN,
                sensor_id=sensor["id"],
                company_id=sensor["company_id"],
                detail=detail,
                created_at=now,
            )
        ).inserted_primary_key[0]
    )


def _noted(conn: Connection, sensor_id: int, note: str) -> Any:
    # One detail for every item closed: the JSON column cannot be merged in SQL portably.
    first = conn.execute(
        select(review_queue.c.detail).where(
            review_queue.c.sensor_id == sensor_id,
            review_queue.c.kind == ReviewKind.SENSOR_MIGRATION,
            review_queue.c.status == ReviewStatus.OPEN,
        )
    ).first()
    return {**((first[0] if first else None) or {}), "resolution": note}


def _row(conn: Connection, sensor_id: int) -> Row:
    row = conn.execute(select(sensors).where(sensors.c.id == sensor_id)).mappings().first()
    if row is None:
        raise NotFoundError(f"no sensor with id {sensor_id}")
    return dict(row)


# -- the review queue --------------------------------------------------------------------
def review_item(store: StateStore, item_id: int) -> Row:
    with store.engine.connect() as conn:
        row = (
            conn.execute(select(review_queue).where(review_queue.c.id == item_id))
            .mappings()
            .first()
        )
    if row is None:
        raise NotFoundError(f"no review item with id {item_id}")
    return dict(row)


def close_review(
    store: StateStore, item_id: int, *, status: str, resolution: Row, now: datetime
) -> Row:
    """Close an open item with `status` (accepted, rejected, closed) and what was done."""
    with store.transaction(write_lock=True) as conn:
        row = (
            conn.execute(select(review_queue).where(review_queue.c.id == item_id))
            .mappings()
            .first()
        )
        if row is None:
            raise NotFoundError(f"no review item with id {item_id}")
        if row["status"] != ReviewStatus.OPEN:
            raise CatlasError(f"review item {item_id} is {row['status']} already")
        detail = {**(row["detail"] or {}), "resolution": resolution}
        conn.execute(
            update(review_queue)
            .where(review_queue.c.id == item_id)
            .values(status=status, closed_at=now, detail=detail)
        )
        return {**dict(row), "status": status, "closed_at": now, "detail": detail}


def open_run_review(store: StateStore, detail: Row, now: datetime) -> int:
    """A review item about a failed Dagster run (no sensor); one per run id."""
    with store.transaction(write_lock=True) as conn:
        for row in conn.execute(
            select(review_queue.c.id, review_queue.c.detail).where(
                review_queue.c.kind == ReviewKind.RUN_FAILED
            )
        ):
            if (row[1] or {}).get("dagster_run_id") == detail.get("dagster_run_id"):
                return int(row[0])
        return int(
            conn.execute(
                insert(review_queue).values(
                    kind=ReviewKind.RUN_FAILED,
                    status=ReviewStatus.OPEN,
                    detail=detail,
                    created_at=now,
                )
            ).inserted_primary_key[0]
        )
