"""commit_sensor_run: one transaction for state, outbox, inbox, review and costs, or nothing."""

from __future__ import annotations

import random
import sqlite3
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from state_rows import NOW, SensorFactory, sensor_values

from catlas_assets.domain.pipeline_data import InboxEntry, LedgerCharge, ReviewItem
from resources.lake_batches import unpack
from resources.state.schema import cost_ledger
from resources.state.store import StateStore

TIMEOUT_S = 900
DAY = "2026-01-05"


@pytest.fixture
def claimed(store: StateStore, add_sensor: SensorFactory) -> int:
    sensor_id = add_sensor()
    [row] = store.claim_due(now=NOW, worker="w1", limit=1, claim_timeout_s=TIMEOUT_S)
    assert row["id"] == sensor_id
    return sensor_id


def _commit(
    store: StateStore,
    sensor_id: int,
    company_id: int,
    *,
    worker: str = "w1",
    change_id: str | None = "chg_1",
    review_kinds: tuple[str, ...] = ("sensor_stale",),
    ledger: tuple[str, int | None, str, int, int] | None = None,
    update: dict[str, Any] | None = None,
) -> bool:
    inbox = []
    if change_id is not None:
        inbox.append(
            InboxEntry(change_id, sensor_id, company_id, "careers", "meaningful", 0.3, "jobs", NOW)
        )
    return store.commit_sensor_run(
        sensor_id=sensor_id,
        worker=worker,
        sensor_update=update or {"consecutive_unchanged": 4, "updated_at": NOW},
        run_id="run_1",
        lake_rows={"observations": [{"observation_id": "obs_1", "fetched_at": NOW}]},
        inbox=inbox,
        review=[ReviewItem(kind, sensor_id, company_id, {"at": NOW}) for kind in review_kinds],
        ledger=LedgerCharge(*(ledger or (DAY, company_id, "generic_html", 1, 100))),
        now=NOW,
    )


def _ledger(store: StateStore) -> list[tuple[str, int | None, str, int, int]]:
    query = select(
        cost_ledger.c.day,
        cost_ledger.c.company_id,
        cost_ledger.c.connector,
        cost_ledger.c.fetch_units,
        cost_ledger.c.bytes_stored,
    ).order_by(cost_ledger.c.day, cost_ledger.c.connector)
    with store.engine.connect() as conn:
        return [tuple(row) for row in conn.execute(query)]  # type: ignore[misc]


def test_commit_applies_the_update_and_writes_every_row(
    store: StateStore, company_id: int, claimed: int
) -> None:
    release = {"consecutive_unchanged": 4, "claimed_at": None, "claimed_by": None}
    assert _commit(store, claimed, company_id, update=release) is True
    sensor = store.sensor(claimed)
    assert sensor["consecutive_unchanged"] == 4
    assert sensor["claimed_by"] is None
    assert store.outbox_size() == 1
    [(flush, [payload])] = store.take_outbox("flush_1")
    assert flush == "flush_1"
    observations = unpack(payload)["observations"]
    assert observations.column("observation_id").to_pylist() == ["obs_1"]
    assert observations.column("fetched_at").to_pylist() == [NOW]
    [entry] = store.list_inbox()
    assert (entry["change_id"], entry["status"], entry["detected_at"]) == ("chg_1", "pending", NOW)
    [item] = store.list_review()
    assert (item["kind"], item["sensor_id"], item["detail"]) == (
        "sensor_stale",
        claimed,
        {"at": NOW.isoformat()},
    )
    assert _ledger(store) == [(DAY, company_id, "generic_html", 1, 100)]


def test_commit_without_the_claim_writes_nothing(
    store: StateStore, company_id: int, claimed: int
) -> None:
    later = NOW + timedelta(seconds=TIMEOUT_S + 1)
    [taken] = store.claim_due(now=later, worker="w2", limit=1, claim_timeout_s=TIMEOUT_S)
    assert taken["id"] == claimed
    assert _commit(store, claimed, company_id, worker="w1") is False
    sensor = store.sensor(claimed)
    assert sensor["consecutive_unchanged"] == 0
    assert sensor["claimed_by"] == "w2"
    assert store.outbox_size() == 0
    assert store.list_inbox() == []
    assert store.list_review(status=None) == []
    assert _ledger(store) == []


def test_commit_after_release_is_refused(store: StateStore, company_id: int, claimed: int) -> None:
    store.release_claims([claimed], "w1")
    assert _commit(store, claimed, company_id) is False
    assert store.outbox_size() == 0


def test_a_failing_row_rolls_back_the_whole_run(
    store: StateStore, company_id: int, claimed: int
) -> None:
    assert _commit(store, claimed, company_id, change_id="chg_1") is True
    with pytest.raises(IntegrityError):
        _commit(  # the same change id again violates the inbox key, after the update ran
            store, claimed, company_id, change_id="chg_1", update={"consecutive_unchanged": 9}
        )
    assert store.sensor(claimed)["consecutive_unchanged"] == 4
    assert store.outbox_size() == 1
    assert len(store.list_inbox()) == 1
    assert _ledger(store) == [(DAY, company_id, "generic_html", 1, 100)]


def test_review_items_are_one_open_item_per_sensor_and_kind(
    store: StateStore, company_id: int, add_sensor: SensorFactory
) -> None:
    first, second = add_sensor(), add_sensor()
    store.claim_due(now=NOW, worker="w1", limit=2, claim_timeout_s=TIMEOUT_S)
    kinds = ("sensor_stale", "sensor_stale", "blocked_source")
    assert _commit(store, first, company_id, change_id=None, review_kinds=kinds)
    assert _commit(store, first, company_id, change_id=None, review_kinds=kinds)
    assert _commit(store, second, company_id, change_id=None, review_kinds=("sensor_stale",))
    open_items = sorted((r["sensor_id"], r["kind"]) for r in store.list_review())
    assert open_items == sorted(
        [(first, "sensor_stale"), (first, "blocked_source"), (second, "sensor_stale")]
    )


def test_a_closed_review_item_lets_a_new_one_open(
    store: StateStore, company_id: int, claimed: int
) -> None:
    assert _commit(store, claimed, company_id, change_id=None)
    with store.transaction() as conn:
        conn.exec_driver_sql("UPDATE review_queue SET status = 'closed'")
    assert _commit(store, claimed, company_id, change_id=None)
    statuses = sorted(r["status"] for r in store.list_review(status=None))
    assert statuses == ["closed", "open"]


def test_cost_ledger_accumulates_per_day_company_and_connector(
    store: StateStore, company_id: int, claimed: int
) -> None:
    runs = [
        (DAY, company_id, "generic_html", 1, 100),
        (DAY, company_id, "generic_html", 2, 50),
        (DAY, company_id, "greenhouse", 1, 10),
        ("2026-01-06", company_id, "generic_html", 1, 7),
        (DAY, None, "generic_html", 3, 0),
        (DAY, None, "generic_html", 1, 1),
    ]
    for ledger in runs:
        assert _commit(store, claimed, company_id, change_id=None, review_kinds=(), ledger=ledger)
    assert sorted(_ledger(store), key=repr) == sorted(
        [
            (DAY, company_id, "generic_html", 3, 150),
            (DAY, company_id, "greenhouse", 1, 10),
            ("2026-01-06", company_id, "generic_html", 1, 7),
            (DAY, None, "generic_html", 4, 1),
        ],
        key=repr,
    )


def test_dropping_flushed_outbox_rows_does_not_write_their_size_again(tmp_path: Path) -> None:
    # SQLite alone: the pages a delete frees are not overwritten (secure_delete=FAST), so a
    # flush's drop writes a few pages to the WAL, not its rows' size a second time.
    database = tmp_path / "big.db"
    store = StateStore.open(f"sqlite:///{database}")
    try:
        company = store.add_company(
            name="Acme", website=None, domain=None, importance=0.5, tier=3, now=NOW
        )
        sensor_id = store.add_sensor(**sensor_values(company, "https://acme.test/jobs"))
        store.claim_due(now=NOW, worker="w1", limit=1, claim_timeout_s=TIMEOUT_S)
        rng = random.Random(7)
        rows = [
            {"observation_id": f"obs_{i}", "fetched_at": NOW, "url": rng.randbytes(600).hex()}
            for i in range(1000)
        ]  # ~1.2 MB of text no page compresses
        assert store.commit_sensor_run(
            sensor_id=sensor_id, worker="w1", sensor_update={"updated_at": NOW}, run_id="run_1",
            lake_rows={"observations": rows}, inbox=[], review=[],
            ledger=LedgerCharge(DAY, company, "generic_html", 1, 0), now=NOW,
        )  # fmt: skip
        [(flush, _)] = store.take_outbox("fl_1")
        wal = database.with_name("big.db-wal")
        with sqlite3.connect(database) as raw:
            raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        assert wal.stat().st_size == 0

        store.drop_outbox(flush)

        assert store.outbox_size() == 0
        assert 0 < wal.stat().st_size < 200_000
    finally:
        store.close()
