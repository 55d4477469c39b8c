"""Sensors that robots.txt blocked, in the state store: found when due, unblocked when allowed.

A `blocked` sensor is never claimed by the scheduler; `services/blocked_recheck.py` asks
for the due ones before each tick and unblocks them here (their `blocked_source` review
item closed), or postpones them until the cached robots.txt answer expires.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import select, update

from catlas_assets.domain.vocabulary import ReviewKind, ReviewStatus, SensorStatus
from resources.state.schema import review_queue, sensors
from resources.state.store import StateStore


class BlockedSensors:
    """Sensors that robots.txt blocked: found when due, and unblocked when it allows again."""

    def __init__(self, store: StateStore) -> None:
        self.store = store

    def due(self, now: datetime, limit: int) -> list[dict[str, Any]]:
        query = (
            select(sensors)
            .where(sensors.c.status == SensorStatus.BLOCKED, sensors.c.next_run_at <= now)
            .order_by(sensors.c.next_run_at, sensors.c.id)
            .limit(limit)
        )
        with self.store.engine.connect() as conn:
            return [dict(r) for r in conn.execute(query).mappings()]

    def unblock(self, sensor_id: int, now: datetime) -> bool:
        """Back to `active`, due now; the open `blocked_source` item is closed."""
        with self.store.transaction() as conn:
            result = conn.execute(
                update(sensors)
                .where(sensors.c.id == sensor_id, sensors.c.status == SensorStatus.BLOCKED)
                .values(
                    status=SensorStatus.ACTIVE,
                    consecutive_failures=0,
                    last_failure_class=None,
                    last_failure_detail=None,
                    next_run_at=now,
                    updated_at=now,
                )
            )
            if result.rowcount != 1:
                return False
            conn.execute(
                update(review_queue)
                .where(
                    review_queue.c.sensor_id == sensor_id,
                    review_queue.c.kind == ReviewKind.BLOCKED_SOURCE,
                    review_queue.c.status == ReviewStatus.OPEN,
                )
                .values(status=ReviewStatus.CLOSED, closed_at=now)
            )
        return True

    def postpone(self, sensor_id: int, until: datetime, now: datetime, detail: str) -> None:
        with self.store.transaction() as conn:
            conn.execute(
                update(sensors)
                .where(sensors.c.id == sensor_id, sensors.c.status == SensorStatus.BLOCKED)
                .values(next_run_at=until, last_failure_detail=detail[:500], updated_at=now)
            )
