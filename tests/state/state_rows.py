"""Row builders shared by the state-store tests."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

NOW = datetime(2026, 1, 5, 8, 0, tzinfo=UTC)

SensorFactory = Callable[..., int]


def sensor_values(company_id: int, url: str, **overrides: Any) -> dict[str, Any]:
    """Every required column of a sensors row, due at NOW unless overridden."""
    values: dict[str, Any] = {
        "company_id": company_id,
        "surface": "careers",
        "url": url,
        "connector": "generic_html",
        "status": "active",
        "tier": "B",
        "base_interval_s": 6 * 3600,
        "current_interval_s": 6 * 3600,
        "next_run_at": NOW,
        "priority": 0.5,
        "config": {},
        "created_at": NOW,
        "updated_at": NOW,
    }
    values.update(overrides)
    return values
