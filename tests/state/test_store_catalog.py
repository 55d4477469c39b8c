"""Companies and sensors: added, listed and fetched; duplicates and unknown ids refused."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import IntegrityError
from state_rows import NOW, SensorFactory, sensor_values

from catlas_assets.errors import CatlasError, NotFoundError
from resources.state.store import StateStore


def _add_company(store: StateStore, name: str, **overrides: object) -> int:
    values: dict[str, object] = {
        "website": f"https://{name.lower()}.test",
        "domain": f"{name.lower()}.test",
        "importance": 0.5,
        "tier": 3,
        "now": NOW,
    }
    values.update(overrides)
    return store.add_company(name=name, **values)  # type: ignore[arg-type]


def test_added_company_reads_back_with_defaults(store: StateStore) -> None:
    company = store.company(_add_company(store, "Globex", importance=0.8, tier=1))
    assert company["name"] == "Globex"
    assert company["domain"] == "globex.test"
    assert (company["importance"], company["tier"]) == (0.8, 1)
    assert company["onboarding_status"] == "pending"
    assert (company["stats"], company["source_meta"]) == ({}, {})
    assert company["created_at"] == company["updated_at"] == NOW
    assert store.company_by_name("Globex") == company
    assert store.company_by_name("Initech") is None


def test_companies_list_in_id_order_with_their_sensor_counts(store: StateStore) -> None:
    first = _add_company(store, "Globex")
    second = _add_company(store, "Initech")
    store.add_sensor(**sensor_values(second, "https://initech.test/careers"))
    store.add_sensor(**sensor_values(second, "https://initech.test/pricing", surface="pricing"))
    listed = store.list_companies()
    assert [(c["id"], c["name"], c["sensors"]) for c in listed] == [
        (first, "Globex", 0),
        (second, "Initech", 2),
    ]


def test_duplicate_company_name_is_a_catlas_error(store: StateStore) -> None:
    _add_company(store, "Globex")
    with pytest.raises(CatlasError, match="'Globex' already exists"):
        _add_company(store, "Globex", website="https://other.test")
    assert len(store.list_companies()) == 1


def test_company_refused_by_a_check_is_not_reported_as_a_duplicate(store: StateStore) -> None:
    with pytest.raises(IntegrityError):
        _add_company(store, "Tiered", tier=9)
    assert store.list_companies() == []


def test_unknown_company_id_is_not_found(store: StateStore) -> None:
    with pytest.raises(NotFoundError, match="no company with id 999"):
        store.company(999)


def test_added_sensor_reads_back_with_column_defaults(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    sensor = store.sensor(add_sensor(url="https://acme.test/careers"))
    assert sensor["url"] == "https://acme.test/careers"
    assert sensor["quality_score"] == 50.0
    assert sensor["snapshot_version"] == 0
    assert sensor["consecutive_failures"] == sensor["consecutive_unchanged"] == 0
    assert sensor["claimed_by"] is None and sensor["claimed_at"] is None
    assert sensor["config"] == {}


def test_duplicate_sensor_on_company_surface_and_url_is_a_catlas_error(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    add_sensor(url="https://acme.test/careers")
    with pytest.raises(CatlasError, match="already has a careers sensor"):
        add_sensor(url="https://acme.test/careers")
    add_sensor(url="https://acme.test/careers", surface="jobs_board")  # another surface is fine
    assert len(store.list_sensors()) == 2


def test_sensor_refused_by_a_check_is_not_reported_as_a_duplicate(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    with pytest.raises(IntegrityError):
        add_sensor(status="actve")
    assert store.list_sensors() == []


def test_sensor_for_an_unknown_company_is_refused(store: StateStore) -> None:
    with pytest.raises(IntegrityError):
        store.add_sensor(**sensor_values(4242, "https://ghost.test/"))


def test_sensor_list_filters_by_company_status_and_surface(
    store: StateStore, company_id: int, add_sensor: SensorFactory
) -> None:
    other = _add_company(store, "Globex")
    careers = add_sensor()
    failing = add_sensor(status="failing")
    pricing = add_sensor(surface="pricing")
    elsewhere = add_sensor(company_id=other)

    def ids(**filters: object) -> list[int]:
        return [s["id"] for s in store.list_sensors(**filters)]  # type: ignore[arg-type]

    assert ids() == [careers, failing, pricing, elsewhere]
    assert ids(company_id=company_id) == [careers, failing, pricing]
    assert ids(status="failing") == [failing]
    assert ids(surface="pricing") == [pricing]
    assert ids(company_id=other, surface="careers") == [elsewhere]
    assert {s["company"] for s in store.list_sensors()} == {"Acme", "Globex"}


def test_unknown_sensor_id_is_not_found(store: StateStore) -> None:
    with pytest.raises(NotFoundError, match="no sensor with id 31337"):
        store.sensor(31337)
