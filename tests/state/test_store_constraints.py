"""The database itself refuses misspelled vocabulary, out-of-range numbers and naive times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Table, insert, select
from sqlalchemy.exc import IntegrityError, StatementError
from state_rows import NOW, SensorFactory, sensor_values

from resources.state.schema import (
    companies,
    crawl_runs,
    queue_jobs,
    review_queue,
    sensors,
)
from resources.state.store import StateStore


def _insert(store: StateStore, table: Table, **values: Any) -> None:
    with store.transaction() as conn:
        conn.execute(insert(table).values(**values))


def _refused(
    store: StateStore, table: Table, row: dict[str, Any], column: str, value: object
) -> bool:
    """Whether the database refuses ``row`` with ``column`` set to ``value``."""
    try:
        _insert(store, table, **{**row, column: value})
    except IntegrityError:
        return True
    return False


COMPANY_ROW: dict[str, Any] = {
    "name": "Checked Co",
    "importance": 0.5,
    "tier": 3,
    "onboarding_status": "pending",
    "stats": {},
    "source_meta": {},
    "created_at": NOW,
    "updated_at": NOW,
}


def test_company_row_outside_the_vocabulary_or_range_is_refused(store: StateStore) -> None:
    bad_values = [
        ("onboarding_status", "Pending"),
        ("onboarding_status", "onboarded"),
        ("importance", -0.01),
        ("importance", 1.01),
        ("tier", 0),
        ("tier", 5),
    ]
    accepted = [pair for pair in bad_values if not _refused(store, companies, COMPANY_ROW, *pair)]
    assert accepted == []
    assert store.list_companies() == []


def test_company_range_bounds_are_accepted(store: StateStore) -> None:
    _insert(store, companies, **{**COMPANY_ROW, "name": "low", "importance": 0.0, "tier": 1})
    _insert(store, companies, **{**COMPANY_ROW, "name": "high", "importance": 1.0, "tier": 4})
    assert [(c["importance"], c["tier"]) for c in store.list_companies()] == [(0.0, 1), (1.0, 4)]


def test_sensor_row_outside_the_vocabulary_is_refused(store: StateStore, company_id: int) -> None:
    row = sensor_values(company_id, "https://acme.test/careers")
    bad_values = [
        ("status", "actve"),
        ("status", "ACTIVE"),
        ("surface", "career"),
        ("surface", "jobs-board"),
        ("discovery_method", "crawl"),
        ("last_failure_class", "http_4xx"),
        ("current_interval_s", 0),
    ]
    accepted = [pair for pair in bad_values if not _refused(store, sensors, row, *pair)]
    assert accepted == []
    assert store.list_sensors() == []
    _insert(store, sensors, **row)  # the unchanged row is fine
    assert len(store.list_sensors()) == 1


def test_review_item_outside_the_vocabulary_is_refused(store: StateStore, company_id: int) -> None:
    row: dict[str, Any] = {
        "kind": "sensor_stale",
        "status": "open",
        "company_id": company_id,
        "detail": {},
        "created_at": NOW,
    }
    bad_values = [("kind", "sensor_moved"), ("kind", "stale"), ("status", "opened")]
    accepted = [pair for pair in bad_values if not _refused(store, review_queue, row, *pair)]
    assert accepted == []
    assert store.list_review(status=None) == []


def test_crawl_run_outside_the_vocabulary_is_refused(store: StateStore) -> None:
    row: dict[str, Any] = {
        "id": "run_1",
        "kind": "tick",
        "started_at": NOW,
        "counters": {},
        "stop": "queue_empty",
        "outcome": "success",
    }
    bad_values = [
        ("stop", "queue-empty"),
        ("stop", "done"),
        ("outcome", "succeeded"),
        ("kind", "crawl"),
    ]
    accepted = [pair for pair in bad_values if not _refused(store, crawl_runs, row, *pair)]
    assert accepted == []
    assert store.runs() == []


def test_queue_job_with_a_misspelled_status_is_refused(store: StateStore) -> None:
    row = {
        "kind": "discover",
        "status": "queued",
        "run_after": NOW,
        "payload": {},
        "created_at": NOW,
        "updated_at": NOW,
    }
    with pytest.raises(IntegrityError):
        _insert(store, queue_jobs, **row)
    _insert(store, queue_jobs, **{**row, "status": "pending"})


def test_timestamps_come_back_aware_utc(store: StateStore, add_sensor: SensorFactory) -> None:
    paris = timezone(timedelta(hours=1))
    local = datetime(2026, 1, 5, 9, 30, tzinfo=paris)
    sensor_id = add_sensor(next_run_at=local, last_success_at=local)
    row = store.sensor(sensor_id)
    for column in ("next_run_at", "last_success_at", "created_at"):
        assert row[column].utcoffset() == timedelta(0)
        assert row[column].tzinfo is UTC
    assert row["next_run_at"] == datetime(2026, 1, 5, 8, 30, tzinfo=UTC)


def test_sqlite_keeps_timestamps_as_text_that_sorts_as_time(tmp_path: Path) -> None:
    """SQLite only (PostgreSQL stores timestamptz)."""
    store = StateStore.open(f"sqlite:///{tmp_path / 'state.db'}")
    company = store.add_company(
        name="Acme", website="https://acme.test", domain="acme.test", importance=0.5, tier=3,
        now=NOW,
    )  # fmt: skip

    def add_sensor(path: str, next_run_at: datetime) -> int:
        url = f"https://acme.test/{path}"
        return store.add_sensor(**sensor_values(company, url, next_run_at=next_run_at))

    whole = add_sensor("a", datetime(2026, 1, 5, 8, 0, tzinfo=UTC))
    fraction = add_sensor("b", datetime(2026, 1, 5, 8, 0, 0, 1, tzinfo=UTC))
    with store.engine.connect() as conn:
        text = dict(conn.exec_driver_sql("SELECT id, next_run_at FROM sensors").fetchall())
        # Six fraction digits always: text order is time order, and equal times are equal.
        assert text == {whole: "2026-01-05 08:00:00.000000", fraction: "2026-01-05 08:00:00.000001"}
        # Text written some other way (no fraction, an offset) still reads as the instant.
        conn.exec_driver_sql(
            "UPDATE sensors SET last_success_at = '2026-01-05 08:00:00' WHERE id = ?", (whole,)
        )
        conn.exec_driver_sql(
            "UPDATE sensors SET last_success_at = '2026-01-05T09:00:00+01:00' WHERE id = ?",
            (fraction,),
        )
        conn.commit()
    for sensor_id in (whole, fraction):
        read = store.sensor(sensor_id)["last_success_at"]
        assert read == datetime(2026, 1, 5, 8, 0, tzinfo=UTC)
        assert read.tzinfo is UTC
    store.close()


def test_timestamps_compare_as_instants_in_queries(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    east = timezone(timedelta(hours=5))
    early = add_sensor(next_run_at=datetime(2026, 1, 5, 12, 0, tzinfo=east))  # 07:00 UTC
    add_sensor(next_run_at=datetime(2026, 1, 5, 8, 30, tzinfo=UTC))
    with store.engine.connect() as conn:
        due = conn.execute(select(sensors.c.id).where(sensors.c.next_run_at <= NOW)).scalars()
        assert list(due) == [early]


def test_naive_datetime_is_refused(store: StateStore, add_sensor: SensorFactory) -> None:
    with pytest.raises(StatementError, match="naive datetimes"):
        add_sensor(next_run_at=datetime(2026, 1, 5, 8, 0))
    assert store.list_sensors() == []
