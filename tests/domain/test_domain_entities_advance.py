"""`entities` day by day: advancing the previous day's state by one day of events gives
the same SCD2 rows as deriving the whole history at once."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from catlas_assets.domain.entities import advance, derive

T0 = datetime(2026, 1, 5, 8, tzinfo=UTC)


def _event(n: int, day: int, key: str, event: str, **attributes: object) -> dict:
    return {
        "event_id": f"evt_{n:03d}",
        "company_id": 1,
        "sensor_id": 7,
        "entity_type": "job",
        "entity_key": key,
        "event": event,
        "observed_at": T0 + timedelta(days=day),
        "attributes": attributes or {"title": key},
    }


EVENTS = [
    _event(1, 0, "engineer", "added"),
    _event(2, 0, "recruiter", "added"),
    _event(3, 1, "engineer", "seen"),
    _event(4, 2, "engineer", "superseded"),
    _event(5, 2, "engineer", "updated", title="engineer", level="senior"),
    _event(6, 2, "recruiter", "no_longer_listed"),
    _event(7, 4, "recruiter", "added"),
    _event(8, 5, "designer", "added"),
    _event(9, 6, "designer", "removed"),
]


def test_advancing_day_by_day_equals_deriving_everything() -> None:
    state: list[dict] = []
    for day in range(7):
        state = advance(
            state,
            [e for e in EVENTS if e["observed_at"].date() == (T0 + timedelta(days=day)).date()],
        )
    assert state == derive(EVENTS)


def test_a_removed_entity_that_comes_back_is_active_again() -> None:
    after_two = advance([], EVENTS[:6])
    recruiter = [r for r in after_two if r["entity_key"] == "recruiter"]
    assert [r["status"] for r in recruiter] == ["removed"]
    back = [r for r in advance(after_two, EVENTS[6:7]) if r["entity_key"] == "recruiter"]
    assert [(r["version"], r["status"], r["is_current"]) for r in back] == [
        (1, "active", False),
        (2, "active", True),
    ]
    engineer = [r for r in after_two if r["entity_key"] == "engineer"]
    assert [r["version"] for r in engineer] == [1, 2]
    assert engineer[0]["valid_to"] == engineer[1]["valid_from"]


def test_a_day_without_events_keeps_the_state() -> None:
    state = derive(EVENTS[:3])
    assert advance(state, []) == state
