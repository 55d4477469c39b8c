"""State-store fixtures: an opened store on each backend and row builders."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count
from typing import Any

import pytest
from state_rows import NOW, SensorFactory, sensor_values

from resources.state.store import StateStore


@pytest.fixture
def store(database_url: str) -> Iterator[StateStore]:
    opened = StateStore.open(database_url)
    yield opened
    opened.close()


@pytest.fixture
def company_id(store: StateStore) -> int:
    return store.add_company(
        name="Acme",
        website="https://acme.test",
        domain="acme.test",
        importance=0.5,
        tier=3,
        now=NOW,
    )


@pytest.fixture
def add_sensor(store: StateStore, company_id: int) -> SensorFactory:
    """Insert a due active sensor; keyword arguments override any column."""
    numbers = count(1)

    def build(**overrides: Any) -> int:
        url = overrides.pop("url", f"https://acme.test/page-{next(numbers)}")
        owner = overrides.pop("company_id", company_id)
        return store.add_sensor(**sensor_values(owner, url, **overrides))

    return build
