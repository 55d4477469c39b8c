"""Claims: due sensors go to one worker at a time, ordered, limited, with a lease."""

from __future__ import annotations

import threading
from collections import Counter
from datetime import timedelta

import pytest
from sqlalchemy import insert
from state_rows import NOW, SensorFactory, sensor_values

from catlas_assets.domain.vocabulary import SensorStatus
from catlas_assets.errors import CatlasError, NotFoundError
from catlas_assets.services.pipeline import SENSOR_STATE_COLUMNS, sensor_state
from resources.state.schema import sensors
from resources.state.store import StateStore

TIMEOUT_S = 900


def _claim(store: StateStore, worker: str = "w1", limit: int = 100, **kw: object) -> list[int]:
    at = kw.pop("now", NOW)
    rows = store.claim_due(now=at, worker=worker, limit=limit, claim_timeout_s=TIMEOUT_S)  # type: ignore[arg-type]
    return [r["id"] for r in rows]


def test_only_due_sensors_in_claimable_statuses_are_claimed(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    by_status = {status: add_sensor(status=status) for status in SensorStatus}
    add_sensor(next_run_at=NOW + timedelta(seconds=1))  # active but not due yet
    claimed = _claim(store)
    expected = {by_status[s] for s in ("active", "failing", "pending")}
    assert set(claimed) == expected
    for row in store.list_sensors():
        if row["id"] in expected:
            assert (row["claimed_by"], row["claimed_at"]) == ("w1", NOW)
        else:
            assert row["claimed_by"] is None


def test_the_due_count_sees_what_a_claim_would_take_up_to_its_bound(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    def due(up_to: int = 100, at: object = NOW) -> int:
        return store.due_count(now=at, claim_timeout_s=TIMEOUT_S, up_to=up_to)  # type: ignore[arg-type]

    for status in SensorStatus:
        add_sensor(status=status)
    add_sensor(next_run_at=NOW + timedelta(seconds=1))  # not due yet
    assert due() == 3  # active, failing, pending
    assert due(up_to=2) == 2
    taken = _claim(store, limit=2)
    assert due() == 1  # claimed ones are not due for another worker
    assert due(at=NOW + timedelta(seconds=TIMEOUT_S + 1)) == 4  # stale claims, the late one
    assert len(taken) == 2
    assert len(_claim(store, worker="w2")) == 1  # the one the count saw
    assert due() == 0


def test_claims_come_by_priority_then_oldest_due_and_stop_at_the_limit(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    low_old = add_sensor(priority=0.2, next_run_at=NOW - timedelta(hours=5))
    high_new = add_sensor(priority=0.9, next_run_at=NOW - timedelta(minutes=1))
    high_old = add_sensor(priority=0.9, next_run_at=NOW - timedelta(hours=1))
    mid = add_sensor(priority=0.5, next_run_at=NOW)
    assert _claim(store, limit=3) == [high_old, high_new, mid]
    assert _claim(store, worker="w2", limit=3) == [low_old]
    assert _claim(store, worker="w3", limit=3) == []


def test_claim_returns_the_rows_stamped_for_the_worker(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    sensor_id = add_sensor()
    [row] = store.claim_due(now=NOW, worker="w9", limit=5, claim_timeout_s=TIMEOUT_S)
    assert row["id"] == sensor_id
    assert (row["claimed_by"], row["claimed_at"]) == ("w9", NOW)
    assert row["url"] == store.sensor(sensor_id)["url"]


def test_a_claim_younger_than_the_timeout_is_never_reclaimed(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    sensor_id = add_sensor()
    assert _claim(store, worker="w1") == [sensor_id]
    later = NOW + timedelta(seconds=TIMEOUT_S - 1)
    assert _claim(store, worker="w2", now=later) == []
    assert _claim(store, worker="w1", now=later) == []  # not even by its holder
    assert store.sensor(sensor_id)["claimed_by"] == "w1"


def test_a_claim_older_than_the_timeout_is_taken_over(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    sensor_id = add_sensor()
    assert _claim(store, worker="w1") == [sensor_id]
    later = NOW + timedelta(seconds=TIMEOUT_S + 1)
    assert _claim(store, worker="w2", now=later) == [sensor_id]
    row = store.sensor(sensor_id)
    assert (row["claimed_by"], row["claimed_at"]) == ("w2", later)


def test_concurrent_claimers_never_get_the_same_sensor(
    store: StateStore, database_url: str, company_id: int
) -> None:
    total = 300
    with store.transaction() as conn:
        conn.execute(
            insert(sensors),
            [
                sensor_values(
                    company_id,
                    f"https://acme.test/p{i}",
                    priority=(i % 7) / 10,
                    next_run_at=NOW - timedelta(seconds=i),
                )
                for i in range(total)
            ],
        )
    workers = 4
    start = threading.Barrier(workers)
    claimed: dict[str, list[int]] = {}
    errors: list[BaseException] = []

    def run(worker: str) -> None:
        own = StateStore.open(database_url)
        got: list[int] = []
        try:
            start.wait()
            while batch := _claim(own, worker=worker, limit=9):
                got.extend(batch)
        except BaseException as exc:  # surfaced by the assertion below
            errors.append(exc)
        finally:
            own.close()
            claimed[worker] = got

    threads = [threading.Thread(target=run, args=(f"w{i}",)) for i in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    everything = [sensor_id for got in claimed.values() for sensor_id in got]
    duplicates = [i for i, n in Counter(everything).items() if n > 1]
    assert duplicates == []
    assert len(everything) == total
    owners = {row["id"]: row["claimed_by"] for row in store.list_sensors()}
    for worker, got in claimed.items():
        assert all(owners[sensor_id] == worker for sensor_id in got)


def test_release_claims_frees_only_the_workers_own(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    mine = add_sensor(priority=0.9)
    theirs = add_sensor(priority=0.1)
    assert _claim(store, worker="w1", limit=1) == [mine]
    assert _claim(store, worker="w2", limit=1) == [theirs]
    assert store.release_claims([mine, theirs], "w1") == 1
    assert store.sensor(mine)["claimed_by"] is None
    assert store.sensor(mine)["claimed_at"] is None
    assert store.sensor(theirs)["claimed_by"] == "w2"
    assert store.release_claims([], "w1") == 0
    assert _claim(store, worker="w3") == [mine]  # released means claimable again


def test_claim_sensor_refuses_a_sensor_held_by_another_worker(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    sensor_id = add_sensor()
    assert _claim(store, worker="w1") == [sensor_id]
    with pytest.raises(CatlasError, match="being run by w1"):
        store.claim_sensor(sensor_id, now=NOW, worker="w2", claim_timeout_s=TIMEOUT_S)
    assert store.sensor(sensor_id)["claimed_by"] == "w1"


def test_claim_sensor_takes_any_schedule_its_own_claim_or_a_stale_one(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    sensor_id = add_sensor(next_run_at=NOW + timedelta(days=3), status="stale")
    row = store.claim_sensor(sensor_id, now=NOW, worker="w1", claim_timeout_s=TIMEOUT_S)
    assert (row["claimed_by"], row["claimed_at"]) == ("w1", NOW)
    again = store.claim_sensor(sensor_id, now=NOW, worker="w1", claim_timeout_s=TIMEOUT_S)
    assert again["claimed_by"] == "w1"
    later = NOW + timedelta(seconds=TIMEOUT_S + 1)
    taken = store.claim_sensor(sensor_id, now=later, worker="w2", claim_timeout_s=TIMEOUT_S)
    assert (taken["claimed_by"], taken["claimed_at"]) == ("w2", later)
    assert store.sensor(sensor_id)["claimed_by"] == "w2"


def test_claim_sensor_of_an_unknown_id_is_not_found(store: StateStore) -> None:
    with pytest.raises(NotFoundError):
        store.claim_sensor(777, now=NOW, worker="w1", claim_timeout_s=TIMEOUT_S)


def _every_column_set(**values: object) -> dict[str, object]:
    """A value for each nullable column of `sensors` (by its type) besides `values`."""
    known = {"last_failure_class": "TIMEOUT", "discovery_method": "nav"}  # CHECKed names
    made: dict[str, object] = {}
    for column in sensors.c:
        if not column.nullable or column.name in values or column.name.startswith("claimed"):
            continue
        if column.name in known:
            made[column.name] = known[column.name]
        elif column.type.python_type is dict:
            made[column.name] = {"tag": "set"}
        elif column.type.python_type is str:
            made[column.name] = f"{column.name}-set"
        elif column.type.python_type is int:
            made[column.name] = 7
        elif column.type.python_type is float:
            made[column.name] = 0.25
        else:
            made[column.name] = NOW - timedelta(days=1)
    return {**made, **values}


def test_a_claim_returns_the_columns_asked_for_and_those_it_is_ordered_by(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    add_sensor()
    rows = store.claim_due(
        now=NOW, worker="w1", limit=5, claim_timeout_s=TIMEOUT_S, columns=("url", "etag")
    )
    assert [sorted(row) for row in rows] == [["etag", "id", "next_run_at", "priority", "url"]]


def test_a_run_reads_the_same_sensor_from_a_claim_of_its_columns_as_from_the_whole_row(
    store: StateStore, add_sensor: SensorFactory
) -> None:
    # Every column holds a value: a column `sensor_state` reads and the claim leaves out
    # would come back None (or missing) and make the two differ.
    sensor_id = add_sensor(**_every_column_set(config={"previous_urls": ["https://a.test/"]}))
    [claimed] = store.claim_due(
        now=NOW, worker="w1", limit=1, claim_timeout_s=TIMEOUT_S, columns=SENSOR_STATE_COLUMNS
    )
    assert sensor_state(claimed) == sensor_state(store.sensor(sensor_id))
    assert len(SENSOR_STATE_COLUMNS) < len(sensors.c)  # the claim leaves columns out
